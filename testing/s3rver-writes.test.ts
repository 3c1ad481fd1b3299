import { Writable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, expect, it } from 'vitest';
import { startS3 } from './aws.ts';
import { storeFs } from './s3rver-writes.ts';

const original = storeFs.createWriteStream;
afterEach(() => {
  storeFs.createWriteStream = original;
});

it("answers a PutObject only once the object's bytes are in its file, however slow the disk", async () => {
  // A disk that takes 200 ms for each write: the object must still read back whole right after its PUT.
  storeFs.createWriteStream = ((path: string) => {
    const file = original(path);
    return new Writable({
      write(chunk, encoding, callback) {
        setTimeout(() => file.write(chunk, encoding, callback), 200);
      },
      final(callback) {
        file.end(callback);
      },
    });
  }) as typeof original;
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
