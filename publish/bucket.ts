/**
 * The S3 side of publishing: thin wrappers over the commands the pipeline needs, on one bucket. The client is
 * created by the entry point (CLI command, Lambda handler) with its retry settings and passed in.
 */
import { createHash } from 'node:crypto';
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { OriginFile } from '../builder/build.ts';
import type { StoredObject } from './core.ts';

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: unknown }).name;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return name === 'NotFound' || name === 'NoSuchKey' || status === 404;
}

/** A `CopySource` value: the bucket and the key, each path segment percent-encoded. */
function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/** One bucket of an S3-compatible store. */
export class CatalogBucket {
  readonly client: S3Client;
  readonly name: string;

  constructor(client: S3Client, name: string) {
    this.client = client;
    this.name = name;
  }

  /** HEADs an object; null when it does not exist. */
  async head(key: string): Promise<StoredObject | null> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.name, Key: key }));
      return {
        metadata: answer.Metadata ?? {},
        lastModified: answer.LastModified ?? null,
        etag: answer.ETag?.replaceAll('"', '') ?? null,
      };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** HEADs several objects at once, keyed by key. */
  async headAll(keys: readonly string[]): Promise<Record<string, StoredObject | null>> {
    const answers = await Promise.all(keys.map((key) => this.head(key)));
    return Object.fromEntries(keys.map((key, index) => [key, answers[index] ?? null]));
  }

  /** The bytes of an object; null when it does not exist. */
  async read(key: string): Promise<Buffer | null> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: key }));
      return Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /**
   * Uploads one file with its Content-Type, Cache-Control and user metadata. Content-MD5 lets the store
   * reject a body damaged on the way (the checksum any S3-compatible store understands).
   */
  async put(file: OriginFile, metadata: Record<string, string>): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.name,
        Key: file.key,
        Body: file.body,
        ContentType: file.contentType,
        CacheControl: file.cacheControl,
        ContentMD5: createHash('md5').update(file.body).digest('base64'),
        Metadata: metadata,
      }),
    );
  }

  /** Writes a small private text object (no caching headers: it is never served). */
  async putText(key: string, text: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.name,
        Key: key,
        Body: text,
        ContentType: 'text/plain; charset=utf-8',
      }),
    );
  }

  /** Copies an object within the bucket, keeping its Content-Type, Cache-Control and user metadata. */
  async copy(from: string, to: string): Promise<void> {
    await this.client.send(
      new CopyObjectCommand({
        Bucket: this.name,
        Key: to,
        CopySource: copySource(this.name, from),
        MetadataDirective: 'COPY',
      }),
    );
  }

  /** Every key under `prefix` (all pages). */
  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.name,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** Deletes keys, up to 1,000 per request; throws naming the first key the store refused. */
  async delete(keys: readonly string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += 1000) {
      const batch = keys.slice(start, start + 1000);
      const answer = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.name,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = answer.Errors?.[0];
      if (failed)
        throw new Error(`cannot delete ${failed.Key}: ${failed.Code} ${failed.Message ?? ''}`.trim());
    }
  }
}
