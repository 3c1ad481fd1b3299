/**
 * A local stand-in for the cloudfront-js-2.0 runtime: runs a built function bundle (never the TypeScript
 * source) in a `node:vm` context that offers what the runtime offers and nothing more — `require` of crypto
 * (createHash, createHmac), querystring and buffer; `cf.kvs()` over a local store; `cf.logCustomData()`, whose
 * value each call's result carries (the access-log record's `viewer-request-log-data`); a one-argument
 * `console.log`; a `Date` fixed at the start of each call; no process, timers, fetch, eval or Node `require`.
 *
 * As on CloudFront, nothing the function can reach belongs to the Node process: the event is copied into
 * objects of the context by code running there, the result comes out as JSON, and every object of the
 * runtime (modules, the store and its promises, errors) is made by code running in the context, so
 * `x.constructor.constructor` is always the context's `Function`, which cannot compile strings. (This guards
 * against hostile requests, not against hostile function code: the bundles are ours.)
 *
 * Results are checked as CloudFront checks them: an exception, a header a function may not set, or a header
 * HTTP cannot carry gives the 502 CloudFront would answer.
 */
import { createHmac, hash } from 'node:crypto';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import querystring from 'node:querystring';
import vm from 'node:vm';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse } from '../functions/event.ts';

/** What `cf.kvs()` gives a function: `get` rejects when the key is missing. */
export interface KeyValueReader {
  get(key: string): Promise<string>;
  exists(key: string): Promise<boolean>;
  /**
   * A store that can answer from memory (the local store file) offers both: `refresh` brings it up to date
   * once, when a run starts (`undefined` when it already is), and the run's lookups `peek` at once.
   */
  refresh?(): Promise<void> | undefined;
  peek?(key: string): string | undefined;
}

/** Why a function run failed; the edge answers 502, as CloudFront does. */
export class FunctionError extends Error {
  override name = 'FunctionError';
}

/** Headers no function may set (CloudFront answers 502). Prefixes end with `-`. */
const DISALLOWED = [
  'connection',
  'expect',
  'keep-alive',
  'proxy-',
  'trailer',
  'upgrade',
  'x-accel-',
  'x-amz-cf-',
  'x-amzn-',
  'x-cache',
  'x-edge-',
  'x-forwarded-proto',
  'x-real-ip',
];
const READ_ONLY_IN_REQUEST = ['cdn-loop', 'content-length', 'host', 'transfer-encoding', 'via'];
const READ_ONLY_IN_RESPONSE = ['warning', 'via'];

/** The disallowed names as one pattern (a prefix rule matches the start of a name, any other the whole name). */
const DISALLOWED_PATTERN = new RegExp(
  `^(?:${DISALLOWED.map((rule) => (rule.endsWith('-') ? `${rule}.*` : rule)).join('|')})$`,
);

function isDisallowed(name: string): boolean {
  return DISALLOWED_PATTERN.test(name);
}

/**
 * The runtime as the function sees it, built inside the function's own context so that every object it can
 * reach (the event, `cf.kvs()` and its promises, the modules, `console`, errors) belongs to that context:
 * nothing leads back to the Node process (`x.constructor.constructor` is the context's `Function`, which
 * cannot compile strings). It talks to the host only through `bridge`, a closure variable no function code
 * can reach, and only in strings, numbers and booleans; the event comes in as the host's plain data and is
 * copied into objects of the context before the function sees it. Evaluates to a function of (bridge, cf
 * name) that installs the globals and returns the context-side controls.
 */
const RUNTIME = `(function (bridge, cfName) {
  'use strict';
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var P = Promise;
  // Built-ins the hot paths use, held here: a global name read in a vm context goes through Node's interceptor.
  var Err = Error;
  var Str = String;
  var U8 = Uint8Array;
  var fromCharCode = String.fromCharCode;
  var hasOwn = Object.prototype.hasOwnProperty;
  var keys = Object.keys;
  var isArray = Array.isArray;
  var defineProperty = Object.defineProperty;
  var ERRORS = { TypeError: TypeError, RangeError: RangeError, SyntaxError: SyntaxError };

  /** Calls the host; a host error becomes an error of this context carrying only its name and message. */
  function host(fn, args) {
    try {
      return fn.apply(undefined, args);
    } catch (e) {
      var name = e && typeof e.name === 'string' ? e.name : 'Error';
      var message = e && typeof e.message === 'string' ? e.message : String(e);
      var error = new (hasOwn.call(ERRORS, name) ? ERRORS[name] : Error)(message);
      if (!hasOwn.call(ERRORS, name) && name !== 'Error') error.name = name;
      throw error;
    }
  }

  // Bytes cross the boundary as latin1 strings (one character per byte).
  function bytesToLatin1(bytes) {
    var out = '';
    for (var i = 0; i < bytes.length; i += 8192) {
      out += fromCharCode.apply(undefined, Array.prototype.slice.call(bytes, i, i + 8192));
    }
    return out;
  }
  function latin1Into(target, text) {
    for (var i = 0; i < text.length; i++) target[i] = text.charCodeAt(i);
    return target;
  }
  function bytesOf(value) {
    if (value instanceof U8) return value;
    if (value instanceof ArrayBuffer) return new U8(value);
    if (ArrayBuffer.isView(value)) return new U8(value.buffer, value.byteOffset, value.byteLength);
    throw new TypeError('expected a string, Buffer, TypedArray, DataView or ArrayBuffer');
  }

  /** The buffer module's Buffer, on this context's Uint8Array (the common subset of Node's). */
  class Buffer extends U8 {
    static from(value, encoding, length) {
      if (typeof value === 'string') {
        var text = host(bridge.encode, [value, encoding === undefined ? 'utf8' : String(encoding)]);
        return latin1Into(new Buffer(text.length), text);
      }
      if (value instanceof ArrayBuffer) return new Buffer(value, encoding || 0, length);
      if (Array.isArray(value) || ArrayBuffer.isView(value)) {
        var source = Array.isArray(value) ? value : bytesOf(value);
        var copy = new Buffer(source.length);
        for (var i = 0; i < source.length; i++) copy[i] = source[i] & 255;
        return copy;
      }
      throw new TypeError('The first argument must be a string, Buffer, ArrayBuffer, Array or array-like object');
    }
    static alloc(size, fill, encoding) {
      var buffer = new Buffer(size);
      if (fill !== undefined && fill !== 0) buffer.fill(fill, 0, size, encoding);
      return buffer;
    }
    static allocUnsafe(size) {
      return new Buffer(size);
    }
    static byteLength(value, encoding) {
      if (typeof value === 'string') return Buffer.from(value, encoding).length;
      return bytesOf(value).byteLength;
    }
    static isBuffer(value) {
      return value instanceof Buffer;
    }
    static isEncoding(encoding) {
      return typeof encoding === 'string' && host(bridge.isEncoding, [encoding]) === true;
    }
    static concat(list, totalLength) {
      var total = 0;
      for (var i = 0; i < list.length; i++) total += list[i].length;
      var out = Buffer.alloc(totalLength === undefined ? total : totalLength);
      var at = 0;
      for (var j = 0; j < list.length && at < out.length; j++) {
        var part = bytesOf(list[j]);
        out.set(part.subarray(0, out.length - at), at);
        at += part.length;
      }
      return out;
    }
    static compare(a, b) {
      return Buffer.prototype.compare.call(a, b);
    }
    fill(value, offset, end, encoding) {
      if (typeof value === 'string') {
        var pattern = Buffer.from(value, encoding);
        var from = offset || 0;
        var to = end === undefined ? this.length : end;
        for (var i = from; i < to && pattern.length > 0; i++) this[i] = pattern[(i - from) % pattern.length];
        return this;
      }
      return super.fill(value, offset, end);
    }
    toString(encoding, start, end) {
      var part = this.subarray(start || 0, end === undefined ? this.length : end);
      return host(bridge.decode, [bytesToLatin1(part), encoding === undefined ? 'utf8' : String(encoding)]);
    }
    toJSON() {
      return { type: 'Buffer', data: Array.prototype.slice.call(this) };
    }
    equals(other) {
      return this.compare(other) === 0;
    }
    compare(other) {
      var b = bytesOf(other);
      var n = Math.min(this.length, b.length);
      for (var i = 0; i < n; i++) if (this[i] !== b[i]) return this[i] < b[i] ? -1 : 1;
      return this.length === b.length ? 0 : this.length < b.length ? -1 : 1;
    }
    slice(start, end) {
      return this.subarray(start, end);
    }
    write(text, offset) {
      var bytes = Buffer.from(String(text));
      var at = offset || 0;
      var n = Math.min(bytes.length, this.length - at);
      for (var i = 0; i < n; i++) this[at + i] = bytes[i];
      return n;
    }
  }

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(text) {
      var bytes = host(bridge.encode, [text === undefined ? '' : String(text), 'utf8']);
      return latin1Into(new U8(bytes.length), bytes);
    }
  }
  class TextDecoder {
    constructor(label, options) {
      var name = label === undefined ? 'utf-8' : String(label).trim().toLowerCase();
      if (name !== 'utf-8' && name !== 'utf8' && name !== 'unicode-1-1-utf-8') {
        throw new RangeError('The "' + label + '" encoding is not supported');
      }
      this._fatal = !!(options && options.fatal);
      this._ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() {
      return 'utf-8';
    }
    decode(input) {
      if (input === undefined) return '';
      return host(bridge.decodeUtf8, [bytesToLatin1(bytesOf(input)), this._fatal, this._ignoreBOM]);
    }
  }

  var HASHES = ['md5', 'sha1', 'sha256'];
  var DIGESTS = ['hex', 'base64', 'base64url'];
  function hasher(algorithm, key) {
    if (HASHES.indexOf(algorithm) === -1) {
      throw new TypeError('not supported hash algorithm: "' + algorithm + '"');
    }
    var chunks = [];
    var done = false;
    var api = {
      update: function update(data) {
        if (done) throw new Error('Digest already called');
        chunks.push(String(data));
        return api;
      },
      digest: function digest(encoding) {
        if (done) throw new Error('Digest already called');
        if (encoding !== undefined && DIGESTS.indexOf(encoding) === -1) {
          throw new TypeError('unknown digest encoding "' + encoding + '"');
        }
        done = true;
        var text = host(bridge.digest, [algorithm, key, chunks.join(''), encoding === undefined ? 'base64' : encoding]);
        return encoding === undefined ? Buffer.from(text, 'base64') : text;
      },
    };
    return api;
  }
  var crypto = {
    createHash: function createHash(algorithm) {
      return hasher(algorithm, null);
    },
    createHmac: function createHmac(algorithm, key) {
      return hasher(algorithm, String(key));
    },
  };

  var querystring = {
    parse: function parse_(text, sep, eq, options) {
      var maxKeys = options && typeof options.maxKeys === 'number' ? options.maxKeys : 1000;
      return parse(host(bridge.qsParse, [String(text), sep === undefined ? '&' : String(sep), eq === undefined ? '=' : String(eq), maxKeys]));
    },
    stringify: function stringify_(object, sep, eq) {
      return host(bridge.qsStringify, [stringify(object === undefined ? {} : object), sep === undefined ? '&' : String(sep), eq === undefined ? '=' : String(eq)]);
    },
    escape: function escape(text) {
      return host(bridge.qsEscape, [String(text)]);
    },
    unescape: function unescape(text) {
      return host(bridge.qsUnescape, [String(text)]);
    },
  };
  querystring.decode = querystring.parse;
  querystring.encode = querystring.stringify;

  var modules = { crypto: crypto, querystring: querystring, buffer: { Buffer: Buffer } };

  /**
   * The rejection of a lookup: an Error without a stack trace, which would only point into this shim (a
   * missing key is an everyday answer of the store, e.g. no CORS origin, and a stack costs microseconds).
   */
  function storeError(message) {
    var limit = Err.stackTraceLimit;
    Err.stackTraceLimit = 0;
    try {
      return new Err(Str(message));
    } finally {
      Err.stackTraceLimit = limit;
    }
  }

  /**
   * Rejects a lookup once its caller has had the promise (a microtask later): a promise rejected before
   * anything handles it is tracked by the host as a possible unhandled rejection, at a cost on every miss.
   */
  function rejectLater(reject, message) {
    P.resolve().then(function () {
      reject(storeError(message));
    });
  }

  var store = {
    get: function get(key, options) {
      return new P(function (resolve, reject) {
        bridge.kvsGet(
          Str(key),
          function (value) {
            if (options && options.format === 'json') {
              try {
                resolve(parse(value));
              } catch (e) {
                reject(e);
              }
            } else resolve(Str(value));
          },
          function (message) {
            rejectLater(reject, message);
          },
        );
      });
    },
    exists: function exists(key) {
      return new P(function (resolve, reject) {
        bridge.kvsExists(
          Str(key),
          function (found) {
            resolve(found === true);
          },
          function (message) {
            reject(storeError(message));
          },
        );
      });
    },
  };

  globalThis[cfName] = {
    kvs: function kvs() {
      return store;
    },
    logCustomData: function logCustomData(value) {
      host(bridge.logData, [Str(value)]);
    },
  };
  globalThis.require = function require(name) {
    if (typeof name !== 'string' || !hasOwn.call(modules, name)) {
      throw new Error('Cannot find module "' + String(name) + '"');
    }
    return modules[name];
  };
  globalThis.console = {
    log: function log(value) {
      if (arguments.length !== 1) throw new TypeError('console.log takes exactly one argument in cloudfront-js-2.0');
      host(bridge.log, [typeof value === 'string' ? value : String(stringify(value))]);
    },
  };
  globalThis.TextEncoder = TextEncoder;
  globalThis.TextDecoder = TextDecoder;
  globalThis.atob = function atob(text) {
    return host(bridge.atob, [String(text)]);
  };
  globalThis.btoa = function btoa(text) {
    return host(bridge.btoa, [String(text)]);
  };

  // A Date whose "now" is fixed per call.
  var RealDate = Date;
  var fixed = RealDate.now();
  class FixedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(fixed);
      else super(...args);
    }
    static now() {
      return fixed;
    }
  }
  globalThis.Date = new Proxy(FixedDate, {
    apply: function () {
      return new RealDate(fixed).toString();
    },
  });

  /**
   * The host's event as data of this context, as JSON.parse(JSON.stringify(event)) would give it (about five
   * times faster): own enumerable names in order, no undefined or function values (null in an array), a
   * number that is not finite as null. The event is plain data (event.ts builds it) and the host object is
   * read here only, never handed on. A name '__proto__' is defined like any other; other names are set.
   */
  function imported(value) {
    if (typeof value === 'number') return value === value && value !== Infinity && value !== -Infinity ? value : null;
    if (typeof value !== 'object' || value === null) return value;
    var i;
    if (isArray(value)) {
      var list = [];
      for (i = 0; i < value.length; i++) {
        var item = value[i];
        list[i] = typeof item === 'undefined' || typeof item === 'function' || typeof item === 'symbol' ? null : imported(item);
      }
      return list;
    }
    var copy = {};
    var names = keys(value);
    for (i = 0; i < names.length; i++) {
      var name = names[i];
      var field = value[name];
      if (typeof field === 'undefined' || typeof field === 'function' || typeof field === 'symbol') continue;
      if (name === '__proto__') {
        defineProperty(copy, name, { value: imported(field), writable: true, enumerable: true, configurable: true });
      } else copy[name] = imported(field);
    }
    return copy;
  }

  var handler;
  return {
    /** Takes the top-level handler once the function's code has run. */
    bind: function bind(found) {
      handler = found;
      return typeof handler === 'function';
    },
    /**
     * Runs the handler on (a copy of) the host's event at a fixed time, and calls done with the result as
     * JSON (undefined when there is none) or fail with what it threw or rejected with.
     */
    run: function run(event, time, done, fail) {
      fixed = time;
      var result;
      try {
        result = handler(imported(event));
      } catch (e) {
        fail(e);
        return;
      }
      P.resolve(result).then(function (value) {
        var text;
        try {
          text = value === undefined ? undefined : stringify(value);
        } catch (e) {
          fail(e);
          return;
        }
        done(text);
      }, fail);
    },
  };
})`;

/** What one call of a function recorded with `cf.logCustomData` (the last value wins). */
interface CallRecord {
  logData: string | null;
}

/** The call whose `cf.logCustomData` values the bridge records: the one running, null between calls. */
interface CallChannel {
  current: CallRecord | null;
}

/** CloudFront keeps at most this many bytes of a recorded value. */
const LOG_DATA_BYTES = 800;

/** The host side of the bridge: primitives in, primitives out. */
function hostBridge(options: { kvs: KeyValueReader; log: (line: string) => void; calls: CallChannel }) {
  const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
  // A store that answers from memory is looked at once per run (`run` refreshes it), not once per lookup.
  const kvs = options.kvs;
  const peek = kvs.refresh && kvs.peek ? kvs.peek.bind(kvs) : undefined;
  return {
    encode: (text: string, encoding: string) => {
      if (!Buffer.isEncoding(encoding)) throw new TypeError(`Unknown encoding: ${encoding}`);
      return Buffer.from(text, encoding as BufferEncoding).toString('latin1');
    },
    decode: (bytes: string, encoding: string) => {
      if (!Buffer.isEncoding(encoding)) throw new TypeError(`Unknown encoding: ${encoding}`);
      return Buffer.from(bytes, 'latin1').toString(encoding as BufferEncoding);
    },
    isEncoding: (encoding: string) => Buffer.isEncoding(encoding),
    decodeUtf8: (bytes: string, fatal: boolean, ignoreBOM: boolean) =>
      new TextDecoder('utf-8', { fatal, ignoreBOM }).decode(Buffer.from(bytes, 'latin1')),
    digest: (algorithm: string, key: string | null, data: string, encoding: string) =>
      key === null
        ? hash(algorithm, data, encoding as 'hex' | 'base64' | 'base64url')
        : createHmac(algorithm, key)
            .update(data)
            .digest(encoding as 'hex' | 'base64' | 'base64url'),
    qsParse: (text: string, sep: string, eq: string, maxKeys: number) =>
      JSON.stringify(querystring.parse(text, sep, eq, { maxKeys })),
    qsStringify: (json: string, sep: string, eq: string) =>
      querystring.stringify(JSON.parse(json) as querystring.ParsedUrlQueryInput, sep, eq),
    qsEscape: (text: string) => querystring.escape(text),
    qsUnescape: (text: string) => querystring.unescape(text),
    atob: (text: string) => atob(text),
    btoa: (text: string) => btoa(text),
    log: (line: string) => options.log(line),
    // One call runs at a time (loadFunction), so the value goes to the call running now.
    logData: (value: string) => {
      const call = options.calls.current;
      if (call) call.logData = Buffer.from(value).subarray(0, LOG_DATA_BYTES).toString();
    },
    kvsGet: (key: string, resolve: (value: string) => void, reject: (message: string) => void) => {
      if (peek) {
        const value = peek(key);
        if (value === undefined) reject(`key not found: ${key}`);
        else resolve(value);
        return;
      }
      options.kvs.get(key).then(
        (value) => resolve(String(value)),
        (error: unknown) => reject(message(error)),
      );
    },
    kvsExists: (key: string, resolve: (found: boolean) => void, reject: (message: string) => void) => {
      if (peek) {
        resolve(peek(key) !== undefined);
        return;
      }
      options.kvs.exists(key).then(
        (found) => resolve(found === true),
        (error: unknown) => reject(message(error)),
      );
    },
  };
}

/** The controls RUNTIME returns (functions of the function's context). */
interface ContextControls {
  bind(handler: unknown): boolean;
  run(
    event: CloudFrontEvent,
    time: number,
    done: (text: string | undefined) => void,
    fail: (error: unknown) => void,
  ): void;
}

/**
 * The function's code as run: in one strict function, which evaluates to its top-level `handler`. Its
 * top-level names are then that function's variables rather than properties of the global object, which in a
 * vm context are read through Node's interceptor on every use (a viewer-request call took 12.8 µs that way,
 * 11.4 µs this way, in bench:gateway). `this` at the top is the global object, as in a script; a handler the
 * code puts on the global object itself is found too.
 */
function scopedScript(script: string): string {
  return `(function () {"use strict";${script}\n;return typeof handler === "undefined" ? undefined : handler;}).call(globalThis)`;
}

/** The one import a function may have, as the build writes it. */
const CLOUDFRONT_IMPORT = /^import\s*(\w+)\s*from\s*"cloudfront";\n?/;

export interface SandboxOptions {
  /** Backs `cf.kvs()`. */
  readonly kvs: KeyValueReader;
  /** Receives each `console.log` line. */
  readonly log?: (line: string) => void;
  /** The clock read at the start of each call (tests move it). Defaults to `Date.now`. */
  readonly now?: () => number;
  /** File name in stack traces. */
  readonly filename?: string;
  /**
   * Whether each run first brings a store that answers from memory up to date (default true). False where
   * the caller has done so for the run already: the edge's viewer-response run reads the store as the
   * request's viewer-request run left it ({@link VIEWER_RESPONSE_RUNTIME}).
   */
  readonly refreshStore?: boolean;
  /**
   * How long a call may keep the next one waiting before it is failed (a 502) so the others go on; default
   * {@link HOLD_LIMIT_MS}.
   */
  readonly holdLimitMs?: number;
}

/**
 * How the edge runs viewer-response: on the store as the request's viewer-request run brought it up to date
 * when the request arrived (a change made before the request is seen by both runs; looking at the store file
 * again for the second run would only cost a `stat` per request).
 */
export const VIEWER_RESPONSE_RUNTIME = { refreshStore: false } as const satisfies Partial<SandboxOptions>;

/**
 * How long one call may hold up the next: far beyond any run of our functions (a run over the local store is
 * microseconds), short enough that a call that never settles cannot stall the edge.
 */
export const HOLD_LIMIT_MS = 5_000;

/** A function loaded into its own sandbox; `run` may be called many times, like a warm CloudFront instance. */
export interface SandboxedFunction {
  run(event: CloudFrontEvent): Promise<CloudFrontRequest | CloudFrontResponse>;
  /** As `run`, with the value the call recorded with `cf.logCustomData` (null: it recorded none). */
  runLogged(
    event: CloudFrontEvent,
  ): Promise<{ result: CloudFrontRequest | CloudFrontResponse; logData: string | null }>;
}

/** The message of something thrown, whichever realm it comes from. */
function messageOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  return String(error);
}

/** The parts of a result whose names the viewer chose (headers, query parameters, cookies). */
const FIELD_MAPS = ['headers', 'querystring', 'cookies'];

/**
 * A function's result, parsed. The result and its field maps get a null prototype, so no name in them (a
 * header named `__proto__` or `toString`) reaches a built-in; every other object of it is read through own
 * properties only.
 */
function parseResult(text: string): unknown {
  const result = JSON.parse(text) as unknown;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  Object.setPrototypeOf(result, null);
  for (const name of FIELD_MAPS) {
    const fields = own(result, name);
    if (typeof fields === 'object' && fields !== null && !Array.isArray(fields))
      Object.setPrototypeOf(fields, null);
  }
  return result;
}

/**
 * Loads a built function bundle. Throws {@link FunctionError} when the code does not compile or has no
 * top-level `handler`.
 */
export function loadFunction(code: string, options: SandboxOptions): SandboxedFunction {
  const now = options.now ?? Date.now;
  const match = CLOUDFRONT_IMPORT.exec(code);
  const cfName = match?.[1] ?? 'cf';
  const script = match ? code.slice(match[0].length) : code;
  // A null-prototype global: names the function looks up on the global object never reach the host's objects.
  const context = vm.createContext(Object.create(null) as object, {
    name: options.filename ?? 'cloudfront-function',
    codeGeneration: { strings: false, wasm: false },
  });
  const install = vm.runInContext(RUNTIME, context) as (bridge: object, cfName: string) => ContextControls;
  const calls: CallChannel = { current: null };
  const controls = install(hostBridge({ kvs: options.kvs, log: options.log ?? (() => {}), calls }), cfName);
  let handler: unknown;
  try {
    handler = new vm.Script(scopedScript(script), {
      filename: options.filename ?? 'function.js',
    }).runInContext(context, { timeout: 1000 });
  } catch (error) {
    throw new FunctionError(`the function does not load: ${messageOf(error)}`, { cause: error });
  }
  if (!controls.bind(handler)) throw new FunctionError('the function has no top-level handler');

  const kvs = options.kvs;
  const refresh =
    options.refreshStore !== false && kvs.refresh && kvs.peek ? kvs.refresh.bind(kvs) : undefined;
  const holdLimitMs = options.holdLimitMs ?? HOLD_LIMIT_MS;

  // One call at a time. The value a call records with cf.logCustomData must reach that call, and the bundle's
  // `cf` is one global shared by every call, so nothing in the context tells two interleaved calls apart;
  // telling them apart from the host (AsyncLocalStorage) puts a hook on every promise the process makes (a
  // viewer-request call took 16.4 µs with it, 12.8 µs without, in bench:gateway). Over the local store a call
  // never waits (its lookups are answered from memory), so the next call starts a few microtasks later; only
  // a store that answers later (a test's) makes calls wait their turn. A call that holds the next one up past `holdLimitMs` is failed.
  const waiting: (() => void)[] = [];
  /** Fails the call running now (set while one runs). */
  let abandon: (() => void) | undefined;
  let startedAt = 0;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  /** While calls wait, fails the running one once it has held them up past the limit. */
  const watch = () => {
    if (watchdog !== undefined || waiting.length === 0 || abandon === undefined) return;
    watchdog = setTimeout(() => abandon?.(), Math.max(0, startedAt + holdLimitMs - performance.now()));
    watchdog.unref();
  };
  const finish = () => {
    abandon = undefined;
    calls.current = null;
    if (watchdog !== undefined) {
      clearTimeout(watchdog);
      watchdog = undefined;
    }
    waiting.shift()?.();
    watch();
  };

  /** One run, once the store is current: the result checked as CloudFront checks it, and what it recorded. */
  const runNow = (event: CloudFrontEvent) =>
    new Promise<{ result: CloudFrontRequest | CloudFrontResponse; logData: string | null }>(
      (resolve, reject) => {
        const start = () => {
          const call: CallRecord = { logData: null };
          let settled = false;
          /** Ends this call once: the next one starts, then this one's promise settles. */
          const settle = (outcome: () => void) => {
            if (settled) return;
            settled = true;
            finish();
            outcome();
          };
          calls.current = call;
          startedAt = performance.now();
          abandon = () =>
            settle(() => reject(new FunctionError(`the function did not finish within ${holdLimitMs} ms`)));
          controls.run(
            event,
            now(),
            (text) => {
              const logData = call.logData;
              settle(() => {
                if (typeof text !== 'string') reject(new FunctionError('the function returned no object'));
                else {
                  try {
                    resolve({ result: checkResult(parseResult(text), event), logData });
                  } catch (error) {
                    reject(error);
                  }
                }
              });
            },
            (error) =>
              settle(() =>
                reject(new FunctionError(`the function threw: ${messageOf(error)}`, { cause: error })),
              ),
          );
        };
        if (abandon === undefined) start();
        else {
          waiting.push(start);
          watch();
        }
      },
    );
  const runLogged = (event: CloudFrontEvent) => {
    // The store as it is when the run starts: a change made before the request is seen by all its lookups.
    const reloading = refresh?.();
    return reloading ? reloading.then(() => runNow(event)) : runNow(event);
  };
  return {
    runLogged,
    run: (event) => runLogged(event).then((run) => run.result),
  };
}

/** A field of a map, read as an own property only. */
function own(fields: object | undefined, name: string): unknown {
  return fields !== undefined && Object.hasOwn(fields, name)
    ? (fields as Record<string, unknown>)[name]
    : undefined;
}

/**
 * What Node's `validateHeaderName` and `validateHeaderValue` test, checked first without them (they are
 * slower, and only their errors are needed: for a header that fails here, they say why).
 */
const HTTP_TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Checks a field map a function returned: lowercase names, a string `value`, and a `multiValue` (when there)
 * of `{ value: string }`. Header names and values must also be ones HTTP can carry, or CloudFront would
 * refuse the result (a 502) — and a server would throw while sending them.
 */
function checkFields(fields: unknown, what: 'header' | 'query parameter'): void {
  if (typeof fields !== 'object' || fields === null) throw new FunctionError(`${what} must be an object`);
  for (const [name, field] of Object.entries(fields)) {
    if (name !== name.toLowerCase()) throw new FunctionError(`${what} name "${name}" must be lowercase`);
    const value = own(field ?? undefined, 'value');
    if (typeof value !== 'string') throw new FunctionError(`${what} "${name}" must have a string value`);
    const multiValue = own(field ?? undefined, 'multiValue');
    const all: unknown[] = [value];
    if (multiValue !== undefined) {
      if (!Array.isArray(multiValue))
        throw new FunctionError(`${what} "${name}" multiValue must be an array`);
      for (const entry of multiValue) all.push(own(entry ?? undefined, 'value'));
    }
    if (what !== 'header') continue;
    if (
      HTTP_TOKEN.test(name) &&
      all.every((one) => typeof one === 'string' && !INVALID_HEADER_CHAR.test(one))
    )
      continue;
    try {
      validateHeaderName(name);
      for (const one of all) {
        if (typeof one !== 'string') throw new TypeError('a multiValue entry has no string value');
        validateHeaderValue(name, one);
      }
    } catch (error) {
      throw new FunctionError(`header "${name}" cannot be sent over HTTP: ${messageOf(error)}`);
    }
  }
}

/** Whether two fields (`{ value, multiValue? }`, or absent) carry the same values. */
function sameField(a: unknown, b: unknown): boolean {
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  if (own(a, 'value') !== own(b, 'value')) return false;
  const many = own(a, 'multiValue');
  const other = own(b, 'multiValue');
  if (many === undefined || other === undefined) return many === other;
  return JSON.stringify(many) === JSON.stringify(other);
}

/** Validates what a function returned, as CloudFront would before using it. */
function checkResult(result: unknown, event: CloudFrontEvent): CloudFrontRequest | CloudFrontResponse {
  if (typeof result !== 'object' || result === null)
    throw new FunctionError('the function returned no object');
  const isResponse = 'statusCode' in result;
  const viewerResponse = event.context.eventType === 'viewer-response';
  if (viewerResponse && !isResponse) throw new FunctionError('viewer-response must return a response');
  const headers = (own(result, 'headers') ?? Object.create(null)) as Record<string, unknown>;
  checkFields(headers, 'header');
  const original = viewerResponse ? event.response?.headers : isResponse ? undefined : event.request.headers;
  for (const name of Object.keys(headers)) {
    if (isDisallowed(name) && !sameField(headers[name], own(original, name))) {
      throw new FunctionError(`the function set the disallowed header "${name}"`);
    }
  }
  for (const name of viewerResponse ? READ_ONLY_IN_RESPONSE : isResponse ? [] : READ_ONLY_IN_REQUEST) {
    if (!sameField(own(headers, name), own(original, name))) {
      throw new FunctionError(`the function changed the read-only header "${name}"`);
    }
  }
  if (isResponse) {
    const response = result as CloudFrontResponse;
    if (!Number.isInteger(response.statusCode) || response.statusCode < 100 || response.statusCode > 599) {
      throw new FunctionError(`statusCode ${String(response.statusCode)} is not an HTTP status`);
    }
    const body = response.body;
    if (body !== undefined && typeof body !== 'string') {
      if (
        typeof body !== 'object' ||
        typeof body.data !== 'string' ||
        !['text', 'base64'].includes(body.encoding)
      ) {
        throw new FunctionError('body must be a string or { encoding: "text" | "base64", data }');
      }
    }
    return response;
  }
  const request = result as CloudFrontRequest;
  if (request.method !== event.request.method)
    throw new FunctionError('the function changed the read-only method');
  if (typeof request.uri !== 'string' || !request.uri.startsWith('/'))
    throw new FunctionError('uri must start with /');
  checkFields(own(request, 'querystring') ?? Object.create(null), 'query parameter');
  return request;
}
