/**
 * An HTTP source: one GET of a URL answering a JSON array of rows (contract §1). Connect, headers and body
 * timeouts; a body size limit enforced while reading; a bounded number of retries with exponential backoff on
 * 5xx, 429 and network errors, honouring Retry-After (undici's RetryAgent); an optional bearer token that
 * never appears in a name or a message. Redirects are not followed.
 */
import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher, RetryAgent, request } from 'undici';
import { ConfigError, SourceError } from '../errors.ts';
import type { PlanSource } from '../source.ts';
import { formatBytes, SOURCE_DEFAULTS } from './options.ts';
import { redactUrl, scrub, urlSecrets } from './redact.ts';

export interface HttpSourceOptions {
  /** Sent as `Authorization: Bearer <token>`. Never part of a name or message. */
  readonly token?: string | undefined;
  /** How long to wait for the connection (TCP and TLS). Default 10 s. */
  readonly connectTimeoutMs?: number | undefined;
  /** How long to wait for the response headers. Default 30 s. */
  readonly headersTimeoutMs?: number | undefined;
  /** The longest pause while the body arrives. Default 30 s. */
  readonly bodyTimeoutMs?: number | undefined;
  /** A larger body is refused, without reading it to the end. Default 128 MiB. */
  readonly maxBodyBytes?: number | undefined;
  /** Retries after the first attempt on 5xx, 429 and network errors. Default 3. */
  readonly retries?: number | undefined;
  /** Wait before the first retry; doubles with each retry. Default 500 ms. */
  readonly retryBaseDelayMs?: number | undefined;
  /** The longest wait before a retry. A Retry-After asking for longer fails the read at once. Default 30 s. */
  readonly retryMaxDelayMs?: number | undefined;
}

/** Network error codes worth another attempt (the connection never got as far as a response). */
const RETRIED_ERRORS = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** 429 and every 5xx except those that another attempt cannot change. */
const RETRIED_STATUSES = [
  429,
  ...Array.from({ length: 100 }, (_, i) => 500 + i).filter((s) => s !== 501 && s !== 505),
];

export interface RetryPolicy {
  readonly retries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** What failed in one attempt: an HTTP status (with its Retry-After), or a network error code. */
export interface AttemptFailure {
  readonly statusCode?: number | undefined;
  readonly code?: string | undefined;
  readonly retryAfter?: string | undefined;
}

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly reason?: string };

/** Retry-After as milliseconds from `now`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Whether attempt number `attempt` (1-based) that failed with `failure` is tried again, and after how long:
 * up to `retries` times, on a retried status or network error, after Retry-After when the server sent one
 * (a longer wait than `maxDelayMs` is refused with a reason), else after `baseDelayMs` doubled per retry.
 */
export function decideRetry(
  failure: AttemptFailure,
  attempt: number,
  policy: RetryPolicy,
  now: number,
): RetryDecision {
  const retried =
    failure.statusCode !== undefined
      ? RETRIED_STATUSES.includes(failure.statusCode)
      : failure.code !== undefined && RETRIED_ERRORS.has(failure.code);
  if (!retried || attempt > policy.retries) return { retry: false };
  const asked = retryAfterMs(failure.retryAfter, now);
  if (asked !== undefined) {
    if (asked > policy.maxDelayMs)
      return {
        retry: false,
        reason: `asked to retry after ${Math.ceil(asked / 1_000)} s, longer than the ${Math.ceil(policy.maxDelayMs / 1_000)} s a build waits`,
      };
    return { retry: true, delayMs: asked };
  }
  return { retry: true, delayMs: Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs) };
}

/**
 * Why a Content-Type is not JSON, or null when it is: `application/json` or `application/<anything>+json`,
 * with any parameters.
 */
export function contentTypeProblem(contentType: string | undefined): string | null {
  if (contentType === undefined || contentType.trim() === '')
    return 'answered without a Content-Type (expected application/json)';
  const essence = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (essence === 'application/json' || /^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(essence)) return null;
  return `answered ${JSON.stringify(essence.slice(0, 80))}, not JSON (expected Content-Type application/json)`;
}

/** Parses a body as the source's rows: a JSON array (a UTF-8 byte order mark is allowed). */
export function parseRows(text: string): unknown[] | string {
  let rows: unknown;
  try {
    rows = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return `answered a body that is not valid JSON (${(error as Error).message})`;
  }
  if (!Array.isArray(rows)) {
    const got = rows === null ? 'null' : typeof rows === 'object' ? 'an object' : `a ${typeof rows}`;
    return `must answer a JSON array of rows (got ${got})`;
  }
  return rows;
}

/** A visible ASCII token (RFC 6750 allows less; this is what a header can carry without mangling). */
const TOKEN = /^[\x21-\x7e]+$/;

/** Thrown inside a read to carry a finished reason to the catch that names the source. */
class Refused extends Error {}

/** The rows of one HTTP(S) URL. Every read makes a fresh connection pool and closes it. */
export class HttpSource implements PlanSource {
  readonly name: string;
  readonly #url: URL;
  readonly #secrets: string[];
  readonly #token: string | undefined;
  readonly #connectTimeoutMs: number;
  readonly #headersTimeoutMs: number;
  readonly #bodyTimeoutMs: number;
  readonly #maxBodyBytes: number;
  readonly #policy: RetryPolicy;

  /** Throws `ConfigError` for a URL that is not http(s), carries credentials, or a token that cannot be sent. */
  constructor(url: string, options: HttpSourceOptions = {}) {
    this.name = redactUrl(url);
    this.#secrets = urlSecrets(url);
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '')
      throw new ConfigError(`source ${this.name}: is not a valid http(s):// URL`);
    if (parsed.username !== '' || parsed.password !== '')
      throw new ConfigError(
        `source ${this.name}: credentials in the URL are not sent; give a bearer token in CATALOG_SOURCE_TOKEN`,
      );
    this.#url = parsed;
    const token = options.token?.trim();
    if (token !== undefined && token !== '') {
      if (/^bearer\s/i.test(token))
        throw new ConfigError('CATALOG_SOURCE_TOKEN: give the token alone, without "Bearer "');
      if (!TOKEN.test(token))
        throw new ConfigError(
          'CATALOG_SOURCE_TOKEN: must be printable ASCII without spaces (value not shown)',
        );
      this.#token = token;
      this.#secrets.push(token);
    }
    this.#connectTimeoutMs = options.connectTimeoutMs ?? SOURCE_DEFAULTS.connectTimeoutMs;
    this.#headersTimeoutMs = options.headersTimeoutMs ?? SOURCE_DEFAULTS.headersTimeoutMs;
    this.#bodyTimeoutMs = options.bodyTimeoutMs ?? SOURCE_DEFAULTS.bodyTimeoutMs;
    this.#maxBodyBytes = options.maxBodyBytes ?? SOURCE_DEFAULTS.maxBodyBytes;
    this.#policy = {
      retries: options.retries ?? SOURCE_DEFAULTS.retries,
      baseDelayMs: options.retryBaseDelayMs ?? 500,
      maxDelayMs: options.retryMaxDelayMs ?? 30_000,
    };
  }

  async *batches(): AsyncGenerator<readonly unknown[]> {
    yield await this.#read();
  }

  async #read(): Promise<unknown[]> {
    /** The attempt last reported to the retry callback, and why it stopped retrying, if it said. */
    const tries = { attempts: 1, reason: undefined as string | undefined, responded: false };
    const agent = new Agent({
      connect: { timeout: this.#connectTimeoutMs },
      headersTimeout: this.#headersTimeoutMs,
      bodyTimeout: this.#bodyTimeoutMs,
      maxResponseSize: this.#maxBodyBytes,
    });
    const dispatcher = new RetryAgent(agent, {
      maxRetries: this.#policy.retries,
      methods: ['GET'],
      statusCodes: RETRIED_STATUSES,
      errorCodes: [...RETRIED_ERRORS],
      retry: (error, { state }, callback) => {
        tries.attempts = state.counter;
        // Once the body has begun, another attempt would splice two responses: never retry then.
        if (tries.responded) return callback(error);
        const failure = error as Error & {
          statusCode?: number;
          code?: string;
          headers?: Record<string, unknown>;
        };
        const retryAfter = failure.headers?.['retry-after'];
        const decision = decideRetry(
          {
            statusCode: failure.statusCode,
            code: failure.code,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          },
          state.counter,
          this.#policy,
          Date.now(),
        );
        if (!decision.retry) {
          tries.reason = decision.reason;
          return callback(error);
        }
        tries.attempts = state.counter + 1;
        setTimeout(() => callback(null), decision.delayMs);
      },
    });
    try {
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'catalog-build' };
      if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
      const response = await request(this.#url, { dispatcher, method: 'GET', headers });
      tries.responded = true;
      const refusal = this.#statusProblem(response, tries.attempts);
      if (refusal !== null) {
        discard(response.body);
        throw new Refused(refusal);
      }
      const typeProblem = contentTypeProblem(header(response.headers['content-type']));
      if (typeProblem !== null) {
        discard(response.body);
        throw new Refused(typeProblem);
      }
      const declared = Number(header(response.headers['content-length']) ?? Number.NaN);
      if (declared > this.#maxBodyBytes) {
        discard(response.body);
        throw new Refused(this.#tooLarge(`declares ${declared} bytes`));
      }
      const text = await this.#readBody(response.body);
      const rows = parseRows(text);
      if (typeof rows === 'string') throw new Refused(rows);
      return rows;
    } catch (error) {
      const reason = error instanceof Refused ? error.message : this.#describe(error, tries);
      const safe = scrub(reason, this.#secrets);
      throw new SourceError(
        this.name,
        safe,
        error instanceof Refused || safe !== reason ? undefined : { cause: error },
      );
    } finally {
      await dispatcher.destroy().catch(() => undefined);
    }
  }

  /** Reads the whole body as UTF-8, refusing it as soon as it passes the size limit. */
  async #readBody(body: Dispatcher.ResponseData['body']): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > this.#maxBodyBytes) {
        discard(body);
        throw new Refused(this.#tooLarge('sent more'));
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }

  #tooLarge(what: string): string {
    return `answered a body larger than the limit of ${formatBytes(this.#maxBodyBytes)} (${what}; raise --source-max-bytes)`;
  }

  /** Why a response status is refused, or null for a 2xx. */
  #statusProblem(response: Dispatcher.ResponseData, attempts: number): string | null {
    const status = response.statusCode;
    if (status >= 200 && status < 300) return null;
    const answered = `answered ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
    if (status === 401 || status === 403)
      return this.#token === undefined
        ? `${answered} (no token was sent: set CATALOG_SOURCE_TOKEN)`
        : `refused the credentials (${answered.replace('answered ', '')}; check CATALOG_SOURCE_TOKEN)`;
    if (status >= 300 && status < 400) {
      const location = header(response.headers.location);
      return `${answered}${location ? ` to ${redactUrl(location)}` : ''} (redirects are not followed: use the final URL)`;
    }
    return `${answered}${attempts > 1 ? ` after ${attempts} attempts` : ''}`;
  }

  /** The reason for an error of undici or the network. */
  #describe(
    error: unknown,
    tries: { attempts: number; reason: string | undefined; responded: boolean },
  ): string {
    const failure = error as { code?: unknown; statusCode?: unknown; message?: unknown };
    const code = typeof failure.code === 'string' ? failure.code : undefined;
    const message = typeof failure.message === 'string' ? failure.message : String(error);
    const after = tries.attempts > 1 ? ` after ${tries.attempts} attempts` : '';
    if (code === 'UND_ERR_REQ_RETRY' && typeof failure.statusCode === 'number') {
      const status = failure.statusCode;
      const answered = `answered ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
      return tries.reason ? `${answered}${after} and ${tries.reason}` : `${answered}${after}`;
    }
    switch (code) {
      case 'ECONNREFUSED':
        return `cannot connect (connection refused${after})`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `cannot connect (host ${this.#url.hostname} not found${after})`;
      case 'UND_ERR_CONNECT_TIMEOUT':
        return `cannot connect (no connection within ${this.#connectTimeoutMs} ms${after})`;
      case 'UND_ERR_HEADERS_TIMEOUT':
        return `sent no response headers within ${this.#headersTimeoutMs} ms`;
      case 'UND_ERR_BODY_TIMEOUT':
        return `stopped sending the body for ${this.#bodyTimeoutMs} ms (body timeout)`;
      case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
        return this.#tooLarge('sent more');
      case 'UND_ERR_SOCKET':
      case 'ECONNRESET':
        return tries.responded
          ? `closed the connection before the body was complete (${message})`
          : `closed the connection without answering (${message}${after})`;
    }
    if (code !== undefined && /CERT|TLS|SSL/i.test(code)) return `cannot connect (TLS: ${message})`;
    return `cannot be read (${message || code || 'unknown error'}${after})`;
  }
}

/** Stops reading a body that is refused; the abort error this raises on the stream is expected. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
