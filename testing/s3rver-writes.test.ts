import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  CopyObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterEach, expect, it } from 'vitest';
import { startS3 } from './aws.ts';
import { storeFs } from './s3rver-writes.ts';

const original = storeFs.createWriteStream;
afterEach(() => {
  storeFs.createWriteStream = original;
});

/** A disk on which each write of s3rver's store takes `ms`; `opened` is called as each file is opened (emptied). */
function slowDisk(ms: number, opened: () => void = () => {}): void {
  storeFs.createWriteStream = ((path: string) => {
    const file = original(path);
    opened();
    return new Writable({
      write(chunk, encoding, callback) {
        setTimeout(() => file.write(chunk, encoding, callback), ms);
      },
      final(callback) {
        file.end(callback);
      },
    });
  }) as typeof original;
}

it("answers a PutObject only once the object's bytes are in its file, however slow the disk", async () => {
  // A disk that takes 200 ms for each write: the object must still read back whole right after its PUT.
  slowDisk(200);
  const s3 = await startS3();
  try {
    const body = Buffer.from('x'.repeat(3862));
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'plans/a.html', Body: body }));
    const answer = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'plans/a.html' }));
    expect(answer.ContentLength).toBe(body.length);
    expect(Buffer.from(await (answer.Body?.transformToByteArray() ?? new Uint8Array()))).toEqual(body);
  } finally {
    await s3.stop();
  }
});

it('gives a GET while the same key is written the old object or the new one, whole', async () => {
  const s3 = await startS3();
  try {
    const key = 'state/run-lock.json';
    const put = (body: Buffer) =>
      s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
    const read = async () => {
      const answer = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      return Buffer.from(await (answer.Body?.transformToByteArray() ?? new Uint8Array()));
    };
    const old = Buffer.from('o'.repeat(5000));
    await put(old);
    // The new object's write takes 300 ms once its file is open (and emptied): the GETs come meanwhile.
    let opened = () => {};
    const writing = new Promise<void>((resolve) => {
      opened = resolve;
    });
    slowDisk(300, opened);
    const next = Buffer.from('n'.repeat(3000));
    const putting = put(next);
    await writing;
    const reads = await Promise.all([read(), read(), read()]);
    await putting;
    for (const bytes of reads) expect([old, next]).toContainEqual(bytes);
    expect(await read()).toEqual(next);
  } finally {
    await s3.stop();
  }
});

it('gives a copy made with new headers the ETag of the bytes it copied, as S3 does, not the one it replaced', async () => {
  const s3 = await startS3();
  try {
    const put = (key: string, body: string) =>
      s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: Buffer.from(body) }));
    await put('pages/one.html', 'one');
    await put('plans/p.html', 'the page before');
    await s3.client.send(
      new CopyObjectCommand({
        Bucket: s3.bucket,
        Key: 'plans/p.html',
        CopySource: `${s3.bucket}/pages/one.html`,
        MetadataDirective: 'REPLACE',
        CacheControl: 'public, max-age=300',
      }),
    );
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'plans/' }));
    expect(listed.Contents?.[0]?.ETag).toBe(`"${createHash('md5').update('one').digest('hex')}"`);
  } finally {
    await s3.stop();
  }
});

it("copies the bytes into a new folder, with the new headers when asked and else the source's", async () => {
  const s3 = await startS3();
  try {
    await s3.client.send(
      new PutObjectCommand({
        Bucket: s3.bucket,
        Key: 'pages/two.html',
        Body: Buffer.from('two'),
        ContentType: 'text/html; charset=utf-8',
        CacheControl: 'public, max-age=31536000, immutable',
      }),
    );
    const copy = (key: string, headers: { MetadataDirective?: 'REPLACE'; CacheControl?: string }) =>
      s3.client.send(
        new CopyObjectCommand({
          Bucket: s3.bucket,
          Key: key,
          CopySource: `${s3.bucket}/pages/two.html`,
          ...headers,
        }),
      );
    const copied = await copy('plans/deep/a.html', {
      MetadataDirective: 'REPLACE',
      CacheControl: 'no-store',
    });
    await copy('plans/deep/b.html', {});
    const md5 = `"${createHash('md5').update('two').digest('hex')}"`;
    expect(copied.CopyObjectResult?.ETag).toBe(md5);
    const get = (Key: string) => s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key }));
    const [a, b] = await Promise.all([get('plans/deep/a.html'), get('plans/deep/b.html')]);
    expect([await a.Body?.transformToString(), a.CacheControl, a.ETag]).toEqual(['two', 'no-store', md5]);
    expect([await b.Body?.transformToString(), b.CacheControl, b.ContentType, b.ETag]).toEqual([
      'two',
      'public, max-age=31536000, immutable',
      'text/html; charset=utf-8',
      md5,
    ]);
  } finally {
    await s3.stop();
  }
});
