/**
 * The origin: where the gateway's objects are stored — an S3 bucket (s3-origin.ts) or a directory (dir-origin.ts).
 * Publishing writes and the local edge reads through this interface: the local stack runs production's code.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { BuildObject } from '../builder/build.ts';
import { type StoredHeaders, storedHeaders } from '../contract/objects.ts';

/** An object to write: its key, its bytes and their digests (hex; a store refuses bytes that do not match them). */
export interface ObjectToWrite {
  readonly key: string;
  readonly chunks: readonly Buffer[];
  readonly size: number;
  readonly sha256: string;
  readonly md5: string;
}

/** A built object as it is written at `key`: its chunks read only when written (a page renders them each time). */
export function objectToWrite(object: BuildObject, key: string): ObjectToWrite {
  return {
    key,
    get chunks() {
      return object.chunks;
    },
    size: object.size,
    sha256: object.sha256,
    md5: object.md5,
  };
}

/** A JSON record of the catalog's own state at the origin (`state/…`): never served, never cached. */
export function stateObject(key: string, text: string): ObjectToWrite {
  const body = Buffer.from(text);
  const hex = (algorithm: string) => createHash(algorithm).update(body).digest('hex');
  return { key, chunks: [body], size: body.length, sha256: hex('sha256'), md5: hex('md5') };
}

/**
 * A stored JSON object read back against `schema`: its value, or why it is not one, in one line naming `key`,
 * what it should be and where it is not (`state/last-run.json is not a run record (outcome: …)`; the object
 * itself is `noun`).
 */
export function parseStoredJson<T extends z.ZodType>(
  body: Uint8Array,
  key: string,
  schema: T,
  { what, noun }: { readonly what: string; readonly noun: string },
): { value: z.output<T> } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return { problem: `${key} is not JSON` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    problem: `${key} is not ${what} (${issue?.path.join('.') || noun}: ${issue?.message ?? 'invalid'})`,
  };
}

/** What a listing says of a stored object, without reading it, on every origin alike. */
export interface StoredObject {
  readonly key: string;
  readonly size: number;
  /** The MD5 of its bytes (hex): S3's ETag of a one-part object (another ETag is no digest: no page's). */
  readonly md5: string;
}

/** A stored object with its bytes, their MD5 and its headers. */
export interface FetchedObject extends StoredHeaders {
  readonly key: string;
  readonly body: Buffer;
  readonly size: number;
  readonly md5: string;
  readonly lastModified: Date;
}

/** How {@link OriginStore.copy} copies. */
export interface CopyOptions {
  readonly overwrite: boolean;
  /** Copy only while `from` holds the bytes of this MD5 (hex). */
  readonly sourceMd5: string;
}

/**
 * One store of objects: it lists, reads, writes, copies and deletes, and gives the MD5 of every object it lists.
 * Keys are `/`-separated; reads resolve null for a missing object, reject on failure. Every write places a whole
 * object or nothing: no reader, and no crash, ever sees half of one.
 */
export interface OriginStore {
  /** How messages name it: `s3://bucket`, or the directory. */
  readonly name: string;
  /** Writes one object, with the headers of its key; without `overwrite`, an existing one is left (`exists`). */
  put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'>;
  /** Copies `from` to `to` inside the origin (no bytes sent to S3), only while `from` has the MD5 `sourceMd5`. */
  copy(from: string, to: string, options: CopyOptions): Promise<'written' | 'exists'>;
  /** The object with its bytes and headers, or null. */
  get(key: string): Promise<FetchedObject | null>;
  /** Replaces an object only while its MD5 is `expectedMd5` (compare and swap); else false, nothing changed. */
  replace(object: ObjectToWrite, expectedMd5: string): Promise<boolean>;
  /** Every object under `prefix`, sorted by key, each with its size and MD5. */
  list(prefix: string): Promise<StoredObject[]>;
  /** The "folders" directly under `prefix` (ending with `/`) as prefixes, sorted, without listing what they hold. */
  listPrefixes(prefix: string): Promise<string[]>;
  /** Deletes objects (missing ones are no error). */
  delete(keys: readonly string[]): Promise<void>;
  /** Deletes every object under `prefix` (which ends with `/`), in bulk. */
  deletePrefix(prefix: string): Promise<void>;
}

/** The headers an object at `key` is written with (contract/objects.ts). */
export { storedHeaders };

/** `s3://bucket` names a bucket; anything else is a directory. */
export function bucketOf(origin: string): string | undefined {
  return /^s3:\/\/([^/]+)\/?$/.exec(origin)?.[1];
}
