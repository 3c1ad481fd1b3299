/**
 * What the CloudFront distribution does around the two functions, written once: the AWS stack (infra/stack.ts)
 * builds the distribution, its cache policy and its response headers policy from this table, and the local
 * edge (gateway/local/) behaves by it. A test holds the synthesized template against the table, so neither
 * can change alone. Facts about CloudFront behind these values are in gateway/README.md.
 */
import { ORIGIN_FILES } from '../contract/index.ts';

/** An origin answer CloudFront turns into an error page of its own (no function runs on it). */
export interface ErrorResponse {
  /** The origin's status. */
  readonly originStatus: number;
  /** The status the viewer gets. */
  readonly status: number;
  /** The object served as the body, by its path at the origin. */
  readonly page: string;
}

/**
 * The media types CloudFront compresses (CloudFront Developer Guide, "Serve compressed files", "File types
 * that CloudFront compresses"). `application/json` is there; `application/yaml` is not.
 */
const COMPRESSED_MEDIA_TYPES = [
  'application/dash+xml',
  'application/eot',
  'application/font',
  'application/font-sfnt',
  'application/javascript',
  'application/json',
  'application/opentype',
  'application/otf',
  'application/pkcs7-mime',
  'application/protobuf',
  'application/rss+xml',
  'application/truetype',
  'application/ttf',
  'application/vnd.apple.mpegurl',
  'application/vnd.ms-fontobject',
  'application/xhtml+xml',
  'application/xml',
  'application/x-font-opentype',
  'application/x-font-truetype',
  'application/x-font-ttf',
  'application/x-httpd-cgi',
  'application/x-javascript',
  'application/x-mpegurl',
  'application/x-opentype',
  'application/x-otf',
  'application/x-perl',
  'application/x-ttf',
  'font/eot',
  'font/opentype',
  'font/otf',
  'font/ttf',
  'image/svg+xml',
  'text/css',
  'text/csv',
  'text/html',
  'text/javascript',
  'text/js',
  'text/plain',
  'text/richtext',
  'text/tab-separated-values',
  'text/xml',
  'text/x-component',
  'text/x-java-source',
  'text/x-script',
  'vnd.apple.mpegurl',
] as const;

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
   * The objects' own Cache-Control decides within these bounds: 0 lets `no-store` (the error page) through,
   * a year lets a build's objects, which never change, stay cached (partners are still told 300 s).
   */
  ttlSeconds: { min: 0, default: 300, max: 31_536_000 },
  /**
   * CloudFront's own compression. Off: every catalog and openapi.yaml is stored precompressed (br, gzip) and
   * the viewer-request function picks the variant, at any size (CloudFront compresses only up to 10 MB).
   */
  compression: {
    enabled: false,
    encodings: ['br', 'gzip'],
    minBytes: 1_000,
    maxBytes: 10_000_000,
    mediaTypes: COMPRESSED_MEDIA_TYPES,
  },
  /**
   * The S3 origin behind Origin Access Control may read objects but not list the bucket, so a missing object
   * is a 403 (with list access it would be a 404).
   */
  origin: { access: 'read', missingObjectStatus: 403 },
  /** Origin errors and failures become the 500 problem page; CloudFront caches them briefly (a setting). */
  errorResponses: [403, 404, 500, 502, 503, 504].map(
    (originStatus): ErrorResponse => ({ originStatus, status: 500, page: `/${ORIGIN_FILES.errorPage}` }),
  ),
  /** The status CloudFront answers when it cannot reach the origin at all. */
  originFailureStatus: 502,
  /** The response headers policy: what it adds to every answer from the cache or origin, and removes. */
  responseHeaders: {
    contentTypeOptions: 'nosniff',
    remove: ['Server', 'x-amz-id-2', 'x-amz-request-id', 'x-amz-version-id', 'x-amz-server-side-encryption'],
  },
  /** Requests over these sizes get 413 and the connection closed. */
  requestLimits: { urlBytes: 8_192, requestBytes: 20_480, status: 413 },
} as const;

/** The error page CloudFront serves for an origin status, if any. */
export function errorResponseFor(originStatus: number): ErrorResponse | undefined {
  return DISTRIBUTION.errorResponses.find((response) => response.originStatus === originStatus);
}

const COMPRESSED = new Set<string>(DISTRIBUTION.compression.mediaTypes);

/** Whether CloudFront compresses a body of this Content-Type and size. */
export function compressible(contentType: string, bytes: number): boolean {
  const { enabled, minBytes, maxBytes } = DISTRIBUTION.compression;
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return enabled && bytes >= minBytes && bytes <= maxBytes && COMPRESSED.has(mediaType);
}
