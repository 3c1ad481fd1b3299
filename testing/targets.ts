/**
 * The two kinds of publish target the application layer's tests run alike: a local origin directory with the
 * store file, and s3rver with the KeyValueStore API stand-in (the production S3 and KeyValueStore clients).
 * Test support only.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { NotConfiguredSummary, RunSummary } from '../app/last-run.ts';
import type { PublishRunOptions, PublishSettings, PublishSummary } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { STATE_RUN_LOCK } from '../contract/index.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { CloudFrontKeyValueStore } from '../keys/kvs-store.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { stateObject } from '../publish/origin.ts';
import { S3Origin } from '../publish/s3-origin.ts';
import type { PublishTarget } from '../publish/steps.ts';
import { startS3, type TestS3 } from './aws.ts';
import { FakeKvs, kvsClientFor } from './kvs.ts';
import { useScratchDir } from './scratch.ts';

export const TARGET_KINDS = [
  'a directory and the store file',
  's3rver and the KeyValueStore stand-in',
] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';

/** A fresh target for one test. */
export interface TargetUnderTest {
  readonly target: PublishTarget;
  /** The bucket's s3rver, for the S3 kind (undefined for a directory). */
  readonly s3: TestS3 | undefined;
  /** The test's scratch directory (the directory kind keeps its origin and store file in it). */
  readonly dir: string;
}

/** A fresh, empty target of `kind` for each test of the enclosing `describe`. Read it inside a test. */
export function usePublishTarget(kind: TargetKind, prefix = 'catalog-target-'): TargetUnderTest {
  const scratch = useScratchDir({ prefix });
  const fake = new FakeKvs(KVS_ARN);
  let s3: TestS3 | undefined;
  let target: PublishTarget | undefined;
  beforeAll(() => new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => fake.server.close(() => resolve())));
  beforeEach(async () => {
    if (kind === 's3rver and the KeyValueStore stand-in') {
      s3 = await startS3();
      fake.entries = new Map();
      fake.version = 1;
      const port = (fake.server.address() as { port: number }).port;
      target = {
        origin: new S3Origin(s3.client, s3.bucket),
        kvs: new CloudFrontKeyValueStore(kvsClientFor(port), KVS_ARN),
      };
    } else {
      target = {
        origin: new DirectoryOrigin(`${scratch.dir}/origin`),
        // A fresh deployment's store: empty, and created by the first write.
        kvs: new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true }),
      };
    }
  });
  afterEach(async () => {
    await s3?.stop();
    s3 = undefined;
  });
  return {
    get target() {
      if (!target) throw new Error('usePublishTarget: read .target inside a test');
      return target;
    },
    get s3() {
      return s3;
    },
    get dir() {
      return scratch.dir;
    },
  };
}

/** The publish summary of a run that was expected to publish (or skip); throws with its reason when it was busy. */
export function publishSummaryOf(summary: RunSummary | NotConfiguredSummary): PublishSummary {
  if (summary.result === 'busy' || summary.result === 'not-configured')
    throw new Error(`the run was ${summary.result}: ${summary.reason}`);
  return summary;
}

/**
 * Rewrites the run lock of a directory origin as expired (a holder that stalled past its expiry), so the next
 * run takes it over and runs alongside its holder. Resolves false when there was no lock to expire, or it
 * changed meanwhile (its holder renewed or released it).
 */
export async function expireRunLock(originDir: string): Promise<boolean> {
  const origin = new DirectoryOrigin(originDir);
  const held = await origin.get(STATE_RUN_LOCK);
  if (!held) return false;
  const record = JSON.parse(held.body.toString('utf8')) as Record<string, unknown>;
  return origin.replace(
    stateObject(
      STATE_RUN_LOCK,
      `${JSON.stringify({ ...record, expires: new Date(Date.now() - 1000).toISOString() })}\n`,
    ),
    held.md5,
  );
}

/** Publish settings for a test's runs: the defaults, the given source, an https base URL, then `extra`. */
export function testPublishSettings(source: string, extra: Partial<PublishSettings> = {}): PublishSettings {
  return {
    ...parseSettings('build', () => undefined, String),
    source,
    baseUrl: 'https://plans.example.com',
    allowEmpty: defaultOf('allowEmpty'),
    minRatio: defaultOf('minRatio'),
    keepBuilds: defaultOf('keepBuilds'),
    ...extra,
  };
}

/** Run options at a new time each call: a minute after the previous run's, so build ids sort. */
export function runClock(): (extra?: Partial<PublishRunOptions>) => PublishRunOptions {
  let clock = Date.parse('2026-03-01T10:00:00.000Z');
  return (extra = {}) => {
    clock += 60_000;
    return { now: new Date(clock), force: false, report: () => {}, ...extra };
  };
}
