/**
 * What the CloudFront distribution does around the two functions, written once: the AWS stack builds it from
 * this table and the local edge behaves by it (a test holds the template against it). Facts: gateway/README.md.
 */
import {
  ERROR_PAGE,
  NOSNIFF,
  NOT_FOUND_PAGE,
  PAGE_OBJECT_PREFIX,
  PAGE_PATH_PREFIX,
  PAGE_SECURITY_HEADERS,
} from '../contract/index.ts';

/** An origin status CloudFront turns into its own answer: the viewer's status, the page (its origin path). */
export interface ErrorResponse {
  readonly originStatus: number;
  readonly status: number;
  readonly page: string;
}

/**
 * The media types CloudFront compresses (CloudFront Developer Guide, "Serve compressed files", "File types
 * that CloudFront compresses"). `application/json` is there; `application/yaml` is not.
 */
const COMPRESSED_MEDIA_TYPES = `
  application/dash+xml application/eot application/font application/font-sfnt application/javascript
  application/json application/opentype application/otf application/pkcs7-mime application/protobuf
  application/rss+xml application/truetype application/ttf application/vnd.apple.mpegurl
  application/vnd.ms-fontobject application/xhtml+xml application/xml application/x-font-opentype
  application/x-font-truetype application/x-font-ttf application/x-httpd-cgi application/x-javascript
  application/x-mpegurl application/x-opentype application/x-otf application/x-perl application/x-ttf
  font/eot font/opentype font/otf font/ttf image/svg+xml text/css text/csv text/html text/javascript
  text/js text/plain text/richtext text/tab-separated-values text/xml text/x-component text/x-java-source
  text/x-script vnd.apple.mpegurl`
  .trim()
  .split(/\s+/);

/**
 * How CloudFront reads the bucket for a behaviour: whether that reader may list it (S3 then answers a missing
 * object with 404, else 403), and the keys it may read (every key when absent).
 */
export interface OriginAccess {
  readonly access: 'origin access control' | 'origin access identity';
  readonly list: boolean;
  readonly missingObjectStatus: 403 | 404;
  readonly readableKeys?: readonly string[];
}

/** A cache behaviour: the requests whose path matches, the origin they go to, and what CloudFront adds. */
export interface Behaviour {
  /** CloudFront's path pattern; `*` is the default behaviour. */
  readonly pathPattern: string;
  readonly origin: 'catalog' | 'pages';
  /** CloudFront's own compression (the cache policy then keys on the normalised Accept-Encoding). */
  readonly compress: boolean;
  /** Headers the behaviour's response headers policy sets, besides nosniff, by lowercase name. */
  readonly securityHeaders: Readonly<Record<string, string>>;
  /** The longest CloudFront keeps an answer, when shorter than the distribution's `ttlSeconds.max`. */
  readonly maxTtlSeconds?: number;
}

const { 'x-content-type-options': _nosniff, ...PAGE_POLICY_HEADERS } = PAGE_SECURITY_HEADERS;

/** The distribution's behaviour. */
export const DISTRIBUTION = {
  /** All seven methods reach the function, so it (not CloudFront's 403) answers 405 to the others. */
  allowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
  cachedMethods: ['GET', 'HEAD'],
  /** Plain HTTP is refused, not redirected: a key sent in clear text has leaked already. */
  viewerProtocol: 'https-only',
  /** The cache key is the path the viewer-request function rewrote to, and nothing else. */
  cacheKey: { queryStrings: 'none', headers: 'none', cookies: 'none' },
  /**
   * The objects' own Cache-Control decides within these bounds: 0 lets `no-store` (the error pages) through,
   * a year lets a build's objects, which never change, stay cached (partners are still told 300 s).
   */
  ttlSeconds: { min: 0, default: 300, max: 31_536_000 },
  /**
   * One bucket, read two ways. The catalog's reader may not list it, so a missing catalog object is a 403,
   * which becomes the 500 problem; the pages' reader may list it, so a missing page is a 404, which becomes
   * the not-found page. The pages' reader may read the live pages only.
   */
  origins: {
    catalog: { access: 'origin access control', list: false, missingObjectStatus: 403 },
    pages: {
      access: 'origin access identity',
      list: true,
      missingObjectStatus: 404,
      readableKeys: [`${PAGE_OBJECT_PREFIX}*`],
    },
  } satisfies Record<Behaviour['origin'], OriginAccess>,
  /** The API, and plan pages (`/plans/*`): a live page changes in place, so it is kept five minutes at most. */
  behaviours: {
    api: { pathPattern: '*', origin: 'catalog', compress: false, securityHeaders: {} },
    pages: {
      pathPattern: `${PAGE_PATH_PREFIX}*`,
      origin: 'pages',
      compress: true,
      securityHeaders: PAGE_POLICY_HEADERS,
      maxTtlSeconds: 300,
    },
  } satisfies Record<string, Behaviour>,
  /** CloudFront's compression, on for the pages only: the API's objects are stored compressed, at any size. */
  compression: {
    encodings: ['br', 'gzip'],
    minBytes: 1_000,
    maxBytes: 10_000_000,
    mediaTypes: COMPRESSED_MEDIA_TYPES,
  },
  /** Origin statuses CloudFront answers itself (no function runs): a missing page (404) gets the not-found page. */
  errorResponses: [403, 404, 500, 502, 503, 504].map(
    (originStatus): ErrorResponse =>
      originStatus === 404
        ? { originStatus, status: 404, page: `/${NOT_FOUND_PAGE}` }
        : { originStatus, status: 500, page: `/${ERROR_PAGE}` },
  ),
  /** The status CloudFront answers when it cannot reach the origin at all. */
  originFailureStatus: 502,
  /** What every behaviour's response headers policy adds to every answer from the cache or origin, and removes. */
  responseHeaders: {
    contentTypeOptions: NOSNIFF,
    remove: ['Server', 'x-amz-id-2', 'x-amz-request-id', 'x-amz-version-id', 'x-amz-server-side-encryption'],
  },
  /** Requests over these sizes get 413 and the connection closed. */
  requestLimits: { urlBytes: 8_192, requestBytes: 20_480, status: 413 },
  /**
   * How long a viewer may take to send a request's head (then 408) and the whole request, and stay idle between
   * requests. CloudFront publishes no figures: these are the local edge's (gateway/README.md, "Fidelity").
   */
  connectionLimits: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 },
} as const;

/** The behaviour CloudFront picks for a viewer's path (path patterns are case-sensitive). */
export function behaviourFor(path: string): Behaviour {
  return path.startsWith(PAGE_PATH_PREFIX) ? DISTRIBUTION.behaviours.pages : DISTRIBUTION.behaviours.api;
}

/** The error page CloudFront serves for an origin status, if any. */
export function errorResponseFor(originStatus: number): ErrorResponse | undefined {
  return DISTRIBUTION.errorResponses.find((response) => response.originStatus === originStatus);
}

const COMPRESSED = new Set<string>(DISTRIBUTION.compression.mediaTypes);

/** Whether CloudFront compresses a body of this Content-Type and size under a behaviour. */
export function compressible(behaviour: Behaviour, contentType: string, bytes: number): boolean {
  const { minBytes, maxBytes } = DISTRIBUTION.compression;
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return behaviour.compress && bytes >= minBytes && bytes <= maxBytes && COMPRESSED.has(mediaType);
}
