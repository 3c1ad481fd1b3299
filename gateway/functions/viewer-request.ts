/**
 * Viewer-request function: decides every request before the cache, in this order: path → method
 * → OPTIONS → openapi.yaml → key → discipline. A valid catalog request is rewritten to the catalog file and
 * loses its query string, so unknown parameters never reach the cache key or the origin; it also loses any
 * `Range`/`If-Range`, so the answer is always the whole document. Every answer this function generates carries
 * all its headers (a 401 its `WWW-Authenticate` challenge): CloudFront does not run viewer-response on it.
 */
// biome-ignore lint/style/useNodejsImportProtocol: the runtime's module is `crypto`; the build turns this into require('crypto')
import crypto from 'crypto';
import {
  GENERATED_HEADERS,
  KVS_KEY_PREFIX,
  ORIGIN_FILES,
  PARTNER_HEADER,
  PATHS,
  PROBLEM_INVALID_DISCIPLINE,
  PROBLEM_METHOD_NOT_ALLOWED,
  PROBLEM_NOT_FOUND,
  PROBLEM_UNAUTHORIZED,
  type ProblemType,
  problemDocument,
} from '../../contract/index.ts';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse, Fields } from './event.ts';
import { addCors, corsOrigin, problemHeaders, read } from './shared.ts';

function problem(p: ProblemType, origin: string | null, extra?: Fields): CloudFrontResponse {
  const headers = addCors(problemHeaders(), origin);
  if (extra) Object.assign(headers, extra);
  return {
    statusCode: p.status,
    statusDescription: p.title,
    headers: headers,
    body: problemDocument(p),
  };
}

/** Percent-decodes, or returns null for a malformed escape. */
function decode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch (_error) {
    return null;
  }
}

/** The partner label of a valid, unexpired key, else null. Only the SHA-256 of the key is looked up. */
async function partnerOf(request: CloudFrontRequest): Promise<string | null> {
  const header = request.headers['x-api-key'];
  if (!header || header.value === '' || (header.multiValue && header.multiValue.length > 1)) return null;
  const hash = crypto.createHash('sha256').update(header.value).digest('hex');
  const stored = await read(KVS_KEY_PREFIX + hash);
  if (stored === null) return null;
  let record: { partner?: unknown; expires?: unknown };
  try {
    record = JSON.parse(stored);
  } catch (_error) {
    return null;
  }
  if (typeof record.partner !== 'string' || record.partner === '') return null;
  if (record.expires !== undefined) {
    const expires = typeof record.expires === 'string' ? Date.parse(record.expires) : Number.NaN;
    if (!(Date.now() < expires)) return null;
  }
  return record.partner;
}

/**
 * The catalog file for the query string: `catalog.json` without `discipline`, the discipline's file for one
 * valid value, null for anything else (empty, repeated, wrong case, malformed). Names are matched after
 * percent-decoding, case-sensitively.
 */
function catalogFile(querystring: Fields): string | null {
  const values: string[] = [];
  const names = Object.keys(querystring);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (decode(name) !== 'discipline') continue;
    const field = querystring[name] as CloudFrontRequest['querystring'][string];
    if (field.multiValue && field.multiValue.length > 0) {
      for (let j = 0; j < field.multiValue.length; j++)
        values.push((field.multiValue[j] as { value: string }).value);
    } else {
      values.push(field.value);
    }
  }
  if (values.length === 0) return ORIGIN_FILES.all;
  if (values.length > 1) return null;
  const value = decode(values[0] as string);
  if (value === 'running') return ORIGIN_FILES.running;
  if (value === 'strength') return ORIGIN_FILES.strength;
  return null;
}

export async function handler(event: CloudFrontEvent): Promise<CloudFrontRequest | CloudFrontResponse> {
  const request = event.request;
  const origin = await corsOrigin();
  if (request.uri !== PATHS.plans && request.uri !== PATHS.openapi) return problem(PROBLEM_NOT_FOUND, origin);
  if (request.method !== 'GET' && request.method !== 'OPTIONS') {
    return problem(PROBLEM_METHOD_NOT_ALLOWED, origin, { allow: { value: GENERATED_HEADERS.allow } });
  }
  if (request.method === 'OPTIONS') {
    const headers: Fields = {};
    if (origin) {
      headers['access-control-allow-origin'] = { value: origin };
      headers['access-control-allow-methods'] = { value: GENERATED_HEADERS.corsMethods };
      headers['access-control-allow-headers'] = { value: GENERATED_HEADERS.corsHeaders };
      headers['access-control-max-age'] = { value: GENERATED_HEADERS.corsMaxAgeSeconds };
    }
    return { statusCode: 204, statusDescription: 'No Content', headers: headers };
  }
  // Always the whole document: CloudFront would answer a Range with 206 and a slice of the JSON.
  delete request.headers.range;
  delete request.headers['if-range'];
  if (request.uri === PATHS.openapi) {
    request.querystring = {};
    return request;
  }

  const partner = await partnerOf(request);
  if (partner === null) {
    return problem(PROBLEM_UNAUTHORIZED, origin, {
      'www-authenticate': { value: GENERATED_HEADERS.wwwAuthenticate },
    });
  }
  const file = catalogFile(request.querystring);
  if (!file) return problem(PROBLEM_INVALID_DISCIPLINE, origin);
  request.uri = `/${file}`;
  request.querystring = {};
  delete request.headers['x-api-key'];
  request.headers[PARTNER_HEADER] = { value: partner };
  return request;
}
