import { createHash } from 'node:crypto';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BuildResult } from '../builder/build.ts';
import { settingRef } from '../contract/errors.ts';
import {
  buildRows,
  fixtureRows,
  invalidationAnswer,
  isUploadOf,
  type Recorder,
  S3RVER_CREDENTIALS,
  startCutProxy,
  startRecorder,
  startS3,
  type TestS3,
  testS3Client,
} from '../testing/aws.ts';
import { INVALIDATED_MARKER, LIVE_KEYS } from './core.ts';
import { HistoryError, PublishRefusedError, UploadError } from './errors.ts';
import { listBuilds, type PublishClients, type PublishOptions, publishBuild, rollback } from './publish.ts';

let recorder: Recorder;
let cloudfront: CloudFrontClient;
beforeAll(async () => {
  recorder = await startRecorder();
  cloudfront = new CloudFrontClient({
    region: 'us-east-1',
    endpoint: recorder.url,
    credentials: S3RVER_CREDENTIALS,
    maxAttempts: 1,
  });
});
afterAll(async () => {
  cloudfront.destroy();
  await recorder.close();
});

let s3: TestS3;
let clients: PublishClients;
let rows: unknown[];
beforeEach(async () => {
  s3 = await startS3();
  clients = { s3: s3.client, cloudfront };
  recorder.requests.length = 0;
  rows = await fixtureRows();
});
afterEach(() => s3.stop());

const DISTRIBUTION = 'E2TESTDIST';
const options = (extra: Partial<PublishOptions> = {}): PublishOptions => ({
  bucket: s3.bucket,
  distributionId: DISTRIBUTION,
  force: false,
  allowEmpty: false,
  minRatio: 0.5,
  keep: 20,
  ...extra,
});

let clock = Date.parse('2026-03-01T10:00:00.000Z');
/** A build of `subset` at a new time (a minute after the previous one). */
async function build(subset: readonly unknown[] = rows): Promise<BuildResult> {
  clock += 60_000;
  return buildRows(subset, new Date(clock));
}

async function head(key: string) {
  return s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
}

/** The live bodies, by key. */
async function liveBodies(): Promise<Record<string, string | undefined>> {
  const bodies: Record<string, string | undefined> = {};
  for (const key of LIVE_KEYS) bodies[key] = (await s3.body(key))?.toString('utf8');
  return bodies;
}

function bodiesOf(result: BuildResult): Record<string, string> {
  return Object.fromEntries(result.files.map((file) => [file.key, file.body.toString('utf8')]));
}

describe('publish', () => {
  it('uploads every object with exact bytes and metadata, then invalidates with the build id', async () => {
    const result = await build();
    const summary = await publishBuild(result, clients, options({ suffix: 'a1b2c3' }));
    const buildId = `${result.generatedAt.replace(/[-:.]/g, '')}-a1b2c3`;
    expect(summary).toMatchObject({
      command: 'publish',
      result: 'uploaded',
      buildId,
      generatedAt: result.generatedAt,
      counts: { running: 22, strength: 22 },
      plans: 44,
      bytes: result.files.reduce((sum, file) => sum + file.body.length, 0),
      previousBuildId: null,
      archived: null,
      pruned: [],
      invalidationId: 'I1',
      invalidatedPaths: ['/api/plans', '/catalog*', '/openapi.yaml'],
    });
    expect(Object.keys(summary.durationsMs)).toEqual([
      'build',
      'read',
      'archive',
      'upload',
      'invalidate',
      'prune',
      'total',
    ]);
    expect(await s3.keys()).toEqual([...LIVE_KEYS, INVALIDATED_MARKER].sort());
    expect((await s3.body(INVALIDATED_MARKER))?.toString()).toBe(buildId);
    const errorPage = result.files.find((file) => file.key === 'errors/500.json')?.body ?? Buffer.alloc(0);
    for (const file of result.files) {
      expect((await s3.body(file.key))?.equals(file.body)).toBe(true);
      const meta = await head(file.key);
      expect(meta.ContentType).toBe(file.contentType);
      expect(meta.CacheControl).toBe(file.cacheControl);
      if (file.key === 'errors/500.json') {
        // Served by CloudFront as the 500 answer with no function to strip headers: no x-amz-meta-* at all.
        expect(meta.Metadata).toEqual({});
        continue;
      }
      expect(meta.Metadata).toEqual({
        'build-id': buildId,
        'generated-at': result.generatedAt,
        'plans-hash': result.plansHash,
        'count-running': '22',
        'count-strength': '22',
        sha256: createHash('sha256').update(file.body).digest('hex'),
        ...(file.key === 'catalog.json'
          ? {
              'error-page-sha256': createHash('sha256').update(errorPage).digest('hex'),
              'error-page-md5': createHash('md5').update(errorPage).digest('hex'),
            }
          : {}),
      });
    }
    expect((await head('errors/500.json')).ContentType).toBe('application/problem+json');
    expect((await head('errors/500.json')).CacheControl).toBe('no-store');
    expect((await head('openapi.yaml')).ContentType).toBe('application/yaml; charset=utf-8');
    expect((await head('catalog.json')).CacheControl).toBe('public, max-age=300');
    expect(recorder.invalidations()).toEqual([
      {
        distributionId: DISTRIBUTION,
        paths: ['/api/plans', '/catalog*', '/openapi.yaml'],
        callerReference: `publish-${buildId}`,
      },
    ]);
  });

  it('skips an unchanged catalog: no upload, no invalidation', async () => {
    const first = await publishBuild(await build(), clients, options());
    const second = await publishBuild(await build(), clients, options());
    expect(second).toMatchObject({
      result: 'skipped',
      previousBuildId: first.buildId,
      invalidationId: null,
      reason: expect.stringContaining(`identical to live build ${first.buildId}`),
    });
    expect(recorder.invalidations()).toHaveLength(1);
    expect((await head('catalog.json')).Metadata?.['build-id']).toBe(first.buildId);
    expect(await s3.keys()).toEqual([...LIVE_KEYS, INVALIDATED_MARKER].sort());
  });

  it('makes the invalidation a failed run missed on the next run, even when nothing changed', async () => {
    recorder.answerWith(() => ({ status: 503, body: '<Error><Code>ServiceUnavailable</Code></Error>' }));
    const failing = publishBuild(await build(), clients, options({ suffix: 'f00f00' }));
    await expect(failing).rejects.toThrow(/is live but the invalidation of distribution E2TESTDIST failed/);
    const live = (await head('catalog.json')).Metadata?.['build-id'];
    expect(await s3.body(INVALIDATED_MARKER)).toBeNull();

    recorder.answerWith((request) => invalidationAnswer(request, recorder.requests.length));
    const retried = await publishBuild(await build(), clients, options());
    expect(retried).toMatchObject({
      result: 'skipped',
      reason: expect.stringContaining('its invalidation had not been made, so it was made now'),
      invalidatedPaths: ['/api/plans', '/catalog*', '/openapi.yaml'],
    });
    expect(retried.invalidationId).not.toBeNull();
    const made = recorder.invalidations().at(-1);
    expect(made?.callerReference).toMatch(new RegExp(`^publish-${live}-again-\\d+$`));
    expect((await s3.body(INVALIDATED_MARKER))?.toString()).toBe(live);

    const calm = await publishBuild(await build(), clients, options());
    expect(calm).toMatchObject({ result: 'skipped', invalidationId: null });
    expect(recorder.invalidations()).toHaveLength(2);
  });

  it('publishes an unchanged catalog with force, and leaves openapi.yaml out of the invalidation', async () => {
    await publishBuild(await build(), clients, options());
    const forced = await publishBuild(await build(), clients, options({ force: true }));
    expect(forced.result).toBe('uploaded');
    expect(recorder.invalidations()[1]?.paths).toEqual(['/api/plans', '/catalog*']);
    expect(recorder.invalidations()[1]?.callerReference).toBe(`publish-${forced.buildId}`);
  });

  it('refuses a catalog below half of the live plans, naming the numbers, and changes nothing', async () => {
    const first = await build();
    await publishBuild(first, clients, options());
    const shrunk = await build(rows.slice(0, 20));
    const attempt = publishBuild(shrunk, clients, options());
    await expect(attempt).rejects.toThrow(PublishRefusedError);
    await expect(attempt).rejects.toThrow(/the new catalog has \d+ plans, fewer than 0.5 × the 44 plans/);
    expect(await liveBodies()).toEqual(bodiesOf(first));
    expect(recorder.invalidations()).toHaveLength(1);
    expect((await publishBuild(shrunk, clients, options({ force: true }))).result).toBe('uploaded');
  });

  it('honours a configured ratio', async () => {
    await publishBuild(await build(), clients, options());
    const fewer = await build(rows.slice(0, 30));
    await expect(publishBuild(fewer, clients, options({ minRatio: 0.9 }))).rejects.toThrow(
      /fewer than 0.9 × the 44 plans .* \(40\)/,
    );
  });

  it('refuses an empty catalog unless allowed', async () => {
    const empty = await build([]);
    await expect(publishBuild(empty, clients, options())).rejects.toThrow(
      `refused: the new catalog has 0 plans; ${settingRef('allowEmpty')} publishes an empty catalog`,
    );
    expect(await s3.keys()).toEqual([]);
    expect((await publishBuild(empty, clients, options({ allowEmpty: true }))).plans).toBe(0);
  });

  it('archives the live build before replacing it and keeps only the newest builds', async () => {
    const builds: BuildResult[] = [];
    const ids: string[] = [];
    for (const subset of [rows, rows.slice(0, 40), rows.slice(0, 35), rows.slice(0, 30)]) {
      const result = await build(subset);
      builds.push(result);
      ids.push((await publishBuild(result, clients, options({ keep: 2 }))).buildId);
    }
    const keys = await s3.keys();
    const historyIds = [...new Set(keys.filter((k) => k.startsWith('history/')).map((k) => k.split('/')[1]))];
    // Builds 1–3 were archived in turn; keeping 2 pruned the first.
    expect(historyIds.sort()).toEqual([ids[1], ids[2]]);
    for (const [index, id] of [ids[1], ids[2]].entries()) {
      const archived = builds[index + 1] as BuildResult;
      for (const file of archived.files) {
        expect((await s3.body(`history/${id}/${file.key}`))?.equals(file.body)).toBe(true);
        const meta = await head(`history/${id}/${file.key}`);
        expect([meta.ContentType, meta.CacheControl, meta.Metadata?.['build-id']]).toEqual([
          file.contentType,
          file.cacheControl,
          file.key === 'errors/500.json' ? undefined : id,
        ]);
      }
    }
    expect(await listBuilds(s3.client, s3.bucket)).toEqual([
      {
        id: ids[3],
        generatedAt: builds[3]?.generatedAt,
        counts: builds[3]?.counts,
        live: true,
        inHistory: false,
        complete: true,
      },
      {
        id: ids[2],
        generatedAt: builds[2]?.generatedAt,
        counts: builds[2]?.counts,
        live: false,
        inHistory: true,
        complete: true,
      },
      {
        id: ids[1],
        generatedAt: builds[1]?.generatedAt,
        counts: builds[1]?.counts,
        live: false,
        inHistory: true,
        complete: true,
      },
    ]);
  });
});

describe('rollback', () => {
  it('restores the previous build byte for byte, with its metadata, and invalidates', async () => {
    const first = await build(rows.slice(0, 40));
    const firstSummary = await publishBuild(first, clients, options());
    const second = await build();
    const secondSummary = await publishBuild(second, clients, options());
    const summary = await rollback(clients, {
      bucket: s3.bucket,
      distributionId: DISTRIBUTION,
      now: new Date('2026-03-02T08:00:00.000Z'),
    });
    expect(summary).toMatchObject({
      command: 'rollback',
      buildId: firstSummary.buildId,
      generatedAt: first.generatedAt,
      counts: first.counts,
      previousBuildId: secondSummary.buildId,
      invalidatedPaths: ['/api/plans', '/catalog*'],
    });
    expect(await liveBodies()).toEqual(bodiesOf(first));
    for (const file of first.files) {
      const meta = await head(file.key);
      expect([meta.ContentType, meta.CacheControl, meta.Metadata?.['build-id']]).toEqual([
        file.contentType,
        file.cacheControl,
        file.key === 'errors/500.json' ? undefined : firstSummary.buildId,
      ]);
    }
    expect(recorder.invalidations().at(-1)).toEqual({
      distributionId: DISTRIBUTION,
      paths: ['/api/plans', '/catalog*'],
      callerReference: `rollback-${firstSummary.buildId}-20260302T080000000Z`,
    });
    // The replaced build was archived, so the rollback can be undone.
    await rollback(clients, {
      bucket: s3.bucket,
      distributionId: DISTRIBUTION,
      to: secondSummary.buildId,
      now: new Date(),
    });
    expect(await liveBodies()).toEqual(bodiesOf(second));
  });

  it('fails with no earlier build, or an unknown one, and changes nothing', async () => {
    const only = await build();
    await publishBuild(only, clients, options());
    const now = new Date();
    await expect(rollback(clients, { bucket: s3.bucket, distributionId: DISTRIBUTION, now })).rejects.toThrow(
      HistoryError,
    );
    await expect(
      rollback(clients, {
        bucket: s3.bucket,
        distributionId: DISTRIBUTION,
        to: '20200101T000000000Z-abcdef',
        now,
      }),
    ).rejects.toThrow(
      `${settingRef('to')} "20200101T000000000Z-abcdef": no such build in the history; history is empty`,
    );
    expect(await liveBodies()).toEqual(bodiesOf(only));
    expect(recorder.invalidations()).toHaveLength(1);
  });
});

describe('a store that stops mid-publish', () => {
  it('leaves the unreplaced objects as the last good build, invalidates nothing, and a re-run converges', async () => {
    const good = await build(rows.slice(0, 40));
    const goodSummary = await publishBuild(good, clients, options());
    const invalidationsBefore = recorder.invalidations().length;

    const proxy = await startCutProxy(s3.endpoint, isUploadOf(s3.bucket, 'catalog-strength.json'));
    const dying = testS3Client(proxy.url, 2);
    const next = await build();
    const error = await publishBuild(next, { s3: dying, cloudfront }, options()).then(
      () => null,
      (caught: unknown) => caught,
    );
    dying.destroy();
    await proxy.close();
    expect(proxy.cut).toBe(true);
    expect(error).toBeInstanceOf(UploadError);
    expect((error as UploadError).written).toEqual(['catalog-strength.json']);
    expect((error as UploadError).notWritten).toEqual([
      'catalog-running.json',
      'catalog.json',
      'openapi.yaml',
      'errors/500.json',
    ]);
    expect((error as Error).message).toMatch(
      /failed at catalog-running\.json .*: written catalog-strength\.json; not written catalog-running\.json, catalog\.json, openapi\.yaml, errors\/500\.json; no invalidation was made; run publish again to converge/,
    );
    expect(recorder.invalidations()).toHaveLength(invalidationsBefore);
    const live = await liveBodies();
    expect(live['catalog-strength.json']).toBe(bodiesOf(next)['catalog-strength.json']);
    for (const key of LIVE_KEYS.slice(1)) expect(live[key]).toBe(bodiesOf(good)[key]);

    const rerun = await build();
    const summary = await publishBuild(rerun, clients, options());
    expect(summary).toMatchObject({
      result: 'uploaded',
      previousBuildId: goodSummary.buildId,
      archived: null,
    });
    expect(await liveBodies()).toEqual(bodiesOf(rerun));
    expect(recorder.invalidations()).toHaveLength(invalidationsBefore + 1);
    // The history holds the last good build whole, and nothing of the half-finished one.
    const history = (await listBuilds(s3.client, s3.bucket)).filter((row) => row.inHistory);
    expect(history.map((row) => [row.id, row.complete])).toEqual([[goodSummary.buildId, true]]);
    for (const file of good.files)
      expect((await s3.body(`history/${goodSummary.buildId}/${file.key}`))?.equals(file.body)).toBe(true);
  });
});
