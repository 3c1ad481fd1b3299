/**
 * One call to the catalog service as a partner's server makes it (undici): `GET {upstream}/api/plans` with the
 * key (never part of a result or a message), revalidated with `If-None-Match`, the body checked against the
 * schema. Every failure is a `failed` result, never an exception, so the caller keeps its last good copy.
 */
import { Agent, request } from 'undici';
import type { components } from './api.ts';
import { parseJson } from './json.ts';
import { Catalog, Problem } from './schema.ts';

/** The catalog as the document types it (openapi-typescript, partner/api.ts). */
export type CatalogDocument = components['schemas']['Catalog'];

/** What one call to the service gave. */
export type FetchResult =
  | {
      readonly kind: 'fetched';
      /** The body exactly as the service sent it (valid against the schema). */
      readonly body: string;
      readonly catalog: CatalogDocument;
      readonly etag?: string;
      /** Seconds the answer stays fresh (`max-age` less `Age`), when the service said. */
      readonly freshForSeconds?: number;
    }
  | { readonly kind: 'not-modified'; readonly freshForSeconds?: number }
  | {
      readonly kind: 'failed';
      /** The HTTP status, when the service answered at all. */
      readonly status?: number;
      /** The problem `type` of an error answer, when it sent one. */
      readonly problemType?: string;
      /** One line saying what went wrong (never the key). */
      readonly error: string;
    };

export interface CatalogClientOptions {
  /** The service's base URL, `http(s)://host[:port]`, and the partner's API key. */
  readonly upstream: string;
  readonly key: string;
  /** Time to connect, to the headers, the longest pause in the body, the whole call (ms; 5, 10, 30, 30 s). */
  readonly timeouts?: {
    readonly connectMs?: number;
    readonly headersMs?: number;
    readonly bodyMs?: number;
    readonly totalMs?: number;
  };
  /** The largest body accepted (bytes); larger answers fail. */
  readonly maxBytes?: number;
}

const DEFAULT_TIMEOUTS = { connectMs: 5_000, headersMs: 10_000, bodyMs: 30_000, totalMs: 30_000 };
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** Seconds an answer stays fresh according to `Cache-Control: max-age` and `Age`; undefined when unsaid. */
export function freshnessSeconds(
  cacheControl: string | undefined,
  age: string | undefined,
): number | undefined {
  if (cacheControl === undefined) return undefined;
  const directives = cacheControl.toLowerCase().split(',');
  if (directives.some((d) => d.trim() === 'no-store' || d.trim() === 'no-cache')) return 0;
  const match = directives.map((d) => /^\s*max-age\s*=\s*"?(\d+)"?\s*$/.exec(d)).find(Boolean);
  if (!match?.[1]) return undefined;
  const ageSeconds = age !== undefined && /^\d+$/.test(age.trim()) ? Number(age.trim()) : 0;
  return Math.max(0, Number(match[1]) - ageSeconds);
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** Calls the catalog service; one instance per upstream and key. */
export class CatalogClient {
  readonly #url: string;
  readonly #key: string;
  readonly #agent: Agent;
  readonly #timeouts: typeof DEFAULT_TIMEOUTS;
  readonly #stop = new AbortController();

  constructor(options: CatalogClientOptions) {
    this.#url = `${options.upstream.replace(/\/+$/, '')}/api/plans`;
    this.#key = options.key;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.#agent = new Agent({
      connect: { timeout: this.#timeouts.connectMs },
      maxResponseSize: options.maxBytes ?? DEFAULT_MAX_BYTES,
    });
  }

  /** The longest a call takes (ms): then it fails. */
  get deadlineMs(): number {
    return this.#timeouts.totalMs;
  }

  /** The whole catalog, revalidated against `etag` (the ETag of the copy the caller holds) when given. */
  async fetch(etag?: string): Promise<FetchResult> {
    const deadline = AbortSignal.timeout(this.#timeouts.totalMs);
    try {
      const headers: Record<string, string> = { 'x-api-key': this.#key, accept: 'application/json' };
      if (etag !== undefined) headers['if-none-match'] = etag;
      const response = await request(this.#url, {
        headers,
        dispatcher: this.#agent,
        headersTimeout: this.#timeouts.headersMs,
        bodyTimeout: this.#timeouts.bodyMs,
        signal: AbortSignal.any([deadline, this.#stop.signal]),
      });
      const freshForSeconds = freshnessSeconds(
        single(response.headers['cache-control']),
        single(response.headers.age),
      );
      const fresh = freshForSeconds === undefined ? {} : { freshForSeconds };
      if (response.statusCode === 304) {
        await response.body.dump();
        if (etag === undefined) return { kind: 'failed', status: 304, error: '304 to an unconditional call' };
        return { kind: 'not-modified', ...fresh };
      }
      const body = await response.body.text();
      if (response.statusCode !== 200) return failedAnswer(response.statusCode, body);
      const checked = parseJson(Catalog, body);
      if ('error' in checked) return { kind: 'failed', status: 200, error: `invalid body: ${checked.error}` };
      const answerEtag = single(response.headers.etag);
      return {
        kind: 'fetched',
        body,
        catalog: checked.json as CatalogDocument,
        ...(answerEtag === undefined ? {} : { etag: answerEtag }),
        ...fresh,
      };
    } catch (error) {
      if (this.#stop.signal.aborted) return { kind: 'failed', error: 'the proxy is stopping' };
      if (deadline.aborted)
        return {
          kind: 'failed',
          error: `no whole answer within ${this.#timeouts.totalMs / 1000} s (the refresh deadline)`,
        };
      return { kind: 'failed', error: networkError(error) };
    }
  }

  /** Ends a call under way (it fails) and closes the connections to the service. */
  close(): Promise<void> {
    this.#stop.abort();
    return this.#agent.destroy();
  }
}

/** A non-2xx answer (or a 2xx other than 200): its status, and its problem type when it is a problem. */
function failedAnswer(status: number, body: string): FetchResult {
  let problemType: string | undefined;
  try {
    const problem = Problem.safeParse(JSON.parse(body));
    if (problem.success) problemType = problem.data.type;
  } catch {
    // Not a problem document (a CDN's own error page, say): the status says enough.
  }
  return {
    kind: 'failed',
    status,
    ...(problemType === undefined ? {} : { problemType }),
    error: `the service answered ${status}${problemType === undefined ? '' : ` ${problemType}`}`,
  };
}

/** A network failure in one line: undici's code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT…) and message. */
export function networkError(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const code = (error as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
