import { describe, expect, it } from 'vitest';
import type { Manifest, ManifestEntry } from '../builder/build.ts';
import { newBuildId } from '../builder/build.ts';
import { settingRef } from '../contract/errors.ts';
import { BUILD_ID_PATTERN } from '../contract/index.ts';
import { planCounts } from '../testing/counts.ts';
import {
  buildIdsOf,
  buildKey,
  buildsToPrune,
  type Candidate,
  damageOf,
  decide,
  groupBuilds,
  type LiveCatalog,
  MAX_PAGE_SHARDS,
  PAGES_PER_SHARD,
  pagesOfShard,
  rollbackTarget,
  shardCount,
  shardOf,
  shardText,
} from './core.ts';

const entry = (sha256: string, size = 10): ManifestEntry => ({
  size,
  sha256,
  md5: `md5-of-${sha256}`,
  contentType: 'application/json; charset=utf-8',
});

function manifest(
  id: string,
  plans: number,
  objects: Record<string, ManifestEntry> = { 'catalog.json': entry('a'), 'openapi.yaml': entry('o') },
): Manifest {
  return {
    buildId: id,
    generatedAt: '2026-03-01T10:00:00.000Z',
    counts: planCounts({ running: Math.floor(plans / 2), strength: plans - Math.floor(plans / 2) }),
    plans,
    plansHash: `plans-${plans}`,
    source: 'fixtures/plans.json',
    tool: { name: 'training-plan-catalog', version: '0.1.0' },
    objects,
    root: { 'errors/500.json': entry('e') },
    inputsHash: `inputs-${plans}`,
  };
}

const LIVE = '20260301T100000Z-aaaaaaaa';
const whole = (plans: number, objects?: Record<string, ManifestEntry>): LiveCatalog => ({
  kind: 'build',
  id: LIVE,
  manifest: manifest(LIVE, plans, objects),
  damage: [],
  held: new Map(),
  pages: new Map(),
});
const candidate = (plans: number, overrides: Partial<Candidate> = {}): Candidate => ({
  plans,
  plansHash: `plans-${plans}`,
  inputsHash: `inputs-${plans}`,
  ...overrides,
});
const guards = { force: false, allowEmpty: false, minRatio: 0.5 };

describe('build ids and keys', () => {
  it('are the UTC second and 8 random hex digits, sorting by time', () => {
    const id = newBuildId(new Date('2026-03-01T10:15:00.123Z'));
    expect(id).toMatch(BUILD_ID_PATTERN);
    expect(id.startsWith('20260301T101500Z-07b')).toBe(true);
    expect(newBuildId(new Date('2026-03-01T10:15:00.124Z')) > id).toBe(true);
    expect(
      newBuildId(new Date('2026-03-01T10:15:01.000Z')) > newBuildId(new Date('2026-03-01T10:15:00.999Z')),
    ).toBe(true);
    expect(new Set(Array.from({ length: 50 }, () => newBuildId(new Date(0)))).size).toBe(50);
  });

  it('put a build under its own prefix', () => {
    expect(buildKey(LIVE, 'catalog.json.br')).toBe(`builds/${LIVE}/catalog.json.br`);
  });
});

describe('whether a build is whole', () => {
  const objects = { 'catalog.json': entry('a', 100), 'catalog.json.br': entry('b', 20) };
  const stored = (changes: Record<string, { size: number; md5: string } | null> = {}) =>
    new Map(
      Object.entries({
        'catalog.json': { size: 100, md5: 'md5-of-a' },
        'catalog.json.br': { size: 20, md5: 'md5-of-b' },
        ...changes,
      }).filter((pair): pair is [string, { size: number; md5: string }] => pair[1] !== null),
    );

  it('is whole when every object is stored with its size and MD5', () => {
    expect(damageOf({ objects }, stored())).toEqual([]);
  });

  it('names each object that is missing, truncated or has other bytes', () => {
    expect(
      damageOf({ objects }, stored({ 'catalog.json': { size: 40, md5: 'x' }, 'catalog.json.br': null })),
    ).toEqual(['catalog.json has 40 bytes, not 100', 'catalog.json.br is missing']);
    expect(damageOf({ objects }, stored({ 'catalog.json': { size: 100, md5: 'other' } }))).toEqual([
      'catalog.json has other bytes (MD5 other)',
    ]);
  });
});

describe('the guards', () => {
  it('refuse an empty catalog, naming the live count and the setting', () => {
    expect(decide(candidate(0), whole(44), guards)).toEqual({
      action: 'refuse',
      guard: 'empty',
      reason: `refused: the new catalog has 0 plans (live build ${LIVE} has 44); ${settingRef('allowEmpty')} publishes an empty catalog`,
    });
  });

  it('refuse a catalog below the ratio of the live plans, naming the numbers', () => {
    expect(decide(candidate(21), whole(44), guards)).toEqual({
      action: 'refuse',
      guard: 'shrink',
      reason: `refused: the new catalog has 21 plans, fewer than 0.5 × the 44 plans of live build ${LIVE} (22); ${settingRef('force')} publishes it anyway`,
    });
  });

  it('accept exactly the ratio, and less with force', () => {
    expect(decide(candidate(22), whole(44), guards).action).toBe('publish');
    expect(decide(candidate(5), whole(44), { ...guards, force: true }).action).toBe('publish');
  });

  it('need both allowEmpty and force to empty a live catalog', () => {
    expect(decide(candidate(0), whole(44), { ...guards, allowEmpty: true })).toMatchObject({
      guard: 'shrink',
    });
    expect(decide(candidate(0), whole(44), { ...guards, allowEmpty: true, force: true }).action).toBe(
      'publish',
    );
  });

  it('measure a shrink against the flat catalog of a bucket from before builds', () => {
    expect(decide(candidate(10), { kind: 'flat', plans: 44 }, guards)).toMatchObject({ guard: 'shrink' });
    expect(decide(candidate(10), { kind: 'none' }, guards).action).toBe('publish');
    expect(
      decide(candidate(10), { kind: 'unreadable', id: LIVE, reason: 'no manifest' }, guards).action,
    ).toBe('publish');
  });

  it('skip content identical to a whole live build, unless forced', () => {
    expect(decide(candidate(44), whole(44), guards)).toEqual({
      action: 'skip',
      reason: `identical to live build ${LIVE} (plans plans-44…, inputs inputs-44…); ${settingRef('force')} publishes it anyway`,
    });
    expect(decide(candidate(44), whole(44), { ...guards, force: true }).action).toBe('publish');
  });

  it('publish the same plans when another input changed, or the live build recorded no inputs', () => {
    expect(decide(candidate(44, { inputsHash: 'other' }), whole(44), guards).action).toBe('publish');
    const before = whole(44) as Extract<LiveCatalog, { kind: 'build' }>;
    const { inputsHash: _, ...older } = before.manifest;
    expect(decide(candidate(44), { ...before, manifest: older }, guards).action).toBe('publish');
  });

  it('replace an identical live build that is damaged, saying why', () => {
    const damaged: LiveCatalog = {
      ...(whole(44) as Extract<LiveCatalog, { kind: 'build' }>),
      damage: ['catalog.json has 40 bytes, not 100'],
    };
    expect(decide(candidate(44), damaged, guards)).toEqual({
      action: 'publish',
      note: `live build ${LIVE} is damaged (catalog.json has 40 bytes, not 100): a fresh build replaces it`,
    });
  });
});

describe('the builds at an origin', () => {
  const ids = [
    '20260101T000000Z-00000001',
    '20260201T000000Z-00000002',
    '20260301T000000Z-00000003',
    '20260401T000000Z-00000004',
  ];
  const listing = [
    ...ids.flatMap((id) => [`builds/${id}/catalog.json`, `builds/${id}/manifest.json`]),
    'builds/20260501T000000Z-00000005/catalog.json',
    'builds/not-a-build/catalog.json',
    'catalog.json',
    'errors/500.json',
  ].map((key) => ({ key }));
  const builds = groupBuilds(listing);

  it('are grouped by build id; other keys are ignored', () => {
    expect([...builds.keys()].sort()).toEqual([...ids, '20260501T000000Z-00000005']);
    expect(builds.get(ids[0] as string)).toEqual(['catalog.json', 'manifest.json']);
  });

  it('are pruned to the newest, never the live, the pinned or the rollback target', () => {
    const all = [...builds.keys()];
    const none = { live: null, pinned: null, previous: null };
    expect(buildsToPrune(all, 2, none)).toEqual([ids[2], ids[1], ids[0]]);
    expect(buildsToPrune(all, 2, { ...none, live: ids[3] as string })).toEqual([ids[2], ids[1], ids[0]]);
    expect(buildsToPrune(all, 1, { ...none, live: ids[3] as string, pinned: ids[0] as string })).toEqual([
      ids[2],
      ids[1],
    ]);
    // The build that was live before, not the newest older build (which may never have been live).
    expect(
      buildsToPrune(all, 1, {
        live: '20260501T000000Z-00000005',
        pinned: null,
        previous: ids[1] as string,
      }),
    ).toEqual([ids[3], ids[2], ids[0]]);
  });

  it('are found among the prefixes of a delimited listing; other prefixes are ignored', () => {
    expect(
      buildIdsOf([
        `builds/${ids[0]}/`,
        'builds/not-a-build/',
        `builds/${ids[1]}/`,
        'state/',
        `builds/${ids[2]}`,
      ]),
    ).toEqual([ids[0], ids[1]]);
  });

  it('give a plain rollback the first complete build of the rollback line, never a build that was never live', () => {
    // ids[2] is complete and newer than ids[1], but it was never live (a publish that lost a race).
    expect(
      rollbackTarget(builds, { live: ids[3] as string, previous: [ids[1] as string] }, undefined),
    ).toEqual({
      id: ids[1],
    });
    // A build of the line that is gone or incomplete is passed over.
    expect(
      rollbackTarget(
        builds,
        {
          live: ids[3] as string,
          previous: ['20250101T000000Z-0000000a', '20260501T000000Z-00000005', ids[0] as string],
        },
        undefined,
      ),
    ).toEqual({ id: ids[0] });
    expect(rollbackTarget(builds, { live: ids[3] as string, previous: [] }, ids[2])).toEqual({ id: ids[2] });
  });

  it('refuse a rollback to an unknown or incomplete build, or when no earlier live build is recorded', () => {
    const pointer = { live: ids[3] as string, previous: [] };
    expect(rollbackTarget(builds, pointer, '20250101T000000Z-ffffffff')).toEqual({
      error: expect.stringMatching(
        new RegExp(`^${settingRef('to')} "20250101T000000Z-ffffffff": no such build \\(builds: `),
      ),
    });
    expect(rollbackTarget(builds, pointer, '20260501T000000Z-00000005')).toEqual({
      error: `${settingRef('to')} "20260501T000000Z-00000005": the build is incomplete (no manifest.json)`,
    });
    expect(rollbackTarget(builds, pointer, undefined)).toEqual({
      error: `no build is recorded as live before live build ${ids[3]} (build:previous is empty: nothing was published before it, or it went live before the store kept that record); roll back ${settingRef('to')} a build (catalog builds marks the builds that were live)`,
    });
    expect(
      rollbackTarget(builds, { live: ids[3] as string, previous: ['20250101T000000Z-0000000a'] }, undefined),
    ).toEqual({
      error: `none of the builds live before live build ${ids[3]} is complete at the origin any more (20250101T000000Z-0000000a); roll back ${settingRef('to')} a build (catalog builds marks the builds that were live)`,
    });
  });
});

describe('the page map in shards', () => {
  const ids = Array.from(
    { length: 2_000 },
    (_, n) => `0a1b2c3d-0000-4000-8000-${String(n).padStart(12, '0')}`,
  );

  it('has as many shards as the pages need: one for a small catalog, doubling, at most the most', () => {
    expect([0, 1, PAGES_PER_SHARD].map(shardCount)).toEqual([1, 1, 1]);
    expect(shardCount(PAGES_PER_SHARD + 1)).toBe(2);
    expect(shardCount(4 * PAGES_PER_SHARD + 1)).toBe(8);
    // The realistic top (30,000 plans): the most shards, each under PAGES_PER_SHARD pages.
    expect(shardCount(30_000)).toBe(MAX_PAGE_SHARDS);
    expect(30_000 / MAX_PAGE_SHARDS).toBeLessThan(PAGES_PER_SHARD);
    expect(shardCount(1_000_000)).toBe(MAX_PAGE_SHARDS);
  });

  it('spreads patterned ids over every shard, whatever the count', () => {
    for (const count of [MAX_PAGE_SHARDS, 4]) {
      const counts = new Array<number>(count).fill(0);
      for (const id of ids) counts[shardOf(id, count)] = (counts[shardOf(id, count)] ?? 0) + 1;
      expect(counts.every((n) => n > 10)).toBe(true);
    }
  });

  it('keeps where each page version is, the same text for the same pages in any order', () => {
    const pages = new Map(
      ids
        .slice(0, 3)
        .map((id, n) => [id, { md5: `md5-${n}`, source: 'pages/b-0.pack', offset: n * 10, size: 10 }]),
    );
    const text = shardText(pages);
    expect(shardText(new Map([...pages].reverse()))).toBe(text);
    expect(pagesOfShard(text)).toEqual([...pages].map(([id, page]) => [`plans/${id}.html`, page]));
    expect(pagesOfShard('not json')).toEqual([]);
  });
});
