/**
 * The cloudfront-js-2.0 runtime, locally: a built bundle runs in a `node:vm` context of its own, where
 * local/runtime.js builds what the runtime offers. Nothing the function reaches belongs to the Node process (a
 * guard against hostile requests, not hostile code); results are checked as CloudFront checks them.
 */
import { hash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse } from '../functions/event.ts';

/** The store behind `cf.kvs()`: `refresh` when a run starts (`undefined`: already current), then `peek`. */
export interface KeyValueReader {
  refresh(): Promise<void> | undefined;
  peek(key: string): string | undefined;
}
/** Why a function run failed; the edge answers 502, as CloudFront does. */
export class FunctionError extends Error {
  override name = 'FunctionError';
}

/** Headers no function may set (CloudFront answers 502), as one pattern: a rule ending in `-` is a prefix. */
const DISALLOWED = new RegExp(
  `^(?:${'connection expect keep-alive proxy- trailer upgrade x-accel- x-amz-cf- x-amzn- x-cache x-edge- x-forwarded-proto x-real-ip'
    .split(' ')
    .map((rule) => (rule.endsWith('-') ? `${rule}.*` : rule))
    .join('|')})$`,
);
const READ_ONLY_IN_REQUEST = ['cdn-loop', 'content-length', 'host', 'transfer-encoding', 'via'];
const READ_ONLY_IN_RESPONSE = ['warning', 'via'];

/** CloudFront keeps at most this many bytes of a recorded value. */
const LOG_DATA_BYTES = 800;

/** What local/runtime.js may ask of the host: strings in, strings out, never an object of the host. */
export interface Bridge {
  peek(key: string): string | undefined;
  logData(value: string): void;
  digest(algorithm: string, data: string, encoding: string): string;
  log(line: string): void;
}

/**
 * What local/runtime.js returns, functions of the function's context: `load` keeps the handler of the code's
 * {@link scopedScript} (false: none); `run` runs it on a copy of the event at a fixed time, `done` gets JSON.
 */
export interface Runtime {
  load(code: (require: unknown, console: unknown, cf: unknown) => unknown): boolean;
  run(
    event: CloudFrontEvent,
    time: number,
    done: (text: string | undefined) => void,
    fail: (error: unknown) => void,
  ): void;
}

/** Where local/runtime.js is: under the first folder above this module that has it (sources or dist/cli). */
function runtimePath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const path = join(dir, 'gateway/local/runtime.js');
    if (existsSync(path)) return path;
  }
  return join(here, 'runtime.js');
}

/** local/runtime.js, compiled once; each function's context runs it. */
const RUNTIME_PATH = runtimePath();
const RUNTIME = new vm.Script(readFileSync(RUNTIME_PATH, 'utf8'), { filename: RUNTIME_PATH });

/**
 * The code as one strict function of `require`, `console` and `cf` returning `handler`: its top-level names are
 * then variables, not globals read through Node's interceptor (12.8 against 11.4 µs a call, bench:gateway).
 */
function scopedScript(script: string, cfName: string | undefined): string {
  return `(function (require, console${cfName ? `, ${cfName}` : ''}) {"use strict";${script}\n;return typeof handler === "undefined" ? undefined : handler;})`;
}

/** The one import a function may have, as the build writes it. */
const CLOUDFRONT_IMPORT = /^import\s*([\w$]+)\s*from\s*"cloudfront";\n?/;

/** `kvs` backs `cf.kvs()`, `log` hears `console.log`; `refreshStore`: each run first brings it up to date. */
export interface SandboxOptions {
  readonly kvs: KeyValueReader;
  readonly log?: (line: string) => void;
  /** File name in stack traces. */
  readonly filename?: string;
  readonly refreshStore?: boolean;
}

/** How the edge runs viewer-response: on the store as the request's viewer-request run left it. */
export const VIEWER_RESPONSE_RUNTIME = { refreshStore: false } as const satisfies Partial<SandboxOptions>;

/** How long one call may hold up the next: far beyond any run, short enough not to stall the edge. */
const HOLD_LIMIT_MS = 5_000;

/** A run's result, and what it recorded with `cf.logCustomData` (null: nothing). */
type LoggedRun = { result: CloudFrontRequest | CloudFrontResponse; logData: string | null };

/** A function loaded into its own sandbox; `run` may be called many times, like a warm CloudFront instance. */
export interface SandboxedFunction {
  run(event: CloudFrontEvent): Promise<CloudFrontRequest | CloudFrontResponse>;
  /** As `run`, with what the call recorded. */
  runLogged(event: CloudFrontEvent): Promise<LoggedRun>;
}

/** The message of something thrown, whichever realm it comes from. */
function messageOf(error: unknown): string {
  const message = typeof error === 'object' ? (error as { message?: unknown } | null)?.message : undefined;
  return typeof message === 'string' ? message : String(error);
}

/** A function's result, parsed; it and its field maps get a null prototype (a header named `__proto__`). */
function parseResult(text: string): unknown {
  const result = JSON.parse(text) as unknown;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  Object.setPrototypeOf(result, null);
  for (const name of ['headers', 'querystring', 'cookies']) {
    const fields = own(result, name);
    if (typeof fields === 'object' && fields !== null && !Array.isArray(fields))
      Object.setPrototypeOf(fields, null);
  }
  return result;
}

/** Loads a built function bundle; throws {@link FunctionError} when it does not compile or has no `handler`. */
export function loadFunction(code: string, options: SandboxOptions): SandboxedFunction {
  const match = CLOUDFRONT_IMPORT.exec(code);
  const script = match ? code.slice(match[0].length) : code;
  // A null-prototype global: names the function looks up on the global object never reach the host's objects.
  const context = vm.createContext(Object.create(null) as object, {
    name: options.filename ?? 'cloudfront-function',
    codeGeneration: { strings: false, wasm: false },
  });
  const kvs = options.kvs;
  /** The call running now (one runs at a time), whose last `cf.logCustomData` value the bridge records. */
  let current: { logData: string | null } | null = null;
  const bridge: Bridge = {
    peek: (key) => kvs.peek(key),
    logData: (value) => {
      if (current) current.logData = Buffer.from(value).subarray(0, LOG_DATA_BYTES).toString();
    },
    digest: (algorithm, data, encoding) => hash(algorithm, data, encoding as 'hex' | 'base64' | 'base64url'),
    log: options.log ?? (() => {}),
  };
  const runtime = (RUNTIME.runInContext(context) as (bridge: Bridge) => Runtime)(bridge);
  let loaded: boolean;
  try {
    const fn = new vm.Script(scopedScript(script, match?.[1]), {
      filename: options.filename ?? 'function.js',
    });
    loaded = runtime.load(fn.runInContext(context));
  } catch (error) {
    throw new FunctionError(`the function does not load: ${messageOf(error)}`, { cause: error });
  }
  if (!loaded) throw new FunctionError('the function has no top-level handler');
  const refresh = options.refreshStore === false ? undefined : () => kvs.refresh();

  // One call at a time: what a call records with cf.logCustomData must reach that call, and the one shared
  // `cf` cannot tell interleaved calls apart (AsyncLocalStorage could, at 16.4 against 12.8 µs a call). Lookups
  // come from memory, so the next call waits a few microtasks; one held up past HOLD_LIMIT_MS fails the first.
  const waiting: (() => void)[] = [];
  /** Fails the call running now (set while one runs). */
  let abandon: (() => void) | undefined;
  let startedAt = 0;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  /** While calls wait, fails the running one once it has held them up past the limit. */
  const watch = () => {
    if (watchdog !== undefined || waiting.length === 0 || abandon === undefined) return;
    watchdog = setTimeout(() => abandon?.(), Math.max(0, startedAt + HOLD_LIMIT_MS - performance.now()));
    watchdog.unref();
  };
  const finish = () => {
    abandon = undefined;
    current = null;
    if (watchdog !== undefined) {
      clearTimeout(watchdog);
      watchdog = undefined;
    }
    waiting.shift()?.();
    watch();
  };

  /** One run, once the store is current: the result checked as CloudFront checks it, and what it recorded. */
  const runNow = (event: CloudFrontEvent) =>
    new Promise<LoggedRun>((resolve, reject) => {
      const start = () => {
        const call = { logData: null as string | null };
        let settled = false;
        /** Ends this call once: the next one starts, then this one's promise settles. */
        const settle = (outcome: () => void) => {
          if (settled) return;
          settled = true;
          finish();
          outcome();
        };
        current = call;
        startedAt = performance.now();
        abandon = () =>
          settle(() => reject(new FunctionError(`the function did not finish within ${HOLD_LIMIT_MS} ms`)));
        runtime.run(
          event,
          Date.now(),
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
    });
  const runLogged = (event: CloudFrontEvent) => {
    // The store as it is when the run starts: a change made before the request is seen by all its lookups.
    const reloading = refresh?.();
    return reloading ? reloading.then(() => runNow(event)) : runNow(event);
  };
  return { runLogged, run: (event) => runLogged(event).then((run) => run.result) };
}

/** A field of a map, read as an own property only. */
function own(fields: object | undefined, name: string): unknown {
  return fields !== undefined && Object.hasOwn(fields, name)
    ? (fields as Record<string, unknown>)[name]
    : undefined;
}

/** What Node's `validateHeaderName`/`validateHeaderValue` test, checked first without them (they are slower). */
const HTTP_TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** Checks a field map a function returned: lowercase names, string values, headers HTTP can carry. */
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
    if (DISALLOWED.test(name) && !sameField(headers[name], own(original, name))) {
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
    const isBody = (b: object) =>
      typeof own(b, 'data') === 'string' && ['text', 'base64'].includes(own(b, 'encoding') as string);
    if (body !== undefined && typeof body !== 'string' && (typeof body !== 'object' || !isBody(body)))
      throw new FunctionError('body must be a string or { encoding: "text" | "base64", data }');
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
