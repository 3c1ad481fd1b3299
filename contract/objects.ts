/**
 * The headers an object is stored with at the origin, derived from its key alone (docs/decisions.md#live-build):
 * S3 keeps them with the object, a directory origin derives them again when it reads one, so no record kept
 * beside an object can disagree with it.
 */
import {
  BUILDS_PREFIX,
  ERROR_PAGE,
  HEADER_VALUES,
  PAGE_OBJECT_PREFIX,
  PAGES_PREFIX,
  VARIANTS,
} from './index.ts';

/** How an object is stored: its type, its encoding when it is a precompressed variant, and how long it is cached. */
export interface StoredHeaders {
  readonly contentType: string;
  readonly contentEncoding?: 'br' | 'gzip';
  readonly cacheControl: string;
}

/**
 * Cache-Control of the objects that never change (a build's, and the pages named by their content): CloudFront may
 * keep them as long as it likes, while partners are still told `max-age=300` by the viewer-response function.
 */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Readonly<Record<string, string>> = {
  '.json': HEADER_VALUES.json,
  '.yaml': HEADER_VALUES.yaml,
  '.html': HEADER_VALUES.html,
};

/** The headers of the object at `key` (`builds/<id>/catalog.json.br`, `plans/<id>.html`, `errors/500.json`…). */
export function storedHeaders(key: string): StoredHeaders {
  let name = key;
  let contentEncoding: StoredHeaders['contentEncoding'];
  for (const encoding of ['br', 'gzip'] as const)
    if (name.endsWith(VARIANTS[encoding])) {
      contentEncoding = encoding;
      name = name.slice(0, -VARIANTS[encoding].length);
    }
  const extension = /\.[a-z]+$/.exec(name)?.[0] ?? '';
  const contentType =
    key === ERROR_PAGE ? HEADER_VALUES.problem : (TYPES[extension] ?? 'application/octet-stream');
  const cacheControl =
    key.startsWith(BUILDS_PREFIX) || key.startsWith(PAGES_PREFIX)
      ? IMMUTABLE
      : key.startsWith(PAGE_OBJECT_PREFIX) || !key.includes('/')
        ? HEADER_VALUES.cacheable
        : HEADER_VALUES.noStore;
  return { contentType, ...(contentEncoding ? { contentEncoding } : {}), cacheControl };
}
