/**
 * Viewer-request function: decides every request before the cache, in this order: path → method → the home
 * page → OPTIONS → openapi.yaml → key → discipline (docs/decisions.md#gateway). It answers the home page `/`
 * (200, HTML) and 204/400/401/404/405 itself, with
 * every header (CloudFront runs no viewer-response on them), or rewrites the request to the live build's object
 * in the encoding the viewer prefers, or a plan page to its live page (docs/decisions.md#plan-pages); the
 * query string, `Range` and `If-Range` go (gateway/README.md, "What runs when").
 */
// biome-ignore lint/style/useNodejsImportProtocol: the runtime's module is `crypto`; the build turns this into require('crypto')
import crypto from 'crypto';
import {
  BUILD_ID_PATTERN,
  CANARY_HEADER,
  catalogFile,
  DISCIPLINES,
  type Discipline,
  GENERATED_HEADERS,
  HOME_HEADERS,
  HOME_PAGE,
  KVS_CORS_ORIGIN,
  KVS_KEY_PREFIX,
  KVS_LIVE_BUILD,
  LogValue,
  MONITORING_PARTNER,
  ORIGIN_FILES,
  PAGE_OBJECT_SUFFIX,
  PAGE_PATH_PREFIX,
  PATHS,
  PLAN_ID_PATTERN,
  PREFLIGHT_HEADERS,
  PROBLEM_HEADERS,
  PROBLEM_INVALID_DISCIPLINE,
  PROBLEM_METHOD_NOT_ALLOWED,
  PROBLEM_NOT_FOUND,
  PROBLEM_UNAUTHORIZED,
  type ProblemType,
  problemDocument,
  VARIANTS,
} from '../../contract/index.ts';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse, Fields } from './event.ts';
import { addCors, logged, read, setHeaders } from './shared.ts';

/**
 * An answer this function makes itself (404, 405, 401, 400): the problem document with every header it
 * needs, and the CORS origin when one is set (the store is read only for these answers, not for a request
 * that goes on to the cache).
 */
async function problem(p: ProblemType, extra?: Fields): Promise<CloudFrontResponse> {
  const origin = await read(KVS_CORS_ORIGIN);
  const headers = setHeaders(addCors({}, origin), PROBLEM_HEADERS);
  if (extra) Object.assign(headers, extra);
  return { statusCode: p.status, headers: headers, body: problemDocument(p) };
}

/** The home page (`/`), for people: 200 with its headers, and the CORS origin when one is set. */
async function home(): Promise<CloudFrontResponse> {
  const origin = await read(KVS_CORS_ORIGIN);
  const headers = setHeaders(addCors({}, origin), HOME_HEADERS);
  return { statusCode: 200, headers: headers, body: HOME_PAGE };
}

/** The answer to a preflight: 204, and the CORS headers when an origin is set. */
async function preflight(): Promise<CloudFrontResponse> {
  const origin = await read(KVS_CORS_ORIGIN);
  const headers = addCors({}, origin);
  if (origin) setHeaders(headers, PREFLIGHT_HEADERS);
  return { statusCode: 204, headers: headers };
}

/**
 * The request on its way to the cache: the live build's object (no pointer, or one that is not a build id,
 * leads nowhere, so the origin's miss is a 500), in the chosen encoding, without a query string.
 */
async function forward(
  request: CloudFrontRequest,
  file: string,
  encoding: string,
): Promise<CloudFrontRequest> {
  const live = await read(KVS_LIVE_BUILD);
  request.uri = `/builds/${live !== null && BUILD_ID_PATTERN.test(live) ? live : '-'}/${file}${encoding}`;
  request.querystring = {};
  return request;
}

/** Percent-decodes, or returns null for a malformed escape. */
function decode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch (_error) {
    return null;
  }
}

/** Records a request's partner (null: none) and reason (null: none), and returns `result` (docs/decisions.md#usage). */
type Log = <T>(partner: string | null, reason: string | null, result: T) => T;

/** A {@link Log} that records nothing. */
function unrecorded<T>(_partner: string | null, _reason: string | null, result: T): T {
  return result;
}

/**
 * The partner of a valid, unexpired key, else null with why told to `log`; only the key's SHA-256 is looked up.
 */
async function partnerOf(key: string, log: Log): Promise<string | null> {
  const stored = await read(KVS_KEY_PREFIX + crypto.createHash('sha256').update(key).digest('hex'));
  let record: { partner?: unknown; expires?: unknown } = {};
  try {
    // A missing key reads as null, which parses to null: the same unknown key.
    record = JSON.parse(stored as string) || record;
  } catch (_error) {}
  const partner = record.partner;
  if (typeof partner !== 'string' || !partner) return log(null, LogValue.UnknownKey, null);
  // An expiry that is not a time (or not a string) has passed.
  const expires = record.expires;
  if (expires !== undefined && !(Date.now() < (typeof expires === 'string' ? Date.parse(expires) : 0)))
    return log(partner, LogValue.ExpiredKey, null);
  return partner;
}

/**
 * The catalog file for the query string: `catalog.json` without `discipline`, the discipline's for one valid
 * value, else null. Names are matched after percent-decoding, case-sensitively.
 */
function requestedCatalog(querystring: Fields): string | null {
  // Repeated names arrive as one field whose `multiValue` lists every value (`value` is the first): only the
  // count and the one value matter.
  let count = 0;
  let value = '';
  const names = Object.keys(querystring);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (decode(name) !== 'discipline') continue;
    const field = querystring[name] as CloudFrontRequest['querystring'][string];
    count += field.multiValue && field.multiValue.length > 0 ? field.multiValue.length : 1;
    value = field.value;
  }
  if (count === 0) return ORIGIN_FILES.all;
  if (count > 1) return null;
  const decoded = decode(value) as Discipline;
  return DISCIPLINES.indexOf(decoded) === -1 ? null : catalogFile(decoded);
}

/** The weight `Accept-Encoding` gives a coding: its q-value (0 if not a number), else the `*` one, else 0. */
function weight(accepted: string[], coding: string): number {
  let star = 0;
  for (let i = 0; i < accepted.length; i++) {
    const parts = (accepted[i] as string).split(';');
    const name = (parts[0] as string).trim();
    let q = 1;
    for (let j = 1; j < parts.length; j++) {
      const param = (parts[j] as string).trim();
      if (param.indexOf('q=') === 0)
        q = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(param) ? Number(param.slice(2)) : 0;
    }
    if (name === coding) return q;
    if (name === '*') star = q;
  }
  return star;
}

/** The stored variant the viewer accepts best: brotli, then gzip, then the object itself (always acceptable). */
function variant(request: CloudFrontRequest): string {
  const field = request.headers['accept-encoding'];
  const accepted = field ? field.value.toLowerCase().split(',') : [];
  if (weight(accepted, 'br') > 0) return VARIANTS.br;
  if (weight(accepted, 'gzip') > 0) return VARIANTS.gzip;
  return '';
}

/**
 * Each decision ends in one `return`: an answer made here ({@link problem}, {@link preflight}) or the request
 * sent on ({@link forward}), with what the access log records of it (docs/decisions.md#usage). A request
 * marked by the deployment's own checks (`CANARY_HEADER` holding a valid key of the monitoring partner) is
 * recorded under that partner, whatever it is; the marker decides nothing else, and a partner's request pays
 * only the look for the header.
 */
export async function handler(event: CloudFrontEvent): Promise<CloudFrontRequest | CloudFrontResponse> {
  const request = event.request;
  const method = request.method;
  const uri = request.uri;
  const headers = request.headers;
  const marker = headers[CANARY_HEADER];
  delete headers[CANARY_HEADER];
  const canary = marker ? (await partnerOf(marker.value, unrecorded)) === MONITORING_PARTNER : false;
  const log: Log = (partner, reason, result) => {
    const label = canary ? MONITORING_PARTNER : partner;
    return logged(label ? (reason ? label + LogValue.Separator + reason : label) : reason, result);
  };
  // A page for people: a plan page, or the home page; they take GET and HEAD, and no key.
  const page = uri.indexOf(PAGE_PATH_PREFIX) === 0 || uri === PATHS.home;
  if (!page && uri !== PATHS.plans && uri !== PATHS.openapi)
    return log(null, LogValue.Path, problem(PROBLEM_NOT_FOUND));
  if (method !== 'GET' && (page ? method !== 'HEAD' : method !== 'OPTIONS')) {
    return log(
      null,
      LogValue.Method,
      problem(PROBLEM_METHOD_NOT_ALLOWED, {
        allow: { value: page ? GENERATED_HEADERS.allowPage : GENERATED_HEADERS.allow },
      }),
    );
  }
  if (uri === PATHS.home) return log(null, LogValue.Page, home());
  if (method === 'OPTIONS') return log(null, null, preflight());
  // Always the whole document: CloudFront would answer a Range with 206 and a slice of the JSON.
  delete headers.range;
  delete headers['if-range'];
  if (page) {
    // The live page, shared by every build (no store read); sent as it is stored, and compressed by CloudFront
    // (the pages' behaviour in gateway/distribution.ts).
    const id = uri.slice(PAGE_PATH_PREFIX.length).toLowerCase();
    // A path that names no plan goes to `/plans/-.html`, never an object: the origin's miss is the not-found page.
    request.uri = PAGE_PATH_PREFIX + (PLAN_ID_PATTERN.test(id) ? id : '-') + PAGE_OBJECT_SUFFIX;
    request.querystring = {};
    return log(null, LogValue.Page, request);
  }
  if (uri === PATHS.openapi) return log(null, null, forward(request, ORIGIN_FILES.openapi, variant(request)));
  const key = headers['x-api-key'];
  let partner: string | null = null;
  if (!key || key.value === '') log(null, LogValue.NoKey, 0);
  else if (key.multiValue && key.multiValue.length > 1) log(null, LogValue.ManyKeys, 0);
  else partner = await partnerOf(key.value, log);
  if (partner === null) {
    return problem(PROBLEM_UNAUTHORIZED, {
      'www-authenticate': { value: GENERATED_HEADERS.wwwAuthenticate },
    });
  }
  const file = requestedCatalog(request.querystring);
  if (!file) return log(partner, LogValue.Discipline, problem(PROBLEM_INVALID_DISCIPLINE));
  delete headers['x-api-key'];
  return log(partner, null, forward(request, file, variant(request)));
}
