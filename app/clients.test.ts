/**
 * The AWS clients of app/clients.ts: what they share, and that each resolves its middleware once per kind of
 * command, counted against s3rver (a real S3-protocol server).
 */
import { HeadBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3RVER_CREDENTIALS, startS3, type TestS3 } from '../testing/aws.ts';
import {
  createCloudFormationClient,
  createCloudFrontClient,
  createKvsClient,
  createLambdaClient,
  createLogsClient,
  createS3Client,
  createSecretsClient,
} from './clients.ts';

describe('the AWS clients', () => {
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startS3();
    vi.stubEnv('AWS_ACCESS_KEY_ID', S3RVER_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', S3RVER_CREDENTIALS.secretAccessKey);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await s3.stop();
  });

  it('resolve their middleware once per kind of command, not on every request', async () => {
    const settings = { region: 'us-east-1', maxAttempts: 1 };
    const clients = [
      createS3Client(settings),
      createCloudFormationClient(settings),
      createCloudFrontClient(settings),
      createLambdaClient(settings),
      createLogsClient(settings),
      createSecretsClient(settings),
      createKvsClient(settings),
    ];
    for (const client of clients) {
      expect(client.config.cacheMiddleware, client.constructor.name).toBe(true);
      client.destroy();
    }
    // CloudFront's function calls are rate-limited: its client backs off and slows down on throttling.
    expect(await createCloudFrontClient(settings).config.retryStrategy()).toMatchObject({ mode: 'adaptive' });

    const client = createS3Client({ ...settings, s3PathStyle: true, s3Endpoint: s3.endpoint });
    const list = vi.spyOn(ListObjectsV2Command.prototype, 'resolveMiddleware');
    const head = vi.spyOn(HeadBucketCommand.prototype, 'resolveMiddleware');
    try {
      for (let i = 0; i < 3; i++) {
        await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
        await client.send(new HeadBucketCommand({ Bucket: s3.bucket }));
      }
      expect([list.mock.calls.length, head.mock.calls.length]).toEqual([1, 1]);
      expect(s3.requests.map((request) => request.method)).toEqual([
        'GET',
        'HEAD',
        'GET',
        'HEAD',
        'GET',
        'HEAD',
      ]);
    } finally {
      list.mockRestore();
      head.mockRestore();
      client.destroy();
    }
  });
});
