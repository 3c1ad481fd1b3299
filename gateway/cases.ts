/**
 * The gateway's request-case table (docs/decisions.md#gateway row by row, with its edge cases): the local
 * runtime, `catalog serve`, njs, the OpenAPI checks and `catalog verify-function` are all held to it.
 *
 * Header values may name a key of the test world with a placeholder: `{valid}` (partner `acme`), `{other}`
 * (partner `globex`), `{expiring}` (expires in the future), `{expired}`, `{revoked}` (issued, then removed),
 * `{forged}` (the right prefix and length, never issued), `{monitoring}` (partner `monitoring`, the key the
 * deployment's own checks send), `{etag:<object>}` for the ETag of an object of the
 * live build (`{etag:all}`, or a variant: `{etag:all.br}`) and `{modified:<object>}` for its Last-Modified date.
 * Plan pages use fixed ids: {@link PAGE_PLAN_ID} is a plan of the fixtures, {@link MISSING_PLAN_ID} is in no
 * catalog.
 */
import {
  ANSWER_HEADERS,
  CANARY_HEADER,
  type CatalogName,
  catalogFile,
  catalogTarget,
  DISCIPLINES,
  GENERATED_HEADERS,
  LogValue,
  MONITORING_PARTNER,
  ORIGIN_FILES,
  PATHS,
  type ProblemName,
  VARIANTS,
} from '../contract/index.ts';

/**
 * The body of the answer: a catalog, openapi.yaml, {@link PAGE_PLAN_ID}'s page, the not-found page, the home
 * page (contract/index.ts `HOME_PAGE`), none, a problem.
 */
export type ExpectedBody = CatalogName | 'openapi' | 'page' | 'notFoundPage' | 'home' | 'empty' | ProblemName;

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
  /** Headers that must be present with exactly these values, and headers that must be absent (lowercase). */
  readonly headersPresent?: Readonly<Record<string, string>>;
  readonly headersAbsent?: readonly string[];
  /** For a 304: the origin object the request is served from (a 200 names it in `body`). */
  readonly object?: OriginObjectName;
  /** The stored variant the request is served from (its `Content-Encoding`); none: the object itself. */
  readonly encoding?: 'br' | 'gzip';
  /** A page path: the live page at the origin's root the viewer-request function rewrites it to. */
  readonly rewrite?: string;
  /** What viewer-request records with `cf.logCustomData` (null: nothing; docs/decisions.md#usage). */
  readonly logData: string | null;
}

export type OriginObjectName = CatalogName | 'openapi' | 'page';

/** A published, approved plan of fixtures/plans.json: its page is in every build of the fixtures. */
export const PAGE_PLAN_ID = '920c4400-79a6-5b26-9ac7-4c18aea7632c';
/** A plan of the fixtures whose id the source spells in upper case. */
const UPPER_CASE_PLAN_ID = 'CBB9BAA8-EE0D-5A5D-8CC0-41D6D9C2FE99';
/** A UUID that is no plan's id. */
export const MISSING_PLAN_ID = '00000000-0000-4000-8000-000000000000';

/** The one origin partners may be allowed in the CORS cases. */
export const PARTNER_ORIGIN = 'https://partner.example';

/** Two disciplines the cases take as examples; every discipline has its own 200. */
const [ONE, TWO] = DISCIPLINES;
const ONE_PLANS = catalogTarget(ONE);
const TWO_PLANS = catalogTarget(TWO);
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** `%39…`: an id or a discipline with its first character percent-encoded. */
const firstEscaped = (id: string) =>
  `%${id.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${id.slice(1)}`;

const key = (placeholder: string): [string, string] => ['X-Api-Key', `{${placeholder}}`];
const VALID = key('valid');

/** The partners of the test world's keys (testing/world.ts): `{valid}` is acme's, `{other}` globex's… */
const ACME = 'acme';
/** A refusal the partner's key names: `acme.discipline`. */
const refusedFor = (partner: string, reason: LogValue) => `${partner}${LogValue.Separator}${reason}`;
const UNKNOWN = { logData: LogValue.UnknownKey };
/** `{expired}` is umbrella's. */
const EXPIRED = { logData: refusedFor('umbrella', LogValue.ExpiredKey) };

const { catalog: CATALOG, openapi: OPENAPI, page: PAGE_OK, notFoundPage: PAGE_NOT_FOUND } = ANSWER_HEADERS;
/** The validators and caching headers of a 304 (no Content-Type: it describes no body). */
const notModified304 = (kind: { 'cache-control': string; vary: string }) => ({
  'cache-control': kind['cache-control'],
  vary: kind.vary,
});
/** An HTTP-date long before any build, and one long after. */
const LONG_AGO = 'Sun, 06 Nov 1994 08:49:37 GMT';
const FAR_AHEAD = 'Thu, 31 Dec 2099 23:59:59 GMT';
const OTHER_ETAG = '"0123456789abcdef0123456789abcdef"';

type Extra = Partial<RequestCase>;
type Headers = readonly (readonly [string, string])[];
/** A kind of case: what its cases share; each names itself, its target and what else differs. */
const kind =
  (shared: Omit<RequestCase, 'name' | 'target'>) =>
  (name: string, target: string, extra: Extra = {}): RequestCase => ({ name, target, ...shared, ...extra });
const WITH_KEY = { method: 'GET', headers: [VALID] };

const notFound = kind({ ...WITH_KEY, status: 404, body: 'notFound', logData: LogValue.Path });
const refused405 = kind({
  ...WITH_KEY,
  status: 405,
  body: 'methodNotAllowed',
  headersPresent: { allow: GENERATED_HEADERS.allow },
  logData: LogValue.Method,
});
const notAllowed = (name: string, method: string, target: string, extra: Extra = {}) =>
  refused405(name, target, { method, body: method === 'HEAD' ? 'empty' : 'methodNotAllowed', ...extra });
const options = kind({ method: 'OPTIONS', status: 204, body: 'empty', logData: null });
const openapiCase = kind({ method: 'GET', status: 200, body: 'openapi', logData: null });
const openapi = (name: string, extra: Extra = {}) => openapiCase(name, PATHS.openapi, extra);
const refused401 = kind({
  method: 'GET',
  status: 401,
  body: 'unauthorized',
  headersPresent: { 'www-authenticate': GENERATED_HEADERS.wwwAuthenticate },
  logData: LogValue.NoKey,
});
const unauthorized = (name: string, target: string, headers: Headers, extra: Extra = {}) =>
  refused401(name, target, { headers, ...extra });
const refused400 = kind({
  ...WITH_KEY,
  status: 400,
  body: 'invalidDiscipline',
  logData: refusedFor(ACME, LogValue.Discipline),
});
const badDiscipline = (name: string, query: string, extra: Extra = {}) =>
  refused400(name, `${PATHS.plans}?${query}`, extra);
const served = kind({ ...WITH_KEY, status: 200, body: 'all', logData: ACME });
const ok = (name: string, target: string, body: CatalogName, extra: Extra = {}) =>
  served(name, target, { body, ...extra });
const NOT_MODIFIED = { status: 304, body: 'empty', headersPresent: notModified304(CATALOG) } as const;
/** A 304 of a catalog, with the partner's key and `headers`. */
const notModified = (
  name: string,
  target: string,
  object: CatalogName,
  headers: Headers,
  extra: Extra = {},
) => served(name, target, { ...NOT_MODIFIED, object, headers: [VALID, ...headers], ...extra });
/** A 304 of openapi.yaml, for `headers`. */
const openapi304 = (name: string, headers: Headers) =>
  openapi(name, { headers, ...NOT_MODIFIED, object: 'openapi', headersPresent: notModified304(OPENAPI) });

const pageKey = (id: string) => `/plans/${id.toLowerCase()}.html`;
const NO_PAGE = '/plans/-.html';

const PAGE_CASE = { method: 'GET', logData: LogValue.Page };
const page = kind({
  ...PAGE_CASE,
  status: 200,
  body: 'page',
  rewrite: pageKey(PAGE_PLAN_ID),
  headersPresent: PAGE_OK,
});
const missingPage = kind({ ...PAGE_CASE, status: 404, body: 'notFoundPage', headersPresent: PAGE_NOT_FOUND });
const noPage = (name: string, target: string, rewrite: string, extra: Extra = {}) =>
  missingPage(name, target, { rewrite, ...extra });
const pageNotAllowed = (name: string, method: string, target: string, extra: Extra = {}) =>
  notAllowed(name, method, target, {
    headers: [],
    headersPresent: { allow: GENERATED_HEADERS.allowPage },
    ...extra,
  });

const CORS_PREFLIGHT = { 'access-control-allow-origin': PARTNER_ORIGIN, ...ANSWER_HEADERS.preflight };

/** The home page `/`: for people, so no key; GET and HEAD, as a plan page. */
const home = kind({
  method: 'GET',
  status: 200,
  body: 'home',
  headersPresent: ANSWER_HEADERS.home,
  logData: LogValue.Page,
});

const TABLE: readonly RequestCase[] = [
  // 1. Path: anything but exactly /api/plans, /openapi.yaml, a page (below) or the home page is 404, before any
  // other rule.
  notFound('an index file at the root', '/index.html'),
  notFound('trailing slash', '/api/plans/'),
  notFound('upper-case path', '/API/plans'),
  notFound('wrong-case last segment', '/api/Plans'),
  notFound('the catalog object directly', '/catalog.json'),
  notFound('a discipline catalog object directly', `/${catalogFile(ONE)}`),
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
  options('OPTIONS without CORS', '/api/plans', { headersAbsent: ['content-type'] }),
  options('OPTIONS preflight with CORS', '/api/plans', {
    headers: [
      ['Origin', PARTNER_ORIGIN],
      ['Access-Control-Request-Method', 'GET'],
      ['Access-Control-Request-Headers', 'x-api-key'],
    ],
    cors: PARTNER_ORIGIN,
    headersPresent: CORS_PREFLIGHT,
  }),
  options('OPTIONS of openapi.yaml', '/openapi.yaml'),
  options('OPTIONS ignores a bad discipline and a missing key', '/api/plans?discipline=walking'),
  options('OPTIONS with an unknown key and CORS', '/api/plans', {
    headers: [key('forged')],
    cors: PARTNER_ORIGIN,
    headersPresent: CORS_PREFLIGHT,
  }),

  // 4. openapi.yaml: no key needed.
  openapi('openapi.yaml', { headersPresent: OPENAPI }),
  openapi('openapi.yaml in the encoding asked for (stored precompressed, whatever CloudFront compresses)', {
    headers: [['Accept-Encoding', 'gzip, br']],
    encoding: 'br',
    headersPresent: { ...OPENAPI, 'content-encoding': 'br' },
  }),
  openapi304('openapi.yaml with a matching If-None-Match', [['If-None-Match', '{etag:openapi}']]),
  openapi304('openapi.yaml with If-Modified-Since its Last-Modified', [
    ['If-Modified-Since', '{modified:openapi}'],
  ]),
  openapi('openapi.yaml with an older If-Modified-Since', { headers: [['If-Modified-Since', LONG_AGO]] }),
  openapi('openapi.yaml ignores Range', {
    headers: [['Range', 'bytes=0-9']],
    headersAbsent: ['content-range'],
  }),
  openapi('openapi.yaml ignores the query', { target: '/openapi.yaml?x=1&discipline=walking' }),
  openapi('openapi.yaml ignores a wrong key', { headers: [key('forged')] }),
  openapi('openapi.yaml with CORS', {
    cors: PARTNER_ORIGIN,
    headersPresent: { 'access-control-allow-origin': PARTNER_ORIGIN },
  }),

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
  unauthorized('a conditional GET without a key', ONE_PLANS, [['If-None-Match', `{etag:${ONE}}`]]),
  unauthorized('an If-Modified-Since GET without a key', ONE_PLANS, [['If-Modified-Since', FAR_AHEAD]]),
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

  // 6. discipline present in any form, and not exactly one of the disciplines: 400.
  badDiscipline('an empty discipline', 'discipline='),
  badDiscipline('discipline without =', 'discipline'),
  badDiscipline('a capitalised value', `discipline=${capitalised(TWO)}`),
  badDiscipline('an upper-case value', `discipline=${ONE.toUpperCase()}`),
  badDiscipline('an unknown value', 'discipline=walking'),
  badDiscipline('a repeated parameter, same value', `discipline=${ONE}&discipline=${ONE}`),
  badDiscipline('a repeated parameter, two values', `discipline=${ONE}&discipline=${TWO}`),
  badDiscipline('a malformed escape', 'discipline=%ZZ'),
  badDiscipline('an encoded name with a bad value', '%64iscipline=walking'),
  badDiscipline('an encoded NUL after the value', `discipline=${ONE}%00`),
  badDiscipline('a plus after the value', `discipline=${ONE}+`),
  badDiscipline('a leading encoded space', `discipline=%20${ONE}`),
  badDiscipline('a plain and an encoded name together', `discipline=${ONE}&%64iscipline=${ONE}`),
  badDiscipline('a comma list', `discipline=${ONE},${TWO}`),

  // 7. Otherwise 200 with the right file; other parameters are ignored.
  ok('the whole catalog', '/api/plans', 'all', { headersPresent: CATALOG }),
  ...DISCIPLINES.map((discipline) => ok(`${discipline} plans`, catalogTarget(discipline), discipline)),
  ok('a percent-encoded value', `/api/plans?discipline=${firstEscaped(TWO)}`, TWO),
  ok('a percent-encoded name', `/api/plans?%64iscipline=${ONE}`, ONE),
  ok('a differently-cased name is an unknown parameter', '/api/plans?Discipline=walking', 'all'),
  ok('a bracketed name is an unknown parameter', '/api/plans?discipline[]=walking', 'all'),
  ok('unknown parameters around the discipline', `/api/plans?foo=bar&discipline=${ONE}&cachebuster=123`, ONE),
  ok('an empty query string', '/api/plans?', 'all'),
  ok('a key of another partner', '/api/plans', 'all', { headers: [key('other')], logData: 'globex' }),
  ok('a key that expires later', TWO_PLANS, TWO, { headers: [key('expiring')], logData: 'initech' }),
  ok('an upper-case header name', '/api/plans', 'all', { headers: [['X-API-KEY', '{valid}']] }),
  ok('CORS on a catalog answer', ONE_PLANS, ONE, {
    headers: [VALID, ['Origin', PARTNER_ORIGIN]],
    cors: PARTNER_ORIGIN,
    headersPresent: { ...CATALOG, 'access-control-allow-origin': PARTNER_ORIGIN },
  }),
  ok('a non-matching If-None-Match', ONE_PLANS, ONE, { headers: [VALID, ['If-None-Match', OTHER_ETAG]] }),
  notModified('a matching If-None-Match', ONE_PLANS, ONE, [['If-None-Match', `{etag:${ONE}}`]]),
  notModified('If-None-Match: *', '/api/plans', 'all', [['If-None-Match', '*']]),
  notModified('If-Modified-Since equal to Last-Modified', TWO_PLANS, TWO, [
    ['If-Modified-Since', `{modified:${TWO}}`],
  ]),
  notModified('If-Modified-Since later than Last-Modified', '/api/plans', 'all', [
    ['If-Modified-Since', FAR_AHEAD],
  ]),
  ok('If-Modified-Since older than Last-Modified', ONE_PLANS, ONE, {
    headers: [VALID, ['If-Modified-Since', LONG_AGO]],
  }),
  ok('a garbage If-Modified-Since is ignored', ONE_PLANS, ONE, {
    headers: [VALID, ['If-Modified-Since', 'yesterday, around noon']],
  }),
  ok('an If-Modified-Since that is not an HTTP-date is ignored', '/api/plans', 'all', {
    headers: [VALID, ['If-Modified-Since', '2999']],
  }),
  ok('a non-matching If-None-Match wins over a fresh If-Modified-Since', TWO_PLANS, TWO, {
    headers: [VALID, ['If-None-Match', OTHER_ETAG], ['If-Modified-Since', FAR_AHEAD]],
  }),
  notModified('a matching If-None-Match wins over an old If-Modified-Since', ONE_PLANS, ONE, [
    ['If-None-Match', `{etag:${ONE}}`],
    ['If-Modified-Since', LONG_AGO],
  ]),
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
    ok(`Accept-Encoding ${label}`, ONE_PLANS, ONE, {
      headers: value === null ? [VALID] : [VALID, ['Accept-Encoding', value]],
      ...(encoding ? { encoding } : {}),
      headersPresent: encoding ? { ...CATALOG, 'content-encoding': encoding } : CATALOG,
      ...(encoding ? {} : { headersAbsent: ['content-encoding'] }),
    }),
  ),
  ok('the whole catalog in brotli', '/api/plans', 'all', {
    headers: [VALID, ['Accept-Encoding', 'br']],
    encoding: 'br',
    headersPresent: { ...CATALOG, 'content-encoding': 'br' },
  }),
  notModified(
    'a 304 of a variant, by its own ETag',
    '/api/plans',
    'all',
    [
      ['Accept-Encoding', 'br'],
      ['If-None-Match', '{etag:all.br}'],
    ],
    { encoding: 'br', headersAbsent: ['content-encoding', 'content-type'] },
  ),
  ok("a gzip client with the brotli variant's ETag gets the gzip variant", '/api/plans', 'all', {
    headers: [VALID, ['Accept-Encoding', 'gzip'], ['If-None-Match', '{etag:all.br}']],
    encoding: 'gzip',
    headersPresent: { ...CATALOG, 'content-encoding': 'gzip' },
  }),
  ok('a Range request gets the whole catalog', '/api/plans', 'all', {
    headers: [VALID, ['Range', 'bytes=0-9']],
    headersPresent: CATALOG,
    headersAbsent: ['content-range'],
  }),
  ok('a Range with If-Range gets the whole catalog', ONE_PLANS, ONE, {
    headers: [VALID, ['Range', 'bytes=-5'], ['If-Range', `{etag:${ONE}}`]],
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
    headersPresent: { ...PAGE_OK, 'content-encoding': 'gzip' },
  }),
  page('a plan page with CORS', `/plans/${PAGE_PLAN_ID}`, {
    cors: PARTNER_ORIGIN,
    headersPresent: { ...PAGE_OK, 'access-control-allow-origin': PARTNER_ORIGIN },
  }),
  page('a plan page ignores Range', `/plans/${PAGE_PLAN_ID}`, {
    headers: [['Range', 'bytes=0-9']],
    headersAbsent: ['content-range'],
  }),
  page('a plan page with a matching If-None-Match', `/plans/${PAGE_PLAN_ID}`, {
    headers: [['If-None-Match', '{etag:page}']],
    status: 304,
    body: 'empty',
    object: 'page',
    headersPresent: notModified304(PAGE_OK),
  }),
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

  // The home page (`/`): what the service is, where its OpenAPI document is, how partners get a key.
  home('the home page', '/'),
  home('HEAD of the home page: the headers, no body', '/', { method: 'HEAD', body: 'empty' }),
  home('the home page ignores the query and a key, even a forged one', '/?discipline=walking', {
    headers: [key('forged')],
  }),
  home('the home page with CORS', '/', {
    cors: PARTNER_ORIGIN,
    headersPresent: { ...ANSWER_HEADERS.home, 'access-control-allow-origin': PARTNER_ORIGIN },
  }),
  pageNotAllowed('POST to the home page', 'POST', '/'),
  pageNotAllowed('OPTIONS of the home page', 'OPTIONS', '/'),

  // CORS on generated answers: every answer the function produces carries the origin when one is set.
  notFound('404 with CORS', '/catalog.json', { cors: PARTNER_ORIGIN }),
  notAllowed('405 with CORS', 'POST', '/api/plans', { cors: PARTNER_ORIGIN }),
  unauthorized('401 with CORS', '/api/plans', [key('expired')], { ...EXPIRED, cors: PARTNER_ORIGIN }),
  badDiscipline('400 with CORS', 'discipline=', { cors: PARTNER_ORIGIN }),
];

// The canary's marker (CANARY_HEADER): the deployment's own checks send their key in it on every request. With
// a valid key of the monitoring partner the request is recorded under that partner, whatever it is; with any
// other value it is recorded as without the marker. The answer is the same either way: each case below is a
// case of the table above, marked, expecting that case's answer.

/** The suffix of a marked case's name, after the name of the case it marks. */
export const MARKED_SUFFIX = ', marked by the canary';

/** The case of the table named `name`, sent with the marker `marker` and recording `logData`. */
function marked(name: string, logData: string | null, marker = '{monitoring}'): RequestCase {
  const base = TABLE.find((c) => c.name === name);
  if (!base) throw new Error(`no case "${name}" to mark`);
  const suffix = marker === '{monitoring}' ? '' : ` (${marker || 'empty'})`;
  return {
    ...base,
    name: `${name}${MARKED_SUFFIX}${suffix}`,
    headers: [...(base.headers ?? []), [CANARY_HEADER, marker]],
    logData,
  };
}

/** A value recorded under the monitoring partner: `monitoring`, or `monitoring.<reason>`. */
const monitoring = (reason?: LogValue) =>
  reason === undefined ? MONITORING_PARTNER : refusedFor(MONITORING_PARTNER, reason);

const CANARY_CASES: readonly RequestCase[] = [
  // Whatever the request, with the monitoring key in the marker: recorded under that partner.
  marked('the whole catalog', monitoring()),
  marked('a matching If-None-Match', monitoring()),
  marked('a key of another partner', monitoring()),
  marked('an unknown value', monitoring(LogValue.Discipline)),
  marked('no key', monitoring(LogValue.NoKey)),
  marked('an empty key', monitoring(LogValue.NoKey)),
  marked('a forged key with the right shape', monitoring(LogValue.UnknownKey)),
  marked('an expired key', monitoring(LogValue.ExpiredKey)),
  marked('two X-Api-Key headers, both valid', monitoring(LogValue.ManyKeys)),
  marked('POST', monitoring(LogValue.Method)),
  marked('POST to a plan page', monitoring(LogValue.Method)),
  marked('an index file at the root', monitoring(LogValue.Path)),
  marked('a wrong path without a key', monitoring(LogValue.Path)),
  marked('a plan page', monitoring(LogValue.Page)),
  marked('HEAD of a plan page: the headers, no body', monitoring(LogValue.Page)),
  marked('a plan that is in no catalog', monitoring(LogValue.Page)),
  marked('the home page', monitoring(LogValue.Page)),
  marked('OPTIONS without CORS', monitoring()),
  marked('OPTIONS preflight with CORS', monitoring()),
  marked('openapi.yaml', monitoring()),
  marked('401 with CORS', monitoring(LogValue.ExpiredKey)),
  // Any other marker names no one: a partner's key (valid, but not the monitoring partner's), a forged one,
  // an empty one, an expired one.
  marked('no key', LogValue.NoKey, '{valid}'),
  marked('the whole catalog', ACME, '{other}'),
  marked('a forged key with the right shape', LogValue.UnknownKey, '{forged}'),
  marked('a plan page', LogValue.Page, ''),
  marked('POST', LogValue.Method, '{expired}'),
];

export const REQUEST_CASES: readonly RequestCase[] = [...TABLE, ...CANARY_CASES];

/** What the viewer-request function alone must do: answer with a status, or pass the request to `uri`. */
export type ViewerRequestOutcome = { readonly status: number } | { readonly uri: string };

/** The outcome a case implies for the function alone (njs, TestFunction); a path is {@link withinBuild}. */
export function viewerRequestOutcome(testCase: RequestCase): ViewerRequestOutcome {
  if (testCase.rewrite) return { uri: testCase.rewrite };
  // The home page is the function's own answer, as a problem is.
  if (testCase.body === 'home') return { status: testCase.status };
  const object = testCase.status === 200 && testCase.body !== 'empty' ? testCase.body : testCase.object;
  if ((testCase.status === 200 || testCase.status === 304) && object && object !== 'page') {
    const file = object === 'openapi' ? ORIGIN_FILES.openapi : catalogFile(object as CatalogName);
    return { uri: `/${file}${testCase.encoding ? VARIANTS[testCase.encoding] : ''}` };
  }
  return { status: testCase.status };
}

/** A rewritten URI without the live build's prefix: `/builds/<id>/catalog.json.br` → `/catalog.json.br`. */
export function withinBuild(uri: string): string {
  return uri.replace(/^\/builds\/[^/]+/, '');
}

// The table against a deployment (`catalog check`): a case that needs the test world's other keys or the
// fixtures' plans cannot be judged from outside. `{valid}` is the checker's key, `{forged}` one it forges; the
// page plan stands for the deployment's first plan, {@link PARTNER_ORIGIN} for the origin its operator set.

/** Key placeholders only the test world can fill. */
const WORLD_ONLY_KEYS = ['other', 'expiring', 'expired', 'revoked', 'monitoring'];

/** Why a case cannot be judged from outside a deployment, or undefined when it can. */
export function notBlackBox(testCase: RequestCase): string | undefined {
  const text = JSON.stringify([testCase.target, testCase.headers ?? []]);
  const key = WORLD_ONLY_KEYS.find((name) => text.includes(`{${name}}`));
  if (key !== undefined) return `needs the test world's {${key}} key`;
  // The check sends its own marker on every request: a case's marker would be a second one.
  if ((testCase.headers ?? []).some(([name]) => name === CANARY_HEADER))
    return "marks its request as the canary's, which changes only the access log: not seen from outside";
  if (text.toLowerCase().includes(UPPER_CASE_PLAN_ID.toLowerCase()))
    return 'needs a plan of the fixtures whose source spells its id in upper case';
  return undefined;
}

/**
 * The case with the page plan replaced by the plan `id` (lowercase) in every form the table derives; throws
 * when one is left over (a derivation to add here).
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
  const inJson = JSON.stringify(origin).slice(1, -1);
  return JSON.parse(JSON.stringify(testCase).replaceAll(PARTNER_ORIGIN, () => inJson)) as RequestCase;
}
