/**
 * A store and an origin that do not belong together are refused: every command that moves `build:live`
 * (publish, rollback, unpin) first proves they are one deployment (steps.ts `proveDeployment`). Real
 * commands on directory origins and store files, s3rver with the KeyValueStore stand-in, and the local edge
 * serving the real origin, which must still answer 200 after each refusal.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningEdge, serveLocal } from '../app/local.ts';
import { KVS_LIVE_BUILD, KVS_ORIGIN } from '../contract/index.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { serializeKvsFile } from '../keys/kvs-file.ts';
import { issueKey } from '../keys/manage.ts';
import { fewPlansFile, startS3, TEST_AWS_ENV, type TestS3 } from '../testing/aws.ts';
import { httpRequest, makeStore, runCatalog, withoutTarget } from '../testing/cli.ts';
import { FakeKvs, resolveKvsTestHost } from '../testing/kvs.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { DirectoryOrigin } from './dir-origin.ts';
import { readHistory } from './history.ts';

const scratch = useScratchDir({ prefix: 'catalog-deployment-', each: true });
/** `catalog publish` of a few plans of the fixtures (testing/aws.ts). */
let PUBLISH: string[] = [];
beforeAll(async () => {
  PUBLISH = ['publish', '--source', await fewPlansFile(), '--base-url', 'https://plans.example.com'];
});

/** A local stack in `name`: its origin and store file, published once with the real command. */
async function stack(name: string): Promise<{ origin: string; store: string; buildId: string }> {
  const origin = join(scratch.dir, name, 'origin');
  const store = makeStore(join(scratch.dir, name, 'kvs.json'));
  const result = await runCatalog([...PUBLISH, '--origin', origin, '--store', store]);
  expect(result.code, result.stderr).toBe(0);
  return { origin, store, buildId: String(JSON.parse(result.stdout).buildId) };
}

/** Every file under `dir` (metadata and state too) with its bytes and modification time. */
async function filesOf(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const path = join(dir, name);
    const info = await stat(path);
    if (info.isFile()) files[name] = `${info.mtimeMs} ${(await readFile(path)).toString('base64')}`;
  }
  return files;
}

/** The local edge over `origin` and `store`, and a key it accepts; `answer()` is the status of GET /api/plans. */
async function edgeOver(origin: string, store: string) {
  const { key } = await issueKey(new FileKeyValueStore(store), { partner: 'acme', now: new Date() });
  const edge: RunningEdge = await serveLocal({ origin, store, port: 0, host: '127.0.0.1' }, () => {});
  const answer = async () =>
    (await httpRequest(edge.url, { method: 'GET', target: '/api/plans', headers: [['X-Api-Key', key]] }))
      .status;
  return { edge, answer };
}

describe('publish, rollback and unpin refuse a store and an origin of two deployments', () => {
  it('the typo’d origin with the real store: exit 1, one line naming both, no directory made, the edge still 200', async () => {
    const real = await stack('a');
    const { edge, answer } = await edgeOver(real.origin, real.store);
    try {
      expect(await answer()).toBe(200);
      const typo = join(scratch.dir, 'a', 'orign');
      const result = await runCatalog([...PUBLISH, '--origin', typo, '--store', real.store]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(withoutTarget(result.stderr)).toBe(
        `catalog: ${real.store} and ${typo} are not one deployment: the store serves the origin "${real.origin}", not "${typo}"; nothing was changed\n`,
      );
      expect(existsSync(typo)).toBe(false);
      for (const command of [['rollback', '--to', real.buildId], ['unpin']]) {
        const moved = await runCatalog([...command, '--origin', typo, '--store', real.store]);
        expect(moved.code, command.join(' ')).toBe(1);
        expect(withoutTarget(moved.stderr)).toMatch(
          /^catalog: .* are not one deployment: .*; nothing was changed\n$/,
        );
      }
      expect(existsSync(typo)).toBe(false);
      expect(await answer()).toBe(200);
      expect((await readHistory(new DirectoryOrigin(real.origin), 10)).length).toBe(1);
    } finally {
      await edge.close();
    }
  });

  it('a second stack’s origin with the first one’s store, and the reverse: refused, both edges still 200', async () => {
    const first = await stack('a');
    const second = await stack('b');
    const edges = [await edgeOver(first.origin, first.store), await edgeOver(second.origin, second.store)];
    try {
      for (const [origin, store] of [
        [second.origin, first.store],
        [first.origin, second.store],
      ] as const) {
        const result = await runCatalog([...PUBLISH, '--force', '--origin', origin, '--store', store]);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`catalog: ${store} and ${origin} are not one deployment:`);
        const rolled = await runCatalog([
          'rollback',
          '--to',
          first.buildId,
          '--origin',
          origin,
          '--store',
          store,
        ]);
        expect(rolled.code).toBe(1);
      }
      for (const { answer } of edges) expect(await answer()).toBe(200);
    } finally {
      for (const { edge } of edges) await edge.close();
    }
  });

  it('a new store with the origin of another deployment: refused before anything is written there, the edge still 200', async () => {
    const real = await stack('a');
    const { edge, answer } = await edgeOver(real.origin, real.store);
    try {
      const fresh = makeStore(join(scratch.dir, 'b', 'kvs.json'));
      const before = await filesOf(real.origin);
      for (const command of [
        [...PUBLISH, '--force', '--keep', '1'],
        ['rollback', '--to', real.buildId],
        ['unpin'],
      ]) {
        const result = await runCatalog([...command, '--origin', real.origin, '--store', fresh]);
        expect(result.code, command.join(' ')).toBe(1);
        expect(result.stdout).toBe('');
        expect(withoutTarget(result.stderr)).toBe(
          `catalog: ${fresh} and ${real.origin} are not shown to be one deployment: the store records no origin, and ${real.origin} holds 1 build of another store; nothing was changed (give the store and the origin of one deployment; --recover makes this store serve ${real.origin})\n`,
        );
      }
      expect(await filesOf(real.origin)).toEqual(before);
      expect(await answer()).toBe(200);
    } finally {
      await edge.close();
    }
  });

  it('a store that records no origin takes one only with --recover, saying so, when it has a live build or the origin holds builds', async () => {
    const real = await stack('a');
    const other = await stack('b');
    // A store whose record was deleted by hand: it has a live build, and names no origin.
    const file = new FileKeyValueStore(real.store);
    await file.update((entries) => entries.delete(KVS_ORIGIN));
    for (const origin of [other.origin, real.origin]) {
      const refused = await runCatalog([...PUBLISH, '--force', '--origin', origin, '--store', real.store]);
      expect(refused.code).toBe(1);
      expect(withoutTarget(refused.stderr)).toBe(
        `catalog: ${real.store} and ${origin} are not shown to be one deployment: the store has a live build (${real.buildId}) but records no origin; nothing was changed (give the store and the origin of one deployment; --recover makes this store serve ${origin})\n`,
      );
    }
    expect((await file.read()).get(KVS_ORIGIN)).toBeUndefined();
    // A new store, and an origin that holds builds: another store's.
    const fresh = makeStore(join(scratch.dir, 'c', 'kvs.json'));
    const before = await filesOf(other.origin);
    const taken = await runCatalog([...PUBLISH, '--origin', other.origin, '--store', fresh]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('the store records no origin, and');
    expect(await filesOf(other.origin)).toEqual(before);
    const adopted = await runCatalog([
      ...PUBLISH,
      '--force',
      '--recover',
      '--origin',
      real.origin,
      '--store',
      real.store,
    ]);
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(adopted.stderr).toContain(
      `warning: --recover: ${real.store} now serves ${real.origin} (the store has a live build`,
    );
    expect((await file.read()).get(KVS_ORIGIN)).toBe('origin');
  });

  it('--recover publishes over a live build that is truly gone: refused without it, the edge 500 then 200, the history records it', async () => {
    const real = await stack('a');
    const { edge, answer } = await edgeOver(real.origin, real.store);
    try {
      await rm(join(real.origin, 'builds', real.buildId), { recursive: true });
      expect(await answer()).toBe(500);
      const refused = await runCatalog([...PUBLISH, '--origin', real.origin, '--store', real.store]);
      expect(refused.code).toBe(1);
      expect(withoutTarget(refused.stderr)).toBe(
        `catalog: ${real.store}: its live build ${real.buildId} is not at ${real.origin}, the origin it serves (the edge cannot serve it); nothing was changed (catalog rollback --to a build makes it live; --recover publishes a fresh build in its place)\n`,
      );
      const help = await runCatalog(['publish', '--help']);
      expect(help.stdout.replace(/\s+/g, ' ')).toContain(
        "--recover publish even though the store's live build is not at the origin",
      );
      const recovered = await runCatalog([
        ...PUBLISH,
        '--recover',
        '--origin',
        real.origin,
        '--store',
        real.store,
      ]);
      expect(recovered.code, recovered.stderr).toBe(0);
      const summary = JSON.parse(recovered.stdout) as { buildId: string; previousBuildId: string };
      expect(summary.previousBuildId).toBe(real.buildId);
      expect(await answer()).toBe(200);
      expect((await readHistory(new DirectoryOrigin(real.origin), 1))[0]).toMatchObject({
        kind: 'publish',
        from: real.buildId,
        to: summary.buildId,
        reason: expect.stringMatching(/^recovered: build:live named /),
      });
      // Even with --recover, a store that serves another origin is refused.
      const typo = await runCatalog([
        ...PUBLISH,
        '--recover',
        '--origin',
        join(scratch.dir, 'a', 'orign'),
        '--store',
        real.store,
      ]);
      expect(typo.code).toBe(1);
      expect(typo.stderr).toContain('are not one deployment');
      expect(await answer()).toBe(200);
    } finally {
      await edge.close();
      vi.unstubAllEnvs();
    }
  });
});

describe('on S3: a store of one bucket with another bucket (s3rver, the KeyValueStore stand-in)', () => {
  const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
  let production: TestS3;
  let staging: TestS3;
  const kvs = new FakeKvs(ARN);
  let undoDns: () => void;
  beforeAll(async () => {
    undoDns = resolveKvsTestHost();
    [production, staging] = await Promise.all([startS3('catalog-production'), startS3('catalog-staging')]);
    await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    undoDns();
    await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
    await Promise.all([production.stop(), staging.stop()]);
  });
  const env = (s3: TestS3) => ({
    ...TEST_AWS_ENV,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    CATALOG_S3_PATH_STYLE: '1',
    AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
  });

  it('refuses --bucket staging with the production store: exit 1, one line naming both; production still 200', async () => {
    const first = await runCatalog([...PUBLISH, '--bucket', production.bucket, '--kvs-arn', ARN], {
      env: env(production),
    });
    expect(first.code, first.stderr).toBe(0);
    const live = kvs.entries.get(KVS_LIVE_BUILD);
    expect(kvs.entries.get(KVS_ORIGIN)).toBe('s3://catalog-production');
    const updates = kvs.updates().length;

    const mixed = await runCatalog([...PUBLISH, '--force', '--bucket', staging.bucket, '--kvs-arn', ARN], {
      env: env(staging),
    });
    expect(mixed.code).toBe(1);
    expect(withoutTarget(mixed.stderr)).toBe(
      `catalog: ${ARN} and s3://catalog-staging are not one deployment: the store serves the origin "s3://catalog-production", not "s3://catalog-staging"; nothing was changed\n`,
    );
    expect(kvs.updates()).toHaveLength(updates);
    expect(await staging.keys()).toEqual([]);
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(live);

    // The production edge: the built functions over the production store's entries and bucket.
    const store = join(scratch.dir, 'production-kvs.json');
    await writeFile(store, serializeKvsFile(kvs.entries));
    const { key } = await issueKey(new FileKeyValueStore(store), { partner: 'acme', now: new Date() });
    for (const [name, value] of Object.entries(TEST_AWS_ENV)) vi.stubEnv(name, value);
    const edge = await serveLocal(
      { origin: 's3://catalog-production', endpoint: production.endpoint, store, port: 0, host: '127.0.0.1' },
      () => {},
    );
    try {
      const answer = await httpRequest(edge.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(answer.status).toBe(200);
    } finally {
      await edge.close();
      vi.unstubAllEnvs();
    }
  });

  it('refuses a new store with the production bucket: exit 1, one line naming both; nothing written to the bucket', async () => {
    const NEW = 'arn:aws:cloudfront::123456789012:key-value-store/0f6a3c2e-1b1b-4c4c-8d8d-000000000001';
    const fresh = new FakeKvs(NEW);
    await new Promise<void>((resolve) => fresh.server.listen(0, '127.0.0.1', resolve));
    try {
      const first = await runCatalog([...PUBLISH, '--bucket', production.bucket, '--kvs-arn', ARN], {
        env: env(production),
      });
      expect(first.code, first.stderr).toBe(0);
      const keys = await production.keys();
      production.requests.length = 0;
      const port = (fresh.server.address() as { port: number }).port;
      const mixed = await runCatalog(
        [...PUBLISH, '--force', '--bucket', production.bucket, '--kvs-arn', NEW],
        {
          env: { ...env(production), AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${port}` },
        },
      );
      expect(mixed.code).toBe(1);
      expect(withoutTarget(mixed.stderr)).toBe(
        `catalog: ${NEW} and s3://catalog-production are not shown to be one deployment: the store records no origin, and s3://catalog-production holds 1 build of another store; nothing was changed (give the store and the origin of one deployment; --recover makes this store serve s3://catalog-production)\n`,
      );
      expect(production.requests.filter((request) => request.method !== 'GET')).toEqual([]);
      expect(await production.keys()).toEqual(keys);
      expect(fresh.updates()).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => fresh.server.close(() => resolve()));
    }
  });
});
