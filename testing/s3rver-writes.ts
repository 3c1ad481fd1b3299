/**
 * s3rver 3.7.1 answers a PutObject before the object's bytes are in its file: its filesystem store resolves
 * when the body has gone through its hashing transform (or, for a buffer, as soon as the write is queued), not
 * when the file's write stream has finished. A HEAD or GET that follows at once can then see a short or empty
 * object, which the publish's verify step rightly reports as damage ("has 0 bytes"); on a busy machine that
 * made the publish tests fail now and then. Amazon S3 answers a PutObject only once the whole object is
 * stored. This replaces the store's `putObject` with one that answers after the write stream has finished
 * (the same files: the object, its MD5 and its metadata, written by the store's own `putMetadata`).
 * Test support only; imported by testing/aws.ts before s3rver starts.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);

interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly content: Buffer | Readable;
  readonly metadata: Record<string, string>;
}

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
}

/** The file system module s3rver's store writes with (fs-extra), so a test can slow its writes down. */
export const storeFs = require(
  require.resolve('fs-extra', { paths: [dirname(require.resolve('s3rver'))] }),
) as {
  createWriteStream: typeof import('node:fs').createWriteStream;
  mkdirp(path: string): Promise<unknown>;
};

const store = (require('s3rver/lib/stores/filesystem.js') as { prototype: FilesystemStore }).prototype;

store.putObject = async function putObject(this: FilesystemStore, object: StoredObject) {
  const path = this.getResourcePath(object.bucket, object.key, 'object');
  await storeFs.mkdirp(dirname(path));
  const md5 = createHash('md5');
  let size = 0;
  const body = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  await pipeline(body, count, storeFs.createWriteStream(path));
  const digest = md5.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};
