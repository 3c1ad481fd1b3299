/**
 * An HTTP source: one GET of a URL answering a JSON array of rows, with connect, headers and body timeouts, a
 * body size limit (a Content-Length over it refused before reading) and an optional bearer token that never
 * appears in a name or a message. Redirects are not followed.
 *
 * Retries are undici's RetryAgent: on 429, every 5xx but 501 and 505, and a network error before an answer,
 * waiting twice as long each time; a Retry-After is cut to the longest wait, so a build tries again sooner
 * rather than stall (the message quotes it). A body cut short is resumed with a Range request (If-Match on
 * a strong ETag); timeouts and a body over the limit are not retried.
 */
import { STATUS_CODES } from 'node:http';
import { Agent, errors, RetryAgent, type RetryHandler, request } from 'undici';
import { ConfigError, NETWORK_ERROR_CODES, SourceError, settingRef } from '../../contract/errors.ts';
import { formatDuration } from '../../keys/time.ts';
import type { PlanSource } from '../source.ts';
import { formatBytes, SOURCE_DEFAULTS, type SourceOptions } from './options.ts';
import { redactUrl, scrub, urlSecrets } from './redact.ts';

/** The source settings that apply to HTTP. */
export type HttpSourceOptions = Omit<SourceOptions, 'sourceRelation' | 'sourceStatementTimeout'>;

/** The wait before the first retry (it doubles with each), and the longest, also when Retry-After asks more. */
const RETRY_FIRST_WAIT_MS = 500;
const RETRY_LONGEST_WAIT_MS = 30_000;

/** Network errors before an answer, where another attempt may get through (undici names two of its own). */
const RETRIED_ERRORS = [...Object.keys(NETWORK_ERROR_CODES), 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'];

/** Why a Content-Type is not JSON (`application/json` or `application/…+json`), or null when it is. */
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
  readonly #retry: RetryHandler.RetryOptions & { readonly maxRetries: number; readonly maxTimeout: number };

  /** Throws `ConfigError` for a URL that is not http(s), carries credentials, or a token that cannot be sent. */
  constructor(url: string, options: HttpSourceOptions = {}) {
    this.name = redactUrl(url);
    this.#secrets = urlSecrets(url);
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '')
      throw new ConfigError(`source ${this.name}: is not a valid http(s):// URL`);
    if (parsed.username !== '' || parsed.password !== '')
      throw new ConfigError(
        `source ${this.name}: credentials in the URL are not sent; give a bearer token in ${settingRef('sourceToken')}`,
      );
    this.#url = parsed;
    const token = options.sourceToken?.trim();
    if (token !== undefined && token !== '') {
      if (/^bearer\s/i.test(token))
        throw new ConfigError(`${settingRef('sourceToken')}: give the token alone, without "Bearer "`);
      if (!TOKEN.test(token))
        throw new ConfigError(
          `${settingRef('sourceToken')}: must be printable ASCII without spaces (value not shown)`,
        );
      this.#token = token;
      this.#secrets.push(token);
    }
    this.#connectTimeoutMs = options.sourceConnectTimeout ?? SOURCE_DEFAULTS.sourceConnectTimeout;
    this.#headersTimeoutMs = options.sourceHeadersTimeout ?? SOURCE_DEFAULTS.sourceHeadersTimeout;
    this.#bodyTimeoutMs = options.sourceBodyTimeout ?? SOURCE_DEFAULTS.sourceBodyTimeout;
    this.#maxBodyBytes = options.sourceMaxBytes ?? SOURCE_DEFAULTS.sourceMaxBytes;
    this.#retry = {
      maxRetries: options.sourceRetries ?? SOURCE_DEFAULTS.sourceRetries,
      minTimeout: RETRY_FIRST_WAIT_MS,
      maxTimeout: RETRY_LONGEST_WAIT_MS,
      timeoutFactor: 2,
      retryAfter: true,
      methods: ['GET'],
      statusCodes: [
        429,
        ...Array.from({ length: 100 }, (_, i) => 500 + i).filter((s) => s !== 501 && s !== 505),
      ],
      errorCodes: RETRIED_ERRORS,
    };
  }

  async *batches(): AsyncGenerator<readonly unknown[]> {
    yield await this.#read();
  }

  async #read(): Promise<unknown[]> {
    const agent = new Agent({
      connect: { timeout: this.#connectTimeoutMs },
      headersTimeout: this.#headersTimeoutMs,
      bodyTimeout: this.#bodyTimeoutMs,
      maxResponseSize: this.#maxBodyBytes,
    });
    const dispatcher = new RetryAgent(agent, this.#retry);
    /** Whether the response headers arrived: an error after that is in the body. */
    let responded = false;
    try {
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'catalog-build' };
      if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
      const response = await request(this.#url, { dispatcher, method: 'GET', headers });
      responded = true;
      const declared = Number(header(response.headers['content-length']));
      const problem =
        this.#statusProblem(response.statusCode, header(response.headers.location)) ??
        contentTypeProblem(header(response.headers['content-type'])) ??
        (declared > this.#maxBodyBytes ? this.#tooLarge(`declares ${declared} bytes`) : null);
      if (problem !== null) {
        // Stop reading a refused body; the abort error this raises on the stream is expected.
        response.body.on('error', () => undefined).destroy();
        throw new Refused(problem);
      }
      const rows = parseRows(await response.body.text());
      if (typeof rows === 'string') throw new Refused(rows);
      return rows;
    } catch (error) {
      const reason = error instanceof Refused ? error.message : this.#describe(error, responded);
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

  #tooLarge(what: string): string {
    return `answered a body larger than the limit of ${formatBytes(this.#maxBodyBytes)} (${what}; raise ${settingRef('sourceMaxBytes')})`;
  }

  /** Why a status that undici did not retry is refused, or null for a 2xx. */
  #statusProblem(status: number, location: string | undefined): string | null {
    if (status >= 200 && status < 300) return null;
    if (status === 401 || status === 403)
      return this.#token === undefined
        ? `${answered(status)} (no token was sent: set ${settingRef('sourceToken')})`
        : `refused the credentials (${answered(status).replace('answered ', '')}; check ${settingRef('sourceToken')})`;
    if (status >= 300 && status < 400)
      return `${answered(status)}${location ? ` to ${redactUrl(location)}` : ''} (redirects are not followed: use the final URL)`;
    return answered(status);
  }

  /** The reason for an error of undici or the network; `responded` when it came after the response headers. */
  #describe(error: unknown, responded: boolean): string {
    if (error instanceof errors.RequestRetryError) {
      const status = answered(error.statusCode);
      if (responded)
        return `closed the connection before the body was complete and another attempt could not resume it (${status}: ${error.message})`;
      const retryAfter = header(error.headers['retry-after']);
      const asked = retryAfter
        ? ` (Retry-After: ${retryAfter.slice(0, 40)}; a build waits at most ${formatDuration(this.#retry.maxTimeout)} between attempts)`
        : '';
      return `${status}${attempts(error.data.count)}${asked}`;
    }
    const failure = error as { code?: unknown; message?: unknown };
    const code = typeof failure.code === 'string' ? failure.code : '';
    const message = typeof failure.message === 'string' ? failure.message : String(error);
    // undici gives up on a retried network error only once every retry is used.
    const after = !responded && RETRIED_ERRORS.includes(code) ? attempts(this.#retry.maxRetries + 1) : '';
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
        return responded
          ? `closed the connection before the body was complete (${message})`
          : `closed the connection without answering (${message}${after})`;
    }
    if (/CERT|TLS|SSL/i.test(code)) return `cannot connect (TLS: ${message})`;
    return `cannot be read (${message || code || 'unknown error'}${after})`;
  }
}

/** `answered 503 Service Unavailable`. */
function answered(status: number): string {
  return `answered ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
}

/** ` after 3 attempts`, or nothing for one attempt. */
function attempts(count: number): string {
  return count > 1 ? ` after ${count} attempts` : '';
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
