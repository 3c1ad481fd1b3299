import { describe, expect, it } from 'vitest';
import type { CloudFrontEvent, Fields } from '../functions/event.ts';
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

  it('offers the buffer module, TextEncoder/TextDecoder, atob/btoa and querystring with the results of Node', async () => {
    const b = 'require("buffer").Buffer';
    expect(await evaluate(`${b}.from("héllo").toString("base64")`)).toBe(
      Buffer.from('héllo').toString('base64'),
    );
    expect(await evaluate(`${b}.from("aGk=", "base64").toString()`)).toBe('hi');
    expect(await evaluate(`${b}.from("ff00", "hex").length`)).toBe(2);
    expect(await evaluate(`${b}.concat([${b}.from("a"), ${b}.from("bc")]).toString("hex")`)).toBe('616263');
    expect(await evaluate(`${b}.byteLength("é")`)).toBe(2);
    expect(await evaluate(`${b}.isBuffer(${b}.alloc(3))`)).toBe(true);
    expect(await evaluate(`${b}.from("abc").equals(${b}.from([97, 98, 99]))`)).toBe(true);
    expect(await evaluate(`${b}.from("abcdef").slice(1, 3).toString()`)).toBe('bc');
    expect(
      await evaluate('require("crypto").createHash("sha256").update("abc").digest().toString("hex")'),
    ).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await evaluate('new TextEncoder().encode("é").length')).toBe(2);
    expect(await evaluate('new TextDecoder().decode(new TextEncoder().encode("añb"))')).toBe('añb');
    expect(await evaluate('atob(btoa("hi"))')).toBe('hi');
    expect(await evaluate('require("querystring").parse("a=1&a=2&b=%20")')).toEqual({
      a: ['1', '2'],
      b: ' ',
    });
    expect(await evaluate('require("querystring").stringify({ a: ["1", "2"], b: " " })')).toBe(
      'a=1&a=2&b=%20',
    );
    await expect(evaluate(`${b}.from("x", "nope")`)).rejects.toThrow(/Unknown encoding/);
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

  it('gives each call the value it recorded with cf.logCustomData, running calls made at once one by one', async () => {
    const seen: string[] = [];
    const store: KeyValueReader = {
      // The first lookup answers last: were the calls interleaved, the later ones would record first.
      get: (key) => {
        seen.push(`get ${key}`);
        return new Promise((resolve) =>
          setTimeout(
            () => {
              seen.push(`got ${key}`);
              resolve(key);
            },
            key === 'first' ? 30 : 1,
          ),
        );
      },
      exists: async () => true,
    };
    const fn = loadFunction(
      'import cf from "cloudfront";\nvar kvs = cf.kvs();\nasync function handler(event) { var v = await kvs.get(event.request.uri.slice(1)); if (v !== "none") cf.logCustomData(v); return event.request; }',
      { kvs: store },
    );
    const at = (uri: string) => {
      const e = event();
      e.request.uri = uri;
      return fn.runLogged(e);
    };
    const [first, second, none] = await Promise.all([at('/first'), at('/second'), at('/none')]);
    expect(first?.logData).toBe('first');
    expect(second?.logData).toBe('second');
    expect(none?.logData).toBeNull();
    expect(seen).toEqual(['get first', 'got first', 'get second', 'got second', 'get none', 'got none']);
  });

  it('fails a call that holds the next one up past the hold limit, and runs the next', async () => {
    const store: KeyValueReader = {
      get: (key) => (key === 'hang' ? new Promise(() => {}) : Promise.resolve(key)),
      exists: async () => true,
    };
    const fn = loadFunction(
      'import cf from "cloudfront";\nvar kvs = cf.kvs();\nasync function handler(event) { cf.logCustomData(await kvs.get(event.request.uri.slice(1))); return event.request; }',
      { kvs: store, holdLimitMs: 40 },
    );
    const at = (uri: string) => {
      const e = event();
      e.request.uri = uri;
      return fn.runLogged(e);
    };
    const hung = at('/hang');
    const next = at('/next');
    await expect(hung).rejects.toThrow(new FunctionError('the function did not finish within 40 ms'));
    expect((await next).logData).toBe('next');
    // With nothing waiting, the queue is empty again: a call runs at once.
    expect((await at('/after')).logData).toBe('after');
  });

  it('runs the next call when one throws before its first await', async () => {
    const fn = loadFunction(
      'import cf from "cloudfront";\nasync function handler(event) { if (event.request.uri === "/throw") null.x; cf.logCustomData(event.request.uri); return event.request; }',
      { kvs: { get: async () => '', exists: async () => false } },
    );
    const at = (uri: string) => {
      const e = event();
      e.request.uri = uri;
      return fn.runLogged(e);
    };
    const [thrown, after] = await Promise.allSettled([at('/throw'), at('/after')]);
    expect(thrown.status).toBe('rejected');
    expect(after).toEqual({ status: 'fulfilled', value: expect.objectContaining({ logData: '/after' }) });
  });

  it('keeps at most 800 bytes of a recorded value, as CloudFront does', async () => {
    const fn = loadFunction(
      'import cf from "cloudfront";\nfunction handler(event) { cf.logCustomData("x".repeat(900)); return event.request; }',
      { kvs: { get: async () => '', exists: async () => false } },
    );
    expect((await fn.runLogged(event())).logData).toBe('x'.repeat(800));
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
      'a header value HTTP cannot carry',
      'function handler(event) { return { statusCode: 200, headers: { "access-control-allow-origin": { value: "https://a.example\\u0007" } } }; }',
      /cannot be sent over HTTP/,
    ],
    [
      'a header name HTTP cannot carry',
      'function handler(event) { return { statusCode: 200, headers: { "a b": { value: "x" } } }; }',
      /cannot be sent over HTTP/,
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
    expect(() => loadFunction('var handler = 42;', { kvs: emptyStore })).toThrow(/no top-level handler/);
  });

  it('hands the function the event as JSON would carry it, a field named __proto__ included', async () => {
    const sent = event();
    // JSON.parse makes `__proto__` an own field, as the edge's header maps (without a prototype) hold it.
    sent.request.headers = JSON.parse(
      '{"host":{"value":"x"},"__proto__":{"value":"p"},"constructor":{"value":"c"}}',
    ) as Fields;
    Object.assign(sent.context, { distributionId: undefined, requestId: 'r', score: Number.NaN });
    Object.assign(sent.viewer, { list: ['a', undefined, Number.POSITIVE_INFINITY, { b: 1 }] });
    const fn = loadFunction(
      `function handler(event) {
        var h = event.request.headers;
        var shape = [Object.getPrototypeOf(h) === Object.prototype, Object.prototype.hasOwnProperty.call(h, '__proto__'),
          h.__proto__.value, 'distributionId' in event.context, Object.keys(h)];
        return { statusCode: 200, headers: {}, body: JSON.stringify([shape, event]) };
      }`,
      { kvs: emptyStore },
    );
    const body = ((await fn.run(sent)) as { body: string }).body;
    expect(JSON.parse(body)).toEqual([
      [true, true, 'p', false, ['host', '__proto__', 'constructor']],
      JSON.parse(JSON.stringify(sent)),
    ]);
  });

  it('runs the code as a script: top-level `this` is the global object, a handler may be put on it', async () => {
    const answer = (fn: ReturnType<typeof loadFunction>) =>
      fn.run(event()).then((result) => (result as { body?: unknown }).body);
    const declared = loadFunction(
      `var top = this === globalThis && typeof this.Object === 'function';
       function handler() { return { statusCode: 200, headers: {}, body: String(top) }; }`,
      { kvs: emptyStore },
    );
    expect(await answer(declared)).toBe('true');
    const assigned = loadFunction(
      `globalThis.handler = function () { return { statusCode: 200, headers: {}, body: 'assigned' }; };`,
      { kvs: emptyStore },
    );
    expect(await answer(assigned)).toBe('assigned');
  });
});

describe('the boundary between a function and the Node process', () => {
  const store: KeyValueReader = {
    get: async (key) => {
      if (key === 'present') return 'value';
      throw new Error('missing');
    },
    exists: async (key) => key === 'present',
  };

  /** Runs `body` (which sets `value`) in a handler; answers "escaped" when `value` leads to the host. */
  async function reachesHost(body: string): Promise<string> {
    const fn = loadFunction(
      `import cf from "cloudfront";
async function handler(event) {
  var value;
  ${body}
  var outcome = "contained";
  var makers = [];
  if (typeof value === "function") makers.push(value.constructor);
  if (value !== null && value !== undefined) {
    if (value.constructor) makers.push(value.constructor.constructor);
    var proto = Object.getPrototypeOf(value);
    if (proto && proto.constructor) makers.push(proto.constructor.constructor);
  }
  for (var i = 0; i < makers.length; i++) {
    try {
      var found = makers[i]("return typeof process === 'object' ? process : null")();
      if (found && typeof found.pid === "number") outcome = "escaped";
    } catch (e) {}
  }
  return { statusCode: 200, headers: {}, body: outcome };
}`,
      { kvs: store },
    );
    return ((await fn.run(event())) as { body: string }).body;
  }

  it.each([
    ['the event', 'value = event;'],
    ['the request', 'value = event.request;'],
    ['a header map', 'value = event.request.headers;'],
    ['a header field', 'value = event.request.headers.host;'],
    ['the event context', 'value = event.context;'],
    ['cf', 'value = cf;'],
    ['cf.kvs', 'value = cf.kvs;'],
    ['the key-value store', 'value = cf.kvs();'],
    ['its get method', 'value = cf.kvs().get;'],
    ['a promise it returns', 'value = cf.kvs().get("present");'],
    ['its rejection', 'try { await cf.kvs().get("absent"); } catch (e) { value = e; }'],
    ['require', 'value = require;'],
    ['the error of a refused require', 'try { require("fs"); } catch (e) { value = e; }'],
    ['the crypto module', 'value = require("crypto");'],
    ['createHash', 'value = require("crypto").createHash;'],
    ['a hash', 'value = require("crypto").createHash("sha256");'],
    ['a digest without encoding', 'value = require("crypto").createHash("sha256").update("a").digest();'],
    ['an unsupported hash error', 'try { require("crypto").createHash("sha512"); } catch (e) { value = e; }'],
    ['querystring.parse', 'value = require("querystring").parse;'],
    ['a parsed query string', 'value = require("querystring").parse("a=1&a=2");'],
    ['Buffer', 'value = require("buffer").Buffer;'],
    ['a buffer', 'value = require("buffer").Buffer.from("abc");'],
    ['console.log', 'value = console.log;'],
    ['console', 'value = console;'],
    ['a console.log error', 'try { console.log(1, 2); } catch (e) { value = e; }'],
    ['TextEncoder', 'value = TextEncoder;'],
    ['an encoded string', 'value = new TextEncoder().encode("a");'],
    ['TextDecoder', 'value = new TextDecoder();'],
    ['atob', 'value = atob;'],
    ['an atob error', 'try { atob("%%%"); } catch (e) { value = e; }'],
    ['btoa', 'value = btoa;'],
    ['Date', 'value = Date;'],
    ['the global object', 'value = globalThis;'],
  ])('does not let the function reach the host through %s', async (_name, body) => {
    expect(await reachesHost(body)).toBe('contained');
  });

  it('hands the function only objects of its own realm', async () => {
    const fn = loadFunction(
      `import cf from "cloudfront";
async function handler(event) {
  var roots = [["globalThis", globalThis], ["event", event], ["cf", cf], ["kvs", cf.kvs()],
    ["crypto", require("crypto")], ["querystring", require("querystring")], ["buffer", require("buffer")],
    ["hash", require("crypto").createHash("md5")], ["hmac", require("crypto").createHmac("sha1", "k")],
    ["digest", require("crypto").createHash("md5").update("x").digest()],
    ["parsed", require("querystring").parse("a=1")], ["buf", require("buffer").Buffer.from("x")],
    ["encoded", new TextEncoder().encode("x")], ["decoder", new TextDecoder()],
    ["promise", cf.kvs().get("present")], ["exists", cf.kvs().exists("present")]];
  try { await cf.kvs().get("absent"); } catch (e) { roots.push(["rejection", e]); }
  try { require("fs"); } catch (e) { roots.push(["requireError", e]); }
  var seen = [];
  var foreign = [];
  var queue = roots.slice();
  while (queue.length > 0 && seen.length < 20000) {
    var item = queue.shift();
    var path = item[0];
    var value = item[1];
    if ((typeof value !== "object" && typeof value !== "function") || value === null) continue;
    if (seen.indexOf(value) !== -1) continue;
    seen.push(value);
    var proto = Object.getPrototypeOf(value);
    if (proto !== null && !(value instanceof Object)) { foreign.push(path); continue; }
    queue.push([path + ".__proto__", proto]);
    var names = Object.getOwnPropertyNames(value);
    for (var i = 0; i < names.length; i++) {
      var d = Object.getOwnPropertyDescriptor(value, names[i]);
      if (typeof value === "function" && (names[i] === "caller" || names[i] === "arguments")) continue;
      queue.push([path + "." + names[i], d.value]);
      if (d.get) queue.push([path + ".get " + names[i], d.get]);
      if (d.set) queue.push([path + ".set " + names[i], d.set]);
    }
  }
  return { statusCode: 200, headers: {}, body: JSON.stringify(foreign) };
}`,
      { kvs: store },
    );
    const result = (await fn.run(event())) as { body: string };
    expect(JSON.parse(result.body)).toEqual([]);
  });
});
