/**
 * The origin as the local edge sees it: an origin store's objects with the metadata the build set. A build's
 * objects never change, so they are read once; anything else is looked at again every {@link RECHECK_MS}.
 */
import { BUILDS_PREFIX } from '../../contract/index.ts';
import type { OriginStore } from '../../publish/origin.ts';

/** An object as the origin serves it. */
export interface OriginObject {
  readonly body: Buffer;
  /** A strong entity tag, quoted, as S3 sends it (the MD5 of a single-part object). */
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType: string;
  readonly contentEncoding: string | undefined;
  readonly cacheControl: string | undefined;
}

/** Where the edge fetches objects. `get` resolves null for a missing object and rejects when it fails. */
export interface Origin {
  readonly name: string;
  get(key: string): Promise<OriginObject | null>;
}

/** How many objects the edge keeps in memory (a build's served objects and a few root ones). */
const CACHED_OBJECTS = 64;
/** How long a cached object that is not a build's is used before the store is asked again. */
const RECHECK_MS = 100;

/** The local edge's origin over a store. */
export class EdgeOrigin implements Origin {
  readonly name: string;
  readonly #store: OriginStore;
  readonly #cache = new Map<string, { object: Promise<OriginObject | null>; checkedAt: number }>();

  constructor(store: OriginStore) {
    this.#store = store;
    this.name = store.name;
  }

  get(key: string): Promise<OriginObject | null> {
    const cached = this.#cache.get(key);
    const immutable = key.startsWith(BUILDS_PREFIX);
    if (cached && (immutable || performance.now() - cached.checkedAt < RECHECK_MS)) return cached.object;
    if (this.#cache.size >= CACHED_OBJECTS) this.#cache.clear();
    const object = this.#fetch(key);
    this.#cache.set(key, { object, checkedAt: performance.now() });
    // A failure or a miss is asked again next time (a build's object may not be there yet).
    object.then(
      (found) => {
        if (!found) this.#cache.delete(key);
      },
      () => this.#cache.delete(key),
    );
    return object;
  }

  async #fetch(key: string): Promise<OriginObject | null> {
    const object = await this.#store.get(key);
    if (!object) return null;
    return {
      body: object.body,
      etag: `"${object.md5}"`,
      lastModified: object.lastModified,
      contentType: object.contentType ?? 'application/octet-stream',
      contentEncoding: object.contentEncoding,
      cacheControl: object.cacheControl,
    };
  }
}
