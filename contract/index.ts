/**
 * The names every part of the service agrees on: disciplines, file names, paths, header values, problem types
 * and the key-value store layout. This module has no dependencies because the CloudFront Functions bundle it
 * (esbuild keeps only what a function references), so keep it to plain constants.
 */

import { CATALOG_FILE, type CatalogName, DISCIPLINES } from './disciplines.ts';

export * from './disciplines.ts';

/**
 * The region of CloudFront's global parts: its APIs (the key-value store's requests are signed for it), its
 * metrics, its web ACLs and the logs of its edge.
 */
export const EDGE_REGION = 'us-east-1';

/** The closed `level` enum; a plan without a level is `none`. */
export const LEVELS = ['none', 'beginner', 'intermediate', 'advanced'] as const;
export type Level = (typeof LEVELS)[number];

/** Object names at the origin (the S3 bucket, or the local origin directory); see also {@link catalogFile}. */
export const ORIGIN_FILES = { all: CATALOG_FILE, openapi: 'openapi.yaml' } as const;

/** The request target of a catalog: `/api/plans`, or `/api/plans?discipline=<discipline>`. */
export function catalogTarget(catalog: CatalogName): string {
  return catalog === 'all' ? PATHS.plans : `${PATHS.plans}?discipline=${catalog}`;
}

/** The origin's error page: the problem document CloudFront answers with when the origin fails. */
export const ERROR_PAGE = 'errors/500.json';

/**
 * A build's objects live under `builds/<build id>/`, never overwritten; ids sort by time and are unique: the UTC
 * second, then 16 hex digits (the millisecond and 52 random bits), or 8 in ids made before that (builder/build.ts).
 */
export const BUILDS_PREFIX = 'builds/';
export const BUILD_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{8}(?:[0-9a-f]{8})?$/;

/** Every build lists its objects, their sizes and digests in this object, written last. */
export const MANIFEST = 'manifest.json';

/**
 * The precompressed variants of a served object: `<name>.br` (brotli) and `<name>.gz` (gzip), each stored with
 * the matching `Content-Encoding`. The viewer-request function picks one from `Accept-Encoding`.
 */
export const VARIANTS = { br: '.br', gzip: '.gz' } as const;

/**
 * The paths the gateway serves besides the plan pages (for people, under {@link PAGE_PATH_PREFIX}): the two of
 * the API, and the home page at the root, for people who arrive at the service's address ({@link HOME_PAGE}).
 */
export const PATHS = { plans: '/api/plans', openapi: '/openapi.yaml', home: '/' } as const;

/** `X-Content-Type-Options` of every answer but a preflight (CloudFront's response headers policies add it too). */
export const NOSNIFF = 'nosniff';

// Each value is its own constant: esbuild drops an unused object only when nothing in it reads a property.
const JSON_TYPE = 'application/json; charset=utf-8';
const YAML_TYPE = 'application/yaml; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json';
const CACHEABLE = 'public, max-age=300';
const NO_STORE = 'no-store';
/** `Vary` of the catalog: the answer depends on the key, and its encoding on `Accept-Encoding`. */
const VARY_PLANS = 'X-Api-Key, Accept-Encoding';
/** `Vary` of openapi.yaml and the plan pages: no key, but a shared cache must still keep encodings apart. */
const VARY_ENCODING = 'Accept-Encoding';

/** Header values the viewer-request function sends besides a kind's headers. */
export const GENERATED_HEADERS = {
  allow: 'GET, OPTIONS',
  /** `Allow` of a plan page (`/plans/…`). */
  allowPage: 'GET, HEAD',
  /** The challenge every 401 carries (RFC 9110 requires one): the scheme, and the header the key goes in. */
  wwwAuthenticate: 'ApiKey realm="catalog", header="X-Api-Key"',
} as const;

/** The header values the builder stores objects with, by name. */
export const HEADER_VALUES = {
  json: JSON_TYPE,
  yaml: YAML_TYPE,
  html: HTML_TYPE,
  problem: PROBLEM_TYPE,
  cacheable: CACHEABLE,
  noStore: NO_STORE,
} as const;

// The headers of each kind of answer, exactly, by lowercase name (the CORS origin aside): the functions send
// them, the local edge and the response headers policies add the security headers, and the gateway's cases
// and judge expect them. Each kind is its own export so a function bundles only those it sends;
// {@link ANSWER_HEADERS} is the table.

/** A catalog (200 or, without `content-type`, 304). */
export const CATALOG_HEADERS = {
  'content-type': JSON_TYPE,
  'x-content-type-options': NOSNIFF,
  'cache-control': CACHEABLE,
  vary: VARY_PLANS,
} as const;
/** openapi.yaml. */
export const OPENAPI_HEADERS = {
  'content-type': YAML_TYPE,
  'x-content-type-options': NOSNIFF,
  'cache-control': CACHEABLE,
  vary: VARY_ENCODING,
} as const;
/** A found plan page, besides {@link PAGE_SECURITY_HEADERS}. */
export const PAGE_SERVED_HEADERS = {
  'content-type': HTML_TYPE,
  'x-content-type-options': NOSNIFF,
  'cache-control': CACHEABLE,
  vary: VARY_ENCODING,
} as const;
/** A problem document the viewer-request function answers with (and CloudFront's 500 page, by its object). */
export const PROBLEM_HEADERS = {
  'content-type': PROBLEM_TYPE,
  'x-content-type-options': NOSNIFF,
  'cache-control': NO_STORE,
} as const;
/** A preflight, when a CORS origin is set (without one: no header at all). */
export const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'GET, OPTIONS',
  'access-control-allow-headers': 'X-Api-Key',
  'access-control-max-age': '600',
} as const;
/** CloudFront's not-found page for a plan path (its object's headers), besides {@link PAGE_SECURITY_HEADERS}. */
export const NOT_FOUND_PAGE_HEADERS = {
  'content-type': HTML_TYPE,
  'cache-control': NO_STORE,
} as const;

/** An RFC 9457 problem type: the body of an error answer is `{ type, title, status, detail }`. */
export interface ProblemType {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
}

// The `type` URIs are stable identifiers (tag URIs, RFC 4151): not meant to be fetched; partners may switch on
// them. Each is its own export so a function bundles only the ones it answers with.

export const PROBLEM_NOT_FOUND: ProblemType = {
  type: 'tag:training-plan-catalog,2026:problem:not-found',
  title: 'Not Found',
  status: 404,
  detail: 'No such resource: see /openapi.yaml.',
};
export const PROBLEM_METHOD_NOT_ALLOWED: ProblemType = {
  type: 'tag:training-plan-catalog,2026:problem:method-not-allowed',
  title: 'Method Not Allowed',
  status: 405,
  detail: 'See the Allow header.',
};
/**
 * Where partners ask for a key, as openapi.yaml and the 401's detail write it: each deployment's
 * `contactAddress` takes its place where they are served (builder/openapi.ts renders the document; the stack and
 * the local edge fill the viewer-request bundle: gateway/functions/contact.ts).
 */
export const CONTACT_PLACEHOLDER = '<CONTACT_ADDRESS>';
export const PROBLEM_UNAUTHORIZED: ProblemType = {
  type: 'tag:training-plan-catalog,2026:problem:unauthorized',
  title: 'Unauthorized',
  status: 401,
  // CONTACT_PLACEHOLDER, written out: a template literal would keep this constant in every bundle.
  detail:
    'Send exactly one valid API key in the X-Api-Key header; keys are issued through <CONTACT_ADDRESS>.',
};
/**
 * The 400: its detail names the disciplines a request may ask for, from their one declaration. Made by a
 * function marked pure, so a bundle that never answers it (viewer-response) leaves it out.
 */
export const PROBLEM_INVALID_DISCIPLINE: ProblemType = /* @__PURE__ */ invalidDisciplineProblem();
function invalidDisciplineProblem(): ProblemType {
  return {
    type: 'tag:training-plan-catalog,2026:problem:invalid-discipline',
    title: 'Bad Request',
    status: 400,
    detail: `The discipline parameter, when present, must be exactly ${DISCIPLINES.join(' or ')}, once.`,
  };
}
export const PROBLEM_INTERNAL: ProblemType = {
  type: 'tag:training-plan-catalog,2026:problem:internal-error',
  title: 'Internal Server Error',
  status: 500,
  detail: 'The catalog could not be served. Keep using your last good copy and retry later.',
};

/** The optional per-key rate limit's answer, from AWS WAF: `application/json` (WAF's only type), no CORS. */
export const PROBLEM_RATE_LIMITED: ProblemType = {
  type: 'tag:training-plan-catalog,2026:problem:rate-limited',
  title: 'Too Many Requests',
  status: 429,
  detail: 'This API key sent more requests than its limit allows. Wait for Retry-After seconds, then retry.',
};

/** The RFC 9457 body of an error answer: each constant above holds exactly its four fields, in order. */
export function problemDocument(problem: ProblemType): string {
  return JSON.stringify(problem);
}

/** Every problem type the service answers with, by name. */
export const PROBLEMS = {
  notFound: PROBLEM_NOT_FOUND,
  methodNotAllowed: PROBLEM_METHOD_NOT_ALLOWED,
  unauthorized: PROBLEM_UNAUTHORIZED,
  invalidDiscipline: PROBLEM_INVALID_DISCIPLINE,
  internal: PROBLEM_INTERNAL,
  /** Only where the operator turned the per-key rate limit on (AWS WAF answers it, not the gateway). */
  rateLimited: PROBLEM_RATE_LIMITED,
} as const;
export type ProblemName = keyof typeof PROBLEMS;

/**
 * Key-value store layout: an API key only as its SHA-256 hex digest, under `KVS_KEY_PREFIX + digest`, its
 * value a JSON {@link KeyRecord}; the one CORS origin under `KVS_CORS_ORIGIN`.
 */
export const KVS_KEY_PREFIX = 'key:';
export const KVS_CORS_ORIGIN = 'cors:origin';
/** The id of the live build. Without it nothing is published: the catalog paths answer 500. */
export const KVS_LIVE_BUILD = 'build:live';
/** Set by a rollback: a JSON `{"build","at","by","reason"}`; while it is there, publishing moves nothing. */
export const KVS_PIN = 'build:pin';
/** The rollback line: the builds live before the live one, newest first (docs/decisions.md#live-build). */
export const KVS_PREVIOUS_BUILDS = 'build:previous';
/** The origin the store serves, recorded by its first move of `build:live` and checked by every later one. */
export const KVS_ORIGIN = 'build:origin';
/** How many builds the rollback line holds (each id is 24 characters: far below the 1 KB value limit). */
export const PREVIOUS_BUILDS_KEPT = 10;

/** The value stored for one API key. Times are ISO 8601 UTC. */
export interface KeyRecord {
  readonly partner: string;
  readonly created: string;
  readonly expires?: string;
}

// ---------------------------------------------------------------------------------------------------------
// Usage: what the viewer-request function records in its access-log record and `catalog usage` reads
// (docs/decisions.md#usage). Never the key, never its hash.

/** The values, an enum so that esbuild writes each as a literal where a function uses it. */
export enum LogValue {
  /** A catalog request without a key (or with an empty one). */
  NoKey = 'no-key',
  /** A key that is not in the store (never issued, revoked, or a record that does not read). */
  UnknownKey = 'unknown-key',
  /** A key past its expiry: its record names the partner, so the value does too (`acme.expired-key`). */
  ExpiredKey = 'expired-key',
  /** More than one `X-Api-Key` value. */
  ManyKeys = 'many-keys',
  /** A valid key and a `discipline` that is not exactly one discipline (`acme.discipline`). */
  Discipline = 'discipline',
  /** A method the path does not take (405). */
  Method = 'method',
  /** A path the gateway does not serve (404). */
  Path = 'path',
  /** A page for people (a plan page `/plans/…`, or the home page `/`; no key), whatever the answer. */
  Page = 'page',
  /** Between a partner label and the reason of its refusal: never in a label, and not URL-encoded. */
  Separator = '.',
}
/** Every reason a refusal is recorded with, in the order reports list them. */
export const LOG_REASONS = [
  LogValue.NoKey,
  LogValue.UnknownKey,
  LogValue.ExpiredKey,
  LogValue.ManyKeys,
  LogValue.Discipline,
  LogValue.Method,
  LogValue.Path,
] as const;
export type LogReason = (typeof LOG_REASONS)[number];

/**
 * The partner whose key the deployment's own checks send (the canary, the builder's propagation check):
 * `catalog usage` reports it apart from the partners (docs/decisions.md#usage).
 */
export const MONITORING_PARTNER = 'monitoring';

/**
 * The canary's marker: the request header in which the deployment's own checks (the canary, `catalog check`)
 * send their key on every request, whatever else the request carries. When it holds a valid key of
 * {@link MONITORING_PARTNER}, the viewer-request function records the request under that partner
 * (`monitoring`, `monitoring.no-key`, `monitoring.page`…), never as a partner's or as a refusal that named no
 * partner; the answer is the same with or without it (docs/decisions.md#usage). Lowercase, as the function
 * reads header names.
 */
export const CANARY_HEADER = 'x-catalog-canary';

// ---------------------------------------------------------------------------------------------------------
// Plan pages: `webUrl` (`{base_url}/plans/<id>`) is a static HTML page for people (docs/decisions.md#plan-pages).

/** The path prefix of a plan page; the rest of the path is the plan's id (a UUID, in any case). */
export const PAGE_PATH_PREFIX = '/plans/';

/**
 * A plan id: a UUID's form in lowercase, as published, in page keys and in builds' manifests. Where an id may
 * come in any case (a page path, a source row), it is lowercased first, then matched.
 */
export const PLAN_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * An anchored pattern (`^…$`, such as {@link BUILD_ID_PATTERN}) without its anchors, to find what it matches
 * inside a longer text or key; `flags` as RegExp's (`g` to find every one).
 */
export function unanchored(pattern: RegExp, flags?: string): RegExp {
  if (!pattern.source.startsWith('^') || !pattern.source.endsWith('$'))
    throw new Error(`${pattern} is not anchored at both ends`);
  return new RegExp(pattern.source.slice(1, -1), flags);
}

/** A plan's live page at the origin's root, shared by every build: `plans/<lowercase id>.html`. */
export const PAGE_OBJECT_PREFIX = 'plans/';
export const PAGE_OBJECT_SUFFIX = '.html';

/** The object key of a plan's page, from its lowercase id. */
export function planPageKey(id: string): string {
  return PAGE_OBJECT_PREFIX + id + PAGE_OBJECT_SUFFIX;
}

/**
 * The bytes of every page of the kept builds, each written once under the SHA-256 of its bytes (base64url,
 * unpadded) and shared by every build with that page: `pages/<digest>.html`. Never served: a live page is a copy.
 */
export const PAGES_PREFIX = 'pages/';

/** The key of the page whose bytes have this SHA-256 (base64url). */
export function pageContentKey(digest: string): string {
  return PAGES_PREFIX + digest + PAGE_OBJECT_SUFFIX;
}

/** Object key of the page answered for a plan path that is not in the live build (outside the builds). */
export const NOT_FOUND_PAGE = 'errors/404.html';

/** The SHA-256 of the pages' one inline stylesheet, as a CSP source (a test recomputes it). */
export const PAGE_STYLE_HASH = "'sha256-y46wyJnqu/WE4FVhgD14SNTU1ouWsxSICVY/T7UcYGk='";

/**
 * The Content-Security-Policy of a page: the inline stylesheet and images (https:, or the page's origin),
 * nothing else. A plain string, so a bundle that does not send it leaves it out; a test checks its hash.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'sha256-y46wyJnqu/WE4FVhgD14SNTU1ouWsxSICVY/T7UcYGk='; img-src https: 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The security headers of every page answer, found or not: the pages' response headers policy sets them. */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': NOSNIFF,
  /** Pages load covers from other hosts and link to the app: none of them needs to know the page. */
  'referrer-policy': 'no-referrer',
  /** Framing refused for browsers older than CSP's `frame-ancestors`. */
  'x-frame-options': 'DENY',
} as const;

/**
 * The home page (`/`, GET and HEAD, no key): what this service is, where its OpenAPI document is, and how a
 * partner gets a key (from the operator, as that document's description says: the operator's contact is
 * there). The viewer-request function answers it itself, the same on CloudFront and the local edge, with
 * {@link HOME_HEADERS}. No style, no script: the pages' policy ({@link PAGE_CSP}) allows it as it is. Made by a
 * function marked pure, so only the bundle that answers it carries it.
 */
export const HOME_PAGE: string = /* @__PURE__ */ homePage();
function homePage(): string {
  const disciplines = DISCIPLINES.map((d) => `<code>${d}</code>`).join(' or ');
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Training Plan Catalog</title>
<main>
<h1>Training Plan Catalog</h1>
<p>A read-only API of published training plans, for partners' servers: <code>GET ${PATHS.plans}</code>, optionally with <code>?discipline=</code>${disciplines}, and an API key in the <code>X-Api-Key</code> header. Each plan links to its own page, which anyone can open.</p>
<p>The API is described, without a key, by its OpenAPI document: <a href="${PATHS.openapi}">${PATHS.openapi}</a>.</p>
<p>Partners: keys come from the operator of this service, on request (no self-serve sign-up), as that document says. Keep yours on your server, never in a browser or an app.</p>
</main>
</html>
`;
}

/** The headers of the home page ({@link HOME_PAGE}), which the viewer-request function sets itself. */
export const HOME_HEADERS = /* @__PURE__ */ Object.assign({}, PAGE_SECURITY_HEADERS, {
  'content-type': HTML_TYPE,
  'cache-control': CACHEABLE,
});

/** The page values the builder stores its pages with. */
export const PAGE_HEADERS = { html: HTML_TYPE, cacheable: CACHEABLE } as const;

/** The headers of each kind of answer (see {@link CATALOG_HEADERS}). */
export const ANSWER_HEADERS = {
  catalog: CATALOG_HEADERS,
  openapi: OPENAPI_HEADERS,
  page: /* @__PURE__ */ Object.assign({}, PAGE_SECURITY_HEADERS, PAGE_SERVED_HEADERS),
  home: HOME_HEADERS,
  problem: PROBLEM_HEADERS,
  preflight: PREFLIGHT_HEADERS,
  /** CloudFront's own answers (its custom error responses): the 500 problem and the not-found page. */
  internalError: PROBLEM_HEADERS,
  notFoundPage: /* @__PURE__ */ Object.assign({}, PAGE_SECURITY_HEADERS, NOT_FOUND_PAGE_HEADERS),
} as const;

// ---------------------------------------------------------------------------------------------------------
// Operations: the builder's record of its last run (docs/decisions.md#operations).

/** The last builder run's record, at the origin's root: overwritten by every run, never served. */
export const STATE_LAST_RUN = 'state/last-run.json';

/** The run lock, held and renewed by the builder run in progress; a crashed run's lock expires. */
export const STATE_RUN_LOCK = 'state/run-lock.json';

/** The canary's beats (app/canary.ts): a light probe every few minutes, the full table on a slower beat. */
export const CANARY_BEATS = ['probe', 'full'] as const;
export type CanaryBeat = (typeof CANARY_BEATS)[number];

/** Each beat's last report (app/canary.ts): overwritten by every run of that beat, never served. */
export const STATE_CANARY = {
  probe: 'state/canary-probe.json',
  full: 'state/canary-full.json',
} as const satisfies Record<CanaryBeat, string>;

/** The history of the live pointer: one object per move, its key says when, what and where. Never served. */
export const STATE_HISTORY_PREFIX = 'state/history/';

/** The source secret as the stack creates it: no source yet (a run records `not-configured`, no more). */
export const SOURCE_UNSET = '{"source":""}';

/** A loopback host as the WHATWG URL parser writes it: 127.0.0.0/8, `[::1]` or `localhost`. */
export const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;

/**
 * Fixture covers: a `cover_url` on this reserved origin names an image the local stack serves under
 * {@link LOCAL_COVER_PATH}; only a local build (http:// on a loopback host) points it there.
 */
export const FIXTURE_COVER_ORIGIN = 'https://fixtures.invalid';
/** The path under which the local edge (never CloudFront) serves the fixture covers. */
export const LOCAL_COVER_PATH = '/_local/covers/';

/** The store the origin belongs to, written by the first move of `build:live`, checked by every later one. */
export const STATE_DEPLOYMENT = 'state/deployment.json';
