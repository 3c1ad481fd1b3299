/**
 * The local edge as an attacker sees it: path, method, header and query tricks get the contract's status and
 * never a catalog without a valid key; floods of dropped connections and oversized requests do not bring it
 * down. (Origin and store faults are in server.test.ts.)
 */

import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useServedWorld } from '../../testing/cases.suite.ts';
import { httpRequest } from '../../testing/cli.ts';
import { rawRequest } from '../../testing/raw.ts';

describe('catalog serve against adversarial requests', () => {
  const served = useServedWorld();

  const withKey = (target: string, key = served.world.keys.valid) =>
    httpRequest(served.server.url, { method: 'GET', target, headers: [['X-Api-Key', key]] });
  const raw = (head: string) =>
    rawRequest(served.server.url, `${head}\r\nHost: x\r\nX-Api-Key: ${served.world.keys.valid}\r\n\r\n`);

  it.each([
    '/api/plans/..',
    '/api/plans/.',
    '/./api/plans',
    '/api/%70lans',
    '//api/plans',
    '/api/plans;x',
    '/API/PLANS',
    '/api%2Fplans',
    '/api/plans%2F',
    '/api/plans%00',
    '/api/plans%E2%80%8B',
    '/api/pl%C3%A4ns',
    '/api/plans/%2e%2e',
    '/api/plans?/../catalog.json'.replace('?', '/'),
  ])('answers 404 to the path trick %s, even with a valid key', async (target) => {
    const answer = await withKey(target);
    expect(answer.status).toBe(404);
    expect(answer.body.toString()).toContain('problem:not-found');
  });

  it('refuses raw non-ASCII and NUL bytes in the path before any function runs', async () => {
    expect((await raw('GET /api/pl\u00e4ns HTTP/1.1')).status).toBeGreaterThanOrEqual(400);
    expect(
      (await rawRequest(served.server.url, 'GET /api/plans\u0000 HTTP/1.1\r\nHost: x\r\n\r\n')).status,
    ).toBe(400);
  });

  it.each([
    ['a lowercase verb', 'get /api/plans HTTP/1.1', 400],
    ['an unknown verb', 'FROB /api/plans HTTP/1.1', 400],
    ['a verb with a space', 'GE T /api/plans HTTP/1.1', 400],
    ['TRACE, which reaches the function', 'TRACE /api/plans HTTP/1.1', 405],
    ['PROPFIND, which reaches the function', 'PROPFIND /api/plans HTTP/1.1', 405],
    ['CONNECT', 'CONNECT 127.0.0.1:443 HTTP/1.1', 400],
  ])('answers %s with %i', async (_name, head, status) => {
    const answer = await raw(head);
    expect(answer.status).toBe(status);
  });

  it('answers 401 to two X-Api-Key headers, a right-shaped forged key, and a key in another header', async () => {
    const attempts = [
      [
        ['X-Api-Key', served.world.keys.valid],
        ['X-Api-Key', served.world.keys.valid],
      ],
      [['X-Api-Key', `tpc_${'A'.repeat(43)}`]],
      [['X-Api-Key', served.world.keys.valid.slice(0, -1)]],
      [['X-Api-Key', `${served.world.keys.valid}x`]],
      [['X-Api-Key', served.world.keys.valid.toUpperCase()]],
      [['X-Api-Keys', served.world.keys.valid]],
      [['Cookie', `x-api-key=${served.world.keys.valid}`]],
    ] as const;
    for (const headers of attempts) {
      const answer = await httpRequest(served.server.url, { method: 'GET', target: '/api/plans', headers });
      expect(answer.status, JSON.stringify(headers)).toBe(401);
    }
  });

  it('keeps every key working after a request naming __proto__ or constructor in the query, a header or a cookie', async () => {
    const poison: (readonly [string, readonly (readonly [string, string])[]])[] = [
      ['/x?__proto__', []],
      ['/api/plans?__proto__=1&__proto__=2&constructor=3&constructor=4', []],
      [
        '/openapi.yaml',
        [
          ['__proto__', 'x'],
          ['__proto__', 'y'],
          ['constructor', 'z'],
        ],
      ],
      ['/api/plans', [['Cookie', '__proto__=a; __proto__=b; constructor=c; toString=d']]],
    ];
    for (const [target, headers] of poison) {
      await httpRequest(served.server.url, { method: 'GET', target, headers });
      const answer = await withKey('/api/plans?discipline=running');
      expect(answer.status, target).toBe(200);
      expect(answer.body.equals(served.world.objects.running)).toBe(true);
      const openapi = await httpRequest(served.server.url, { method: 'GET', target: '/openapi.yaml' });
      expect(openapi.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(openapi.headers['last-modified']).toBe(served.world.modified.openapi);
    }
  });

  it('treats whitespace around the key as HTTP does (not part of the value)', async () => {
    const answer = await rawRequest(
      served.server.url,
      `GET /api/plans HTTP/1.1\r\nHost: x\r\nX-Api-Key: \t ${served.world.keys.valid} \t\r\n\r\n`,
    );
    expect(answer.status).toBe(200);
  });

  it('answers 413 to a 1 MB key and keeps serving', async () => {
    const answer = await httpRequest(served.server.url, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Api-Key', 'k'.repeat(1024 * 1024)]],
    });
    expect(answer.status).toBe(413);
    expect((await withKey('/api/plans?discipline=running')).status).toBe(200);
  });

  it.each([
    ['discipline[]=walking', 200, 'all'],
    ['discipline=strength%00', 400, null],
    ['discipline=strength%', 400, null],
    ['discipline=%E2%80%8Bstrength', 400, null],
    ['discipline=str%65ngth', 200, 'strength'],
    // Clients never send a fragment; a literal # makes the value something other than exactly strength.
    ['discipline=strength#fragment', 400, null],
  ] as const)('answers the query trick %s with %i', async (query, status, body) => {
    const answer = await withKey(`/api/plans?${query}`);
    expect(answer.status).toBe(status);
    if (body) expect(answer.body.equals(served.world.objects[body])).toBe(true);
  });

  it('ignores 700 unknown parameters around a valid discipline (a URL still under 8,192 bytes)', async () => {
    const noise = Array.from({ length: 700 }, (_, i) => `p${i}=${i}`);
    noise.splice(350, 0, 'discipline=running');
    const answer = await withKey(`/api/plans?${noise.join('&')}`);
    expect(answer.status).toBe(200);
    expect(answer.body.equals(served.world.objects.running)).toBe(true);
  });

  it('never hands out a catalog without a valid key, whatever the trick', async () => {
    const targets = [
      '/api/plans',
      '/api/plans?discipline=running',
      '/api/plans?api_key={valid}',
      '/catalog.json',
      '/catalog-running.json',
    ];
    const headerSets: (readonly (readonly [string, string])[])[] = [
      [],
      [['X-Api-Key', '']],
      [['X-Api-Key', served.world.keys.expired]],
      [['X-Api-Key', served.world.keys.revoked]],
      [['Authorization', `Bearer ${served.world.keys.valid}`]],
      [['X-Api-Key', 'null']],
      [['X-Api-Key', '*']],
    ];
    const catalogs = [served.world.objects.all, served.world.objects.running, served.world.objects.strength];
    for (const target of targets) {
      for (const headers of headerSets) {
        for (const method of ['GET', 'POST', 'OPTIONS']) {
          const answer = await httpRequest(served.server.url, {
            method,
            target: target.replace('{valid}', served.world.keys.valid),
            headers,
          });
          expect(answer.status, `${method} ${target} ${JSON.stringify(headers)}`).not.toBe(200);
          expect(catalogs.some((c) => answer.body.equals(c))).toBe(false);
        }
      }
    }
  });
});

describe('catalog serve under connection faults', () => {
  // Its own process: the test reads the server's memory.
  const served = useServedWorld({ process: true });

  const rssKiB = () =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${served.server.pid}/status`, 'utf8'))?.[1]);

  it('keeps answering after thousands of connections opened and dropped mid-request', async () => {
    const url = new URL(served.server.url);
    const partial = [
      'GET /api/plans HTTP/1.1\r\nHost: x\r\n',
      `GET /api/plans HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${served.world.keys.valid}\r\n\r\n`,
      'GET /api/pl',
      'POST /api/plans HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc',
    ];
    const before = rssKiB();
    for (let batch = 0; batch < 10; batch += 1) {
      await Promise.all(
        Array.from(
          { length: 250 },
          (_, i) =>
            new Promise<void>((resolve) => {
              const socket = connect(Number(url.port), url.hostname, () => {
                socket.write(partial[(batch + i) % partial.length] as string);
                setImmediate(() => {
                  socket.destroy();
                  resolve();
                });
              });
              socket.on('error', () => resolve());
            }),
        ),
      );
    }
    const answer = await httpRequest(served.server.url, {
      method: 'GET',
      target: '/api/plans?discipline=strength',
      headers: [['X-Api-Key', served.world.keys.valid]],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.equals(served.world.objects.strength)).toBe(true);
    expect(rssKiB()).toBeLessThan(before + 100 * 1024);
  });

  it('answers a 64 KB header and a 10 MB URL with 413, and keeps serving', async () => {
    const header = await rawRequest(
      served.server.url,
      `GET /api/plans HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    expect(header.status).toBe(413);
    const url = await rawRequest(
      served.server.url,
      `GET /api/plans?q=${'b'.repeat(10 * 1024 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(url.status).toBe(413);
    const after = await httpRequest(served.server.url, { method: 'GET', target: '/openapi.yaml' });
    expect(after.status).toBe(200);
  });
});
