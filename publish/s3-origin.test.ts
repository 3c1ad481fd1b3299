/**
 * The S3 origin against s3rver (a real S3-protocol server): removing a whole build in bulk, whatever its size.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startS3, type TestS3 } from '../testing/aws.ts';
import { S3Origin } from './s3-origin.ts';

describe('an S3 origin', () => {
  let s3: TestS3;
  beforeEach(async () => {
    s3 = await startS3();
  });
  afterEach(() => s3.stop());

  it('deletes a prefix of more than a page of keys in bulk, a page a request, leaving what is beside it', async () => {
    const origin = new S3Origin(s3.client, s3.bucket);
    // A page is 1,000 keys: one more makes two pages.
    const doomed = Array.from({ length: 1_001 }, (_, i) => `builds/a/${String(i).padStart(5, '0')}.txt`);
    const kept = ['builds/b/0.txt', 'builds/a.txt'];
    await s3.seed(Object.fromEntries([...doomed, ...kept].map((key) => [key, key])));
    expect(s3.requests).toEqual([]);

    await origin.deletePrefix('builds/a/');

    const sent = s3.requests.splice(0).map((request) => `${request.method} ${request.query.prefix ?? ''}`);
    expect(sent).toEqual(['GET builds/a/', 'POST ', 'GET builds/a/', 'POST ']);
    expect((await origin.list('builds/')).map((stored) => stored.key)).toEqual([
      'builds/a.txt',
      'builds/b/0.txt',
    ]);
  });
});
