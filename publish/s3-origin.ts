/**
 * The origin as an S3 bucket (or an S3-compatible store), its client passed in (app/clients.ts). Uploads are
 * conditional (`If-None-Match: *`) where no overwrite is wanted and carry their SHA-256 and MD5; a copy is made by
 * the bucket (CopyObject: no bytes travel). Every write's answer must show the MD5 of its bytes as its ETag, which
 * S3 gives only for SSE-S3 ({@link EncryptionError}). Builds are deleted with DeleteObjects, 1,000 keys a request.
 */
import {
  CopyObjectCommand,
  type CopyObjectCommandOutput,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  type PutObjectCommandOutput,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import { httpStatusOf } from '../contract/errors.ts';
import { EncryptionError } from './errors.ts';
import {
  type CopyOptions,
  type FetchedObject,
  type ObjectToWrite,
  type OriginStore,
  type StoredObject,
  storedHeaders,
} from './origin.ts';

/** 412: the condition failed; 409: a conditional write raced another one (S3 asks to retry: we lost). */
function isConflict(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status === 412 || status === 409;
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: unknown }).name;
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatusOf(error) === 404;
}

/** S3's ETag of an object uploaded in one part and encrypted with SSE-S3 is its MD5, quoted. */
const md5Of = (etag: string | undefined) => etag?.replaceAll('"', '') ?? '';

/** What a PutObject or CopyObject answers that a write checks. */
type WriteAnswer = Partial<
  Pick<PutObjectCommandOutput & CopyObjectCommandOutput, 'ETag' | 'CopyObjectResult' | 'ServerSideEncryption'>
>;

/** One bucket. */
export class S3Origin implements OriginStore {
  readonly name: string;
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(client: S3Client, bucket: string) {
    this.#client = client;
    this.#bucket = bucket;
    this.name = `s3://${bucket}`;
  }

  /** The PutObject request of an object, with its key's headers, its checksums and the given condition. */
  #putCommand(object: ObjectToWrite, condition: { IfNoneMatch?: string; IfMatch?: string }) {
    const body =
      object.chunks.length === 1 && object.chunks[0] ? object.chunks[0] : Buffer.concat(object.chunks);
    const headers = storedHeaders(object.key);
    return new PutObjectCommand({
      Bucket: this.#bucket,
      Key: object.key,
      Body: body,
      ContentType: headers.contentType,
      CacheControl: headers.cacheControl,
      ...(headers.contentEncoding ? { ContentEncoding: headers.contentEncoding } : {}),
      ContentMD5: Buffer.from(object.md5, 'hex').toString('base64'),
      ChecksumSHA256: Buffer.from(object.sha256, 'hex').toString('base64'),
      ...condition,
    });
  }

  /** Sends a write made with `If-None-Match: *` unless `overwrite`; `exists` when that condition failed. */
  async #write(
    key: string,
    md5: string,
    send: (condition: { IfNoneMatch?: string }) => Promise<WriteAnswer>,
    overwrite: boolean,
  ): Promise<'written' | 'exists'> {
    let answer: WriteAnswer;
    try {
      answer = await send(overwrite ? {} : { IfNoneMatch: '*' });
    } catch (error) {
      if (!overwrite && isConflict(error)) return 'exists';
      throw error;
    }
    await this.#check(key, md5, answer, !overwrite);
    return 'written';
  }

  /** Refuses an answer whose ETag is not `md5` (see {@link EncryptionError}), deleting the object if `created`. */
  async #check(key: string, md5: string, answer: WriteAnswer, created: boolean): Promise<void> {
    const etag = md5Of(answer.ETag ?? answer.CopyObjectResult?.ETag);
    const encryption = answer.ServerSideEncryption;
    if (etag === md5 && (encryption === undefined || encryption === 'AES256')) return;
    if (created) await this.delete([key]).catch(() => {});
    throw new EncryptionError(this.name, key, encryption, etag, md5);
  }

  put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'> {
    return this.#write(
      object.key,
      object.md5,
      (condition) => this.#client.send(this.#putCommand(object, condition)),
      options.overwrite,
    );
  }

  /**
   * A copy made by the bucket, with the headers of its own key (a live page is not immutable, as its source is),
   * only while its source has the ETag `sourceMd5` (`x-amz-copy-source-if-match`).
   */
  copy(from: string, to: string, options: CopyOptions): Promise<'written' | 'exists'> {
    const CopySource = `${this.#bucket}/${encodeURI(from)}`;
    const headers = storedHeaders(to);
    return this.#write(
      to,
      options.sourceMd5,
      (condition) =>
        this.#client.send(
          new CopyObjectCommand({
            Bucket: this.#bucket,
            Key: to,
            CopySource,
            MetadataDirective: 'REPLACE',
            ContentType: headers.contentType,
            CacheControl: headers.cacheControl,
            ...(headers.contentEncoding ? { ContentEncoding: headers.contentEncoding } : {}),
            CopySourceIfMatch: `"${options.sourceMd5}"`,
            ...condition,
          }),
        ),
      options.overwrite,
    );
  }

  async replace(object: ObjectToWrite, expectedMd5: string): Promise<boolean> {
    try {
      const answer = await this.#client.send(this.#putCommand(object, { IfMatch: `"${expectedMd5}"` }));
      await this.#check(object.key, object.md5, answer, false);
      return true;
    } catch (error) {
      if (isConflict(error) || isMissing(error)) return false;
      throw error;
    }
  }

  async get(key: string): Promise<FetchedObject | null> {
    try {
      const answer = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      const body = Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
      return {
        key,
        body,
        size: body.length,
        md5: md5Of(answer.ETag),
        lastModified: answer.LastModified ?? new Date(0),
        ...storedHeaders(key),
      };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** The pages of a listing of `prefix` (1,000 keys each), with the delimiter `/` when asked. */
  #pages(prefix: string, delimiter?: '/') {
    return paginateListObjectsV2(
      { client: this.#client, pageSize: 1000 },
      { Bucket: this.#bucket, Prefix: prefix, ...(delimiter ? { Delimiter: delimiter } : {}) },
    );
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const objects: StoredObject[] = [];
    for await (const page of this.#pages(prefix)) {
      for (const item of page.Contents ?? []) {
        if (item.Key === undefined) continue;
        objects.push({
          key: item.Key,
          size: item.Size ?? 0,
          md5: md5Of(item.ETag),
        });
      }
    }
    return objects;
  }

  async listPrefixes(prefix: string): Promise<string[]> {
    const prefixes: string[] = [];
    for await (const page of this.#pages(prefix, '/'))
      for (const item of page.CommonPrefixes ?? []) if (item.Prefix) prefixes.push(item.Prefix);
    return prefixes.sort();
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += 1000) {
      const batch = keys.slice(start, start + 1000);
      const answer = await this.#client.send(
        new DeleteObjectsCommand({
          Bucket: this.#bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = answer.Errors?.[0];
      if (failed)
        throw new Error(`cannot delete ${failed.Key}: ${failed.Code} ${failed.Message ?? ''}`.trim());
    }
  }

  /** Lists the prefix a page of 1,000 keys at a time and deletes each page in one DeleteObjects request. */
  async deletePrefix(prefix: string): Promise<void> {
    for await (const page of this.#pages(prefix)) {
      const keys = (page.Contents ?? []).flatMap((item) => (item.Key === undefined ? [] : [item.Key]));
      if (keys.length > 0) await this.delete(keys);
    }
  }
}
