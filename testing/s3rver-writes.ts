/**
 * s3rver 3.7.1 answers a PutObject before the object's bytes are in its file: its filesystem store resolves
 * when the body has gone through its hashing transform (or, for a buffer, as soon as the write is queued), not
 * when the file's write stream has finished. A HEAD or GET that follows at once can then see a short or empty
 * object, which the publish's verify step rightly reports as damage ("has 0 bytes"); on a busy machine that
 * made the publish tests fail now and then. Amazon S3 answers a PutObject only once the whole object is
 * stored. This replaces the store's `putObject` with one that answers after the write stream has finished
 * (the same files: the object, its MD5 and its metadata, written by the store's own `putMetadata`).
 *
 * It also writes those files in place, so a GET while the same key is written read a truncated file under the
 * old metadata's length: the server closed the connection mid-body and the reader got "aborted" (three runs
 * taking over the run lock, one replacing it while the others read it). Amazon S3 gives a reader the old object
 * or the new one, whole. So each key's reads, writes and copies take turns here, and a read holds its bytes
 * before it answers.
 * A copy keeps the MD5 of the bytes it copied (below), as Amazon S3's does, and costs about what a PutObject does.
 * Test support only; imported by testing/aws.ts before s3rver starts.
 */
import { createHash } from 'node:crypto';
import { copyFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);

interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly content: Buffer | Readable;
  readonly metadata: Record<string, string>;
}

/** s3rver's object as its store answers a GET or HEAD: the bytes as a stream (s3rver destroys it for a HEAD). */
interface FoundObject {
  content: Readable | null;
}

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
  getObject(bucket: string, key: string, options?: unknown): Promise<FoundObject | null>;
  copyObject(
    bucket: string,
    key: string,
    toBucket: string,
    toKey: string,
    ...rest: unknown[]
  ): Promise<unknown>;
}

/** The work on each key now running or waiting, the last in line. */
const turns = new Map<string, Promise<unknown>>();

/** Runs `work` once everything before it on each of `keys` has ended, and holds them until it ends. */
function inTurn<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
  const ids = [...new Set(keys)];
  const before = Promise.all(ids.map((id) => turns.get(id)));
  const done = before.then(work);
  const ended = done.catch(() => undefined);
  for (const id of ids) turns.set(id, ended);
  void ended.then(() => {
    for (const id of ids) if (turns.get(id) === ended) turns.delete(id);
  });
  return done;
}

/** The file system module s3rver's store writes with (fs-extra), so a test can slow its writes down. */
export const storeFs = require(
  require.resolve('fs-extra', { paths: [dirname(require.resolve('s3rver'))] }),
) as {
  createWriteStream: typeof import('node:fs').createWriteStream;
  mkdirp(path: string): Promise<unknown>;
};

const store = (require('s3rver/lib/stores/filesystem.js') as { prototype: FilesystemStore }).prototype;

const { getObject, copyObject } = store;

store.getObject = function getObjectInTurn(this: FilesystemStore, bucket, key, options) {
  return inTurn([`${bucket}/${key}`], async () => {
    const found = await getObject.call(this, bucket, key, options);
    if (found?.content) found.content = Readable.from([await buffer(found.content)]);
    return found;
  });
};

store.copyObject = function copyObjectInTurn(this: FilesystemStore, bucket, key, toBucket, toKey, ...rest) {
  return inTurn([`${bucket}/${key}`, `${toBucket}/${toKey}`], async () => {
    if (bucket === toBucket && key === toKey)
      return copyObject.call(this, bucket, key, toBucket, toKey, ...rest);
    // s3rver's own copy goes through fs-extra's copy (a stat of each folder up both paths) and reads the copy's
    // metadata twice, hashing its bytes again when the MD5 file is not there: twice the work of a PutObject. Its
    // copy with new metadata (`x-amz-metadata-directive: REPLACE`) also keeps the copy's old MD5 file, so a copy
    // over an object answered the ETag of the bytes it replaced; Amazon S3's is the MD5 of the bytes copied. This
    // copies the three files (the object, its MD5, its metadata or the new one) and reads the metadata once.
    const at = (resource: string, bucketName: string, objectKey: string) =>
      this.getResourcePath(bucketName, objectKey, resource);
    await storeFs.mkdirp(dirname(at('object', toBucket, toKey)));
    await copyFile(at('object', bucket, key), at('object', toBucket, toKey));
    await copyFile(at('object.md5', bucket, key), at('object.md5', toBucket, toKey));
    const replacement = rest[0] as Record<string, string> | null | undefined;
    if (replacement) await this.putMetadata(toBucket, toKey, replacement, '');
    else await copyFile(at('metadata.json', bucket, key), at('metadata.json', toBucket, toKey));
    return this.getMetadata(toBucket, toKey);
  });
};

store.putObject = function putObjectInTurn(this: FilesystemStore, object: StoredObject) {
  return inTurn([`${object.bucket}/${object.key}`], () => writeObject.call(this, object));
};

async function writeObject(this: FilesystemStore, object: StoredObject) {
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
}
