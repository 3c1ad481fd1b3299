/**
 * The local edge: what CloudFront does around the two functions, without the network. A request goes through
 * viewer-request; a response it generates is sent as is. Otherwise the object is fetched from the origin; a
 * missing object or a failing origin gets the custom error page (500, `errors/500.json`, no viewer-response);
 * an object gets viewer-response, then `304` for a matching `If-None-Match`, and gzip or brotli for
 * 1,000–10,000,000-byte bodies when the viewer accepts them. A function that throws or sets a forbidden header
 * gets CloudFront's 502.
 */
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import {
  HEADER_VALUES,
  ORIGIN_FILES,
  PARTNER_HEADER,
  PROBLEM_INTERNAL,
  problemDocument,
} from '../../contract/index.ts';
import type { CloudFrontRequest, CloudFrontResponse, Fields } from '../functions/event.ts';
import { FunctionError, type SandboxedFunction } from '../runtime/sandbox.ts';
import { type RawRequest, values, viewerRequestEvent, viewerResponseEvent } from './event.ts';
import type { Origin, OriginObject } from './origin.ts';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** CloudFront compresses objects from 1,000 to 10,000,000 bytes (DG/ServingCompressedFiles.html). */
export const COMPRESSIBLE_BYTES = { min: 1000, max: 10_000_000 } as const;

/** What the edge answers. Header names are lowercase; a name may carry several values. */
export interface EdgeResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
  /** The partner label the viewer-request function found for the key, for the access log. */
  readonly partner: string | null;
  /** Why the answer is a 500 or 502, for the error log (never shown to the client). */
  readonly error?: string;
}

export interface EdgeOptions {
  readonly viewerRequest: SandboxedFunction;
  readonly viewerResponse: SandboxedFunction;
  readonly origin: Origin;
}

function flatten(fields: Fields): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, field] of Object.entries(fields)) {
    headers[name] = field.multiValue ? field.multiValue.map((v) => v.value) : field.value;
  }
  return headers;
}

function bodyOf(response: CloudFrontResponse): Buffer {
  const body = response.body;
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  return body.encoding === 'base64' ? Buffer.from(body.data, 'base64') : Buffer.from(body.data);
}

/** Whether an `If-None-Match` value matches an entity tag (weak comparison, RFC 9110 §13.1.2). */
export function ifNoneMatchMatches(header: string, etag: string): boolean {
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => opaque(candidate) === opaque(etag));
}

/** The encoding CloudFront would pick: brotli when the viewer accepts it, else gzip, else none. */
export function pickEncoding(acceptEncoding: string): 'br' | 'gzip' | null {
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(coding.trim(), q ? Number(q.slice(2)) : 1);
  }
  const ok = (coding: string) => (accepted.get(coding) ?? accepted.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return null;
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
    let result: CloudFrontRequest | CloudFrontResponse;
    try {
      result = await this.#options.viewerRequest.run(event);
    } catch (error) {
      return badGateway('viewer-request', error);
    }
    if ('statusCode' in result) {
      return {
        status: result.statusCode,
        headers: flatten(result.headers),
        body: bodyOf(result),
        partner: null,
      };
    }
    const partner = result.headers[PARTNER_HEADER]?.value ?? null;
    let object: OriginObject | null;
    let failure: string | undefined;
    try {
      object = await this.#options.origin.get(objectKey(result.uri));
      if (!object) failure = `${result.uri} is missing at the origin ${this.#options.origin.name}`;
    } catch (error) {
      object = null;
      failure = `the origin ${this.#options.origin.name} failed: ${(error as Error).message}`;
    }
    if (!object) return { ...(await this.#errorPage()), partner, error: failure ?? 'origin error' };

    const originResponse: CloudFrontResponse = {
      statusCode: 200,
      statusDescription: 'OK',
      headers: {
        'content-type': { value: object.contentType },
        etag: { value: object.etag },
        'last-modified': { value: object.lastModified.toUTCString() },
        server: { value: 'AmazonS3' },
        'x-amz-request-id': { value: nextId() },
      },
    };
    if (object.cacheControl) originResponse.headers['cache-control'] = { value: object.cacheControl };
    let response: CloudFrontResponse;
    try {
      response = (await this.#options.viewerResponse.run(
        viewerResponseEvent({ ...event, request: result }, originResponse),
      )) as CloudFrontResponse;
    } catch (error) {
      return { ...badGateway('viewer-response', error), partner };
    }
    return { ...(await this.#deliver(response, object, event.request.headers)), partner };
  }

  /** Conditional GET and compression, after viewer-response, as CloudFront serves from its cache. */
  async #deliver(
    response: CloudFrontResponse,
    object: OriginObject,
    requestHeaders: Fields,
  ): Promise<Omit<EdgeResponse, 'partner'>> {
    const headers = responseHeadersPolicy(flatten(response.headers));
    let body = response.body === undefined ? object.body : bodyOf(response);
    const encoding = pickEncoding(values(requestHeaders['accept-encoding']).join(','));
    const compressible =
      response.body === undefined &&
      encoding !== null &&
      body.length >= COMPRESSIBLE_BYTES.min &&
      body.length <= COMPRESSIBLE_BYTES.max &&
      /json|yaml/.test(String(headers['content-type']));
    if (compressible && encoding) {
      body = await this.#compress(encoding, object);
      headers['content-encoding'] = encoding;
      headers.etag = `W/${object.etag}`;
    }
    const ifNoneMatch = values(requestHeaders['if-none-match']).join(',');
    const etag = String(headers.etag ?? '');
    if (
      response.statusCode === 200 &&
      ifNoneMatch !== '' &&
      etag !== '' &&
      ifNoneMatchMatches(ifNoneMatch, etag)
    ) {
      // A 304 carries the validators and caching headers, not the description of a body it does not have.
      delete headers['content-encoding'];
      delete headers['content-type'];
      return { status: 304, headers, body: Buffer.alloc(0) };
    }
    return { status: response.statusCode, headers, body };
  }

  #compress(encoding: 'br' | 'gzip', object: OriginObject): Promise<Buffer> {
    const key = `${encoding} ${object.etag}`;
    let pending = this.#compressed.get(key);
    if (!pending) {
      if (this.#compressed.size >= 16) this.#compressed.clear();
      pending =
        encoding === 'br'
          ? brotli(object.body, {
              params: {
                [constants.BROTLI_PARAM_QUALITY]: 5,
                [constants.BROTLI_PARAM_SIZE_HINT]: object.body.length,
              },
            })
          : gzipAsync(object.body, { level: 6 });
      pending.catch(() => this.#compressed.delete(key));
      this.#compressed.set(key, pending);
    }
    return pending;
  }

  /** CloudFront's custom error response: the origin's errors/500.json with status 500. */
  async #errorPage(): Promise<Omit<EdgeResponse, 'partner'>> {
    let page: OriginObject | null = null;
    try {
      page = await this.#options.origin.get(ORIGIN_FILES.errorPage);
    } catch {
      page = null;
    }
    const headers = responseHeadersPolicy({
      'content-type': page?.contentType ?? HEADER_VALUES.problem,
      'cache-control': page?.cacheControl ?? HEADER_VALUES.noStore,
    });
    return { status: 500, headers, body: page?.body ?? Buffer.from(problemDocument(PROBLEM_INTERNAL)) };
  }
}

/** The distribution's response headers policy, on what comes from the cache or origin: nosniff, no Server. */
function responseHeadersPolicy(
  headers: Record<string, string | string[]>,
): Record<string, string | string[]> {
  delete headers.server;
  headers['x-content-type-options'] = 'nosniff';
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

function badGateway(stage: string, error: unknown): EdgeResponse {
  const reason = error instanceof FunctionError ? error.message : String(error);
  return {
    status: 502,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    body: Buffer.from('502 Bad Gateway: the request could not be satisfied.\n'),
    partner: null,
    error: `${stage} function: ${reason}`,
  };
}
