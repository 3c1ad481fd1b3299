/**
 * The gateway's request-case table: docs/decisions.md#gateway row by row, with its edge cases. One table drives the local
 * runtime tests, the HTTP tests against `catalog serve`, the njs run, the OpenAPI checks and
 * `catalog verify-function` against a deployed function.
 *
 * Header values may name a key of the test world with a placeholder: `{valid}` (partner `acme`), `{other}`
 * (partner `globex`), `{expiring}` (expires in the future), `{expired}`, `{revoked}` (issued, then removed),
 * `{forged}` (the right prefix and length, never issued), `{etag:<object>}` for the ETag of an object of the
 * live build (`{etag:all}`, or a variant: `{etag:all.br}`) and `{modified:<object>}` for its Last-Modified date.
 * Plan pages use fixed ids: {@link PAGE_PLAN_ID} is a plan of the fixtures, {@link MISSING_PLAN_ID} is in no
 * catalog.
 */
import {
  GENERATED_HEADERS,
  LogValue,
  PAGE_HEADERS,
  PAGE_SECURITY_HEADERS,
  type ProblemName,
} from '../contract/index.ts';

/**
 * What the body of the answer must be: a catalog, openapi.yaml, the page of {@link PAGE_PLAN_ID}, the
 * not-found page, nothing, or a problem document.
 */
export type ExpectedBody =
  | 'all'
  | 'running'
  | 'strength'
  | 'openapi'
  | 'page'
  | 'notFoundPage'
  | 'empty'
  | ProblemName;

export interface RequestCase {
  readonly name: string;
  readonly method: string;
  /** The request target exactly as sent: path and raw query string. */
  readonly target: string;
  readonly headers?: readonly (readonly [string, string])[];
  /** The CORS origin configured in the store for this case (none when absent). */
  readonly cors?: string;
  readonly status: number;
  readonly body: ExpectedBody;
  /** Headers that must be present with exactly these values (names lowercase). */
  readonly headersPresent?: Readonly<Record<string, string>>;
  /** Headers that must be absent (names lowercase). */
  readonly headersAbsent?: readonly string[];
  /** For a 304: the origin object the request is served from (a 200 names it in `body`). */
  readonly object?: OriginObjectName;
  /** The stored variant the request is served from (its `Content-Encoding`); none: the object itself. */
  readonly encoding?: 'br' | 'gzip';
  /** A page path: the live page at the origin's root the viewer-request function rewrites it to. */
  readonly rewrite?: string;
  /**
   * What viewer-request records in the request's access-log record (`cf.logCustomData`; null: nothing): the
   * partner of a key it lets through, a refusal's reason (with the partner when the key names one), `page`
   * (docs/decisions.md#usage).
   */
  readonly logData: string | null;
}

export type OriginObjectName = 'all' | 'running' | 'strength' | 'openapi' | 'page';

/** A published, approved plan of fixtures/plans.json: its page is in every build of the fixtures. */
export const PAGE_PLAN_ID = '920c4400-79a6-5b26-9ac7-4c18aea7632c';
/** A plan of the fixtures whose id the source spells in upper case. */
const UPPER_CASE_PLAN_ID = 'CBB9BAA8-EE0D-5A5D-8CC0-41D6D9C2FE99';
/** A UUID that is no plan's id. */
export const MISSING_PLAN_ID = '00000000-0000-4000-8000-000000000000';

/** The one origin partners may be allowed in the CORS cases. */
export const PARTNER_ORIGIN = 'https://partner.example';

const key = (placeholder: string): [string, string] => ['X-Api-Key', `{${placeholder}}`];
const VALID = key('valid');

/** The partners of the test world's keys (testing/world.ts): `{valid}` is acme's, `{other}` globex's… */
const ACME = 'acme';
/** A refusal the partner's key names: `acme.discipline`. */
const refusedFor = (partner: string, reason: LogValue) => `${partner}${LogValue.Separator}${reason}`;
const UNKNOWN = { logData: LogValue.UnknownKey };
/** `{expired}` is umbrella's. */
const EXPIRED = { logData: refusedFor('umbrella', LogValue.ExpiredKey) };

/** The headers every 200 and 304 of the catalog carries, exactly. */
const CATALOG_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'cache-control': 'public, max-age=300',
  vary: 'X-Api-Key, Accept-Encoding',
};
/** The headers every 200 of openapi.yaml carries, exactly. */
const OPENAPI_HEADERS = {
  'content-type': 'application/yaml; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'cache-control': 'public, max-age=300',
  vary: 'Accept-Encoding',
};
/** The validators and caching headers of a 304 (no Content-Type: it describes no body). */
const notModified304 = (vary: string) => ({ 'cache-control': 'public, max-age=300', vary });
/** An HTTP-date long before any build, and one long after. */
const LONG_AGO = 'Sun, 06 Nov 1994 08:49:37 GMT';
const FAR_AHEAD = 'Thu, 31 Dec 2099 23:59:59 GMT';

const notFound = (name: string, target: string, extra: Partial<RequestCase> = {}): RequestCase => ({
  name,
  method: 'GET',
  target,
  headers: [VALID],
  status: 404,
  body: 'notFound',
  logData: LogValue.Path,
  ...extra,
});
const notAllowed = (
  name: string,
  method: string,
  target: string,
  extra: Partial<RequestCase> = {},
): RequestCase => ({
  name,
  method,
  target,
  headers: [VALID],
  status: 405,
  body: method === 'HEAD' ? 'empty' : 'methodNotAllowed',
  headersPresent: { allow: 'GET, OPTIONS' },
  logData: LogValue.Method,
  ...extra,
});
const unauthorized = (
  name: string,
  target: string,
  headers: readonly (readonly [string, string])[],
  extra: Partial<RequestCase> = {},
): RequestCase => ({
  name,
  method: 'GET',
  target,
  headers,
  status: 401,
  body: 'unauthorized',
  headersPresent: { 'www-authenticate': 'ApiKey realm="catalog", header="X-Api-Key"' },
  logData: LogValue.NoKey,
  ...extra,
});
const badDiscipline = (name: string, target: string, extra: Partial<RequestCase> = {}): RequestCase => ({
  name,
  method: 'GET',
  target,
  headers: [VALID],
  status: 400,
  body: 'invalidDiscipline',
  logData: refusedFor(ACME, LogValue.Discipline),
  ...extra,
});
const ok = (
  name: string,
  target: string,
  body: 'all' | 'running' | 'strength',
  extra: Partial<RequestCase> = {},
): RequestCase => ({
  name,
  method: 'GET',
  target,
  headers: [VALID],
  status: 200,
  body,
  logData: ACME,
  ...extra,
});

/** The headers every 200 and 404 of a page carries, exactly. */
const PAGE_SECURITY = { ...PAGE_SECURITY_HEADERS };
const PAGE_OK_HEADERS = {
  ...PAGE_SECURITY,
  'content-type': PAGE_HEADERS.html,
  'cache-control': PAGE_HEADERS.cacheable,
  vary: 'Accept-Encoding',
};
const PAGE_NOT_FOUND_HEADERS = {
  ...PAGE_SECURITY,
  'content-type': PAGE_HEADERS.html,
  'cache-control': 'no-store',
};
const pageKey = (id: string) => `/plans/${id.toLowerCase()}.html`;
const NO_PAGE = '/plans/-.html';

const page = (name: string, target: string, extra: Partial<RequestCase> = {}): RequestCase => ({
  name,
  method: 'GET',
  target,
  status: 200,
  body: 'page',
  rewrite: pageKey(PAGE_PLAN_ID),
  headersPresent: PAGE_OK_HEADERS,
  logData: LogValue.Page,
  ...extra,
});
const noPage = (
  name: string,
  target: string,
  rewrite: string,
  extra: Partial<RequestCase> = {},
): RequestCase => ({
  name,
  method: 'GET',
  target,
  status: 404,
  body: 'notFoundPage',
  rewrite,
  headersPresent: PAGE_NOT_FOUND_HEADERS,
  logData: LogValue.Page,
  ...extra,
});
const pageNotAllowed = (name: string, method: string, target: string, extra: Partial<RequestCase> = {}) =>
  notAllowed(name, method, target, {
    headers: [],
    headersPresent: { allow: GENERATED_HEADERS.allowPage },
    ...extra,
  });

const CORS_PREFLIGHT = {
  'access-control-allow-origin': PARTNER_ORIGIN,
  'access-control-allow-methods': 'GET, OPTIONS',
  'access-control-allow-headers': 'X-Api-Key',
  'access-control-max-age': '600',
};

export const REQUEST_CASES: readonly RequestCase[] = [
  // 1. Path: anything but exactly /api/plans or /openapi.yaml is 404, before any other rule.
  notFound('root path', '/'),
  notFound('trailing slash', '/api/plans/'),
  notFound('upper-case path', '/API/plans'),
  notFound('wrong-case last segment', '/api/Plans'),
  notFound('the catalog object directly', '/catalog.json'),
  notFound('a discipline catalog object directly', '/catalog-running.json'),
  notFound('the error page object', '/errors/500.json'),
  notFound('the not-found page object', '/errors/404.html', { headers: [] }),
  notFound('the last run record', '/state/last-run.json'),
  notFound('a build manifest', '/builds/20261123T133944Z-0c79d57f/manifest.json'),
  notFound('an extension on the path', '/api/plans.json'),
  notFound('the parent path', '/api'),
  notFound('a sub-path', '/api/plans/123'),
  notFound('a percent-encoded path', '/api/%70lans'),
  notFound('a doubled slash', '//api/plans'),
  notFound('a path parameter', '/api/plans;x'),
  notFound('a dot segment', '/api/plans/..'),
  notFound('a yml spelling', '/openapi.yml'),
  notFound('openapi with a trailing slash', '/openapi.yaml/'),
  notFound('a wrong path with a wrong method', '/catalog.json', { method: 'POST' }),
  notFound('a wrong path without a key', '/nope', { headers: [] }),

  // 2. Method: anything but GET and OPTIONS is 405 with Allow, before the key.
  notAllowed('HEAD', 'HEAD', '/api/plans'),
  notAllowed('POST', 'POST', '/api/plans'),
  notAllowed('PUT', 'PUT', '/api/plans'),
  notAllowed('PATCH', 'PATCH', '/api/plans'),
  notAllowed('DELETE', 'DELETE', '/api/plans'),
  notAllowed('POST to openapi.yaml', 'POST', '/openapi.yaml'),
  notAllowed('HEAD of openapi.yaml', 'HEAD', '/openapi.yaml'),
  notAllowed('POST without a key', 'POST', '/api/plans', { headers: [] }),
  notAllowed('DELETE with a bad discipline', 'DELETE', '/api/plans?discipline=walking'),

  // 3. OPTIONS: 204, no key needed, CORS headers only when an origin is configured.
  {
    name: 'OPTIONS without CORS',
    logData: null,
    method: 'OPTIONS',
    target: '/api/plans',
    status: 204,
    body: 'empty',
    headersAbsent: ['content-type'],
  },
  {
    name: 'OPTIONS preflight with CORS',
    logData: null,
    method: 'OPTIONS',
    target: '/api/plans',
    headers: [
      ['Origin', PARTNER_ORIGIN],
      ['Access-Control-Request-Method', 'GET'],
      ['Access-Control-Request-Headers', 'x-api-key'],
    ],
    cors: PARTNER_ORIGIN,
    status: 204,
    body: 'empty',
    headersPresent: CORS_PREFLIGHT,
  },
  {
    name: 'OPTIONS of openapi.yaml',
    method: 'OPTIONS',
    target: '/openapi.yaml',
    status: 204,
    body: 'empty',
    logData: null,
  },
  {
    name: 'OPTIONS ignores a bad discipline and a missing key',
    logData: null,
    method: 'OPTIONS',
    target: '/api/plans?discipline=walking',
    status: 204,
    body: 'empty',
  },
  {
    name: 'OPTIONS with an unknown key and CORS',
    logData: null,
    method: 'OPTIONS',
    target: '/api/plans',
    headers: [key('forged')],
    cors: PARTNER_ORIGIN,
    status: 204,
    body: 'empty',
    headersPresent: CORS_PREFLIGHT,
  },

  // 4. openapi.yaml: no key needed.
  {
    name: 'openapi.yaml',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    status: 200,
    body: 'openapi',
    headersPresent: OPENAPI_HEADERS,
  },
  {
    name: 'openapi.yaml in the encoding asked for (stored precompressed, whatever CloudFront compresses)',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    headers: [['Accept-Encoding', 'gzip, br']],
    status: 200,
    body: 'openapi',
    encoding: 'br',
    headersPresent: { ...OPENAPI_HEADERS, 'content-encoding': 'br' },
  },
  {
    name: 'openapi.yaml with a matching If-None-Match',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    headers: [['If-None-Match', '{etag:openapi}']],
    status: 304,
    body: 'empty',
    object: 'openapi',
    headersPresent: notModified304('Accept-Encoding'),
  },
  {
    name: 'openapi.yaml with If-Modified-Since its Last-Modified',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    headers: [['If-Modified-Since', '{modified:openapi}']],
    status: 304,
    body: 'empty',
    object: 'openapi',
    headersPresent: notModified304('Accept-Encoding'),
  },
  {
    name: 'openapi.yaml with an older If-Modified-Since',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    headers: [['If-Modified-Since', LONG_AGO]],
    status: 200,
    body: 'openapi',
  },
  {
    name: 'openapi.yaml ignores Range',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    headers: [['Range', 'bytes=0-9']],
    status: 200,
    body: 'openapi',
    headersAbsent: ['content-range'],
  },
  {
    name: 'openapi.yaml ignores the query',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml?x=1&discipline=walking',
    status: 200,
    body: 'openapi',
  },
  {
    name: 'openapi.yaml ignores a wrong key',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    headers: [key('forged')],
    status: 200,
    body: 'openapi',
  },
  {
    name: 'openapi.yaml with CORS',
    logData: null,
    method: 'GET',
    target: '/openapi.yaml',
    cors: PARTNER_ORIGIN,
    status: 200,
    body: 'openapi',
    headersPresent: { 'access-control-allow-origin': PARTNER_ORIGIN },
  },

  // 5. Key: missing, unknown, revoked, expired or repeated is 401 — before the discipline check.
  unauthorized('no key', '/api/plans', []),
  unauthorized('an empty key', '/api/plans', [['X-Api-Key', '']]),
  unauthorized('an unknown key', '/api/plans', [['X-Api-Key', 'not-a-key']], UNKNOWN),
  unauthorized('a forged key with the right shape', '/api/plans', [key('forged')], UNKNOWN),
  unauthorized('a revoked key', '/api/plans', [key('revoked')], UNKNOWN),
  unauthorized('an expired key', '/api/plans', [key('expired')], EXPIRED),
  unauthorized('two X-Api-Key headers, both valid', '/api/plans', [VALID, key('other')], {
    logData: LogValue.ManyKeys,
  }),
  unauthorized('the key in the query string', '/api/plans?api_key={valid}', []),
  unauthorized('the key as a bearer token', '/api/plans', [['Authorization', 'Bearer {valid}']]),
  unauthorized('a conditional GET without a key', '/api/plans?discipline=running', [
    ['If-None-Match', '{etag:running}'],
  ]),
  unauthorized('an If-Modified-Since GET without a key', '/api/plans?discipline=running', [
    ['If-Modified-Since', FAR_AHEAD],
  ]),
  unauthorized(
    'a conditional GET with a forged key',
    '/api/plans',
    [key('forged'), ['If-None-Match', '{etag:all}']],
    UNKNOWN,
  ),
  unauthorized('no key and a bad discipline', '/api/plans?discipline=walking', []),
  unauthorized(
    'an expired key and a bad discipline',
    '/api/plans?discipline=walking',
    [key('expired')],
    EXPIRED,
  ),

  // 6. discipline present in any form, and not exactly one of strength or running: 400.
  badDiscipline('an empty discipline', '/api/plans?discipline='),
  badDiscipline('discipline without =', '/api/plans?discipline'),
  badDiscipline('a capitalised value', '/api/plans?discipline=Strength'),
  badDiscipline('an upper-case value', '/api/plans?discipline=RUNNING'),
  badDiscipline('an unknown value', '/api/plans?discipline=walking'),
  badDiscipline('a repeated parameter, same value', '/api/plans?discipline=running&discipline=running'),
  badDiscipline('a repeated parameter, two values', '/api/plans?discipline=running&discipline=strength'),
  badDiscipline('a malformed escape', '/api/plans?discipline=%ZZ'),
  badDiscipline('an encoded name with a bad value', '/api/plans?%64iscipline=walking'),
  badDiscipline('an encoded NUL after the value', '/api/plans?discipline=running%00'),
  badDiscipline('a plus after the value', '/api/plans?discipline=running+'),
  badDiscipline('a leading encoded space', '/api/plans?discipline=%20running'),
  badDiscipline('a plain and an encoded name together', '/api/plans?discipline=running&%64iscipline=running'),
  badDiscipline('a comma list', '/api/plans?discipline=running,strength'),

  // 7. Otherwise 200 with the right file; other parameters are ignored.
  ok('the whole catalog', '/api/plans', 'all', { headersPresent: CATALOG_HEADERS }),
  ok('running plans', '/api/plans?discipline=running', 'running'),
  ok('strength plans', '/api/plans?discipline=strength', 'strength'),
  ok('a percent-encoded value', '/api/plans?discipline=%73trength', 'strength'),
  ok('a percent-encoded name', '/api/plans?%64iscipline=running', 'running'),
  ok('a differently-cased name is an unknown parameter', '/api/plans?Discipline=walking', 'all'),
  ok('a bracketed name is an unknown parameter', '/api/plans?discipline[]=walking', 'all'),
  ok(
    'unknown parameters around the discipline',
    '/api/plans?foo=bar&discipline=running&cachebuster=123',
    'running',
  ),
  ok('an empty query string', '/api/plans?', 'all'),
  ok('a key of another partner', '/api/plans', 'all', { headers: [key('other')], logData: 'globex' }),
  ok('a key that expires later', '/api/plans?discipline=strength', 'strength', {
    headers: [key('expiring')],
    logData: 'initech',
  }),
  ok('an upper-case header name', '/api/plans', 'all', { headers: [['X-API-KEY', '{valid}']] }),
  ok('CORS on a catalog answer', '/api/plans?discipline=running', 'running', {
    headers: [VALID, ['Origin', PARTNER_ORIGIN]],
    cors: PARTNER_ORIGIN,
    headersPresent: { ...CATALOG_HEADERS, 'access-control-allow-origin': PARTNER_ORIGIN },
  }),
  ok('a non-matching If-None-Match', '/api/plans?discipline=running', 'running', {
    headers: [VALID, ['If-None-Match', '"0123456789abcdef0123456789abcdef"']],
  }),
  {
    name: 'a matching If-None-Match',
    logData: ACME,
    method: 'GET',
    target: '/api/plans?discipline=running',
    headers: [VALID, ['If-None-Match', '{etag:running}']],
    status: 304,
    body: 'empty',
    object: 'running',
    headersPresent: notModified304('X-Api-Key, Accept-Encoding'),
  },
  {
    name: 'If-None-Match: *',
    logData: ACME,
    method: 'GET',
    target: '/api/plans',
    headers: [VALID, ['If-None-Match', '*']],
    status: 304,
    body: 'empty',
    object: 'all',
    headersPresent: notModified304('X-Api-Key, Accept-Encoding'),
  },
  {
    name: 'If-Modified-Since equal to Last-Modified',
    logData: ACME,
    method: 'GET',
    target: '/api/plans?discipline=strength',
    headers: [VALID, ['If-Modified-Since', '{modified:strength}']],
    status: 304,
    body: 'empty',
    object: 'strength',
    headersPresent: notModified304('X-Api-Key, Accept-Encoding'),
  },
  {
    name: 'If-Modified-Since later than Last-Modified',
    logData: ACME,
    method: 'GET',
    target: '/api/plans',
    headers: [VALID, ['If-Modified-Since', FAR_AHEAD]],
    status: 304,
    body: 'empty',
    object: 'all',
  },
  ok('If-Modified-Since older than Last-Modified', '/api/plans?discipline=running', 'running', {
    headers: [VALID, ['If-Modified-Since', LONG_AGO]],
  }),
  ok('a garbage If-Modified-Since is ignored', '/api/plans?discipline=running', 'running', {
    headers: [VALID, ['If-Modified-Since', 'yesterday, around noon']],
  }),
  ok('an If-Modified-Since that is not an HTTP-date is ignored', '/api/plans', 'all', {
    headers: [VALID, ['If-Modified-Since', '2999']],
  }),
  ok(
    'a non-matching If-None-Match wins over a fresh If-Modified-Since',
    '/api/plans?discipline=strength',
    'strength',
    {
      headers: [
        VALID,
        ['If-None-Match', '"0123456789abcdef0123456789abcdef"'],
        ['If-Modified-Since', FAR_AHEAD],
      ],
    },
  ),
  {
    name: 'a matching If-None-Match wins over an old If-Modified-Since',
    logData: ACME,
    method: 'GET',
    target: '/api/plans?discipline=running',
    headers: [VALID, ['If-None-Match', '{etag:running}'], ['If-Modified-Since', LONG_AGO]],
    status: 304,
    body: 'empty',
    object: 'running',
  },
  // Accept-Encoding picks the stored variant: brotli, then gzip, then the object itself (always acceptable).
  ...(
    [
      ['no Accept-Encoding', null, undefined],
      ['gzip', 'gzip', 'gzip'],
      ['br', 'br', 'br'],
      ['gzip, deflate, br: brotli first', 'gzip, deflate, br', 'br'],
      ['br;q=0, gzip: no brotli', 'br;q=0, gzip', 'gzip'],
      ['gzip, br;q=0: no brotli wherever it is named', 'gzip, br;q=0', 'gzip'],
      ['*: anything, so brotli', '*', 'br'],
      ['*;q=0: nothing, but the object itself is always acceptable', '*;q=0', undefined],
      ['br;q=0, *: anything but brotli', 'br;q=0, *', 'gzip'],
      ['identity', 'identity', undefined],
      ['upper case', 'GZIP, BR;Q=1', 'br'],
      ['spaces around the parameters', 'br ; q=0.5', 'br'],
      ['a q-value that is not a number counts as 0', 'br;q=high, gzip', 'gzip'],
      ['gzip;q=0, br;q=0: neither', 'gzip;q=0, br;q=0', undefined],
      ['codings it does not store', 'zstd, compress, deflate', undefined],
      ['garbage', ';;,=q, @@', undefined],
    ] as const
  ).map(([label, value, encoding]) =>
    ok(`Accept-Encoding ${label}`, '/api/plans?discipline=running', 'running', {
      headers: value === null ? [VALID] : [VALID, ['Accept-Encoding', value]],
      ...(encoding ? { encoding } : {}),
      headersPresent: encoding ? { ...CATALOG_HEADERS, 'content-encoding': encoding } : CATALOG_HEADERS,
      ...(encoding ? {} : { headersAbsent: ['content-encoding'] }),
    }),
  ),
  ok('the whole catalog in brotli', '/api/plans', 'all', {
    headers: [VALID, ['Accept-Encoding', 'br']],
    encoding: 'br',
    headersPresent: { ...CATALOG_HEADERS, 'content-encoding': 'br' },
  }),
  {
    name: 'a 304 of a variant, by its own ETag',
    logData: ACME,
    method: 'GET',
    target: '/api/plans',
    headers: [VALID, ['Accept-Encoding', 'br'], ['If-None-Match', '{etag:all.br}']],
    status: 304,
    body: 'empty',
    object: 'all',
    encoding: 'br',
    headersPresent: notModified304('X-Api-Key, Accept-Encoding'),
    headersAbsent: ['content-encoding', 'content-type'],
  },
  ok("a gzip client with the brotli variant's ETag gets the gzip variant", '/api/plans', 'all', {
    headers: [VALID, ['Accept-Encoding', 'gzip'], ['If-None-Match', '{etag:all.br}']],
    encoding: 'gzip',
    headersPresent: { ...CATALOG_HEADERS, 'content-encoding': 'gzip' },
  }),
  ok('a Range request gets the whole catalog', '/api/plans', 'all', {
    headers: [VALID, ['Range', 'bytes=0-9']],
    headersPresent: CATALOG_HEADERS,
    headersAbsent: ['content-range'],
  }),
  ok('a Range with If-Range gets the whole catalog', '/api/plans?discipline=running', 'running', {
    headers: [VALID, ['Range', 'bytes=-5'], ['If-Range', '{etag:running}']],
    headersAbsent: ['content-range'],
  }),

  // Plan pages (`/plans/<uuid>`): for people, so no key; GET and HEAD only; anything else under /plans/ is
  // the not-found page.
  page('a plan page', `/plans/${PAGE_PLAN_ID}`),
  page('a plan page with an upper-case id', `/plans/${PAGE_PLAN_ID.toUpperCase()}`),
  page('a plan page whose id the source spells in upper case', `/plans/${UPPER_CASE_PLAN_ID}`, {
    body: 'empty',
    object: 'page',
    method: 'HEAD',
    rewrite: pageKey(UPPER_CASE_PLAN_ID),
  }),
  page('a plan page ignores the query', `/plans/${PAGE_PLAN_ID}?utm_source=partner&discipline=walking`),
  page('a plan page ignores a key, even a forged one', `/plans/${PAGE_PLAN_ID}`, {
    headers: [key('forged')],
  }),
  page('HEAD of a plan page: the headers, no body', `/plans/${PAGE_PLAN_ID}`, {
    method: 'HEAD',
    body: 'empty',
    object: 'page',
  }),
  page('a plan page compressed by the distribution', `/plans/${PAGE_PLAN_ID}`, {
    headers: [['Accept-Encoding', 'gzip']],
    encoding: 'gzip',
    headersPresent: { ...PAGE_OK_HEADERS, 'content-encoding': 'gzip' },
  }),
  page('a plan page with CORS', `/plans/${PAGE_PLAN_ID}`, {
    cors: PARTNER_ORIGIN,
    headersPresent: { ...PAGE_OK_HEADERS, 'access-control-allow-origin': PARTNER_ORIGIN },
  }),
  page('a plan page ignores Range', `/plans/${PAGE_PLAN_ID}`, {
    headers: [['Range', 'bytes=0-9']],
    headersAbsent: ['content-range'],
  }),
  {
    name: 'a plan page with a matching If-None-Match',
    logData: LogValue.Page,
    method: 'GET',
    target: `/plans/${PAGE_PLAN_ID}`,
    headers: [['If-None-Match', '{etag:page}']],
    status: 304,
    body: 'empty',
    object: 'page',
    rewrite: pageKey(PAGE_PLAN_ID),
    headersPresent: notModified304('Accept-Encoding'),
  },
  noPage('a plan that is in no catalog', `/plans/${MISSING_PLAN_ID}`, pageKey(MISSING_PLAN_ID)),
  noPage('HEAD of a plan that is in no catalog', `/plans/${MISSING_PLAN_ID}`, pageKey(MISSING_PLAN_ID), {
    method: 'HEAD',
    body: 'empty',
  }),
  noPage('the pages folder', '/plans/', NO_PAGE),
  noPage('an id that is not a UUID', '/plans/full-body-basics', NO_PAGE),
  noPage('a UUID with an extension', `/plans/${PAGE_PLAN_ID}.html`, NO_PAGE),
  noPage('a path below a page', `/plans/${PAGE_PLAN_ID}/reviews`, NO_PAGE),
  noPage('a UUID one character short', `/plans/${PAGE_PLAN_ID.slice(0, -1)}`, NO_PAGE),
  noPage('a percent-encoded id', `/plans/%39${PAGE_PLAN_ID.slice(1)}`, NO_PAGE),
  pageNotAllowed('POST to a plan page', 'POST', `/plans/${PAGE_PLAN_ID}`),
  pageNotAllowed('DELETE of a plan page', 'DELETE', `/plans/${PAGE_PLAN_ID}`),
  pageNotAllowed('OPTIONS of a plan page', 'OPTIONS', `/plans/${PAGE_PLAN_ID}`),
  pageNotAllowed('PUT under /plans/, any path', 'PUT', '/plans/'),
  pageNotAllowed('405 of a plan page with CORS', 'POST', `/plans/${PAGE_PLAN_ID}`, { cors: PARTNER_ORIGIN }),
  notFound('the pages path without its slash', '/plans', { headers: [] }),
  notFound('an upper-case pages path', `/PLANS/${PAGE_PLAN_ID}`, { headers: [] }),
  notFound('the page object of a build', `/builds/x/plans/${PAGE_PLAN_ID}.html`, { headers: [] }),

  // CORS on generated answers: every answer the function produces carries the origin when one is set.
  notFound('404 with CORS', '/catalog.json', { cors: PARTNER_ORIGIN }),
  notAllowed('405 with CORS', 'POST', '/api/plans', { cors: PARTNER_ORIGIN }),
  unauthorized('401 with CORS', '/api/plans', [key('expired')], { ...EXPIRED, cors: PARTNER_ORIGIN }),
  badDiscipline('400 with CORS', '/api/plans?discipline=', { cors: PARTNER_ORIGIN }),
];

/** What the viewer-request function alone must do: answer with a status, or pass the request to `uri`. */
export type ViewerRequestOutcome = { readonly status: number } | { readonly uri: string };

const OBJECT_URIS: Readonly<Record<Exclude<OriginObjectName, 'page'>, string>> = {
  all: '/catalog.json',
  running: '/catalog-running.json',
  strength: '/catalog-strength.json',
  openapi: '/openapi.yaml',
};

const SUFFIXES = { br: '.br', gzip: '.gz' } as const;

/**
 * The viewer-request outcome a case implies (for runs of the function alone: njs, TestFunction): a status, or
 * the object's path within the live build (`/catalog.json.br`; compare with {@link withinBuild}), or a page's at the
 * origin's root.
 */
export function viewerRequestOutcome(testCase: RequestCase): ViewerRequestOutcome {
  if (testCase.rewrite) return { uri: testCase.rewrite };
  const object = testCase.body in OBJECT_URIS ? (testCase.body as keyof typeof OBJECT_URIS) : testCase.object;
  if ((testCase.status === 200 || testCase.status === 304) && object && object !== 'page')
    return { uri: `${OBJECT_URIS[object]}${testCase.encoding ? SUFFIXES[testCase.encoding] : ''}` };
  return { status: testCase.status };
}

/** A rewritten URI without the live build's prefix: `/builds/<id>/catalog.json.br` → `/catalog.json.br`. */
export function withinBuild(uri: string): string {
  return uri.replace(/^\/builds\/[^/]+/, '');
}

// ---------------------------------------------------------------------------------------------------------
// The table against a deployment (`catalog check`, app/check.ts): from outside, only what the answers show is
// known. The keys of the test world's other partners and its expiring, expired and revoked keys do not exist
// there, nor the fixtures' plans: a case that needs them is not black-box checkable. `{valid}` is the
// checker's key, `{forged}` a key it forges, `{etag:…}` and `{modified:…}` what the deployment answered
// before; the fixtures' page plan ({@link PAGE_PLAN_ID}) stands for the deployment's first plan, and
// {@link PARTNER_ORIGIN} for the CORS origin its operator set.

/** Key placeholders only the test world can fill. */
const WORLD_ONLY_KEYS = ['other', 'expiring', 'expired', 'revoked'];

/** Why a case cannot be judged from outside a deployment, or undefined when it can. */
export function notBlackBox(testCase: RequestCase): string | undefined {
  const text = JSON.stringify([testCase.target, testCase.headers ?? []]);
  const key = WORLD_ONLY_KEYS.find((name) => text.includes(`{${name}}`));
  if (key !== undefined) return `needs the test world's {${key}} key`;
  if (text.toLowerCase().includes(UPPER_CASE_PLAN_ID.toLowerCase()))
    return 'needs a plan of the fixtures whose source spells its id in upper case';
  return undefined;
}

/** `%39…`: a plan id with its first character percent-encoded. */
const firstEscaped = (id: string) =>
  `%${id.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${id.slice(1)}`;

/**
 * The case with the fixtures' page plan replaced by the plan `id` (lowercase) wherever the table derives a
 * request from it: as is, in upper case, one character short, with its first character percent-encoded.
 * Throws when a page plan's id is left over: a derivation this function does not know (add it here).
 */
export function forPlan(testCase: RequestCase, id: string): RequestCase {
  if (id === PAGE_PLAN_ID) return testCase;
  const replace = (text: string) => {
    const replaced = text
      .replaceAll(firstEscaped(PAGE_PLAN_ID), firstEscaped(id))
      .replaceAll(PAGE_PLAN_ID.toUpperCase(), id.toUpperCase())
      .replaceAll(PAGE_PLAN_ID, id)
      .replaceAll(PAGE_PLAN_ID.slice(0, -1), id.slice(0, -1));
    if (replaced.toLowerCase().includes(PAGE_PLAN_ID.slice(1, -1)))
      throw new Error(`case "${testCase.name}": cannot derive ${JSON.stringify(text)} for another plan`);
    return replaced;
  };
  return {
    ...testCase,
    target: replace(testCase.target),
    ...(testCase.rewrite !== undefined ? { rewrite: replace(testCase.rewrite) } : {}),
  };
}

/** The case with the table's partner origin replaced by `origin` (the one the deployment's operator set). */
export function forOrigin(testCase: RequestCase, origin: string): RequestCase {
  if (testCase.cors === undefined) return testCase;
  const replace = (text: string) => text.replaceAll(PARTNER_ORIGIN, origin);
  return {
    ...testCase,
    cors: origin,
    ...(testCase.headers
      ? { headers: testCase.headers.map(([name, value]) => [name, replace(value)] as const) }
      : {}),
    ...(testCase.headersPresent
      ? {
          headersPresent: Object.fromEntries(
            Object.entries(testCase.headersPresent).map(([name, value]) => [name, replace(value)]),
          ),
        }
      : {}),
  };
}
