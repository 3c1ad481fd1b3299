/**
 * The local edge: viewer-request, the origin (or CloudFront's error page), viewer-response, then compression,
 * `304` and `206` as CloudFront serves from its cache; a function that fails gets a 502 (gateway/README.md).
 */
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { LogValue, PROBLEM_HEADERS, PROBLEM_INTERNAL, problemDocument } from '../../contract/index.ts';
import {
  type Behaviour,
  behaviourFor,
  compressible,
  DISTRIBUTION,
  errorResponseFor,
} from '../distribution.ts';
import type { CloudFrontRequest, CloudFrontResponse, Fields } from '../functions/event.ts';
import { type RawRequest, values, viewerRequestEvent, viewerResponseEvent } from './event.ts';
import type { Origin, OriginObject } from './origin.ts';
import { FunctionError, type SandboxedFunction } from './sandbox.ts';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** What the edge answers. Header names are lowercase; a name may carry several values. */
export interface EdgeResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
  /** The partner label of a catalog request the viewer-request function let through, for the access log. */
  readonly partner: string | null;
  /** What viewer-request recorded with `cf.logCustomData` (docs/decisions.md#usage); absent or null: nothing. */
  readonly logData?: string | null;
  /** Why the answer is a 500 or 502, for the error log (never shown to the client). */
  readonly error?: string;
}

/** The request viewer-response sees: as sent, or as viewer-request left it (AWS does not rule it out). */
export type ResponseEventRequest = 'as-sent' | 'as-rewritten';

export interface EdgeOptions {
  readonly viewerRequest: SandboxedFunction;
  readonly viewerResponse: SandboxedFunction;
  readonly origin: Origin;
  /** The request the viewer-response event carries (default `as-sent`). */
  readonly responseEventRequest?: ResponseEventRequest;
}

/** A function's field map as response headers (own properties only; several values become an array). */
function flatten(fields: Fields): Record<string, string | string[]> {
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (const name of Object.keys(fields)) {
    const all = values(fields, name);
    headers[name] = all.length === 1 ? (all[0] as string) : all;
  }
  return headers;
}

function bodyOf(response: CloudFrontResponse): Buffer {
  const body = response.body;
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  return body.encoding === 'base64' ? Buffer.from(body.data, 'base64') : Buffer.from(body.data);
}

const DAY = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const CLOCK = '\\d{2}:\\d{2}:\\d{2}';
/** IMF-fixdate and RFC 850 dates; an asctime date parses once ` GMT` is added. */
const HTTP_DATES = [
  `${DAY}, \\d{2} ${MONTH} \\d{4} ${CLOCK} GMT`,
  `(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${CLOCK} GMT`,
].map((form) => new RegExp(`^${form}$`));
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${CLOCK} \\d{4}$`);

/** The time of an HTTP-date (RFC 9110 §5.6.7: IMF-fixdate or one of the two obsolete forms), else null. */
function parseHttpDate(text: string): number | null {
  const value = text.trim();
  let time = Number.NaN;
  if (HTTP_DATES.some((form) => form.test(value))) time = Date.parse(value);
  else if (ASCTIME.test(value)) time = Date.parse(`${value} GMT`);
  return Number.isNaN(time) ? null : time;
}

/** Whether a 200 becomes a 304: a matching `If-None-Match`, else one `If-Modified-Since` ≥ `Last-Modified`. */
function notModified(request: Fields, etag: string, lastModified: string | undefined): boolean {
  const ifNoneMatch = values(request, 'if-none-match').join(',');
  if (ifNoneMatch.trim() !== '') {
    // Weak comparison (RFC 9110 §13.1.2); `*` matches any entity.
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    const own = opaque(etag);
    return (
      etag !== '' && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => opaque(tag) === own))
    );
  }
  const ifModifiedSince = values(request, 'if-modified-since');
  if (ifModifiedSince.length !== 1 || lastModified === undefined) return false;
  const since = parseHttpDate(ifModifiedSince[0] as string);
  const modified = parseHttpDate(lastModified);
  return since !== null && modified !== null && modified <= since;
}

/** The one `bytes=` range asked for; `null`: the whole body (none, or a form not split); 416 when unsatisfiable. */
function byteRange(header: string, length: number): { start: number; end: number } | 'unsatisfiable' | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 ? 'unsatisfiable' : { start: Math.max(0, length - suffix), end: length - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? length - 1 : Math.min(Number(match[2]), length - 1);
  if (match[2] !== '' && Number(match[2]) < start) return null;
  if (start >= length) return 'unsatisfiable';
  return { start, end };
}

/** The encoding CloudFront would pick: brotli when the viewer accepts it, else gzip, else none. */
function pickEncoding(acceptEncoding: string): 'br' | 'gzip' | null {
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(coding.trim(), q ? Number(q.slice(2)) : 1);
  }
  const ok = (coding: string) => (accepted.get(coding) ?? accepted.get('*') ?? 0) > 0;
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : null;
}

/** Request ids: unique per process without a random draw per request. */
const ID_PREFIX = randomBytes(6).toString('hex').toUpperCase();
let idCounter = 0;
function nextId(): string {
  idCounter += 1;
  return `${ID_PREFIX}${idCounter.toString(16).toUpperCase().padStart(8, '0')}`;
}

/** The local edge; one per server, reused across requests like a warm CloudFront function. */
export class Edge {
  readonly #options: EdgeOptions;
  /** Compressed bodies by encoding and entity tag; one build's objects at a time. */
  readonly #compressed = new Map<string, Promise<Buffer>>();

  constructor(options: EdgeOptions) {
    this.#options = options;
  }

  async handle(raw: RawRequest): Promise<EdgeResponse> {
    const event = viewerRequestEvent(raw, nextId());
    // CloudFront picks the behaviour from the viewer's path, before any function runs.
    const behaviour = behaviourFor(event.request.uri);
    let result: CloudFrontRequest | CloudFrontResponse;
    let logData: string | null;
    try {
      ({ result, logData } = await this.#options.viewerRequest.runLogged(event));
    } catch (error) {
      return failed('viewer-request', error);
    }
    if ('statusCode' in result) {
      return {
        status: result.statusCode,
        headers: flatten(result.headers),
        body: bodyOf(result),
        partner: null,
        logData,
      };
    }
    // A request let through names its partner alone (a page records `page`, or the canary's `monitoring.page`;
    // openapi.yaml nothing, or the canary's `monitoring`).
    const partner =
      logData !== null && logData !== LogValue.Page && !logData.includes(LogValue.Separator) ? logData : null;
    const origin = this.#options.origin;
    let object: OriginObject | null = null;
    let failure: string | undefined;
    try {
      object = await origin.get(objectKey(result.uri));
    } catch (error) {
      failure = `the origin ${origin.name} failed: ${(error as Error).message}`;
    }
    if (!object) {
      const status = failure
        ? DISTRIBUTION.originFailureStatus
        : DISTRIBUTION.origins[behaviour.origin].missingObjectStatus;
      const error = failure ?? `${result.uri} is missing at the origin ${origin.name}`;
      return { ...(await this.#errorPage(status, behaviour)), partner, logData, error };
    }

    const originHeaders: Record<string, string | undefined> = {
      'content-type': object.contentType,
      etag: object.etag,
      'last-modified': object.lastModified.toUTCString(),
      server: 'AmazonS3',
      'x-amz-request-id': nextId(),
      'cache-control': object.cacheControl,
      'content-encoding': object.contentEncoding,
    };
    const originResponse: CloudFrontResponse = { statusCode: 200, statusDescription: 'OK', headers: {} };
    for (const [name, value] of Object.entries(originHeaders))
      if (value) originResponse.headers[name] = { value };
    let response: CloudFrontResponse;
    try {
      const request = this.#options.responseEventRequest === 'as-rewritten' ? result : event.request;
      response = (await this.#options.viewerResponse.run(
        viewerResponseEvent({ ...event, request }, originResponse),
      )) as CloudFrontResponse;
    } catch (error) {
      return { ...failed('viewer-response', error), partner, logData };
    }
    // CloudFront acts on the request as the function left it (a header the function removed is gone).
    return { ...(await this.#deliver(response, object, result.headers, behaviour)), partner, logData };
  }

  /** Compression, conditional GET and ranges, after viewer-response, as CloudFront serves from its cache. */
  async #deliver(response: CloudFrontResponse, object: OriginObject, request: Fields, behaviour: Behaviour) {
    const headers = responseHeadersPolicy(flatten(response.headers), behaviour);
    let body = response.body === undefined ? object.body : bodyOf(response);
    const encoding = pickEncoding(values(request, 'accept-encoding').join(','));
    if (
      response.body === undefined &&
      encoding !== null &&
      headers['content-encoding'] === undefined &&
      compressible(behaviour, String(headers['content-type'] ?? ''), body.length)
    ) {
      body = await this.#compress(encoding, object);
      headers['content-encoding'] = encoding;
      headers.etag = `W/${object.etag}`;
    }
    if (response.statusCode !== 200) return { status: response.statusCode, headers, body };
    const etag = String(headers.etag ?? '');
    const lastModified = typeof headers['last-modified'] === 'string' ? headers['last-modified'] : undefined;
    if (notModified(request, etag, lastModified)) {
      // A 304 carries the validators and caching headers, not the description of a body it does not have.
      delete headers['content-encoding'];
      delete headers['content-type'];
      return { status: 304, headers, body: Buffer.alloc(0) };
    }
    const range = values(request, 'range');
    const ifRange = values(request, 'if-range')[0];
    const rangeApplies =
      range.length === 1 &&
      (ifRange === undefined || (!ifRange.startsWith('W/') && ifRange === etag) || ifRange === lastModified);
    const wanted = rangeApplies ? byteRange(range[0] as string, body.length) : null;
    if (wanted === 'unsatisfiable') {
      headers['content-range'] = `bytes */${body.length}`;
      return { status: 416, headers, body: Buffer.alloc(0) };
    }
    if (wanted) {
      headers['content-range'] = `bytes ${wanted.start}-${wanted.end}/${body.length}`;
      return { status: 206, headers, body: body.subarray(wanted.start, wanted.end + 1) };
    }
    return { status: 200, headers, body };
  }

  #compress(encoding: 'br' | 'gzip', object: OriginObject): Promise<Buffer> {
    const key = `${encoding} ${object.etag}`;
    let pending = this.#compressed.get(key);
    if (!pending) {
      if (this.#compressed.size >= 16) this.#compressed.clear();
      const { body } = object;
      const params = { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length };
      pending = encoding === 'br' ? brotli(body, { params }) : gzipAsync(body, { level: 6 });
      pending.catch(() => this.#compressed.delete(key));
      this.#compressed.set(key, pending);
    }
    return pending;
  }

  /** CloudFront's custom error page for an origin status (no function runs), else the origin's answer. */
  async #errorPage(originStatus: number, behaviour: Behaviour): Promise<Omit<EdgeResponse, 'partner'>> {
    const response = errorResponseFor(originStatus);
    const page = response ? await this.#options.origin.get(objectKey(response.page)).catch(() => null) : null;
    const headers = responseHeadersPolicy(
      {
        'content-type': page?.contentType ?? PROBLEM_HEADERS['content-type'],
        'cache-control': page?.cacheControl ?? PROBLEM_HEADERS['cache-control'],
      },
      behaviour,
    );
    return {
      status: response?.status ?? originStatus,
      headers,
      body: page?.body ?? Buffer.from(problemDocument(PROBLEM_INTERNAL)),
    };
  }
}

/** The behaviour's response headers policy, on what comes from the cache or origin (error pages included). */
function responseHeadersPolicy(headers: Record<string, string | string[]>, behaviour: Behaviour) {
  for (const name of DISTRIBUTION.responseHeaders.remove) delete headers[name.toLowerCase()];
  headers['x-content-type-options'] = DISTRIBUTION.responseHeaders.contentTypeOptions;
  for (const [name, value] of Object.entries(behaviour.securityHeaders)) headers[name] = value;
  return headers;
}

function objectKey(uri: string): string {
  const path = uri.replace(/^\/+/, '');
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** CloudFront's answer when it cannot use what it got: a plain 502 that no cache keeps. */
export function badGateway(reason: string): EdgeResponse {
  return {
    status: 502,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    body: Buffer.from('502 Bad Gateway: the request could not be satisfied.\n'),
    partner: null,
    error: reason,
  };
}

function failed(stage: string, error: unknown): EdgeResponse {
  return badGateway(`${stage} function: ${error instanceof FunctionError ? error.message : String(error)}`);
}
