import {
  DeleteBucketWebsiteCommand,
  GetBucketWebsiteCommand,
  PutBucketWebsiteCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3, type TestS3 } from './aws.ts';

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
