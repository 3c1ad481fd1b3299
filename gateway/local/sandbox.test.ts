import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ROOT } from '../../testing/cli.ts';
import { checkFunctionCode, functionUses, RUNTIME_OBJECTS } from '../functions/bundle.ts';
import type { CloudFrontEvent, Fields } from '../functions/event.ts';
import { FunctionError, type KeyValueReader, loadFunction } from './sandbox.ts';

/** A store holding `entries`, as the local store answers once a run has brought it up to date. */
const storeOf = (entries: Record<string, string>): KeyValueReader => ({
  refresh: () => undefined,
  peek: (key) => (Object.hasOwn(entries, key) ? entries[key] : undefined),
});
const emptyStore = storeOf({});

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

  it('requires crypto, the one module the functions use, and nothing else', async () => {
    expect(await evaluate('typeof require("crypto").createHash')).toBe('function');
    await expect(evaluate('require("querystring")')).rejects.toThrow(/Cannot find module "querystring"/);
    await expect(evaluate('require("fs")')).rejects.toThrow(/Cannot find module "fs"/);
    await expect(evaluate('require("node:crypto")')).rejects.toThrow(FunctionError);
  });

  it('hashes as the runtime does: md5, sha1, sha256 in hex, base64 or base64url, nothing else', async () => {
    const hash = (algorithm: string, encoding = '"hex"') =>
      evaluate(`require("crypto").createHash("${algorithm}").update("abc").update("é").digest(${encoding})`);
    expect(await hash('sha256')).toBe(createHash('sha256').update('abcé').digest('hex'));
    expect(await hash('md5', '"base64"')).toBe(createHash('md5').update('abcé').digest('base64'));
    expect(await hash('sha1', '"base64url"')).toBe(createHash('sha1').update('abcé').digest('base64url'));
    await expect(hash('sha512')).rejects.toThrow(/not supported hash algorithm: "sha512"/);
    await expect(hash('sha256', '')).rejects.toThrow(/unknown digest encoding/);
    await expect(
      evaluate(
        '(function (h) { h.digest("hex"); return h.digest("hex"); })(require("crypto").createHash("md5"))',
      ),
    ).rejects.toThrow(/Digest already called/);
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

  it('fixes Date.now() at the start of each call', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-21T10:00:00.000Z') });
    try {
      const fn = loadFunction(
        'async function handler(event) { var a = Date.now(); await null; var b = Date.now(); return { statusCode: 200, headers: {}, body: JSON.stringify([a, b]) }; }',
        { kvs: emptyStore },
      );
      const call = fn.run(event());
      vi.setSystemTime(Date.now() + 1_000);
      const first = JSON.parse(((await call) as { body: string }).body);
      expect(first).toEqual([Date.parse('2026-11-21T10:00:00.000Z'), Date.parse('2026-11-21T10:00:00.000Z')]);
      vi.setSystemTime(Date.now() + 60_000);
      const second = JSON.parse(((await fn.run(event())) as { body: string }).body);
      expect(second).toEqual([
        Date.parse('2026-11-21T10:01:01.000Z'),
        Date.parse('2026-11-21T10:01:01.000Z'),
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives each call the value it recorded with cf.logCustomData, running calls made at once one by one', async () => {
    const seen: string[] = [];
    const store: KeyValueReader = {
      refresh: () => undefined,
      peek: (key) => {
        seen.push(key);
        return key;
      },
    };
    // Each call awaits twice before it records: were the calls interleaved, the later ones would record first.
    const fn = loadFunction(
      'import cf from "cloudfront";\nvar kvs = cf.kvs();\nasync function handler(event) { var key = event.request.uri.slice(1); var v = await kvs.get(key); await kvs.get(key); if (v !== "none") cf.logCustomData(v); return event.request; }',
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
    expect(seen).toEqual(['first', 'first', 'second', 'second', 'none', 'none']);
  });

  it('fails a call that holds the next one up for five seconds, and runs the next', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const fn = loadFunction(
        'import cf from "cloudfront";\nasync function handler(event) { if (event.request.uri === "/hang") await new Promise(function () {}); cf.logCustomData(event.request.uri); return event.request; }',
        { kvs: emptyStore },
      );
      const at = (uri: string) => {
        const e = event();
        e.request.uri = uri;
        return fn.runLogged(e);
      };
      const hung = at('/hang');
      const next = at('/next');
      const failed = expect(hung).rejects.toThrow(
        new FunctionError('the function did not finish within 5000 ms'),
      );
      await vi.advanceTimersByTimeAsync(4_999);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      await failed;
      expect((await next).logData).toBe('/next');
      // With nothing waiting, the queue is empty again: a call runs at once.
      expect((await at('/after')).logData).toBe('/after');
    } finally {
      vi.useRealTimers();
    }
  });

  it('runs the next call when one throws before its first await', async () => {
    const fn = loadFunction(
      'import cf from "cloudfront";\nasync function handler(event) { if (event.request.uri === "/throw") null.x; cf.logCustomData(event.request.uri); return event.request; }',
      { kvs: emptyStore },
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
      { kvs: emptyStore },
    );
    expect((await fn.runLogged(event())).logData).toBe('x'.repeat(800));
  });

  it('reads the key-value store through cf.kvs(), which rejects for a missing key', async () => {
    const store = storeOf({ present: 'value' });
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

/** How a probe reaches each object of the runtime's modules, to look for a member on it. */
const REACH: Record<string, string> = {
  cloudfront: 'cf',
  KeyValueStore: 'cf.kvs()',
  crypto: 'require("crypto")',
  Hash: 'require("crypto").createHash("sha256")',
  querystring: 'require("querystring")',
  buffer: 'require("buffer")',
};

/**
 * The uses (in functionUses' notation) that the local runtime does not provide, each with what went wrong,
 * found by a function that looks for every one of them inside the runtime.
 */
async function notProvided(uses: readonly string[]): Promise<string[]> {
  const probes = uses.map((use) => {
    const [kind, name = ''] = use.split(' ');
    const [head = '', member] = name.split('.');
    const expression =
      kind === 'method'
        ? `[String, Array, RegExp, Number, Function, Object, Promise].some(function (c) { return typeof c.prototype.${name} === "function"; })`
        : kind === 'global'
          ? `typeof ${name} !== "undefined"`
          : `typeof ${REACH[head] ?? 'missingReach'}${member ? `.${member}` : ''} !== "undefined"`;
    return `check(${JSON.stringify(use)}, function () { return ${expression}; });`;
  });
  const fn = loadFunction(
    `import cf from "cloudfront";
function handler() {
  var missing = [];
  function check(use, probe) {
    try { if (!probe()) missing.push(use); } catch (e) { missing.push(use + ": " + e.message); }
  }
  ${probes.join('\n  ')}
  return { statusCode: 200, headers: {}, body: JSON.stringify(missing) };
}`,
    { kvs: emptyStore },
  );
  return JSON.parse(((await fn.run(event())) as { body: string }).body);
}

describe('what the local runtime provides', () => {
  it.each(['viewer-request', 'viewer-response'])(
    'provides every global, method and module member the built %s bundle uses',
    async (name) => {
      const code = await readFile(join(ROOT, 'dist/gateway', `${name}.js`), 'utf8');
      const uses = functionUses(code);
      expect(uses).toEqual(expect.arrayContaining(['runtime cloudfront.kvs', 'runtime KeyValueStore.get']));
      if (name === 'viewer-request')
        expect(uses).toEqual(
          expect.arrayContaining([
            'runtime cloudfront.logCustomData',
            'runtime Hash.digest',
            'global Date.now',
          ]),
        );
      expect(await notProvided(uses)).toEqual([]);
    },
  );

  it('tells which uses of a function it does not provide, though CloudFront offers them', async () => {
    const code = `import cf from "cloudfront";
var qs = require("querystring");
async function handler(event) {
  if (await cf.kvs().exists("k")) return qs.parse(atob(event.request.uri.trim()));
  return require("crypto").createHash("md5").update(event.request.uri).digest("hex");
}`;
    expect(checkFunctionCode(code)).toEqual([]);
    expect(await notProvided(functionUses(code))).toEqual([
      'global atob',
      'runtime KeyValueStore.exists',
      'runtime querystring: Cannot find module "querystring"',
      'runtime querystring.parse: Cannot find module "querystring"',
    ]);
  });

  it('knows how to reach every object of the runtime', () => {
    expect(Object.keys(REACH).sort()).toEqual(Object.keys(RUNTIME_OBJECTS).sort());
  });
});

describe('the boundary between a function and the Node process', () => {
  const store = storeOf({ present: 'value' });

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
    ['an unsupported hash error', 'try { require("crypto").createHash("sha512"); } catch (e) { value = e; }'],
    ['a digest error', 'try { require("crypto").createHash("md5").digest(); } catch (e) { value = e; }'],
    ['cf.logCustomData', 'value = cf.logCustomData;'],
    ['console.log', 'value = console.log;'],
    ['console', 'value = console;'],
    ['a console.log error', 'try { console.log(1, 2); } catch (e) { value = e; }'],
    ['Date', 'value = Date;'],
    ['the global object', 'value = globalThis;'],
  ])('does not let the function reach the host through %s', async (_name, body) => {
    expect(await reachesHost(body)).toBe('contained');
  });

  it("turns what the host throws into an error of the function's realm", async () => {
    const fn = loadFunction(
      `function handler() {
  var error;
  try { console.log("x"); } catch (e) { error = e; }
  var escaped;
  try { escaped = typeof error.constructor.constructor("return process")(); } catch (e) { escaped = "refused"; }
  return { statusCode: 200, headers: {}, body: JSON.stringify([error instanceof Error, error.message, escaped]) };
}`,
      {
        kvs: store,
        log: () => {
          throw new Error('the log is closed');
        },
      },
    );
    expect(JSON.parse(((await fn.run(event())) as { body: string }).body)).toEqual([
      true,
      'the log is closed',
      'refused',
    ]);
  });

  it('hands the function only objects of its own realm', async () => {
    const fn = loadFunction(
      `import cf from "cloudfront";
async function handler(event) {
  var roots = [["globalThis", globalThis], ["event", event], ["cf", cf], ["kvs", cf.kvs()],
    ["crypto", require("crypto")], ["hash", require("crypto").createHash("md5")], ["console", console],
    ["promise", cf.kvs().get("present")]];
  try { await cf.kvs().get("absent"); } catch (e) { roots.push(["rejection", e]); }
  try { require("fs"); } catch (e) { roots.push(["requireError", e]); }
  try { require("crypto").createHash("md5").digest(); } catch (e) { roots.push(["digestError", e]); }
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
