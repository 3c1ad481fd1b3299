import type http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publish } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { STATE_LAST_RUN } from '../contract/index.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import {
  fewRows,
  prepareRows,
  startHoldingProxy,
  startS3,
  type TestS3,
  testS3Client,
} from '../testing/aws.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { publishSummaryOf } from '../testing/targets.ts';
import { EncryptionError } from './errors.ts';
import { readPointer } from './pointer.ts';
import { S3Origin } from './s3-origin.ts';
import type { PublishTarget } from './steps.ts';

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

/** A proxy to `target` that amends the headers of the answers to the uploads (PUT, not a copy) of `prefix`. */
function amendingProxy(target: string, prefix: string, amend: (headers: http.IncomingHttpHeaders) => void) {
  const never = () => false;
  return startHoldingProxy(target, never, (req, answer) => {
    const upload = req.method === 'PUT' && req.url?.startsWith(prefix) && !req.headers['x-amz-copy-source'];
    if (upload && (answer.statusCode ?? 500) < 300) amend(answer.headers);
  });
}

describe('a bucket whose encryption is not SSE-S3', () => {
  const scratch = useScratchDir({ prefix: 'catalog-sse-' });
  let s3: TestS3;
  beforeEach(async () => {
    s3 = await startS3();
  });
  afterEach(() => s3.stop());

  it.each([
    [
      'ServerSideEncryption aws:kms',
      { 'x-amz-server-side-encryption': 'aws:kms' },
      /with aws:kms encryption/,
    ],
    [
      'an ETag that is not the MD5 sent',
      { etag: '"0123456789abcdef0123456789abcdef-1"' },
      /with another encryption than SSE-S3/,
    ],
  ])(
    'answering a build’s upload with %s stops the run before anything goes live, leaving nothing behind',
    async (_, headers, said) => {
      const rows = await fewRows();
      const kvs = new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true });
      const settings = {
        ...parseSettings('build', () => undefined, String),
        baseUrl: 'https://plans.example.com',
        allowEmpty: false,
        minRatio: 0.5,
        keepBuilds: defaultOf('keepBuilds'),
      };
      const run = async (target: PublishTarget, subset: readonly unknown[], at: string) => {
        const prepared = await prepareRows(subset, new Date(at));
        return publish(settings, target, { now: new Date(at), force: false, report: () => {}, prepared });
      };
      const live = await run(
        { origin: new S3Origin(s3.client, s3.bucket), kvs },
        rows,
        '2026-03-01T10:00:00.000Z',
      );
      const before = await s3.keys();
      const proxy = await amendingProxy(s3.endpoint, `/${s3.bucket}/builds/`, (answer) =>
        Object.assign(answer, headers),
      );
      const client = testS3Client(proxy.url, 1);
      try {
        const target = { origin: new S3Origin(client, s3.bucket), kvs };
        // Run after run: each stops alike, and none leaves its build behind.
        for (const at of ['2026-03-01T11:00:00.000Z', '2026-03-01T12:00:00.000Z']) {
          const failed = run(target, rows.slice(0, 12), at);
          await expect(failed).rejects.toThrow(EncryptionError);
          await expect(failed).rejects.toThrow(said);
          await expect(failed).rejects.toThrow(
            /publishing needs S3 to list each object's MD5, which it does only for SSE-S3; set the bucket's default encryption to SSE-S3 \(AES256\)/,
          );
          expect((await readPointer(kvs)).live).toBe(publishSummaryOf(live.summary).buildId);
          // Only the run's record changed: no object of the build, no run lock.
          expect((await s3.keys()).filter((key) => key !== STATE_LAST_RUN)).toEqual(
            before.filter((key) => key !== STATE_LAST_RUN),
          );
          const record = JSON.parse((await s3.body(STATE_LAST_RUN))?.toString('utf8') ?? '{}');
          expect(record).toMatchObject({ outcome: 'failed', error: 'EncryptionError' });
        }
      } finally {
        client.destroy();
        await proxy.close();
      }
    },
  );
});
