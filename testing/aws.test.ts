import { createHash } from 'node:crypto';
import {
  DeleteBucketWebsiteCommand,
  DeleteObjectCommand,
  GetBucketWebsiteCommand,
  HeadObjectCommand,
  PutBucketWebsiteCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3, type TestS3 } from './aws.ts';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

describe('s3rver, its bucket configurations kept between requests', () => {
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(() => s3.stop());

  const nameOfError = (sending: Promise<unknown>) =>
    sending.then(
      () => 'answered',
      (error: { name?: string }) => error.name,
    );

  it('answers with the website configuration put or deleted since the last request', async () => {
    const read = () => s3.client.send(new GetBucketWebsiteCommand({ Bucket: s3.bucket }));
    expect(await nameOfError(read())).toBe('NoSuchWebsiteConfiguration');
    await s3.client.send(
      new PutBucketWebsiteCommand({
        Bucket: s3.bucket,
        WebsiteConfiguration: { IndexDocument: { Suffix: 'index.html' } },
      }),
    );
    expect((await read()).IndexDocument?.Suffix).toBe('index.html');
    await s3.client.send(new DeleteBucketWebsiteCommand({ Bucket: s3.bucket }));
    expect(await nameOfError(read())).toBe('NoSuchWebsiteConfiguration');
  });
});

describe('s3rver, objects seeded through its store', () => {
  it('are what a GetObject and a HeadObject answer, as if put, without a request each', async () => {
    const s3 = await startS3();
    try {
      await s3.seed({ 'a/1.txt': 'one', 'a/2.txt': 'two' });
      expect(s3.requests).toEqual([]);
      expect(await s3.keys()).toEqual(['a/1.txt', 'a/2.txt']);
      expect((await s3.body('a/2.txt'))?.toString('utf8')).toBe('two');
      const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'a/1.txt' }));
      expect(head).toMatchObject({ ContentType: 'text/plain', ContentLength: 3, ETag: `"${md5('one')}"` });
    } finally {
      await s3.stop();
    }
  });
});

describe('s3rver, a snapshot of its bucket', () => {
  it('puts the bucket back as it was: what was added since is gone, what was changed or deleted is back', async () => {
    const s3 = await startS3();
    try {
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'a/1.txt', Body: 'one' }));
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'a/2.txt', Body: 'two' }));
      const made = await s3.snapshot();
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'a/1.txt', Body: 'changed' }));
      await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'a/2.txt' }));
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'b/3.txt', Body: 'three' }));
      await made.restore();
      expect(await s3.keys()).toEqual(['a/1.txt', 'a/2.txt']);
      expect((await s3.body('a/1.txt'))?.toString('utf8')).toBe('one');
      const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'a/2.txt' }));
      expect(head).toMatchObject({ ContentLength: 3, ETag: `"${md5('two')}"` });
    } finally {
      await s3.stop();
    }
  });
});
