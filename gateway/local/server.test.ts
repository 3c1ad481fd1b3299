import { copyFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { Agent, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KVS_LIVE_BUILD } from '../../contract/index.ts';
import { FileKeyValueStore } from '../../keys/file-store.ts';
import { issueKey } from '../../keys/manage.ts';
import { describeCaseTable, nextAccessLogEntry } from '../../testing/cases.suite.ts';
import { accessLogStart, httpRequest, type ServeProcess, startServe } from '../../testing/cli.ts';
import { rawRequest } from '../../testing/raw.ts';
import { createTestWorld, edgeFor, type TestWorld } from '../../testing/world.ts';
import { DISTRIBUTION } from '../distribution.ts';
import type { EdgeResponse } from './edge.ts';
import type { RawRequest } from './event.ts';
import { type AccessLogEntry, createEdgeServer, listen, shutdown } from './server.ts';

describeCaseTable(
  'the request-case table over HTTP against catalog serve (viewer-response shown the request as sent)',
  async (world) => {
    const servers = {
      plain: await startServe(['--origin', world.originDir, '--store', world.stores.plain]),
      cors: await startServe(['--origin', world.originDir, '--store', world.stores.cors]),
    };
    // The cases run one at a time: each answer's access-log line is the next one on its server's stderr.
    const seen = { plain: servers.plain.lines.length, cors: servers.cors.lines.length };
    return {
      async send(request, store) {
        const answer = await httpRequest(servers[store].url, request);
        const next = await nextAccessLogEntry(servers[store].lines, seen[store]);
        seen[store] = next.seen;
        return { ...answer, logData: next.entry.logData as string | null };
      },
      async close() {
        await Promise.all([servers.plain.stop(), servers.cors.stop()]);
      },
    };
  },
);

describeCaseTable(
  'the request-case table over HTTP against the edge server (viewer-response shown the request as rewritten)',
  async (world) => {
    const start = async (store: 'plain' | 'cors') => {
      const lines: string[] = [];
      const server = createEdgeServer({
        edge: await edgeFor(world, store, 'as-rewritten'),
        log: (entry) => lines.push(JSON.stringify(entry)),
      });
      return { server, lines, url: `http://127.0.0.1:${(await listen(server, 0, '127.0.0.1')).port}` };
    };
    const servers = { plain: await start('plain'), cors: await start('cors') };
    const seen = { plain: 0, cors: 0 };
    return {
      async send(request, store) {
        const answer = await httpRequest(servers[store].url, request);
        const next = await nextAccessLogEntry(servers[store].lines, seen[store]);
        seen[store] = next.seen;
        return { ...answer, logData: next.entry.logData as string | null };
      },
      async close() {
        await Promise.all([shutdown(servers.plain.server), shutdown(servers.cors.server)]);
      },
    };
  },
);

/**
 * A raw connection to `url`: everything it has received, when `text` first arrived in it, and the time the
 * connection closed.
 */
function rawConnection(url: string): {
  socket: Socket;
  connected: Promise<void>;
  received: () => string;
  arrivedAt: (text: string) => number | undefined;
  closed: Promise<number>;
} {
  const { port, hostname } = new URL(url);
  const socket = connect(Number(port), hostname);
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  const arrivals: { length: number; at: number }[] = [];
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    arrivals.push({ length: received.length, at: performance.now() });
  });
  const arrivedAt = (text: string) => {
    const index = received.indexOf(text);
    return index === -1 ? undefined : arrivals.find((a) => a.length >= index + text.length)?.at;
  };
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
  return { socket, connected, received: () => received, arrivedAt, closed };
}

/** Polls `check` until it returns true or `ms` pass; returns the time it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started;
    await sleep(25);
  }
  throw new Error(`not within ${ms} ms`);
}

describe('catalog serve over a published build', () => {
  let world: TestWorld;
  let server: ServeProcess;
  let storePath: string;
  beforeAll(async () => {
    world = await createTestWorld();
    storePath = join(world.dir, 'live-kvs.json');
    await copyFile(world.stores.plain, storePath);
    server = await startServe(['--origin', world.originDir, '--store', storePath]);
  });
  afterAll(async () => {
    await server?.stop();
    await world?.remove();
  });

  const get = (target: string, key?: string) =>
    httpRequest(server.url, {
      method: 'GET',
      target,
      headers: key === undefined ? [] : [['X-Api-Key', key]],
    });

  /** Where this test's access-log lines begin (testing/cli.ts). */
  const logStart = () => accessLogStart(server);

  it('logs one JSON line per request with the partner label and never the key', async () => {
    const before = await logStart();
    expect((await get('/api/plans?discipline=running', world.keys.valid)).status).toBe(200);
    expect((await get('/api/plans?discipline=walking', world.keys.other)).status).toBe(400);
    await within(2000, async () => server.lines.length >= before + 2);
    const entries = server.lines.slice(before).map((line) => JSON.parse(line));
    expect(entries).toMatchObject([
      {
        method: 'GET',
        path: '/api/plans',
        status: 200,
        partner: 'acme',
        logData: 'acme',
        bytes: world.objects.running.length,
      },
      { method: 'GET', path: '/api/plans', status: 400, partner: null, logData: 'globex.discipline' },
    ]);
    expect(typeof entries[0].ms).toBe('number');
    const log = server.lines.join('\n');
    for (const key of Object.values(world.keys)) expect(log).not.toContain(key);
  });

  it('accepts a key issued while it runs within a second', async () => {
    const issued = await issueKey(new FileKeyValueStore(storePath), { partner: 'newcomer', now: new Date() });
    const took = await within(1000, async () => (await get('/api/plans', issued.key)).status === 200);
    expect(took).toBeLessThan(1000);
  });

  it('keeps the last good key store when the file is replaced with garbage, and logs the error', async () => {
    const good = `${storePath}.good`;
    await copyFile(storePath, good);
    await writeFile(`${storePath}.new`, '{"data": [ this is not json');
    await rename(`${storePath}.new`, storePath);
    // The store is checked when requests come in: keep asking until the error shows in the log.
    await within(2000, async () => {
      expect((await get('/api/plans', world.keys.valid)).status).toBe(200);
      return server.lines.some((line) => line.includes('keeping the last good key store'));
    });
    expect((await get('/api/plans', world.keys.valid)).status).toBe(200);
    expect((await get('/api/plans', world.keys.forged)).status).toBe(401);
    await rename(good, storePath);
  });

  it('answers 500 with the problem page while an origin object is missing, and 200 again once it is back', async () => {
    const file = join(world.buildDir, 'catalog-strength.json');
    await rename(file, `${file}.away`);
    try {
      // The origin looks at a file at most every 100 ms.
      let missing = await get('/api/plans?discipline=strength', world.keys.valid);
      await within(1000, async () => {
        missing = await get('/api/plans?discipline=strength', world.keys.valid);
        return missing.status !== 200;
      });
      expect(missing.status).toBe(500);
      expect(missing.headers['content-type']).toBe('application/problem+json');
      expect(missing.headers['cache-control']).toBe('no-store');
      expect(missing.headers['x-content-type-options']).toBe('nosniff');
      expect(JSON.parse(missing.body.toString())).toMatchObject({
        status: 500,
        title: 'Internal Server Error',
      });
    } finally {
      await rename(`${file}.away`, file);
    }
    let back = await get('/api/plans?discipline=strength', world.keys.valid);
    await within(1000, async () => {
      back = await get('/api/plans?discipline=strength', world.keys.valid);
      return back.status === 200;
    });
    expect(back.status).toBe(200);
    expect(back.body.equals(world.objects.strength)).toBe(true);
  });

  it('serves the built-in problem document when even errors/500.json is missing', async () => {
    const page = join(world.originDir, 'errors/500.json');
    await rename(page, `${page}.away`);
    // The pointer names a build the origin does not hold: every catalog object is missing.
    const store = new FileKeyValueStore(storePath);
    await store.update((entries) => entries.set(KVS_LIVE_BUILD, '20200101T000000Z-00000000'));
    try {
      let answer = await get('/api/plans', world.keys.valid);
      await within(1000, async () => {
        answer = await get('/api/plans', world.keys.valid);
        return answer.status !== 200;
      });
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body.toString())).toMatchObject({ status: 500 });
    } finally {
      await rename(`${page}.away`, page);
      await store.update((entries) => entries.set(KVS_LIVE_BUILD, world.buildId));
    }
  });

  it('keeps connections alive across requests', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const answers = [];
      for (let i = 0; i < 3; i += 1) {
        answers.push(await httpRequest(server.url, { method: 'GET', target: '/openapi.yaml', agent }));
      }
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(answers[0]?.headers.connection).toBe('keep-alive');
    } finally {
      agent.destroy();
    }
  });

  it('answers and logs a request whose client closes its side right after sending it, just after the store changed', async () => {
    for (let round = 1; round <= 5; round += 1) {
      const before = await logStart();
      // A new version of the store file: the answer waits for the store to be read again.
      const at = new Date(Date.now() + round * 1_000);
      await utimes(storePath, at, at);
      const client = rawConnection(server.url);
      client.socket.write(`GET /api/plans HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${world.keys.valid}\r\n\r\n`);
      client.socket.end();
      await client.closed;
      expect(client.received(), `round ${round}`).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(client.received().endsWith(world.objects.all.toString('latin1')), `round ${round}`).toBe(true);
      await within(2000, async () => server.lines.length > before);
      expect(JSON.parse(server.lines[before] ?? '')).toMatchObject({ path: '/api/plans', status: 200 });
    }
  });

  it('logs a request whose client is gone before the answer, saying so', async () => {
    const before = await logStart();
    const at = new Date(Date.now() + 10_000);
    await utimes(storePath, at, at);
    const client = rawConnection(server.url);
    await client.connected;
    client.socket.write(`GET /api/plans HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${world.keys.valid}\r\n\r\n`, () =>
      client.socket.destroy(),
    );
    await within(2000, async () => server.lines.length > before);
    const entry = JSON.parse(server.lines[before] ?? '');
    expect(entry).toMatchObject({ method: 'GET', path: '/api/plans', partner: 'acme' });
    // Either the answer went out before the close was seen, or the line says it could not.
    if (entry.error !== undefined)
      expect(entry).toMatchObject({ bytes: 0, error: expect.stringMatching(/closed/) });
  });

  it('answers 413 to an oversized header and an oversized URL, as CloudFront does, and keeps serving', async () => {
    const big = await httpRequest(server.url, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Filler', 'x'.repeat(64 * 1024)]],
    });
    expect(big.status).toBe(413);
    const long = await httpRequest(server.url, {
      method: 'GET',
      target: `/api/plans?q=${'y'.repeat(1024 * 1024)}`,
    });
    expect(long.status).toBe(413);
    expect((await get('/openapi.yaml')).status).toBe(200);
  });

  describe("CloudFront's request limits, byte for byte", () => {
    const KEY_LINE = () => `X-Api-Key: ${world.keys.valid}\r\n`;

    it('serves a URL of exactly 8,192 bytes (https://, host and target) and refuses one byte more with 413', async () => {
      // The URL CloudFront builds: "https://" + "x" (the Host) + the target.
      const target = (bytes: number) => {
        const prefix = '/api/plans?q=';
        return prefix + 'a'.repeat(bytes - 'https://x'.length - prefix.length);
      };
      const at = await rawRequest(server.url, `GET ${target(8192)} HTTP/1.1\r\nHost: x\r\n${KEY_LINE()}\r\n`);
      expect(at.status).toBe(200);
      const over = await rawRequest(
        server.url,
        `GET ${target(8193)} HTTP/1.1\r\nHost: x\r\n${KEY_LINE()}\r\n`,
      );
      expect(over.status).toBe(413);
      expect(over.head).toMatch(/\r\nConnection: close\r\n/i);
    });

    it('serves a request head of exactly 20,480 bytes and refuses one byte more with 413', async () => {
      const head = (bytes: number) => {
        const start = `GET /api/plans HTTP/1.1\r\nHost: x\r\n${KEY_LINE()}`;
        const fillerLine = (n: number) => `X-Filler: ${'f'.repeat(n)}\r\n`;
        const n = bytes - Buffer.byteLength(`${start}${fillerLine(0)}\r\n`);
        return `${start}${fillerLine(n)}\r\n`;
      };
      expect(Buffer.byteLength(head(20_480))).toBe(20_480);
      expect((await rawRequest(server.url, head(20_480))).status).toBe(200);
      const over = await rawRequest(server.url, head(20_481));
      expect(over.status).toBe(413);
      expect(over.head).toMatch(/\r\nConnection: close\r\n/i);
      expect((await get('/api/plans', world.keys.valid)).status).toBe(200);
    });
  });
});

describe('the edge server when sending an answer fails', () => {
  /** An edge that answers with a header value HTTP cannot carry for `/bad`, and a plain 200 otherwise. */
  const edge = {
    handle: async (raw: RawRequest): Promise<EdgeResponse> =>
      raw.target === '/bad'
        ? {
            status: 200,
            headers: { 'access-control-allow-origin': 'https://partner.example\u0007', 'x-ok': 'yes' },
            body: Buffer.from('should never be sent'),
            partner: 'acme',
          }
        : {
            status: 200,
            headers: { 'content-type': 'text/plain' },
            body: Buffer.from('fine'),
            partner: null,
          },
  };
  let server: Server;
  let url: string;
  const entries: AccessLogEntry[] = [];
  beforeAll(async () => {
    server = createEdgeServer({ edge, log: (entry) => entries.push(entry) });
    const address = await listen(server, 0, '127.0.0.1');
    url = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => shutdown(server));

  it('answers 502 for that request, logs why, and keeps serving the next ones', async () => {
    const bad = await httpRequest(url, { method: 'GET', target: '/bad' });
    expect(bad.status).toBe(502);
    expect(bad.headers['x-ok']).toBeUndefined();
    expect(bad.headers['access-control-allow-origin']).toBeUndefined();
    expect(bad.body.toString()).not.toContain('should never be sent');
    const entry = entries.find((e) => e.path === '/bad');
    expect(entry?.status).toBe(502);
    expect(entry?.error).toMatch(/Invalid character|ERR_INVALID_CHAR|sending the 200 failed/);
    const good = await httpRequest(url, { method: 'GET', target: '/good' });
    expect(good.status).toBe(200);
    expect(good.body.toString()).toBe('fine');
  });
});

describe("the edge server's connection limits", () => {
  const edge = {
    handle: async (): Promise<EdgeResponse> => ({
      status: 200,
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from('fine'),
      partner: null,
    }),
  };
  /** Short limits, so a slow client is cut in well under a second. */
  const limits = { headersMs: 400, requestMs: 800, keepAliveMs: 1_000 };
  /** How late a cut may come: the 5 % the server promises, and time for a busy machine to schedule it. */
  const late = (limitMs: number) => limitMs * 1.05 + 1_000;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // The server reads distribution.ts's limits once, when it is made: made short for this one.
    const real = { ...DISTRIBUTION.connectionLimits };
    Object.assign(DISTRIBUTION.connectionLimits, limits);
    try {
      server = createEdgeServer({ edge, log: () => {} });
    } finally {
      Object.assign(DISTRIBUTION.connectionLimits, real);
    }
    url = `http://127.0.0.1:${(await listen(server, 0, '127.0.0.1')).port}`;
  });
  afterAll(() => shutdown(server));

  /** Writes `text` one byte every `everyMs` until the connection closes; resolves when it has. */
  async function dribble(socket: Socket, text: string, everyMs: number): Promise<void> {
    for (const byte of text) {
      if (socket.destroyed || !socket.writable) return;
      socket.write(byte);
      await sleep(everyMs);
    }
  }

  it('uses the limits of distribution.ts, and looks for slow clients often enough to hold them', () => {
    const production = createEdgeServer({ edge, log: () => {} });
    const { headersMs, requestMs, keepAliveMs } = DISTRIBUTION.connectionLimits;
    expect(production.headersTimeout).toBe(headersMs);
    expect(production.requestTimeout).toBe(requestMs);
    expect(production.keepAliveTimeout).toBe(keepAliveMs);
    const interval = (production as Server & { connectionsCheckingInterval: number })
      .connectionsCheckingInterval;
    expect(interval).toBeLessThanOrEqual(Math.min(headersMs, requestMs) * 0.05);
  });

  it('answers 408 and closes a connection whose request head is still coming in after the head limit', async () => {
    const client = rawConnection(url);
    const started = performance.now();
    void dribble(client.socket, `GET /api/plans HTTP/1.1\r\nHost: x\r\nX-Filler: ${'f'.repeat(500)}`, 20);
    await within(5_000, async () => client.arrivedAt('\r\n\r\n') !== undefined);
    client.socket.destroy();
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(client.received()).toMatch(/\r\nConnection: close\r\n/);
    const cutAt = (client.arrivedAt('408') ?? Number.POSITIVE_INFINITY) - started;
    expect(cutAt).toBeGreaterThanOrEqual(limits.headersMs);
    expect(cutAt).toBeLessThan(late(limits.headersMs));
  });

  it('closes a connection whose request is still coming in after the request limit', async () => {
    const client = rawConnection(url);
    const started = performance.now();
    client.socket.write('POST /api/plans HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n');
    void dribble(client.socket, 'b'.repeat(1000), 20);
    const closedAt = await client.closed;
    // The request was answered when its head was complete; the cut adds no second status line.
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(client.received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(closedAt - started).toBeGreaterThanOrEqual(limits.requestMs);
    expect(closedAt - started).toBeLessThan(late(limits.requestMs));
  });

  it("tells the client the keep-alive limit and closes an idle connection after it (and Node's second of margin)", async () => {
    const client = rawConnection(url);
    client.socket.write('GET /api/plans HTTP/1.1\r\nHost: x\r\n\r\n');
    const closedAt = await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(client.received()).toMatch(/\r\nKeep-Alive: timeout=1\r\n/);
    const idle = closedAt - (client.arrivedAt('fine') ?? Number.POSITIVE_INFINITY);
    expect(idle).toBeGreaterThanOrEqual(limits.keepAliveMs);
    // Node keeps an idle connection one second past the limit it announces, so that a client reusing it
    // right at the limit is not cut mid-request.
    expect(idle).toBeLessThan(late(limits.keepAliveMs) + 1_000);
  });
});

describe('shutting the edge server down', () => {
  it('lets a request in flight finish for five seconds, then cuts its connection', async () => {
    let received = () => {};
    const inFlight = new Promise<void>((resolve) => {
      received = resolve;
    });
    const handle = () => {
      received();
      return new Promise<EdgeResponse>(() => {});
    };
    const server = createEdgeServer({ edge: { handle }, log: () => {} });
    const client = rawConnection(`http://127.0.0.1:${(await listen(server, 0, '127.0.0.1')).port}`);
    client.socket.write('GET /api/plans HTTP/1.1\r\nHost: x\r\n\r\n');
    await inFlight;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let stopped = false;
      const stopping = shutdown(server).then(() => {
        stopped = true;
      });
      await vi.advanceTimersByTimeAsync(4_900);
      expect(stopped).toBe(false);
      await vi.advanceTimersByTimeAsync(100);
      await stopping;
      await client.closed;
      expect(client.received()).toBe('');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('stopping catalog serve', () => {
  it('exits cleanly on SIGTERM', async () => {
    const world = await createTestWorld();
    try {
      const server = await startServe(['--origin', world.originDir, '--store', world.stores.plain], {
        process: true,
      });
      expect((await httpRequest(server.url, { method: 'GET', target: '/openapi.yaml' })).status).toBe(200);
      expect(await server.stop()).toBe(0);
    } finally {
      await rm(world.dir, { recursive: true, force: true });
    }
  });
});
