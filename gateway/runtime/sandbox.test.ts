import { describe, expect, it } from 'vitest';
import type { CloudFrontEvent } from '../functions/event.ts';
import { FunctionError, type KeyValueReader, loadFunction } from './sandbox.ts';

const emptyStore: KeyValueReader = {
  get: (key) => Promise.reject(new Error(`missing ${key}`)),
  exists: async () => false,
};

function event(eventType = 'viewer-request'): CloudFrontEvent {
  return {
    version: '1.0',
    context: { eventType },
    viewer: { ip: '127.0.0.1' },
    request: {
      method: 'GET',
      uri: '/api/plans',
      querystring: {},
      headers: { host: { value: 'x' } },
      cookies: {},
    },
    ...(eventType === 'viewer-response'
      ? { response: { statusCode: 200, headers: { via: { value: '1.1 x' } } } }
      : {}),
  };
}

/** Runs a handler body in the sandbox and returns what it answered (`statusCode` 200, body = JSON of `value`). */
async function evaluate(expression: string): Promise<unknown> {
  const fn = loadFunction(
    `function handler(event) { return { statusCode: 200, headers: {}, body: JSON.stringify({ value: ${expression} }) }; }`,
    { kvs: emptyStore },
  );
  const response = (await fn.run(event())) as { body: string };
  return JSON.parse(response.body).value;
}

describe('the local cloudfront-js-2.0 runtime', () => {
  it.each([
    ['process', 'typeof process'],
    ['setTimeout', 'typeof setTimeout'],
    ['setInterval', 'typeof setInterval'],
    ['fetch', 'typeof fetch'],
    ['module', 'typeof module'],
    ['Buffer as a global', 'typeof Buffer'],
  ])('offers no %s', async (_name, expression) => {
    expect(await evaluate(expression)).toBe('undefined');
  });

  it('refuses eval and the Function constructor', async () => {
    await expect(evaluate('eval("1 + 1")')).rejects.toThrow(FunctionError);
    await expect(evaluate('new Function("return 1")()')).rejects.toThrow(FunctionError);
  });

  it('requires only crypto, querystring and buffer', async () => {
    expect(await evaluate('typeof require("crypto").createHash')).toBe('function');
    expect(await evaluate('typeof require("querystring").parse')).toBe('function');
    expect(await evaluate('typeof require("buffer").Buffer')).toBe('function');
    await expect(evaluate('require("fs")')).rejects.toThrow(/Cannot find module "fs"/);
    await expect(evaluate('require("node:crypto")')).rejects.toThrow(FunctionError);
  });

  it('hashes as the runtime does: md5, sha1, sha256 in hex, base64 or base64url, nothing else', async () => {
    expect(await evaluate('require("crypto").createHash("sha256").update("abc").digest("hex")')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(
      await evaluate('require("crypto").createHmac("sha1", "k").update("abc").digest("base64url")'),
    ).toMatch(/^[\w-]+$/);
    await expect(evaluate('require("crypto").createHash("sha512")')).rejects.toThrow(/not supported hash/);
  });

  it('allows console.log with one argument only', async () => {
    const lines: string[] = [];
    const fn = loadFunction(
      'function handler(event) { console.log("seen " + event.request.uri); return event.request; }',
      {
        kvs: emptyStore,
        log: (line) => lines.push(line),
      },
    );
    await fn.run(event());
    expect(lines).toEqual(['seen /api/plans']);
    await expect(evaluate('console.log("a", "b")')).rejects.toThrow(/exactly one argument/);
  });

  it('fixes Date at the start of each call', async () => {
    let now = Date.parse('2026-11-21T10:00:00.000Z');
    const fn = loadFunction(
      'function handler(event) { var a = Date.now(); for (var i = 0; i < 1e6; i++) {} return { statusCode: 200, headers: {}, body: JSON.stringify([a, Date.now(), new Date().toISOString()]) }; }',
      { kvs: emptyStore, now: () => now },
    );
    const first = JSON.parse(((await fn.run(event())) as { body: string }).body);
    expect(first).toEqual([now, now, '2026-11-21T10:00:00.000Z']);
    now += 60_000;
    const second = JSON.parse(((await fn.run(event())) as { body: string }).body);
    expect(second[0]).toBe(now);
  });

  it('reads the key-value store through cf.kvs(), which rejects for a missing key', async () => {
    const store: KeyValueReader = {
      get: async (key) => {
        if (key === 'present') return 'value';
        throw new Error('missing');
      },
      exists: async (key) => key === 'present',
    };
    const fn = loadFunction(
      'import cf from "cloudfront";\nvar kvs = cf.kvs();\nasync function handler(event) { var a = await kvs.get("present"); var b; try { await kvs.get("absent"); b = "found"; } catch (e) { b = "rejected"; } return { statusCode: 200, headers: {}, body: a + " " + b }; }',
      { kvs: store },
    );
    expect(((await fn.run(event())) as { body: string }).body).toBe('value rejected');
  });

  it.each([
    ['an exception', 'function handler(event) { throw new Error("boom"); }', /threw: boom/],
    [
      'a disallowed header',
      'function handler(event) { return { statusCode: 200, headers: { "x-cache": { value: "x" } } }; }',
      /disallowed header "x-cache"/,
    ],
    [
      'a changed read-only request header',
      'function handler(event) { event.request.headers.host = { value: "evil" }; return event.request; }',
      /read-only header "host"/,
    ],
    [
      'a changed method',
      'function handler(event) { event.request.method = "POST"; return event.request; }',
      /method/,
    ],
    [
      'an upper-case header name',
      'function handler(event) { return { statusCode: 200, headers: { "X-A": { value: "x" } } }; }',
      /lowercase/,
    ],
    [
      'a status that is not HTTP',
      'function handler(event) { return { statusCode: 1000, headers: {} }; }',
      /not an HTTP status/,
    ],
    [
      'a uri without a slash',
      'function handler(event) { event.request.uri = "x"; return event.request; }',
      /uri must start/,
    ],
  ])('turns %s into a function error (CloudFront answers 502)', async (_name, code, message) => {
    const fn = loadFunction(code, { kvs: emptyStore });
    await expect(fn.run(event())).rejects.toThrow(message);
  });

  it('lets viewer-response keep but not change its read-only Via header', async () => {
    const keeps = loadFunction('function handler(event) { return event.response; }', { kvs: emptyStore });
    await expect(keeps.run(event('viewer-response'))).resolves.toMatchObject({ statusCode: 200 });
    const changes = loadFunction(
      'function handler(event) { event.response.headers.via = { value: "2" }; return event.response; }',
      {
        kvs: emptyStore,
      },
    );
    await expect(changes.run(event('viewer-response'))).rejects.toThrow(/read-only header "via"/);
  });

  it('refuses code without a top-level handler', () => {
    expect(() => loadFunction('function other() {}', { kvs: emptyStore })).toThrow(/no top-level handler/);
    expect(() => loadFunction('function handler( {', { kvs: emptyStore })).toThrow(/does not load/);
  });
});
