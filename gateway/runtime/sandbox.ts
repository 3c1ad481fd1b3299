/**
 * A local stand-in for the cloudfront-js-2.0 runtime: runs a built function bundle (never the TypeScript
 * source) in a `node:vm` context that offers what the runtime offers and nothing more — `require` of crypto
 * (createHash, createHmac), querystring and buffer; `cf.kvs()` over a local store; a one-argument
 * `console.log`; a `Date` fixed at the start of each call; no process, timers, fetch, eval or Node `require`.
 * Results are checked as CloudFront checks them: an exception or a header a function may not set gives the
 * 502 CloudFront would answer.
 */
import { createHash, createHmac } from 'node:crypto';
import querystring from 'node:querystring';
import vm from 'node:vm';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse } from '../functions/event.ts';

/** What `cf.kvs()` gives a function: `get` rejects when the key is missing. */
export interface KeyValueReader {
  get(key: string): Promise<string>;
  exists(key: string): Promise<boolean>;
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

function isDisallowed(name: string): boolean {
  return DISALLOWED.some((rule) => (rule.endsWith('-') ? name.startsWith(rule) : name === rule));
}

const HASHES = new Set(['md5', 'sha1', 'sha256']);
const DIGESTS = new Set(['hex', 'base64', 'base64url']);

/** The runtime's `crypto` module: hashes and HMACs with hex/base64/base64url digests, nothing else. */
function runtimeCrypto() {
  const wrap = (hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>) => {
    const api = {
      update(data: string) {
        hash.update(String(data));
        return api;
      },
      digest(encoding?: string) {
        if (encoding === undefined) return hash.digest();
        if (!DIGESTS.has(encoding)) throw new TypeError(`unknown digest encoding "${encoding}"`);
        return hash.digest(encoding as 'hex');
      },
    };
    return api;
  };
  const check = (algorithm: string) => {
    if (!HASHES.has(algorithm)) throw new TypeError(`not supported hash algorithm: "${algorithm}"`);
  };
  return {
    createHash(algorithm: string) {
      check(algorithm);
      return wrap(createHash(algorithm));
    },
    createHmac(algorithm: string, key: string) {
      check(algorithm);
      return wrap(createHmac(algorithm, key));
    },
  };
}

/** Prepares a `Date` whose "now" is fixed per call, and returns the function that fixes it. */
const FIXED_DATE = `(() => {
  const RealDate = Date;
  let fixed = RealDate.now();
  class FixedDate extends RealDate {
    constructor(...args) { if (args.length === 0) super(fixed); else super(...args); }
    static now() { return fixed; }
  }
  globalThis.Date = new Proxy(FixedDate, { apply() { return new RealDate(fixed).toString(); } });
  return (time) => { fixed = time; };
})()`;

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
}

/** A function loaded into its own sandbox; `run` may be called many times, like a warm CloudFront instance. */
export interface SandboxedFunction {
  run(event: CloudFrontEvent): Promise<CloudFrontRequest | CloudFrontResponse>;
}

/**
 * Loads a built function bundle. Throws {@link FunctionError} when the code does not compile or has no
 * top-level `handler`.
 */
export function loadFunction(code: string, options: SandboxOptions): SandboxedFunction {
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const match = CLOUDFRONT_IMPORT.exec(code);
  const cfName = match?.[1] ?? 'cf';
  const script = match ? code.slice(match[0].length) : code;
  const modules: Record<string, unknown> = {
    crypto: runtimeCrypto(),
    querystring: {
      parse: querystring.parse,
      stringify: querystring.stringify,
      escape: querystring.escape,
      unescape: querystring.unescape,
    },
    buffer: { Buffer },
  };
  const sandbox: Record<string, unknown> = {
    [cfName]: { kvs: () => options.kvs },
    require(name: string) {
      if (!Object.hasOwn(modules, name)) throw new Error(`Cannot find module "${name}"`);
      return modules[name];
    },
    console: {
      log(...args: unknown[]) {
        if (args.length !== 1)
          throw new TypeError('console.log takes exactly one argument in cloudfront-js-2.0');
        log(typeof args[0] === 'string' ? args[0] : JSON.stringify(args[0]));
      },
    },
    TextEncoder,
    TextDecoder,
    atob,
    btoa,
  };
  const context = vm.createContext(sandbox, {
    name: options.filename ?? 'cloudfront-function',
    codeGeneration: { strings: false, wasm: false },
  });
  const setNow = vm.runInContext(FIXED_DATE, context) as (time: number) => void;
  try {
    new vm.Script(`"use strict";${script}`, { filename: options.filename ?? 'function.js' }).runInContext(
      context,
      {
        timeout: 1000,
      },
    );
  } catch (error) {
    throw new FunctionError(`the function does not load: ${(error as Error).message}`, { cause: error });
  }
  const handler = (context as { handler?: unknown }).handler;
  if (typeof handler !== 'function') throw new FunctionError('the function has no top-level handler');
  const call = handler as (event: CloudFrontEvent) => unknown;

  return {
    async run(event) {
      setNow(now());
      let result: unknown;
      try {
        result = await call(structuredClone(event));
      } catch (error) {
        throw new FunctionError(`the function threw: ${(error as Error).message}`, { cause: error });
      }
      return checkResult(result, event);
    },
  };
}

function checkFields(fields: unknown, what: string): void {
  if (typeof fields !== 'object' || fields === null) throw new FunctionError(`${what} must be an object`);
  for (const [name, field] of Object.entries(fields)) {
    if (name !== name.toLowerCase()) throw new FunctionError(`${what} name "${name}" must be lowercase`);
    const value = (field as { value?: unknown } | null)?.value;
    if (typeof value !== 'string') throw new FunctionError(`${what} "${name}" must have a string value`);
  }
}

function sameField(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Validates what a function returned, as CloudFront would before using it. */
function checkResult(result: unknown, event: CloudFrontEvent): CloudFrontRequest | CloudFrontResponse {
  if (typeof result !== 'object' || result === null)
    throw new FunctionError('the function returned no object');
  const isResponse = 'statusCode' in result;
  const viewerResponse = event.context.eventType === 'viewer-response';
  if (viewerResponse && !isResponse) throw new FunctionError('viewer-response must return a response');
  const headers = ((result as { headers?: unknown }).headers ?? {}) as Record<string, unknown>;
  checkFields(headers, 'header');
  const original =
    (viewerResponse ? event.response?.headers : isResponse ? undefined : event.request.headers) ?? {};
  for (const name of Object.keys(headers)) {
    if (isDisallowed(name) && !sameField(headers[name], original[name])) {
      throw new FunctionError(`the function set the disallowed header "${name}"`);
    }
  }
  for (const name of viewerResponse ? READ_ONLY_IN_RESPONSE : isResponse ? [] : READ_ONLY_IN_REQUEST) {
    if (!sameField(headers[name], original[name])) {
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
  checkFields(request.querystring ?? {}, 'query parameter');
  return request;
}
