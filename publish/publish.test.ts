/**
 * Publishing against real peers: a directory origin and s3rver (a real S3-protocol server), the live pointer
 * in the local store file, and on CloudFront KeyValueStore's API stand-in (it has no local peer) where the
 * exact requests are asserted. Every publish runs the application layer's whole list of steps (app/run.ts).
 */

import { readdir } from 'node:fs/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builds } from '../app/builds.ts';
import { type PublishSummary, publish, rollback, unpin } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import type { BuildObject, BuildResult, PreparedBuild } from '../builder/build.ts';
import { settingRef } from '../contract/errors.ts';
import {
  CATALOGS,
  KVS_LIVE_BUILD,
  KVS_ORIGIN,
  KVS_PIN,
  KVS_PREVIOUS_BUILDS,
  MANIFEST,
  PAGE_HEADERS,
  PAGES_PREFIX,
  pageContentKey,
  STATE_RUN_LOCK,
} from '../contract/index.ts';
import { IMMUTABLE } from '../contract/objects.ts';
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
import { publishSummaryOf, TARGET_KINDS, usePublishTarget } from '../testing/targets.ts';
import { asVersion } from '../testing/tool.ts';
import { buildKey } from './core.ts';
import { DirectoryOrigin } from './dir-origin.ts';
import { HistoryError, PublishRefusedError, RunLockBusyError } from './errors.ts';
import { readHistory } from './history.ts';
import { acquireRunLock, describeHolder } from './lock.ts';
import { type OriginStore, objectToWrite } from './origin.ts';
import { bindingOf, DeploymentError, PointerMovedError, readPointer } from './pointer.ts';
import { S3Origin } from './s3-origin.ts';
import { type PublishTarget, readLive } from './steps.ts';

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
/** A build of `subset` at a new time, as a publish takes it. */
const build = (subset: readonly unknown[] = rows) => at(prepared, subset, prepareRows);
/** {@link build}, also completed: its objects, to compare with what was written. */
const built = (subset: readonly unknown[] = rows) => at(completed, subset, buildRows);

/** How a test's publish runs: the guards, and the builds a prune keeps (none pruned unless it says). */
interface Options {
  readonly force?: boolean;
  readonly unpin?: boolean;
  readonly recover?: boolean;
  readonly keep?: number;
}

/** Publishes a prepared build through the application layer's publish (app/run.ts), stamped at its own time. */
async function publishBuild(
  build: PreparedBuild,
  target: PublishTarget,
  options: Options = {},
): Promise<PublishSummary> {
  const outcome = await publish(
    {
      ...parseSettings('build', () => undefined, String),
      baseUrl: 'https://plans.example.com',
      allowEmpty: false,
      minRatio: 0.5,
      keepBuilds: options.keep ?? defaultOf('keepBuilds'),
    },
    target,
    {
      now: new Date(build.generatedAt),
      force: options.force ?? false,
      unpin: options.unpin ?? false,
      recover: options.recover ?? false,
      report: () => {},
      prepared: build,
      actor: 'test',
    },
  );
  return publishSummaryOf(outcome.summary);
}

/** The keys of the objects under a prefix. */
async function keys(origin: OriginStore, prefix = ''): Promise<string[]> {
  return (await origin.list(prefix)).map((object) => object.key).sort();
}

/** The keys under a prefix, but the run's own records (`state/`). */
async function written(origin: OriginStore): Promise<string[]> {
  return (await keys(origin)).filter((key) => !key.startsWith('state/'));
}

/** A build's own objects (under its prefix) and its pages (`plans/<id>.html`). */
function partition(result: BuildResult): [BuildObject[], BuildObject[]] {
  const isPage = (object: BuildObject) => object.key.startsWith('plans/');
  return [result.objects.filter((object) => !isPage(object)), result.objects.filter(isPage)];
}

/** A build as it is stored at the origin, judged with the live pages (readLive). */
async function storedBuild(origin: OriginStore, buildId: string) {
  const { live } = await readLive(origin, buildId);
  if (live.kind !== 'build') throw new Error(`build ${buildId} is not at ${origin.name}`);
  return live;
}

/** The plan id of a page's key. */
const idOf = (key: string) => key.replace(/^plans\/|\.html$/g, '');
/** The stored page (`pages/<digest>.html`) of a page of a build. */
const storedPage = (page: BuildObject) => pageContentKey(page.md5);
/** The binding the store records for the target's origin. */
const bindingIn = (target: PublishTarget) => bindingOf(target.origin.name, target.kvs.name);

/** Rows with the title of the plans at `indexes` tagged with `tag`. */
const retitled = (subset: readonly unknown[], tag: string, ...indexes: number[]) =>
  subset.map((row, index) =>
    indexes.includes(index)
      ? { ...(row as object), title: `${(row as { title: string }).title} ${tag}` }
      : row,
  );

/**
 * The writes of s3rver's requests, one line each: `PUT key`, `COPY source > key`, `DELETE` (a DeleteObjects
 * names no key in its URL), in order of key; the run's own records under `state/` left out.
 */
function writesOf(requests: readonly S3Request[]): string[] {
  return requests
    .filter(({ method, key }) => method !== 'GET' && method !== 'HEAD' && !key.startsWith('state/'))
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

  it('uploads its own objects under the build prefix, the manifest, writes each page live, then moves the pointer', async () => {
    const result = await built();
    const summary = await publishBuild(result, target);
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
      origin: await bindingIn(target),
    });
    const [own, pages] = partition(result);
    expect(pages).toHaveLength(14);
    // The manifest names each plan's page by the MD5 of its bytes: the name it is stored under, S3's ETag.
    expect(result.manifest.pages).toEqual(
      Object.fromEntries(pages.map((page) => [idOf(page.key), page.md5])),
    );
    const stored = await storedBuild(target.origin, result.buildId);
    expect([stored.damage, stored.pageDamage]).toEqual([[], []]);
    expect(await written(target.origin)).toEqual(
      [
        ...own.map((object) => buildKey(result.buildId, object.key)),
        // A page's bytes are kept under their digest only once a run replaces its live copy.
        ...pages.map((page) => page.key),
        'errors/404.html',
        'errors/500.json',
      ].sort(),
    );
    for (const object of own) {
      const stored = await target.origin.get(buildKey(result.buildId, object.key));
      expect(stored?.body.equals(object.body), object.key).toBe(true);
      expect(stored, object.key).toMatchObject({
        contentType: object.contentType,
        ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
        cacheControl: IMMUTABLE,
        md5: object.md5,
      });
    }
    // A page is live at the origin's root: five minutes in a cache, as it changes in place.
    for (const page of pages) {
      const live = await target.origin.get(page.key);
      expect(live?.body.equals(page.body), page.key).toBe(true);
      expect(live, page.key).toMatchObject({
        contentType: PAGE_HEADERS.html,
        cacheControl: PAGE_HEADERS.cacheable,
        md5: page.md5,
      });
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
    const first = await publishBuild(await build(), target);
    const before = await written(target.origin);
    const again = await publishBuild(await build(), target);
    // The build it reports is the live one: the one it made in memory was never written.
    expect(again).toMatchObject({
      result: 'skipped-identical',
      previousBuildId: first.buildId,
      buildId: first.buildId,
      generatedAt: first.generatedAt,
    });
    expect(again.reason).toMatch(/^identical to live build /);
    expect(await written(target.origin)).toEqual(before);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);
    const forced = await publishBuild(await build(), target, { force: true });
    expect(forced.result).toBe('published');
    expect((await readPointer(target.kvs)).live).toBe(forced.buildId);
  });

  it('refuses a shrunken or empty catalog, uploading nothing and moving nothing', async () => {
    const first = await publishBuild(await build(), target);
    const before = await written(target.origin);
    const few = await build(rows.slice(0, 3));
    const plans = few.counts.running + few.counts.strength;
    await expect(publishBuild(few, target)).rejects.toThrow(
      new PublishRefusedError(
        'shrink',
        `refused: the new catalog has ${plans} plans, fewer than 0.5 × the 14 plans of live build ${first.buildId} (7); ${settingRef('force')} publishes it anyway`,
      ),
    );
    await expect(publishBuild(await build([]), target, { force: true })).rejects.toThrow(/has 0 plans/);
    expect(await written(target.origin)).toEqual(before);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);
  });

  it('repairs a live build whose object was damaged: the same content is published as a fresh build', async () => {
    const first = await publishBuild(await build(), target);
    const key = buildKey(first.buildId, 'openapi.yaml.gz');
    const stored = await target.origin.get(key);
    const truncated = stored?.body.subarray(0, 100) ?? Buffer.alloc(0);
    if (s3) await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: truncated }));
    else {
      const { truncate } = await import('node:fs/promises');
      await truncate(`${scratch.dir}/origin/${key}`, 100);
    }
    const repaired = await publishBuild(await build(), target);
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
    await publishBuild(await build(), target);
    await target.kvs.update((entries) => entries.set(KVS_LIVE_BUILD, '../..'));
    const refused = publishBuild(await build(), target);
    await expect(refused).rejects.toThrow(DeploymentError);
    await expect(refused).rejects.toThrow(
      `${target.kvs.name}: its live build "../.." is not at ${target.origin.name}, the origin it serves (the edge cannot serve it); nothing was changed`,
    );
    expect((await readPointer(target.kvs)).live).toBe('../..');
    const repaired = await publishBuild(await build(), target, { recover: true });
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
    const first = await publishBuild(await build(rows.slice(0, 10)), target);
    const second = await publishBuild(await build(), target);
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
      origin: await bindingIn(target),
    });
    const before = await written(target.origin);
    const pinned = await publishBuild(await build(rows.slice(0, 15)), target);
    expect(pinned).toMatchObject({ result: 'skipped-pinned', previousBuildId: first.buildId });
    expect(pinned.reason).toBe(
      `pinned to ${first.buildId} since 2026-03-02T00:00:00.000Z by rollback; not published: ${first.buildId} stays live until catalog unpin removes the pin, and the next publish after that goes live`,
    );
    expect(await written(target.origin)).toEqual(before);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);

    expect(await unpin(target, { now: new Date() })).toMatchObject({
      command: 'unpin',
      unpinned: { build: first.buildId },
    });
    const after = await publishBuild(await build(rows.slice(0, 15)), target);
    expect(after.result).toBe('published');
    expect(await readPointer(target.kvs)).toEqual({
      live: after.buildId,
      pin: null,
      previous: [first.buildId],
      origin: await bindingIn(target),
    });
  });

  it('rolls back only under the run lock: while a run holds it, nothing moves and the holder is named', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target);
    const second = await publishBuild(await build(), target);
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
    await publishBuild(await build(rows.slice(0, 10)), target);
    await publishBuild(await build(), target);
    await rollback(target, { now: new Date() });
    const published = await publishBuild(await build(rows.slice(0, 15)), target, { unpin: true });
    expect(published.result).toBe('published');
    expect(published.warnings[0]).toMatch(/^unpinned /);
    expect((await readPointer(target.kvs)).pin).toBeNull();
  });

  it('refuses to roll back to an unknown build, or when there is no earlier one', async () => {
    const only = await publishBuild(await build(), target);
    await expect(rollback(target, { now: new Date() })).rejects.toThrow(HistoryError);
    await expect(rollback(target, { now: new Date(), to: '20200101T000000Z-00000000' })).rejects.toThrow(
      /no such build/,
    );
    expect(await readPointer(target.kvs)).toEqual({
      live: only.buildId,
      pin: null,
      previous: [],
      origin: await bindingIn(target),
    });
  });

  it('does not move a pointer that moved while it ran: it names the winner and leaves its build unreferenced', async () => {
    await publishBuild(await build(rows.slice(0, 10)), target);
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
    const failed = publishBuild(mine, racing);
    await expect(failed).rejects.toThrow(PointerMovedError);
    await expect(failed).rejects.toThrow(
      new RegExp(`to ${winner} while this publish ran; ${winner} stays live`),
    );
    expect((await readPointer(target.kvs)).live).toBe(winner);
    expect(await keys(target.origin, buildKey(mine.buildId, ''))).toContain(buildKey(mine.buildId, MANIFEST));
  });

  it('keeps the newest builds, never pruning the live, pinned or previous one', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1)
      ids.push((await publishBuild(await build(rows.slice(0, 10 + i)), target, { keep: 2 })).buildId);
    const listed = await builds(target);
    expect(listed.map((row) => row.id)).toEqual([ids[4], ids[3]]);
    expect(listed[0]).toMatchObject({
      live: true,
      everLive: true,
      pinned: false,
      complete: true,
      counts: expect.any(Object),
    });
  });

  it('prunes a build that died before its manifest, which wrote no page, and keeps the stored pages kept builds name, and no other', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target);
    const pagesBefore = await keys(target.origin, PAGES_PREFIX);
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
    await expect(publishBuild(died, { ...target, origin: dying })).rejects.toThrow(/killed/);
    // Its pages go live after its manifest: it wrote none, stored or live.
    expect(await keys(target.origin, PAGES_PREFIX)).toEqual(pagesBefore);
    expect((await readPointer(target.kvs)).live).toBe(first.buildId);
    expect((await storedBuild(target.origin, first.buildId)).pageDamage).toEqual([]);

    for (let i = 0; i < 3; i += 1)
      await publishBuild(await build(retitled(rows.slice(0, 12 + i), `v${i}`, i)), target, { keep: 2 });
    expect(await keys(target.origin, buildKey(died.buildId, ''))).toEqual([]);
    // Each kept build is whole, its pages live or stored; no stored page is one no kept build names.
    const named = new Set<string>();
    for (const { id } of await builds(target)) {
      const kept = await storedBuild(target.origin, id);
      expect(kept.damage, id).toEqual([]);
      for (const digest of Object.values(kept.manifest.pages)) named.add(pageContentKey(digest));
    }
    const stored = await keys(target.origin, PAGES_PREFIX);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.filter((key) => !named.has(key))).toEqual([]);
    const live = await storedBuild(target.origin, (await readPointer(target.kvs)).live ?? '');
    expect([live.damage, live.pageDamage]).toEqual([[], []]);
  });

  it('decides an unchanged build before completing it: nothing compressed, no page rendered, nothing written', async () => {
    const first = await publishBuild(await build(), target);
    const before = await written(target.origin);
    clock += 60_000;
    // Completing this build throws: the publish may only decide.
    const again = await prepareRows(rows, new Date(clock), { completable: false });
    const summary = await publishBuild(again, target);
    expect(summary).toMatchObject({ result: 'skipped-identical', previousBuildId: first.buildId, bytes: 0 });
    expect(await written(target.origin)).toEqual(before);
    clock += 60_000;
    await expect(
      publishBuild(await prepareRows(rows, new Date(clock), { completable: false }), target, { force: true }),
    ).rejects.toThrow(/was completed: it compressed and rendered its pages/);
  });

  it('publishes the same plans again when the base URL or the tool version changed', async () => {
    await publishBuild(await build(), target);
    clock += 60_000;
    const moved = await prepareRows(rows, new Date(clock), { baseUrl: 'https://catalog.example.org' });
    expect(moved.plansHash).not.toBe((await build()).plansHash);
    expect(await publishBuild(moved, target)).toMatchObject({ result: 'published' });
    clock += 60_000;
    const sameLinks = await prepareRows(rows, new Date(clock), { baseUrl: 'https://catalog.example.org' });
    expect((await publishBuild(sameLinks, target)).result).toBe('skipped-identical');
    clock += 60_000;
    // The same plans, published by the next release of the tool.
    const { newTool, upgraded } = await asVersion('99.0.0', async () => {
      const newTool = await prepareRows(rows, new Date(clock), { baseUrl: 'https://catalog.example.org' });
      return { newTool, upgraded: await publishBuild(newTool, target) };
    });
    expect(newTool.plansHash).toBe(sameLinks.plansHash);
    expect(upgraded.result).toBe('published');
    const manifest = JSON.parse(
      (await target.origin.get(buildKey(upgraded.buildId, MANIFEST)))?.body.toString() ?? '{}',
    );
    expect(manifest.tool).toEqual({ name: 'training-plan-catalog', version: '99.0.0' });
  });

  it('prunes an old build whole after the pointer moved, and the stored pages no kept build names (mark and sweep)', async () => {
    // A retitles plan 0; B plan 1 instead (plan 0 as it was); C plans 1 and 2; D plans 1, 2 and 3.
    const published: BuildResult[] = [];
    const subsets = [retitled(rows, 'a', 0), retitled(rows, 'b', 1), retitled(rows, 'b', 1, 2)];
    for (const subset of subsets) {
      const result = await built(subset);
      await publishBuild(result, target);
      published.push(result);
    }
    const [a, b, c] = published as [BuildResult, BuildResult, BuildResult];
    const d = await built(retitled(rows, 'b', 1, 2, 3));
    s3?.requests.splice(0);
    // Keep three: D, C and B; A goes, and with it the one page no kept build names (plan 0 retitled).
    expect(await publishBuild(d, target, { keep: 3 })).toMatchObject({ pruned: [a.buildId] });
    const sent = s3?.requests.splice(0) ?? [];
    expect(await target.origin.listPrefixes('builds/')).toEqual(
      [b, c, d].map((result) => `builds/${result.buildId}/`),
    );
    expect(await target.origin.list(`builds/${a.buildId}/`)).toEqual([]);
    const pageOf = (result: BuildResult, index: number) =>
      storedPage(
        partition(result)[1].find(
          (page) => idOf(page.key) === (rows[index] as { id: string }).id.toLowerCase(),
        ) as BuildObject,
      );
    const stored = await keys(target.origin, PAGES_PREFIX);
    expect(stored).not.toContain(pageOf(a, 0));
    const named = new Set(
      [b, c, d].flatMap((result) =>
        Object.values(result.manifest.pages).map((digest) => pageContentKey(digest)),
      ),
    );
    expect(stored.filter((key) => !named.has(key))).toEqual([]);
    // A page is kept once its live copy is replaced (plans 1, 2 and 3 as A had them; B, C and D name only 2
    // and 3 of those).
    expect(stored).toEqual([2, 3].map((index) => pageOf(a, index)).sort());
    if (kind === 'a directory')
      expect(await readdir(`${scratch.dir}/origin/builds`)).toEqual(
        [b, c, d].map((result) => result.buildId),
      );
    if (kind === 's3rver') {
      // D's writes, then the prune: the pruned build's folder in one request, the page no kept build names in one.
      expect(writesOf(sent).filter((line) => line === 'DELETE')).toEqual(['DELETE', 'DELETE', 'DELETE']);
      // It read the kept builds' manifests (not A's: its pages are what no kept build names).
      const read = sent
        .filter(({ method, key }) => method === 'GET' && key.endsWith(`/${MANIFEST}`))
        .map(({ key }) => key);
      expect(read).not.toContain(buildKey(a.buildId, MANIFEST));
      expect(read).toEqual(
        expect.arrayContaining([b, c].map((result) => buildKey(result.buildId, MANIFEST))),
      );
    }
    // Every build kept can still be made live, its pages with it.
    expect((await rollback(target, { now: new Date() })).buildId).toBe(c.buildId);
    expect((await rollback(target, { now: new Date() })).buildId).toBe(b.buildId);
    const live = await storedBuild(target.origin, b.buildId);
    expect([live.damage, live.pageDamage]).toEqual([[], []]);
  });

  it('writes only what a changed title changes: the catalogs, that page once, the page it replaces kept, the manifest', async () => {
    const first = await built();
    await publishBuild(first, target);
    const md5s = async () =>
      new Map(
        await Promise.all(
          (await written(target.origin)).map(
            async (key) => [key, (await target.origin.get(key))?.md5] as const,
          ),
        ),
      );
    const before = await md5s();
    s3?.requests.splice(0);
    const next = await built(retitled(rows, 'renamed', 5));
    await publishBuild(next, target);
    const [own, pages] = partition(next);
    const changed = pages.filter((page) => first.manifest.pages[idOf(page.key)] !== page.md5);
    expect(changed.map((page) => page.key)).toEqual([
      `plans/${(rows[5] as { id: string }).id.toLowerCase()}.html`,
    ]);
    const page = changed[0] as BuildObject;
    const replaced = pageContentKey(first.manifest.pages[idOf(page.key)] as string);
    const expected = [
      // Every catalog holds the build's generatedAt: each changes, with its variants; openapi.yaml is written again.
      ...own.map((object) => `PUT ${buildKey(next.buildId, object.key)}`),
      // The page it replaces kept under its digest (a copy), then the page live.
      `COPY ${page.key} > ${replaced}`,
      `PUT ${page.key}`,
    ].sort();
    // Each catalog and openapi.yaml with two variants, the manifest; the page once and the page it replaces.
    expect(expected).toHaveLength(3 * (CATALOGS.length + 1) + 1 + 2);
    expect(expected.length).toBeLessThanOrEqual(20);
    if (s3) {
      const sent = s3.requests.splice(0);
      // And the run lock released (one DeleteObjects).
      expect(writesOf(sent)).toEqual([...expected, 'DELETE'].sort());
      // Bytes: the catalogs with their variants, the page once, the manifest; no copy sends any.
      const bytes = sent
        .filter(
          ({ method, copyOf, key }) => method === 'PUT' && copyOf === undefined && !key.startsWith('state/'),
        )
        .reduce((sum, request) => sum + request.bytes, 0);
      expect(bytes).toBe([...own, page].reduce((sum, object) => sum + object.size, 0));
    }
    // Whatever the origin, exactly those keys are new or changed.
    const after = await md5s();
    const changedKeys = [...after.keys()].filter((key) => before.get(key) !== after.get(key));
    expect(changedKeys.sort()).toEqual(expected.map((line) => line.split(' ').at(-1)).sort());
  });

  it('keeps the live pages with the live build through the local edge: removed 404, added 200, a rollback puts them back writing only what differs', async () => {
    const { serveLocal } = await import('../app/local.ts');
    const { vi } = await import('vitest');
    const first = await built(retitled(rows.slice(0, 12), 'earlier', 2));
    await publishBuild(first, target);
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
      await publishBuild(second, target);
      // Each changed or added page is written live once, the page it replaces and the removed plan's page kept
      // first (copied under their digests); the removed plan's live page deleted.
      const pageOf = (index: number) =>
        storedPage(partition(second)[1].find((object) => object.key === pageKey(index)) as BuildObject);
      const firstPage = (index: number) =>
        storedPage(partition(first)[1].find((object) => object.key === pageKey(index)) as BuildObject);
      if (s3)
        expect(writesOf(s3.requests.splice(0)).filter((line) => /plans\/|pages\/|DELETE/.test(line))).toEqual(
          [
            ...[2, 12, 13].map((index) => `PUT ${pageKey(index)}`),
            ...[0, 2].map((index) => `COPY ${pageKey(index)} > ${firstPage(index)}`),
            'DELETE',
            'DELETE',
          ].sort(),
        );
      await serving({ 0: [404, 'Plan not found'], 2: [200, title(2)], 12: [200, title(12)] });

      // The rollback makes the first build's pages live again: it copies the two that differ from their stored
      // bytes and deletes the two the first build lacks, each live page it replaces or deletes kept first, under
      // the run lock it takes and releases, and writes nothing else.
      await rollback(target, { now: new Date() });
      if (s3)
        expect(writesOf(s3.requests.splice(0))).toEqual(
          [
            ...[0, 2].map((index) => `COPY ${firstPage(index)} > ${pageKey(index)}`),
            ...[2, 12, 13].map((index) => `COPY ${pageKey(index)} > ${pageOf(index)}`),
            'DELETE',
            'DELETE',
          ].sort(),
        );
      expect(await target.origin.get(STATE_RUN_LOCK)).toBeNull();
      await serving({ 0: [200, title(0)], 2: [200, `${title(2)} earlier`], 12: [404, 'Plan not found'] });
      expect(await target.origin.get(pageKey(13))).toBeNull();
    } finally {
      await edge.close();
    }
  });

  it('keeps the rollback target when newer builds that were never live fill keep', async () => {
    const first = await publishBuild(await build(rows.slice(0, 10)), target);
    const second = await publishBuild(await build(), target);
    // Two complete builds that never went live (publishes that lost), newer than the live one's predecessor.
    for (const subset of [rows.slice(0, 11), rows.slice(0, 12)]) {
      const loser = await built(subset);
      for (const object of loser.objects)
        await target.origin.put(objectToWrite(object, buildKey(loser.buildId, object.key)), {
          overwrite: false,
        });
    }
    const third = await publishBuild(await build(rows.slice(0, 13)), target, { keep: 1 });
    expect((await builds(target)).map((row) => [row.id, row.live, row.everLive])).toEqual([
      [third.buildId, true, true],
      [second.buildId, false, true],
    ]);
    expect(third.pruned).toHaveLength(3);
    expect(third.pruned).toContain(first.buildId);
    expect((await rollback(target, { now: new Date() })).buildId).toBe(second.buildId);
  });

  it('puts right, on the next run even unchanged or pinned, a live page that is not the live build’s', async () => {
    const first = await built(rows.slice(0, 12));
    await publishBuild(first, target);
    const [, pages] = partition(first);
    const [one, two, three] = pages as [BuildObject, BuildObject, BuildObject];
    // A hand left live: another plan's page in place of one, one missing, one of no plan.
    const stray = 'plans/0a1b2c3d-0000-4000-8000-00000000dead.html';
    await target.origin.put(objectToWrite(two, one.key), { overwrite: true });
    await target.origin.delete([three.key]);
    await target.origin.put(objectToWrite(two, stray), { overwrite: true });
    expect((await storedBuild(target.origin, first.buildId)).pageDamage).toEqual([
      `${one.key} is not the build’s page`,
      `${three.key} is missing`,
      `${stray} is not a page of the build`,
    ]);
    const again = await publishBuild(await build(rows.slice(0, 12)), target);
    // The bytes of those two pages were held nowhere else (a page is kept once its live copy is replaced): the
    // build is damaged, and a fresh one of the same content writes them.
    expect(again).toMatchObject({
      result: 'published',
      warnings: [
        // The page of no plan, deleted; the other two are the damage.
        `put 1 live page(s) back to build ${first.buildId}'s`,
        expect.stringMatching(new RegExp(`^live build ${first.buildId} is damaged \\(the page of `)),
      ],
    });
    for (const page of [one, two, three])
      expect((await target.origin.get(page.key))?.body.equals(page.body)).toBe(true);
    expect(await target.origin.get(stray)).toBeNull();
    // Pinned by a rollback, a run moves nothing, and still puts the live pages right: plan 1's, which the
    // rollback copied back from its stored bytes, deleted by hand.
    await publishBuild(await build(retitled(rows.slice(0, 13), 'later', 1)), target);
    await rollback(target, { now: new Date() });
    await target.origin.delete([two.key]);
    expect((await publishBuild(await build(rows.slice(0, 14)), target)).result).toBe('skipped-pinned');
    expect((await target.origin.get(two.key))?.body.equals(two.body)).toBe(true);
  });
});

describe('a bigger catalog (a directory)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-bigger-' });

  it('names every page by its digest, keeps the one a changed title replaces, and an unchanged run reads no page', async () => {
    const many = [...generateRows(560, 7)];
    const at = `${scratch.dir}/origin`;
    const kvs = new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true });
    const first = await publishBuild(await build(many), { origin: new DirectoryOrigin(at), kvs });
    expect(await keys(new DirectoryOrigin(at), 'plans/')).toHaveLength(first.plans);
    expect(await keys(new DirectoryOrigin(at), PAGES_PREFIX)).toEqual([]);
    // A run of its own (a new origin object): it knows each page's MD5 from what the first one wrote.
    const again = new DirectoryOrigin(at);
    expect((await publishBuild(await build(many), { origin: again, kvs })).result).toBe('skipped-identical');
    expect(again.hashed).toBe(0);
    const origin = new DirectoryOrigin(at);
    const next = await publishBuild(await build(retitled(many, 'renamed', 5)), { origin, kvs });
    const was = (await storedBuild(origin, first.buildId)).manifest.pages;
    const now = (await storedBuild(origin, next.buildId)).manifest.pages;
    const changed = Object.keys(now).filter((id) => was[id] !== now[id]);
    expect(changed).toHaveLength(1);
    expect(await keys(origin, PAGES_PREFIX)).toEqual([pageContentKey(was[changed[0] as string] as string)]);
    // Each live page holds the page its build names: the listing's MD5s tell, and no page was read to hash it.
    expect((await origin.list('plans/')).every((object) => object.md5 === now[idOf(object.key)])).toBe(true);
    expect(origin.hashed).toBe(0);
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
    const a = await publishBuild(await build(rows.slice(0, 10)), {
      origin: new S3Origin(s3.client, s3.bucket),
      kvs,
    });
    let uploads = 0;
    const proxy = await startCutProxy(s3.endpoint, (request) => request.method === 'PUT' && ++uploads === 2);
    const client = testS3Client(proxy.url, 1);
    const b = await build();
    try {
      await expect(publishBuild(b, { origin: new S3Origin(client, s3.bucket), kvs })).rejects.toThrow(
        new RegExp(
          `^uploading build ${b.buildId} to s3://catalog-origin failed at \\S+ \\(.*\\): \\d+ of \\d+ objects written; the live build is still ${a.buildId}`,
        ),
      );
    } finally {
      client.destroy();
      await proxy.close();
    }
    expect(proxy.cut).toBe(true);
    expect((await readPointer(kvs)).live).toBe(a.buildId);
    const origin = new S3Origin(s3.client, s3.bucket);
    const left = await keys(origin, buildKey(b.buildId, ''));
    expect(left.length).toBeGreaterThan(0);
    expect(left).not.toContain(buildKey(b.buildId, MANIFEST));

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

    // The cut run could not release its run lock either: the next run takes it over once it expired.
    const { vi } = await import('vitest');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3 * 60_000 });
    const rerun = await publishBuild(await build(), { origin, kvs }).finally(() => vi.useRealTimers());
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
    await publishBuild(result, { origin, kvs });
    const updates = fake.requests.filter((request) => request.method === 'POST');
    expect(updates).toHaveLength(1);
    expect(updates[0]?.headers['if-match']).toBe('ETAG1');
    // The first move also records the origin the store serves; later moves check it.
    expect(fake.updates()).toEqual([
      {
        Puts: [
          { Key: KVS_LIVE_BUILD, Value: result.buildId },
          { Key: KVS_ORIGIN, Value: await bindingOf(origin.name, kvs.name) },
        ],
      },
    ]);
    expect(fake.entries.get(KVS_LIVE_BUILD)).toBe(result.buildId);

    // The next publish moves the pointer and heads the rollback line with the build it replaces, in the same
    // conditional UpdateKeys: no crash can leave one without the other.
    fake.requests = [];
    const next = await build(rows.slice(0, 13));
    await publishBuild(next, { origin, kvs });
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
      const failed = publishBuild(await build(), {
        origin: new DirectoryOrigin(`${scratch.dir}/origin`),
        kvs,
      });
      await expect(failed).rejects.toThrow(PointerMovedError);
      await expect(failed).rejects.toThrow(new RegExp(`${winner} stays live`));
      expect(fake.calls().filter((call) => call === 'update')).toHaveLength(1);
      expect(fake.entries.get(KVS_LIVE_BUILD)).toBe(winner);
    },
  );

  it('pins with one UpdateKeys that moves the pointer and writes the pin', async () => {
    const origin = new DirectoryOrigin(`${scratch.dir}/origin`);
    const first = await publishBuild(await build(rows.slice(0, 10)), { origin, kvs });
    await publishBuild(await build(), { origin, kvs });
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

/**
 * Runs `work` with the clock moved past the run lock's expiry (fake Date only): how a second run goes ahead of a
 * first that stalled while it held the lock, the only way two publishes can reach their pointer moves at once.
 */
async function laterThanTheLock<T>(work: () => Promise<T>): Promise<T> {
  const { vi } = await import('vitest');
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3 * 60_000 });
  try {
    return await work();
  } finally {
    vi.useRealTimers();
  }
}

describe.each(TARGET_KINDS)('two publishes at once on %s, the later build winning', (kind) => {
  const under = usePublishTarget(kind, 'catalog-race-rollback-');

  it('rolls back to the build live before the winner, never to the build of the publish that lost', async () => {
    const { target } = under;
    const v1 = await publishBuild(await build(rows.slice(0, 10)), target);
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
    const losing = publishBuild(v2, slow);
    losing.catch(() => {});
    await atMove;
    // v2's run stalled past its run lock's expiry there: v3's run takes the lock over.
    const won = await laterThanTheLock(() => publishBuild(v3, target));
    release();
    await expect(losing).rejects.toThrow(PointerMovedError);
    expect(won).toMatchObject({ result: 'published', previousBuildId: v1.buildId });
    expect(await readPointer(target.kvs)).toEqual({
      live: v3.buildId,
      pin: null,
      previous: [v1.buildId],
      origin: await bindingIn(target),
    });

    const listed = (await builds(target)).map((row) => [row.id, row.complete, row.everLive]);
    expect(listed).toEqual([
      [v3.buildId, true, true],
      [v2.buildId, true, false],
      [v1.buildId, true, true],
    ]);

    // After v3's run, whose clock was past v2's lock.
    const rolled = await rollback(target, { now: new Date(Date.now() + 4 * 60_000), actor: 'ops@host' });
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
    await publishBuild(await build(rows.slice(0, 10)), target);
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
    const won = publishBuild(winner, first.at);
    await first.arrived;
    const lost = laterThanTheLock(() => publishBuild(loser, second.at));
    lost.catch(() => {});
    await second.arrived;
    first.open();
    expect((await won).result).toBe('published');
    second.open();
    await expect(lost).rejects.toThrow(PointerMovedError);
    const stored = await storedBuild(target.origin, winner.buildId);
    expect([stored.damage, stored.pageDamage]).toEqual([[], []]);
    const page = winner.objects.find(
      (object) => object.key === `plans/${idOf((rows[0] as { id: string }).id.toLowerCase())}.html`,
    );
    expect((await target.origin.get(page?.key ?? ''))?.body.equals(page?.body ?? Buffer.alloc(0))).toBe(true);
  });

  it('walks back through the builds that were live, one rollback at a time, and unpin records its move', async () => {
    const { target } = under;
    const ids: string[] = [];
    for (const count of [10, 11, 12])
      ids.push((await publishBuild(await build(rows.slice(0, count)), target)).buildId);
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
