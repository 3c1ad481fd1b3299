/**
 * Publishing against real peers: a directory origin and s3rver (a real S3-protocol server), the live pointer
 * in the local store file, and on CloudFront KeyValueStore's API stand-in (it has no local peer) where the
 * exact requests are asserted.
 */

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BuildObject, BuildResult } from '../builder/build.ts';
import { totalPlans } from '../contract/disciplines.ts';
import { settingRef } from '../contract/errors.ts';
import {
  CATALOGS,
  DISCIPLINES,
  KVS_LIVE_BUILD,
  KVS_ORIGIN,
  KVS_PIN,
  KVS_PREVIOUS_BUILDS,
  MANIFEST,
  PAGE_HEADERS,
  PAGE_VERSIONS_PREFIX,
  STATE_RUN_LOCK,
} from '../contract/index.ts';
import { generateRows } from '../fixtures/generate.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { CloudFrontKeyValueStore } from '../keys/kvs-store.ts';
import {
  buildRows,
  fewRows,
  prepareRows,
  type S3Request,
  startS3,
  type TestS3,
  testS3Client,
} from '../testing/aws.ts';
import { FakeKvs, kvsClientFor } from '../testing/kvs.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { TARGET_KINDS, usePublishTarget } from '../testing/targets.ts';
import { asVersion } from '../testing/tool.ts';
import {
  buildKey,
  IMMUTABLE,
  PAGES_PER_SHARD,
  packPrefix,
  pagesOfShard,
  SHARD_PREFIX,
  shardCount,
  shardOf,
} from './core.ts';
import { DirectoryOrigin } from './dir-origin.ts';
import { HistoryError, PublishRefusedError, RunLockBusyError } from './errors.ts';
import { readHistory } from './history.ts';
import { acquireRunLock, describeHolder } from './lock.ts';
import type { OriginStore } from './origin.ts';
import { DeploymentError, PointerMovedError, readPointer } from './pointer.ts';
import {
  listBuilds,
  type PublishOptions,
  type PublishTarget,
  protectedBy,
  pruneBuilds,
  publishBuild,
  readLive,
  rollback,
  unpin,
} from './publish.ts';
import { S3Origin } from './s3-origin.ts';

/** A few plans (testing/aws.ts): `rows.slice(0, n)` holds n plans up to 14. */
let rows: unknown[];
beforeAll(async () => {
  rows = await fewRows();
});

const START = Date.parse('2026-03-01T10:00:00.000Z');
let clock = START;
// Each test starts at the same time, so the tests each origin runs build the same builds: built once.
beforeEach(() => {
  clock = START;
});
const prepared = new Map<string, ReturnType<typeof prepareRows>>();
const completed = new Map<string, ReturnType<typeof buildRows>>();
/** `make(subset)` at a new time (a minute after the previous one, so build ids sort), made once per time and rows. */
function at<T>(
  cache: Map<string, T>,
  subset: readonly unknown[],
  make: (rows: readonly unknown[], now: Date) => T,
): T {
  clock += 60_000;
  const key = `${clock} ${JSON.stringify(subset)}`;
  let result = cache.get(key);
  if (result === undefined) {
    result = make(subset, new Date(clock));
    cache.set(key, result);
  }
  return result;
}
/** A build of `subset` at a new time, as publishBuild takes it. */
const build = (subset: readonly unknown[] = rows) => at(prepared, subset, prepareRows);
/** {@link build}, also completed: its objects, to compare with what was written. */
const built = (subset: readonly unknown[] = rows) => at(completed, subset, buildRows);

const options = (extra: Partial<PublishOptions> = {}): PublishOptions => ({
  force: false,
  allowEmpty: false,
  minRatio: 0.5,
  actor: 'test',
  ...extra,
});

/** The keys of the objects under a prefix. */
async function keys(origin: OriginStore, prefix = ''): Promise<string[]> {
  return (await origin.list(prefix)).map((object) => object.key).sort();
}

/** A build's own objects (under its prefix) and its pages (`plans/<id>.html`). */
function partition(result: BuildResult): [BuildObject[], BuildObject[]] {
  const isPage = (object: BuildObject) => object.key.startsWith('plans/');
  return [result.objects.filter((object) => !isPage(object)), result.objects.filter(isPage)];
}

/** A build as it is stored at the origin: its manifest, and where the bytes of each of its live pages are. */
async function storedBuild(origin: OriginStore, buildId: string) {
  const live = await readLive(origin, buildId);
  if (live.kind !== 'build') throw new Error(`build ${buildId} is not at ${origin.name}`);
  return live;
}

/** The plan id of a page's key. */
const idOf = (key: string) => key.replace(/^plans\/|\.html$/g, '');

/** Rows with the title of the plans at `indexes` tagged with `tag`. */
const retitled = (subset: readonly unknown[], tag: string, ...indexes: number[]) =>
  subset.map((row, index) =>
    indexes.includes(index)
      ? { ...(row as object), title: `${(row as { title: string }).title} ${tag}` }
      : row,
  );

/**
 * The writes of s3rver's requests, one line each: `PUT key (bytes)`, `COPY source > key`, `DELETE key…` (a
 * DeleteObjects names no key in its URL: its count of requests), in order of key.
 */
function writesOf(requests: readonly S3Request[]): string[] {
  return requests
    .filter(({ method }) => method !== 'GET' && method !== 'HEAD')
    .map(({ method, key, copyOf, query }) =>
      copyOf !== undefined
        ? `COPY ${copyOf} > ${key}`
        : method === 'POST' && 'delete' in query
          ? 'DELETE'
          : `${method} ${key}`,
    )
    .sort();
}

const ORIGINS = ['a directory', 's3rver'] as const;

describe.each(ORIGINS)('publishing to %s, the pointer in the store file', (kind) => {
  const scratch = useScratchDir({ prefix: 'catalog-publish-' });
  let s3: TestS3 | undefined;
  let target: PublishTarget;
  beforeEach(async () => {
    const kvs = new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true });
    if (kind === 's3rver') {
      s3 = await startS3();
      target = { origin: new S3Origin(s3.client, s3.bucket), kvs };
    } else {
      target = { origin: new DirectoryOrigin(`${scratch.dir}/origin`), kvs };
    }
  });
  afterEach(async () => {
    await s3?.stop();
    s3 = undefined;
  });

  it('uploads its own objects under the build prefix, each page once and live, the manifest, then moves the pointer', async () => {
    const result = await built();
    const summary = await publishBuild(result, target, options());
    expect(summary).toMatchObject({
      command: 'publish',
      result: 'published',
      buildId: result.buildId,
      previousBuildId: null,
      plans: 14,
      counts: { running: 10, strength: 4 },
    });
    expect(await readPointer(target.kvs)).toEqual({
      live: result.buildId,
      pin: null,
      previous: [],
      origin: (await target.origin.bindingFor(target.kvs.name)).origin,
    });
    const [own, pages] = partition(result);
    expect(pages).toHaveLength(14);
    expect(result.manifest.pages).toEqual(
      Object.fromEntries(pages.map((page) => [idOf(page.key), page.md5])),
    );
    // Each page is live, its bytes kept in the build's one pack, and the page map in shards named by their MD5.
    const stored = await storedBuild(target.origin, result.buildId);
    expect(stored.damage).toEqual([]);
    expect(stored.manifest.pages).toBeUndefined();
    // 14 pages: a map of one shard (shardCount), listed with the pack among the objects the build shares.
    expect(stored.manifest.pageShards).toHaveLength(1);
    const shards = [...new Set(stored.manifest.pageShards)].map((md5) => `pages/map-${md5}.json`);
    const pack = `pages/${result.buildId}-0.pack`;
    expect(Object.keys(stored.manifest.shared ?? {}).sort()).toEqual([pack, ...shards].sort());
    expect((await keys(target.origin)).filter((key) => !key.startsWith('state/'))).toEqual(
      [
        ...own
          .filter((object) => object.key !== 'manifest.json')
          .map((object) => buildKey(result.buildId, object.key)),
        buildKey(result.buildId, 'manifest.json'),
        ...pages.map((page) => page.key),
        pack,
        ...shards,
        'errors/404.html',
        'errors/500.json',
      ].sort(),
    );
    // The manifest stored lists the page map's shards rather than every page.
    for (const object of own.filter(({ key }) => key !== 'manifest.json')) {
      const stored = await target.origin.get(buildKey(result.buildId, object.key));
      expect(stored?.body.equals(object.body), object.key).toBe(true);
      expect(stored, object.key).toMatchObject({
        contentType: object.contentType,
        contentEncoding: object.contentEncoding,
        cacheControl: IMMUTABLE,
        md5: object.md5,
      });
    }
    // A page is live at the origin's root, and its bytes are kept for any build that lists it: five minutes in a
    // cache, as it changes in place.
    for (const page of pages) {
      const live = await target.origin.get(page.key);
      expect(live?.body.equals(page.body), page.key).toBe(true);
      expect(live, page.key).toMatchObject({
        contentType: PAGE_HEADERS.html,
        cacheControl: PAGE_HEADERS.cacheable,
      });
      const { md5, source, offset = -1, size = 0 } = stored.pages.get(page.key) ?? { md5: '', source: '' };
      expect([md5, source]).toEqual([page.md5, pack]);
      expect((await target.origin.getRange(source, offset, size))?.equals(page.body), page.key).toBe(true);
    }
    // The move is in the pointer's history, an object written once.
    const [move, ...others] = await keys(target.origin, 'state/history/');
    expect(others).toEqual([]);
    expect(move).toMatch(
      new RegExp(`^state/history/\\d{8}T\\d{9}Z-publish-${result.buildId}-[0-9a-f]{4}\\.json$`),
    );
    expect(JSON.parse((await target.origin.get(move ?? ''))?.body.toString('utf8') ?? '')).toEqual({
      at: expect.any(String),
      kind: 'publish',
      from: null,
      to: result.buildId,
      by: 'test',
    });
    expect(await target.origin.get('errors/500.json')).toMatchObject({
      contentType: 'application/problem+json',
      cacheControl: 'no-store',
    });
    expect(await target.origin.get('errors/404.html')).toMatchObject({
      contentType: 'text/html; charset=utf-8',
      cacheControl: 'no-store',
    });
  });

  it('skips a build identical to the live one, uploading nothing, and publishes it with force', async () => {
    const first = await publishBuild(await build(), target, options());
    const before = await keys(target.origin);
    const again = await publishBuild(await build(), target, options());
    // The build it reports is the live one: the one it made in memory was never written.
    expect(again).toMatchObject({
      result: 'skipped-identical',
      previousBuildId: first.buildId,
      buildId: first.buildId,
      generatedAt: first.generatedAt,
    });
    expect(again.reason).toMatch(/^identical to live build /);
    expect(await keys(target.origin)).toEqual(before);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);
    const forced = await publishBuild(await build(), target, options({ force: true }));
    expect(forced.result).toBe('published');
    expect((await readPointer(target.kvs)).live).toBe(forced.buildId);
  });

  it('refuses a shrunken or empty catalog, uploading nothing and moving nothing', async () => {
    const first = await publishBuild(await build(), target, options());
    const before = await keys(target.origin);
    const few = await build(rows.slice(0, 3));
    const plans = few.counts.running + few.counts.strength;
    await expect(publishBuild(few, target, options())).rejects.toThrow(
      new PublishRefusedError(
        'shrink',
        `refused: the new catalog has ${plans} plans, fewer than 0.5 × the 14 plans of live build ${first.buildId} (7); ${settingRef('force')} publishes it anyway`,
      ),
    );
    await expect(publishBuild(await build([]), target, options({ force: true }))).rejects.toThrow(
      /has 0 plans/,
    );
    expect(await keys(target.origin)).toEqual(before);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);
  });

  it('repairs a live build whose object was damaged: the same content is published as a fresh build', async () => {
    const first = await publishBuild(await build(), target, options());
    // openapi.yaml's variants are copied from the live build while whole: a damaged one is made again.
    const key = buildKey(first.buildId, 'openapi.yaml.gz');
    const stored = await target.origin.get(key);
    const truncated = stored?.body.subarray(0, 100) ?? Buffer.alloc(0);
    if (s3) await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: truncated }));
    else {
      const { truncate } = await import('node:fs/promises');
      await truncate(`${scratch.dir}/origin/${key}`, 100);
    }
    const repaired = await publishBuild(await build(), target, options());
    expect(repaired.result).toBe('published');
    expect(repaired.warnings).toEqual([
      expect.stringContaining(`live build ${first.buildId} is damaged (openapi.yaml.gz has 100 bytes, not`),
    ]);
    expect((await readPointer(target.kvs)).live).toBe(repaired.buildId);
    expect((await storedBuild(target.origin, repaired.buildId)).damage).toEqual([]);
    expect((await target.origin.get(buildKey(repaired.buildId, 'openapi.yaml.gz')))?.body).toEqual(
      stored?.body,
    );
  });

  it('refuses a pointer that names no build (a hand-edited "../.."); --recover replaces it, and the history says so', async () => {
    await publishBuild(await build(), target, options());
    await target.kvs.update((entries) => entries.set(KVS_LIVE_BUILD, '../..'));
    const refused = publishBuild(await build(), target, options());
    await expect(refused).rejects.toThrow(DeploymentError);
    await expect(refused).rejects.toThrow(
      `${target.kvs.name}: its live build "../.." is not at ${target.origin.name}, the origin it serves (the edge cannot serve it); nothing was changed`,
    );
    expect((await readPointer(target.kvs)).live).toBe('../..');
    const repaired = await publishBuild(await build(), target, options({ recover: true }));
    expect(repaired).toMatchObject({ result: 'published', previousBuildId: '../..' });
    expect(repaired.warnings).toEqual([
      'recovered: build:live named "../.." (not a build id); a fresh build replaces it',
    ]);
    expect((await readPointer(target.kvs)).live).toBe(repaired.buildId);
    expect((await readHistory(target.origin, 1))[0]).toMatchObject({
      kind: 'publish',
      from: '../..',
      to: repaired.buildId,
      reason: expect.stringMatching(/^recovered: /),
    });
  });

  it('rolls back by moving the pointer and pinning it; a publish while pinned moves nothing until unpin', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target, options());
    const second = await publishBuild(await build(), target, options());
    const rolled = await rollback(target, { now: new Date('2026-03-02T00:00:00.000Z') });
    expect(rolled).toMatchObject({
      command: 'rollback',
      buildId: first.buildId,
      previousBuildId: second.buildId,
    });
    expect(await readPointer(target.kvs)).toEqual({
      live: first.buildId,
      pin: {
        build: first.buildId,
        at: '2026-03-02T00:00:00.000Z',
        by: 'rollback',
        reason: `rolled back from ${second.buildId}`,
      },
      previous: [],
      origin: (await target.origin.bindingFor(target.kvs.name)).origin,
    });
    const before = await keys(target.origin);
    const pinned = await publishBuild(await build(rows.slice(0, 15)), target, options());
    expect(pinned).toMatchObject({ result: 'skipped-pinned', previousBuildId: first.buildId });
    expect(pinned.reason).toBe(
      `pinned to ${first.buildId} since 2026-03-02T00:00:00.000Z by rollback; not published: ${first.buildId} stays live until catalog unpin removes the pin, and the next publish after that goes live`,
    );
    expect(await keys(target.origin)).toEqual(before);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);

    expect(await unpin(target)).toMatchObject({ command: 'unpin', unpinned: { build: first.buildId } });
    const after = await publishBuild(await build(rows.slice(0, 15)), target, options());
    expect(after.result).toBe('published');
    expect(await readPointer(target.kvs)).toEqual({
      live: after.buildId,
      pin: null,
      previous: [first.buildId],
      origin: (await target.origin.bindingFor(target.kvs.name)).origin,
    });
  });

  it('rolls back only under the run lock: while a run holds it, nothing moves and the holder is named', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target, options());
    const second = await publishBuild(await build(), target, options());
    const attempt = await acquireRunLock(target.origin, 'catalog publish');
    if (!('held' in attempt)) throw new Error('the run lock was not free');
    const pointer = await readPointer(target.kvs);
    const history = await readHistory(target.origin, 10);
    await expect(rollback(target, { now: new Date() })).rejects.toThrow(
      new RunLockBusyError(
        `another run holds the run lock at ${target.origin.name}: ${describeHolder(attempt.held.record)}; nothing was changed (roll back once it ends; a run that died leaves its lock to expire within 2 minutes)`,
      ),
    );
    expect(await readPointer(target.kvs)).toEqual(pointer);
    expect(await readHistory(target.origin, 10)).toEqual(history);
    expect(pointer.live).toBe(second.buildId);

    await attempt.held.release();
    expect((await rollback(target, { now: new Date() })).buildId).toBe(first.buildId);
    // Released when the rollback ended: the next run takes the lock.
    expect(await target.origin.get(STATE_RUN_LOCK)).toBeNull();
  });

  it('unpins and publishes in one run when asked to', async () => {
    await publishBuild(await build(rows.slice(0, 10)), target, options());
    await publishBuild(await build(), target, options());
    await rollback(target, { now: new Date() });
    const published = await publishBuild(await build(rows.slice(0, 15)), target, options({ unpin: true }));
    expect(published.result).toBe('published');
    expect(published.warnings[0]).toMatch(/^unpinned /);
    expect((await readPointer(target.kvs)).pin).toBeNull();
  });

  it('refuses to roll back to an unknown build, or when there is no earlier one', async () => {
    const only = await publishBuild(await build(), target, options());
    await expect(rollback(target, { now: new Date() })).rejects.toThrow(HistoryError);
    await expect(rollback(target, { now: new Date(), to: '20200101T000000Z-00000000' })).rejects.toThrow(
      /no such build/,
    );
    expect(await readPointer(target.kvs)).toEqual({
      live: only.buildId,
      pin: null,
      previous: [],
      origin: (await target.origin.bindingFor(target.kvs.name)).origin,
    });
  });

  it('does not move a pointer that moved while it ran: it names the winner and leaves its build unreferenced', async () => {
    await publishBuild(await build(rows.slice(0, 10)), target, options());
    const mine = await build();
    const winner = '20990101T000000Z-feedbeef';
    const racing: PublishTarget = {
      origin: target.origin,
      kvs: {
        name: target.kvs.name,
        read: () => target.kvs.read(),
        // Another publish moves the pointer just before this one tries to.
        update: async (change) => {
          await target.kvs.update((entries) => entries.set(KVS_LIVE_BUILD, winner));
          return target.kvs.update(change);
        },
      },
    };
    const failed = publishBuild(mine, racing, options());
    await expect(failed).rejects.toThrow(PointerMovedError);
    await expect(failed).rejects.toThrow(
      new RegExp(`to ${winner} while this publish ran; ${winner} stays live`),
    );
    expect((await readPointer(target.kvs)).live).toBe(winner);
    expect(await keys(target.origin, buildKey(mine.buildId, ''))).toContain(
      buildKey(mine.buildId, 'manifest.json'),
    );
  });

  it('keeps the newest builds, never pruning the live, pinned or previous one', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push((await publishBuild(await build(rows.slice(0, 10 + i)), target, options())).buildId);
      await pruneBuilds(target, 2, protectedBy(await readPointer(target.kvs)));
    }
    const listed = await listBuilds(target);
    expect(listed.builds.map((row) => row.id)).toEqual([ids[4], ids[3]]);
    expect(listed.builds[0]).toMatchObject({
      live: true,
      everLive: true,
      pinned: false,
      complete: true,
      counts: expect.any(Object),
    });
  });

  it('prunes a build that died before its manifest with its packs and shards, which no manifest lists', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target, options());
    const shardsBefore = await keys(target.origin, SHARD_PREFIX);
    // A publish killed at its commit point: everything written but the manifest.
    const dying = new Proxy(target.origin, {
      get(origin, name) {
        if (name === 'put')
          return (object: { key: string }, putOptions: { overwrite: boolean }) =>
            object.key.endsWith(`/${MANIFEST}`)
              ? Promise.reject(new Error('killed'))
              : origin.put(object as Parameters<OriginStore['put']>[0], putOptions);
        const value = Reflect.get(origin, name, origin);
        return typeof value === 'function' ? value.bind(origin) : value;
      },
    });
    const died = await build(retitled(rows.slice(0, 11), 'died', 3));
    await expect(publishBuild(died, { ...target, origin: dying }, options())).rejects.toThrow(/killed/);
    const deadPacks = await keys(target.origin, packPrefix(died.buildId));
    expect(deadPacks.length).toBeGreaterThan(0);
    // The shard holding the retitled page's entry, and the shards of the one page the first build lacks.
    const deadShards = (await keys(target.origin, SHARD_PREFIX)).filter((key) => !shardsBefore.includes(key));
    expect(deadShards.length).toBeGreaterThan(0);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);

    for (let i = 0; i < 3; i += 1) {
      await publishBuild(await build(rows.slice(0, 12 + i)), target, options());
      await pruneBuilds(target, 2, protectedBy(await readPointer(target.kvs)));
    }
    expect(await keys(target.origin, packPrefix(died.buildId))).toEqual([]);
    expect(await keys(target.origin, buildKey(died.buildId, ''))).toEqual([]);
    const shards = await keys(target.origin, SHARD_PREFIX);
    expect(shards.filter((key) => deadShards.includes(key))).toEqual([]);
    // Every shard and pack a kept build lists stays.
    const held = new Set(await keys(target.origin, PAGE_VERSIONS_PREFIX));
    for (const { id } of (await listBuilds(target)).builds) {
      const { manifest } = await storedBuild(target.origin, id);
      expect(Object.keys(manifest.shared ?? {}).filter((key) => !held.has(key))).toEqual([]);
    }
    expect((await storedBuild(target.origin, (await readPointer(target.kvs)).live ?? '')).damage).toEqual([]);
  });

  it('decides an unchanged build before completing it: nothing compressed, no page rendered, nothing written', async () => {
    const first = await publishBuild(await build(), target, options());
    const before = await keys(target.origin);
    clock += 60_000;
    // Completing this build throws: the publish may only decide.
    const again = await prepareRows(rows, new Date(clock), { completable: false });
    const summary = await publishBuild(again, target, options());
    expect(summary).toMatchObject({ result: 'skipped-identical', previousBuildId: first.buildId, bytes: 0 });
    expect(await keys(target.origin)).toEqual(before);
    clock += 60_000;
    await expect(
      publishBuild(
        await prepareRows(rows, new Date(clock), { completable: false }),
        target,
        options({ force: true }),
      ),
    ).rejects.toThrow(/was completed: it compressed and rendered its pages/);
  });

  it('publishes the same plans again when the base URL or the tool version changed', async () => {
    await publishBuild(await build(), target, options());
    clock += 60_000;
    const moved = await prepareRows(rows, new Date(clock), { baseUrl: 'https://catalog.example.org' });
    expect(moved.plansHash).not.toBe((await build()).plansHash);
    expect(await publishBuild(moved, target, options())).toMatchObject({ result: 'published' });
    clock += 60_000;
    const sameLinks = await prepareRows(rows, new Date(clock), { baseUrl: 'https://catalog.example.org' });
    expect((await publishBuild(sameLinks, target, options())).result).toBe('skipped-identical');
    clock += 60_000;
    // The same plans, published by the next release of the tool.
    const { newTool, upgraded } = await asVersion('99.0.0', async () => {
      const newTool = await prepareRows(rows, new Date(clock), { baseUrl: 'https://catalog.example.org' });
      return { newTool, upgraded: await publishBuild(newTool, target, options()) };
    });
    expect(newTool.plansHash).toBe(sameLinks.plansHash);
    expect(upgraded.result).toBe('published');
    const manifest = JSON.parse(
      (await target.origin.get(buildKey(upgraded.buildId, 'manifest.json')))?.body.toString() ?? '{}',
    );
    expect(manifest.tool).toEqual({ name: 'training-plan-catalog', version: '99.0.0' });
  });

  it('prunes an old build whole after the pointer moved, and the bytes of its pages no kept build lists', async () => {
    // A retitles plan 0; B plan 1 instead (plan 0 as it was); C plans 1 and 2.
    const published: BuildResult[] = [];
    for (const subset of [retitled(rows, 'a', 0), retitled(rows, 'b', 1), retitled(rows, 'b', 1, 2)]) {
      const result = await built(subset);
      await publishBuild(result, target, options());
      published.push(result);
    }
    const [a, b, c] = published as [BuildResult, BuildResult, BuildResult];
    const shared = new Map<string, string[]>();
    for (const result of published)
      shared.set(
        result.buildId,
        Object.keys((await storedBuild(target.origin, result.buildId)).manifest.shared ?? {}),
      );
    const sharedOf = async (id: string) => shared.get(id);
    // Keep one: the live build, and the build live before it (the rollback target) whatever `keep` says.
    const pointer = await readPointer(target.kvs);
    expect(protectedBy(pointer)).toEqual({ live: c.buildId, pinned: null, previous: b.buildId });
    // Not with a store the origin does not belong to: its builds are another deployment's.
    const stranger = { ...target, kvs: new FileKeyValueStore(`${scratch.dir}/other/kvs.json`) };
    await expect(pruneBuilds(stranger, 1, protectedBy(pointer))).rejects.toThrow(DeploymentError);
    expect((await target.origin.listPrefixes('builds/')).length).toBe(3);

    s3?.requests.splice(0);
    expect(await pruneBuilds(target, 1, protectedBy(pointer))).toEqual([a.buildId]);
    const sent = s3?.requests.splice(0) ?? [];
    expect(await target.origin.listPrefixes('builds/')).toEqual([
      `builds/${b.buildId}/`,
      `builds/${c.buildId}/`,
    ]);
    expect(await target.origin.list(`builds/${a.buildId}/`)).toEqual([]);
    // A's shared objects go only where no kept build uses them: the shards that listed plan 0 retitled and plan 1
    // before its new title; its pack holds pages B and C still list.
    const [sa, sb, sc] = await Promise.all([a, b, c].map((result) => sharedOf(result.buildId)));
    const gone = (sa ?? []).filter((key) => !sb?.includes(key) && !sc?.includes(key));
    expect(gone.length).toBeGreaterThan(0);
    expect(gone.every((key) => key.startsWith('pages/map-'))).toBe(true);
    expect(sb).toContain(`pages/${a.buildId}-0.pack`);
    expect(await keys(target.origin, 'pages/')).toEqual([...new Set([...(sb ?? []), ...(sc ?? [])])].sort());
    if (kind === 'a directory') {
      const { readdir } = await import('node:fs/promises');
      expect(await readdir(`${scratch.dir}/origin/builds`)).toEqual([b.buildId, c.buildId]);
      expect(await readdir(`${scratch.dir}/origin/.meta/builds`)).toEqual([b.buildId, c.buildId]);
    }
    if (kind === 's3rver') {
      // One listing of builds/ with a delimiter (the build ids, not their objects), the three manifests, then
      // the pruned build alone: its pages' bytes in one request, its one page of keys, deleted in one request.
      // No kept build's objects and no page is listed.
      const listed = sent.filter(({ method, key }) => method === 'GET' && key === '');
      expect(listed.map(({ query }) => [query.prefix, query.delimiter])).toEqual([
        ['builds/', '/'],
        [`builds/${a.buildId}/`, undefined],
      ]);
      expect(
        sent
          .filter(({ method, key }) => method === 'GET' && key !== '')
          .map(({ key }) => key)
          .sort(),
      ).toEqual(
        [
          'state/deployment.json',
          ...[a, b, c].map((result) => buildKey(result.buildId, 'manifest.json')),
        ].sort(),
      );
      expect(writesOf(sent)).toEqual(['DELETE', 'DELETE']);
    }
    // Every build kept can still be made live, its pages with it.
    expect((await rollback(target, { now: new Date() })).buildId).toBe(b.buildId);
    expect(await readLive(target.origin, b.buildId)).toMatchObject({ kind: 'build', damage: [] });
  });

  it('writes only what a changed title changes: the catalogs, that page live, its bytes in one pack, one shard of the page map, the manifest', async () => {
    const first = await built();
    await publishBuild(first, target, options());
    const before = new Map((await target.origin.list('')).map((object) => [object.key, object.md5]));
    s3?.requests.splice(0);
    const next = await built(retitled(rows, 'renamed', 5));
    await publishBuild(next, target, options());
    const [own, pages] = partition(next);
    const changed = pages.filter((page) => first.manifest.pages?.[idOf(page.key)] !== page.md5);
    expect(changed.map((page) => page.key)).toEqual([
      `plans/${(rows[5] as { id: string }).id.toLowerCase()}.html`,
    ]);
    const page = changed[0] as BuildObject;
    const copied = own.filter((object) => object.key.startsWith('openapi.yaml'));
    const uploaded = own.filter((object) => !copied.includes(object) && object.key !== 'manifest.json');
    const history = (await keys(target.origin, 'state/history/')).filter((key) => !before.has(key));
    // The page map is split in shards named by their MD5: the two builds' maps differ in one shard.
    const shardsOf = async (result: BuildResult) =>
      JSON.parse(
        (await target.origin.get(buildKey(result.buildId, 'manifest.json')))?.body.toString() ?? '{}',
      ).pageShards as string[];
    const [was, now] = [await shardsOf(first), await shardsOf(next)];
    expect(now).toHaveLength(was.length);
    const shards = now.filter((md5, index) => md5 !== was[index]);
    expect(shards).toHaveLength(1);
    const expected = [
      // Every catalog holds the build's generatedAt: each changes, with its variants.
      ...uploaded.map((object) => `PUT ${buildKey(next.buildId, object.key)}`),
      ...copied.map(
        (object) => `COPY ${buildKey(first.buildId, object.key)} > ${buildKey(next.buildId, object.key)}`,
      ),
      `PUT pages/${next.buildId}-0.pack`,
      `PUT pages/map-${shards[0]}.json`,
      `PUT ${page.key}`,
      `PUT ${buildKey(next.buildId, 'manifest.json')}`,
      ...history.map((key) => `PUT ${key}`),
    ].sort();
    // Each catalog and openapi.yaml with two variants; the pack, the shard, the page, the manifest, one record.
    expect(expected).toHaveLength(3 * (CATALOGS.length + 1) + 5);
    if (s3) {
      const sent = s3.requests.splice(0);
      expect(writesOf(sent)).toEqual(expected);
      // Bytes: the catalogs with their variants, the page twice (live, and in the pack), one shard of the page
      // map, the manifest and the history's record; no copy sends any.
      const sizeOf = (objects: readonly BuildObject[]) =>
        objects.reduce((sum, object) => sum + object.size, 0);
      const bytes = sent
        .filter(({ method, copyOf }) => method === 'PUT' && copyOf === undefined)
        .reduce((sum, request) => sum + request.bytes, 0);
      const sizes = new Map((await target.origin.list('')).map((object) => [object.key, object.size]));
      const sizeAt = (key: string) => sizes.get(key) ?? Number.NaN;
      const extra =
        bytes - sizeOf([...uploaded, page, page]) - sizeAt(buildKey(next.buildId, 'manifest.json'));
      // The shard of the page map and the history's record, nothing else (no map of every page in the manifest).
      expect(extra).toBe(sizeAt(`pages/map-${shards[0]}.json`) + sizeAt(history[0] ?? ''));
    }
    // Whatever the origin, exactly those keys are new or changed.
    const after = await target.origin.list('');
    const changedKeys = after.filter((object) => before.get(object.key) !== object.md5).map(({ key }) => key);
    expect(changedKeys.sort()).toEqual(expected.map((line) => line.split(' ').at(-1)).sort());
  });

  it('keeps the live pages with the live build through the local edge: removed 404, added 200, a rollback puts them back writing only what differs', async () => {
    const { serveLocal } = await import('../app/local.ts');
    const { vi } = await import('vitest');
    const first = await built(retitled(rows.slice(0, 12), 'earlier', 2));
    await publishBuild(first, target, options());
    const idAt = (index: number) => (rows[index] as { id: string }).id.toLowerCase();
    const pageKey = (index: number) => `plans/${idAt(index)}.html`;
    if (s3) {
      process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
      process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    }
    const edge = await serveLocal(
      {
        origin: s3 ? `s3://${s3.bucket}` : `${scratch.dir}/origin`,
        ...(s3 ? { endpoint: s3.endpoint } : {}),
        store: target.kvs.name,
        port: 0,
        host: '127.0.0.1',
      },
      () => {},
    );
    const page = async (index: number) => {
      const answer = await fetch(`${edge.url}/plans/${idAt(index)}`);
      return [answer.status, /<title>([^<]*)<\/title>/.exec(await answer.text())?.[1]];
    };
    const title = (index: number) => (rows[index] as { title: string }).title;
    const serving = (expected: Record<number, [number, string | undefined]>) =>
      vi.waitFor(
        async () => {
          for (const [index, answer] of Object.entries(expected))
            expect(await page(Number(index))).toEqual(answer);
        },
        { timeout: 5_000, interval: 50 },
      );
    try {
      await serving({ 0: [200, title(0)], 2: [200, `${title(2)} earlier`], 12: [404, 'Plan not found'] });
      // Plan 0 removed, 12 and 13 added, plan 2 retitled back.
      const second = await built(rows.slice(1, 14));
      s3?.requests.splice(0);
      await publishBuild(second, target, options());
      // Each changed or added page is written once, live; their bytes are kept in one pack.
      if (s3)
        expect(writesOf(s3.requests.splice(0)).filter((line) => /plans\/|\.pack|DELETE/.test(line))).toEqual(
          [
            ...[2, 12, 13].map((index) => `PUT ${pageKey(index)}`),
            `PUT pages/${second.buildId}-0.pack`,
            'DELETE',
          ].sort(),
        );
      await serving({ 0: [404, 'Plan not found'], 2: [200, title(2)], 12: [200, title(12)] });

      // The rollback makes the first build's pages live again: it writes the two that differ (their bytes read
      // from the first build's pack) and deletes the two the first build lacks, under the run lock it takes
      // and releases (a put and a delete of its own), and writes nothing else.
      await rollback(target, { now: new Date() });
      if (s3)
        expect(writesOf(s3.requests.splice(0)).filter((line) => !line.includes('state/history/'))).toEqual(
          [0, 2]
            .map((index) => `PUT ${pageKey(index)}`)
            .concat('DELETE', 'DELETE', `PUT ${STATE_RUN_LOCK}`)
            .sort(),
        );
      expect(await target.origin.get(STATE_RUN_LOCK)).toBeNull();
      await serving({ 0: [200, title(0)], 2: [200, `${title(2)} earlier`], 12: [404, 'Plan not found'] });
      expect(await target.origin.get(pageKey(13))).toBeNull();
    } finally {
      await edge.close();
    }
  });

  it('keeps the rollback target when newer builds that were never live fill keep', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target, options());
    const second = await publishBuild(await build(), target, options());
    // Two complete builds that never went live (publishes that lost), newer than the live one's predecessor.
    for (const subset of [rows.slice(0, 11), rows.slice(0, 12)]) {
      const loser = await built(subset);
      for (const object of loser.objects)
        await target.origin.put(
          { ...object, key: buildKey(loser.buildId, object.key), cacheControl: IMMUTABLE },
          { overwrite: false },
        );
    }
    const third = await publishBuild(await build(rows.slice(0, 13)), target, options());
    const pruned = await pruneBuilds(target, 1, protectedBy(await readPointer(target.kvs)));
    expect((await listBuilds(target)).builds.map((row) => [row.id, row.live, row.everLive])).toEqual([
      [third.buildId, true, true],
      [second.buildId, false, true],
    ]);
    expect(pruned).toHaveLength(3);
    expect(pruned).toContain(first.buildId);
    expect((await rollback(target, { now: new Date() })).buildId).toBe(second.buildId);
  });

  it('publishes over the flat objects of a bucket from before builds, leaving them, and lists them', async () => {
    const flat = await built(rows.slice(0, 10));
    for (const object of [...flat.objects, ...flat.root])
      await target.origin.put({ ...object, cacheControl: 'public, max-age=300' }, { overwrite: true });
    const refused = publishBuild(await build(rows.slice(0, 3)), target, options());
    const flatPlans = flat.counts.running + flat.counts.strength;
    await expect(refused).rejects.toThrow(`fewer than 0.5 × the ${flatPlans} plans of the live catalog`);
    const published = await publishBuild(await build(), target, options());
    expect(published).toMatchObject({ result: 'published', previousBuildId: null });
    expect(await target.origin.get('catalog.json')).not.toBeNull();
    expect((await listBuilds(target)).flat).toEqual([
      'catalog.json',
      ...DISCIPLINES.map((d) => `catalog-${d}.json`),
      'openapi.yaml',
    ]);
  });
});

describe('the page map of a bigger catalog (a directory)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-shards-' });

  it('is split by plan id into as many shards as its pages need, and a changed title rewrites one of them', async () => {
    const many = [...generateRows(PAGES_PER_SHARD + 48, 7)];
    const target = {
      origin: new DirectoryOrigin(`${scratch.dir}/origin`),
      kvs: new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true }),
    };
    const first = await build(many);
    await publishBuild(first, target, options());
    await publishBuild(await build(retitled(many, 'renamed', 5)), target, options());
    const shardsOf = async (id: string | null) =>
      (await storedBuild(target.origin, id ?? '')).manifest.pageShards ?? [];
    const was = await shardsOf(first.buildId);
    const now = await shardsOf((await readPointer(target.kvs)).live);
    const plans = totalPlans(first.counts);
    expect(plans).toBeGreaterThan(PAGES_PER_SHARD);
    expect(now).toHaveLength(shardCount(plans));
    expect(now).toHaveLength(2);
    expect(now.filter((md5, index) => md5 !== was[index])).toHaveLength(1);
    // Each shard holds the pages of the plans whose ids shardOf puts there, and every page is in one.
    const held = await Promise.all(
      now.map(async (md5, index) => {
        const text = (await target.origin.get(`pages/map-${md5}.json`))?.body.toString() ?? '';
        const ids = pagesOfShard(text).map(([key]) => idOf(key));
        expect(ids.every((id) => shardOf(id, now.length) === index)).toBe(true);
        return ids.length;
      }),
    );
    expect(held.reduce((sum, n) => sum + n, 0)).toBe(plans);
    expect(held.every((n) => n > PAGES_PER_SHARD / 4)).toBe(true);
  });
});

describe('a publish cut after two uploads (s3rver through a proxy that stops)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-cut-' });
  let s3: TestS3;
  beforeEach(async () => {
    s3 = await startS3();
  });
  afterEach(() => s3.stop());

  it('leaves every variant on the old build, its own objects unreferenced, and a rerun completes and flips', async () => {
    const { startCutProxy } = await import('../testing/aws.ts');
    const kvs = new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true });
    const a = await publishBuild(
      await build(rows.slice(0, 10)),
      { origin: new S3Origin(s3.client, s3.bucket), kvs },
      options(),
    );
    let uploads = 0;
    const proxy = await startCutProxy(s3.endpoint, (request) => request.method === 'PUT' && ++uploads === 2);
    const client = testS3Client(proxy.url, 1);
    const b = await build();
    try {
      await expect(
        publishBuild(b, { origin: new S3Origin(client, s3.bucket), kvs }, options({ concurrency: 1 })),
      ).rejects.toThrow(
        new RegExp(
          `^uploading build ${b.buildId} to s3://catalog-origin failed at \\S+ \\(.*\\): 2 of \\d+ objects written; the live build is still ${a.buildId}`,
        ),
      );
    } finally {
      client.destroy();
      await proxy.close();
    }
    expect(proxy.cut).toBe(true);
    expect((await readPointer(kvs)).live).toBe(a.buildId);
    const origin = new S3Origin(s3.client, s3.bucket);
    expect((await origin.list(buildKey(b.buildId, ''))).length).toBe(2);

    // Partners see A, every variant of it, through the local edge over the bucket and the store.
    const { serveLocal } = await import('../app/local.ts');
    const { issueKey } = await import('../keys/manage.ts');
    const { servedGeneratedAt } = await import('../testing/cli.ts');
    const { key } = await issueKey(kvs, { partner: 'p', now: new Date() });
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    const edge = await serveLocal(
      { origin: `s3://${s3.bucket}`, endpoint: s3.endpoint, store: kvs.name, port: 0, host: '127.0.0.1' },
      () => {},
    );
    try {
      const stamps = await servedGeneratedAt(edge.url, key);
      expect([...stamps]).toEqual([a.generatedAt]);
    } finally {
      await edge.close();
    }

    const rerun = await publishBuild(await build(), { origin, kvs }, options());
    expect(rerun.result).toBe('published');
    expect((await readPointer(kvs)).live).toBe(rerun.buildId);
  });
});

describe('the live pointer on CloudFront KeyValueStore (its API stand-in)', () => {
  const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
  const scratch = useScratchDir({ prefix: 'catalog-kvs-pointer-' });
  const fake = new FakeKvs(ARN);
  let kvs: CloudFrontKeyValueStore;
  beforeAll(async () => {
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    kvs = new CloudFrontKeyValueStore(kvsClientFor((fake.server.address() as { port: number }).port), ARN);
  });
  afterAll(() => new Promise<void>((resolve) => fake.server.close(() => resolve())));
  beforeEach(() => {
    fake.entries = new Map([['key:abc', '{"partner":"p","created":"2026-01-01T00:00:00.000Z"}']]);
    fake.version = 1;
    fake.requests = [];
    fake.beforeUpdate = undefined;
  });

  it('moves it with exactly one conditional UpdateKeys, writing the pointer and the rollback line', async () => {
    const origin = new DirectoryOrigin(`${scratch.dir}/origin`);
    const result = await build();
    await publishBuild(result, { origin, kvs }, options());
    const updates = fake.requests.filter((request) => request.method === 'POST');
    expect(updates).toHaveLength(1);
    expect(updates[0]?.headers['if-match']).toBe('ETAG1');
    // The first move also records the origin the store serves; later moves check it.
    expect(fake.updates()).toEqual([
      {
        Puts: [
          { Key: KVS_LIVE_BUILD, Value: result.buildId },
          { Key: KVS_ORIGIN, Value: (await origin.bindingFor(kvs.name)).origin },
        ],
      },
    ]);
    expect(fake.entries.get(KVS_LIVE_BUILD)).toBe(result.buildId);

    // The next publish moves the pointer and heads the rollback line with the build it replaces, in the same
    // conditional UpdateKeys: no crash can leave one without the other.
    fake.requests = [];
    const next = await build(rows.slice(0, 13));
    await publishBuild(next, { origin, kvs }, options());
    expect(fake.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
    expect(fake.updates()).toEqual([
      {
        Puts: [
          { Key: KVS_LIVE_BUILD, Value: next.buildId },
          { Key: KVS_PREVIOUS_BUILDS, Value: JSON.stringify([result.buildId]) },
        ],
      },
    ]);
  });

  it.each([
    [409, 'ConflictException'],
    [412, 'PreconditionFailed'],
  ])(
    'on a %i conflict re-reads the pointer and, when another publish won, moves nothing and names it',
    async (status, type) => {
      fake.conflict = { status, type };
      const winner = '20990101T000000Z-0badcafe';
      fake.beforeUpdate = () => {
        fake.entries.set(KVS_LIVE_BUILD, winner);
        fake.version += 1;
      };
      const failed = publishBuild(
        await build(),
        { origin: new DirectoryOrigin(`${scratch.dir}/origin`), kvs },
        options(),
      );
      await expect(failed).rejects.toThrow(PointerMovedError);
      await expect(failed).rejects.toThrow(new RegExp(`${winner} stays live`));
      expect(fake.calls().filter((call) => call === 'update')).toHaveLength(1);
      expect(fake.entries.get(KVS_LIVE_BUILD)).toBe(winner);
    },
  );

  it('pins with one UpdateKeys that moves the pointer and writes the pin', async () => {
    const origin = new DirectoryOrigin(`${scratch.dir}/origin`);
    const first = await publishBuild(await build(rows.slice(0, 10)), { origin, kvs }, options());
    await publishBuild(await build(), { origin, kvs }, options());
    fake.requests = [];
    await rollback({ origin, kvs }, { now: new Date('2026-03-02T00:00:00.000Z') });
    expect(fake.requests.filter((request) => request.method === 'POST')[0]?.headers['if-match']).toMatch(
      /^ETAG\d+$/,
    );
    // The build rolled back to was the head of the rollback line: the line below it is empty, so it goes.
    expect(fake.updates()).toEqual([
      {
        Puts: [
          { Key: KVS_LIVE_BUILD, Value: first.buildId },
          { Key: KVS_PIN, Value: expect.stringContaining(`"build":"${first.buildId}"`) },
        ],
        Deletes: [{ Key: KVS_PREVIOUS_BUILDS }],
      },
    ]);
  });
});

describe.each(TARGET_KINDS)('two publishes at once on %s, the later build winning', (kind) => {
  const under = usePublishTarget(kind, 'catalog-race-rollback-');

  it('rolls back to the build live before the winner, never to the build of the publish that lost', async () => {
    const { target } = under;
    const v1 = await publishBuild(await build(rows.slice(0, 10)), target, options());
    const v2 = await build(rows.slice(0, 11));
    const v3 = await build(rows.slice(0, 12));
    expect(v1.buildId < v2.buildId && v2.buildId < v3.buildId).toBe(true);

    // v2's publish reads the pointer (v1), uploads and verifies, then reaches its pointer move only after v3's
    // publish has moved the pointer from v1: the order two publishes started at once can take.
    let arrived = () => {};
    const atMove = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: PublishTarget = {
      origin: target.origin,
      kvs: {
        name: target.kvs.name,
        read: () => target.kvs.read(),
        update: async (change) => {
          arrived();
          await gate;
          return target.kvs.update(change);
        },
      },
    };
    const losing = publishBuild(v2, slow, options());
    losing.catch(() => {});
    await atMove;
    const won = await publishBuild(v3, target, options());
    release();
    await expect(losing).rejects.toThrow(PointerMovedError);
    expect(won).toMatchObject({ result: 'published', previousBuildId: v1.buildId });
    expect(await readPointer(target.kvs)).toEqual({
      live: v3.buildId,
      pin: null,
      previous: [v1.buildId],
      origin: (await target.origin.bindingFor(target.kvs.name)).origin,
    });

    const listed = (await listBuilds(target)).builds.map((row) => [row.id, row.complete, row.everLive]);
    expect(listed).toEqual([
      [v3.buildId, true, true],
      [v2.buildId, true, false],
      [v1.buildId, true, true],
    ]);

    const rolled = await rollback(target, { now: new Date(), actor: 'ops@host' });
    expect(rolled).toMatchObject({ buildId: v1.buildId, previousBuildId: v3.buildId, previous: [] });
    expect((await readPointer(target.kvs)).live).toBe(v1.buildId);

    expect(
      (await readHistory(target.origin, 10)).map(({ kind, from, to, by }) => ({ kind, from, to, by })),
    ).toEqual([
      { kind: 'rollback', from: v3.buildId, to: v1.buildId, by: 'ops@host' },
      { kind: 'publish', from: v1.buildId, to: v3.buildId, by: 'test' },
      { kind: 'publish', from: null, to: v1.buildId, by: 'test' },
    ]);
  });

  it('a publish that loses puts the live pages back to the winner’s, which it overwrote', async () => {
    const { target } = under;
    await publishBuild(await build(rows.slice(0, 10)), target, options());
    const winner = await built(rows.slice(0, 11));
    const loser = await build(retitled(rows.slice(0, 11), 'lost', 0));
    // The winner makes its pages live and waits at its move; the loser then makes its own live (plan 0 retitled)
    // and waits at its move; the winner moves, then the loser tries to.
    const gated = () => {
      let arrive = () => {};
      const arrived = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      let open = () => {};
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      const at: PublishTarget = {
        origin: target.origin,
        kvs: {
          name: target.kvs.name,
          read: () => target.kvs.read(),
          update: async (change) => {
            arrive();
            await opened;
            return target.kvs.update(change);
          },
        },
      };
      return { at, arrived, open };
    };
    const [first, second] = [gated(), gated()];
    const won = publishBuild(winner, first.at, options());
    await first.arrived;
    const lost = publishBuild(loser, second.at, options());
    lost.catch(() => {});
    await second.arrived;
    first.open();
    expect((await won).result).toBe('published');
    second.open();
    await expect(lost).rejects.toThrow(PointerMovedError);
    expect(await readLive(target.origin, winner.buildId)).toMatchObject({ kind: 'build', damage: [] });
    const page = winner.objects.find(
      (object) => object.key === `plans/${idOf((rows[0] as { id: string }).id.toLowerCase())}.html`,
    );
    expect((await target.origin.get(page?.key ?? ''))?.body.equals(page?.body ?? Buffer.alloc(0))).toBe(true);
  });

  it('walks back through the builds that were live, one rollback at a time, and unpin records its move', async () => {
    const { target } = under;
    const ids: string[] = [];
    for (const count of [10, 11, 12])
      ids.push((await publishBuild(await build(rows.slice(0, count)), target, options())).buildId);
    const [a, b, c] = ids as [string, string, string];
    expect((await readPointer(target.kvs)).previous).toEqual([b, a]);
    expect((await rollback(target, { now: new Date() })).buildId).toBe(b);
    expect((await rollback(target, { now: new Date() })).buildId).toBe(a);
    await expect(rollback(target, { now: new Date() })).rejects.toThrow(
      /no build is recorded as live before/,
    );
    // --to a build of the operator's choice: a plain rollback then returns to where it came from.
    expect((await rollback(target, { now: new Date(), to: c })).buildId).toBe(c);
    expect((await readPointer(target.kvs)).previous).toEqual([a]);
    const unpinned = await unpin(target, { now: new Date(), actor: 'ops@host' });
    expect(unpinned).toMatchObject({ unpinned: { build: c }, warnings: [] });
    expect((await readHistory(target.origin, 1))[0]).toMatchObject({
      kind: 'unpin',
      from: c,
      to: c,
      by: 'ops@host',
    });
  });
});
