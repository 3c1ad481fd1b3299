// @ts-check
/**
 * The cloudfront-js-2.0 runtime as a function sees it locally. local/sandbox.ts evaluates this file inside each
 * function's own `node:vm` context, so every object it makes belongs to that context; its value is the
 * function that builds the runtime there. It offers what CloudFront's runtime offers and the two functions use
 * (sandbox.test.ts checks every use the built bundles make, as functions/bundle.ts finds them, against it):
 * `cf.kvs().get(key)` over the local store (rejecting a missing key), `cf.logCustomData(value)`,
 * `require('crypto').createHash(md5 | sha1 | sha256).update(text).digest(hex | base64 | base64url)`, a
 * `Date.now()` fixed at the start of each call, and a one-argument `console.log` (whose lines `catalog serve`
 * logs). The ECMAScript built-ins are the context's own; there is no process, timer, fetch or eval.
 *
 * The host is reached only through `bridge`, which no function code can reach, and only with strings and
 * numbers: nothing the function can reach leads to the Node process (`x.constructor.constructor` is always the
 * context's `Function`, which cannot compile strings).
 */
// biome-ignore lint/suspicious/noRedundantUseStrict: node:vm runs this file as a script, which is not strict by itself
'use strict';

/**
 * @param {import('./sandbox.ts').Bridge} bridge
 * @returns {import('./sandbox.ts').Runtime}
 */
(bridge) => {
  // Held here: a global name read in a vm context goes through Node's interceptor on every use.
  const P = Promise;
  const Err = Error;
  const Str = String;
  const stringify = JSON.stringify;
  const keys = Object.keys;
  const isArray = Array.isArray;
  const finite = Number.isFinite;
  const defineProperty = Object.defineProperty;

  /**
   * Calls the host; what it throws becomes an Error of this context with the same message.
   * @template T
   * @param {() => T} call
   * @returns {T}
   */
  const host = (call) => {
    try {
      return call();
    } catch (error) {
      throw new Err(Str(/** @type {Error} */ (error).message));
    }
  };

  const HASHES = ['md5', 'sha1', 'sha256'];
  const DIGESTS = ['hex', 'base64', 'base64url'];
  const crypto = {
    /** @param {string} algorithm */
    createHash(algorithm) {
      if (HASHES.indexOf(algorithm) === -1)
        throw new TypeError(`not supported hash algorithm: "${algorithm}"`);
      let data = '';
      let done = false;
      const hash = {
        /** @param {string} text */
        update(text) {
          if (done) throw new Err('Digest already called');
          data += Str(text);
          return hash;
        },
        /** @param {string} encoding */
        digest(encoding) {
          if (done) throw new Err('Digest already called');
          // Without an encoding CloudFront answers a Buffer, which this runtime does not offer.
          if (DIGESTS.indexOf(encoding) === -1) throw new TypeError(`unknown digest encoding "${encoding}"`);
          done = true;
          return host(() => bridge.digest(algorithm, data, encoding));
        },
      };
      return hash;
    },
  };
  /** @type {Record<string, unknown>} */
  const modules = { crypto };

  /**
   * The rejection of a lookup: an Error without a stack trace, which would only point into this file (a missing
   * key is an everyday answer of the store, e.g. no CORS origin, and a stack costs microseconds). It is
   * rejected once its caller has the promise (a microtask later): a promise rejected before anything handles
   * it is tracked by the host as a possible unhandled rejection, at a cost on every miss.
   * @param {string} key
   * @returns {Promise<string>}
   */
  const missing = (key) =>
    new P((_resolve, reject) => {
      P.resolve().then(() => {
        const limit = Err.stackTraceLimit;
        Err.stackTraceLimit = 0;
        const error = new Err(`key not found: ${key}`);
        Err.stackTraceLimit = limit;
        reject(error);
      });
    });
  const store = {
    /** @param {string} key */
    get(key) {
      const name = Str(key);
      const value = bridge.peek(name);
      return value === undefined ? missing(name) : P.resolve(value);
    },
  };

  const cf = {
    kvs: () => store,
    /** @param {string} value */
    logCustomData(value) {
      bridge.logData(Str(value));
    },
  };
  /** @param {string} name */
  const require = (name) => {
    if (typeof name !== 'string' || !Object.hasOwn(modules, name))
      throw new Err(`Cannot find module "${Str(name)}"`);
    return modules[name];
  };
  const console = {
    /** @param {unknown[]} values */
    log(...values) {
      if (values.length !== 1)
        throw new TypeError('console.log takes exactly one argument in cloudfront-js-2.0');
      const value = values[0];
      host(() => bridge.log(typeof value === 'string' ? value : Str(stringify(value))));
    },
  };

  // The time of the call that runs, as CloudFront fixes it when a function starts.
  let now = 0;
  Date.now = () => now;

  /** @param {unknown} field */
  const skipped = (field) =>
    typeof field === 'undefined' || typeof field === 'function' || typeof field === 'symbol';

  /**
   * The host's event as data of this context, as JSON.parse(JSON.stringify(event)) would give it (about five
   * times faster): own enumerable names in order, no undefined or function values (null in an array), a number
   * that is not finite as null. The event is plain data (local/event.ts builds it) and the host object is read
   * here only, never handed on. A name '__proto__' is defined like any other; other names are set.
   * @param {unknown} value
   * @returns {unknown}
   */
  const imported = (value) => {
    if (typeof value === 'number') return finite(value) ? value : null;
    if (typeof value !== 'object' || value === null) return value;
    if (isArray(value)) {
      const list = [];
      for (let i = 0; i < value.length; i++) list[i] = skipped(value[i]) ? null : imported(value[i]);
      return list;
    }
    /** @type {Record<string, unknown>} */
    const copy = {};
    const fields = /** @type {Record<string, unknown>} */ (value);
    const names = keys(fields);
    for (let i = 0; i < names.length; i++) {
      const name = /** @type {string} */ (names[i]);
      const field = fields[name];
      if (skipped(field)) continue;
      if (name === '__proto__')
        defineProperty(copy, name, {
          value: imported(field),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      else copy[name] = imported(field);
    }
    return copy;
  };

  /** @type {unknown} */
  let handler;
  return {
    load(code) {
      handler = code.call(globalThis, require, console, cf);
      return typeof handler === 'function';
    },
    run(event, time, done, fail) {
      now = time;
      let result;
      try {
        result = /** @type {(event: unknown) => unknown} */ (handler)(imported(event));
      } catch (error) {
        fail(error);
        return;
      }
      P.resolve(result).then((value) => {
        let text;
        try {
          text = value === undefined ? undefined : stringify(value);
        } catch (error) {
          fail(error);
          return;
        }
        done(text);
      }, fail);
    },
  };
};
