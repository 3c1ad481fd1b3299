/**
 * The origin: where the gateway's objects are stored — an S3 bucket on AWS (s3-origin.ts), a directory on one
 * machine (dir-origin.ts). Publishing writes builds through this interface and the local edge reads through
 * it, so the local stack runs the same code path as production.
 */
import { createHash } from 'node:crypto';
import type { BuildObject, ObjectMetadata } from '../builder/build.ts';
import { HEADER_VALUES } from '../contract/index.ts';

/** An object to write: its bytes, what it is stored with, and its digests. */
export interface ObjectToWrite extends ObjectMetadata {
  /** The key at the origin: `builds/<id>/catalog.json.br`, `errors/500.json`. */
  readonly key: string;
  readonly chunks: readonly Buffer[];
  readonly size: number;
  /** SHA-256 (hex), sent as the upload's checksum: a store refuses a body damaged on the way. */
  readonly sha256: string;
  /** MD5 (hex). */
  readonly md5: string;
  readonly cacheControl: string;
}

/**
 * A built object as it is written at `key` with `cacheControl`: its chunks as they are (never joined), read
 * only when the object is written (a page renders its bytes on each read).
 */
export function objectToWrite(object: BuildObject, key: string, cacheControl: string): ObjectToWrite {
  return {
    key,
    get chunks() {
      return object.chunks;
    },
    size: object.size,
    sha256: object.sha256,
    md5: object.md5,
    contentType: object.contentType,
    ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
    cacheControl,
  };
}

/**
 * A JSON record of the catalog's own state at the origin (`state/…`: the run record, the run lock, the pointer's
 * history): its text as it is, never cached.
 */
export function stateObject(key: string, text: string): ObjectToWrite {
  return bytesObject(key, [Buffer.from(text)], HEADER_VALUES.json, HEADER_VALUES.noStore);
}

/** An object of these bytes, hashed here. */
export function bytesObject(
  key: string,
  chunks: readonly Buffer[],
  contentType: string,
  cacheControl: string,
): ObjectToWrite {
  const [sha256, md5] = ['sha256', 'md5'].map((algorithm) => {
    const hash = createHash(algorithm);
    for (const chunk of chunks) hash.update(chunk);
    return hash.digest('hex');
  }) as [string, string];
  const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  return { key, chunks, size, sha256, md5, contentType, cacheControl };
}

/** What the origin says about a stored object. */
export interface StoredObject {
  readonly key: string;
  readonly size: number;
  /** MD5 of the stored bytes (hex) — S3's ETag of an object uploaded in one part. */
  readonly md5: string;
  readonly lastModified: Date;
}

/** A stored object with its bytes and metadata. */
export interface FetchedObject extends StoredObject {
  readonly body: Buffer;
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
  readonly cacheControl: string | undefined;
}

/** One store of objects. Keys are `/`-separated; reads resolve null for a missing object, reject on failure. */
export interface OriginStore {
  /** How messages name it: `s3://bucket`, or the directory. */
  readonly name: string;
  /**
   * Writes one object. With `overwrite: false` an existing object is left as it is and the answer is
   * `exists` (a build's objects are written once, never replaced).
   */
  put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'>;
  /**
   * Copies the object at `from` to `to` with its metadata, inside the origin (S3 CopyObject: no bytes sent; a
   * directory: a hard link). `overwrite` as for {@link put}; a missing `from` rejects.
   */
  copy(from: string, to: string, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'>;
  /** The object with its bytes and metadata, or null. */
  get(key: string): Promise<FetchedObject | null>;
  /** `size` bytes of an object from `offset` (S3: a ranged GET), or null when it is missing. */
  getRange(key: string, offset: number, size: number): Promise<Buffer | null>;
  /**
   * Replaces an object only if its MD5 is still `expectedMd5` (compare and swap: S3's `If-Match`); resolves
   * false, changing nothing, when it changed or is gone. The run lock's takeover and renewal use it.
   */
  replace(object: ObjectToWrite, expectedMd5: string): Promise<boolean>;
  /**
   * Every object under `prefix`, with its size and MD5. With `md5: false` the MD5 may be left empty where
   * it costs a read per object (a directory keeps it in a file beside each object); S3 lists it anyway.
   */
  list(prefix: string, options?: { readonly md5?: boolean }): Promise<StoredObject[]>;
  /**
   * The "folders" directly under `prefix` (which ends with `/`), each as a prefix ending with `/`, sorted —
   * without listing what they hold (S3: a listing with the delimiter `/`; a directory: one readdir).
   */
  listPrefixes(prefix: string): Promise<string[]>;
  /** Deletes objects (missing ones are no error). */
  delete(keys: readonly string[]): Promise<void>;
  /** Deletes every object under `prefix` (which ends with `/`), in bulk. */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Makes every object written so far durable before the caller commits to them (a directory: its files, or
   * its whole file system after many). Absent where a write is durable once it returns (S3).
   */
  sync?(): Promise<void>;
  /**
   * The MD5 (hex) of an object's bytes as stored now, or null when it is missing. Only an origin whose listed
   * MD5 is a record made at write time has it (a directory, whose files can change afterwards); S3 computes an
   * object's ETag from the bytes it stores, so its listing already speaks for the bytes.
   */
  md5?(key: string): Promise<string | null>;
  /**
   * How the key-value store named `store` and this origin record each other (docs/decisions.md#live-build):
   * `origin`, the store's `build:origin` (a bucket, `s3://bucket`; a directory, its real path from the folder of
   * the store file), and `store`, the origin's `state/deployment.json` (the store's ARN; the store file's real
   * path from the directory), so that a directory and its store file move together.
   */
  bindingFor(store: string): Promise<{ readonly origin: string; readonly store: string }>;
}

/** `s3://bucket` names a bucket; anything else is a directory. */
export function bucketOf(origin: string): string | undefined {
  return /^s3:\/\/([^/]+)\/?$/.exec(origin)?.[1];
}
