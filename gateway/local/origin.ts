/**
 * Origins of the local edge: a directory written by `catalog build`, or an S3-compatible bucket written by
 * `catalog publish`. Both answer with the object's bytes and the metadata S3 would send.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { GetObjectCommand, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import { HEADER_VALUES } from '../../contract/index.ts';

/** An object as the origin serves it. */
export interface OriginObject {
  readonly body: Buffer;
  /** A strong entity tag, quoted, as S3 sends it (the MD5 of a single-part object). */
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType: string;
  readonly cacheControl: string | undefined;
}

/** Where the edge fetches objects. `get` resolves null for a missing object and rejects when it fails. */
export interface Origin {
  readonly name: string;
  get(key: string): Promise<OriginObject | null>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.json': HEADER_VALUES.json,
  '.yaml': HEADER_VALUES.yaml,
};

/**
 * A directory of files, cached in memory until a file's size, time or inode changes. A file is looked at
 * (one `stat`) at most every `recheckMs`, so a new build or a removed file shows within that time while a
 * busy edge does not pay a system call per request.
 */
export class DirectoryOrigin implements Origin {
  readonly name: string;
  readonly #root: string;
  readonly #recheckMs: number;
  readonly #cache = new Map<string, { version: string; object: OriginObject; checkedAt: number }>();

  constructor(root: string, options: { recheckMs?: number } = {}) {
    this.#root = resolve(root);
    this.name = root;
    this.#recheckMs = options.recheckMs ?? 100;
  }

  async get(key: string): Promise<OriginObject | null> {
    const recent = this.#cache.get(key);
    if (recent && performance.now() - recent.checkedAt < this.#recheckMs) return recent.object;
    const path = resolve(this.#root, key);
    if (!path.startsWith(this.#root + sep)) return null;
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code === 'ENOENT' ||
        (error as NodeJS.ErrnoException).code === 'ENOTDIR'
      ) {
        return null;
      }
      throw error;
    }
    if (!info.isFile()) {
      this.#cache.delete(key);
      return null;
    }
    const version = `${info.mtimeMs}:${info.size}:${info.ino}`;
    const cached = this.#cache.get(key);
    if (cached?.version === version) {
      cached.checkedAt = performance.now();
      return cached.object;
    }
    let body: Buffer;
    try {
      body = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const contentType = key.endsWith('errors/500.json')
      ? HEADER_VALUES.problem
      : (CONTENT_TYPES[extname(key)] ?? 'application/octet-stream');
    const object: OriginObject = {
      body,
      etag: `"${createHash('md5').update(body).digest('hex')}"`,
      lastModified: info.mtime,
      contentType,
      cacheControl: contentType === HEADER_VALUES.problem ? HEADER_VALUES.noStore : HEADER_VALUES.cacheable,
    };
    this.#cache.set(key, { version, object, checkedAt: performance.now() });
    return object;
  }
}

/** A bucket of an S3-compatible store; the client is created by the caller. */
export class S3Origin implements Origin {
  readonly name: string;
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(client: S3Client, bucket: string) {
    this.#client = client;
    this.#bucket = bucket;
    this.name = `s3://${bucket}`;
  }

  async get(key: string): Promise<OriginObject | null> {
    try {
      const result = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      const body = Buffer.from((await result.Body?.transformToByteArray()) ?? []);
      return {
        body,
        etag: result.ETag ?? `"${createHash('md5').update(body).digest('hex')}"`,
        lastModified: result.LastModified ?? new Date(0),
        contentType: result.ContentType ?? 'application/octet-stream',
        cacheControl: result.CacheControl,
      };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }
}
