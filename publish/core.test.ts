import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newBuildId } from '../builder/build.ts';
import { settingRef } from '../contract/errors.ts';
import { BUILD_ID_PATTERN } from '../contract/index.ts';
import { planCounts } from '../testing/counts.ts';
import {
  buildIdsOf,
  buildKey,
  buildsToPrune,
  type Candidate,
  decide,
  digestOf,
  keptPagesOf,
  type LiveCatalog,
  liveDamage,
  livePagesOf,
  objectDamage,
  parseManifest,
  planOf,
  rollbackTarget,
  type StoredManifest,
  unreferencedPages,
} from './core.ts';

/** A manifest entry of an object whose SHA-256 is made from `name`. */
const entry = (name: string, size = 10) => ({
  size,
  sha256: createHash('sha256').update(name).digest('hex'),
  md5: createHash('md5').update(name).digest('hex'),
});
/** A page's digest (the MD5 of its bytes, hex), made from `name`. */
const digest = (name: string) => createHash('md5').update(name).digest('hex');
const PLAN = (n: number) => `0a1b2c3d-0000-4000-8000-${String(n).padStart(12, '0')}`;

function manifest(
  id: string,
  plans: number,
  objects: StoredManifest['objects'] = { 'catalog.json': entry('a'), 'openapi.yaml': entry('o') },
  pages: StoredManifest['pages'] = {},
): StoredManifest {
  return {
    buildId: id,
    generatedAt: '2026-03-01T10:00:00.000Z',
    counts: planCounts({ running: Math.floor(plans / 2), strength: plans - Math.floor(plans / 2) }),
    plans,
    plansHash: `plans-${plans}`,
    inputsHash: `inputs-${plans}`,
    objects,
    pages,
    root: { 'errors/500.json': entry('e') },
  };
}

const LIVE = '20260301T100000Z-aaaaaaaa';
const whole = (plans: number): LiveCatalog => ({
  kind: 'build',
  id: LIVE,
  manifest: manifest(LIVE, plans),
  damage: [],
  pageDamage: [],
});
const candidate = (plans: number, overrides: Partial<Candidate> = {}): Candidate => ({
  plans,
  plansHash: `plans-${plans}`,
  inputsHash: `inputs-${plans}`,
  ...overrides,
});
const guards = { force: false, allowEmpty: false, minRatio: 0.5 };

describe('build ids and keys', () => {
  it('are the UTC second, the millisecond and 52 random bits, sorting by time', () => {
    const id = newBuildId(new Date('2026-03-01T10:15:00.123Z'));
    expect(id).toMatch(BUILD_ID_PATTERN);
    expect(id).toMatch(/^20260301T101500Z-07b[0-9a-f]{13}$/);
    expect(newBuildId(new Date('2026-03-01T10:15:00.124Z')) > id).toBe(true);
    expect(
      newBuildId(new Date('2026-03-01T10:15:01.000Z')) > newBuildId(new Date('2026-03-01T10:15:00.999Z')),
    ).toBe(true);
    // Every one of the 52 bits reaches the id: ids made in one millisecond differ wherever their random bits do.
    const at = new Date(0);
    const bytes = (hex: string) => () => Buffer.from(hex, 'hex');
    expect(newBuildId(at, bytes('00000000000000'))).toBe('19700101T000000Z-0000000000000000');
    expect(newBuildId(at, bytes('fffffffffffff0'))).toBe('19700101T000000Z-000fffffffffffff');
    for (let bit = 0; bit < 52; bit += 1) {
      const random = Buffer.alloc(7);
      random.writeUInt8(0x80 >> (bit % 8), Math.floor(bit / 8));
      expect(
        newBuildId(at, () => random),
        `bit ${bit}`,
      ).not.toBe(newBuildId(at, bytes('00000000000000')));
    }
    // Ids of earlier releases (8 hex digits) still read.
    expect(BUILD_ID_PATTERN.test('20261123T133944Z-0c79d57f')).toBe(true);
    expect(BUILD_ID_PATTERN.test('20261123T133944Z-0c79d57f00')).toBe(false);
  });

  it('put a build under its own prefix', () => {
    expect(buildKey(LIVE, 'catalog.json.br')).toBe(`builds/${LIVE}/catalog.json.br`);
  });
});

describe('whether a build is whole', () => {
  const objects = { 'catalog.json': entry('a', 100), 'catalog.json.br': entry('b', 20) };
  const pages = { [PLAN(1)]: digest('page 1') };
  const built = manifest(LIVE, 1, objects, pages);
  const own = (changes: Record<string, { size: number; md5: string } | null> = {}) =>
    Object.entries({
      'catalog.json': { size: 100, md5: entry('a').md5 },
      'catalog.json.br': { size: 20, md5: entry('b').md5 },
      ...changes,
    }).flatMap(([key, object]) => (object ? [{ key: buildKey(LIVE, key), ...object }] : []));
  const kept = keptPagesOf([{ key: `pages/${digest('page 1')}.html`, size: 4, md5: digest('page 1') }]);

  it('is whole when every object is listed with its size and MD5, and every page of it is kept or live', () => {
    expect(objectDamage(built, own(), kept)).toEqual([]);
    expect(objectDamage(built, own(), new Set(), new Map([[PLAN(1), digest('page 1')]]))).toEqual([]);
    expect(objectDamage(built, own(), 'all live')).toEqual([]);
  });

  it('names each object that is missing, truncated or has other bytes', () => {
    expect(
      objectDamage(built, own({ 'catalog.json': { size: 40, md5: 'x' }, 'catalog.json.br': null }), kept),
    ).toEqual(['catalog.json has 40 bytes, not 100', 'catalog.json.br is missing']);
    expect(objectDamage(built, own({ 'catalog.json': { size: 100, md5: 'other' } }), kept)).toEqual([
      'catalog.json has other bytes (MD5 other)',
    ]);
  });

  it('names a page of it whose bytes are neither kept nor live (another page live is not its bytes)', () => {
    const lost = [
      `the page of ${PLAN(1)} (${digest('page 1')}) is neither live nor at pages/${digest('page 1')}.html`,
    ];
    expect(objectDamage(built, own(), new Set())).toEqual(lost);
    expect(objectDamage(built, own(), new Set(), new Map([[PLAN(1), digest('page 2')]]))).toEqual(lost);
    expect(objectDamage(built, own(), new Set([digest('page 2')]))).toEqual(lost);
  });

  it('reads its manifest back, and refuses one of another layout, another build, or not JSON, naming why', () => {
    const text = JSON.stringify(built);
    expect(parseManifest(Buffer.from(text), LIVE)).toEqual(built);
    const { pages: _, ...older } = built;
    expect(parseManifest(Buffer.from(JSON.stringify({ ...older, pageShards: ['x'] })), LIVE)).toEqual({
      problem: expect.stringMatching(
        new RegExp(`^builds/${LIVE}/manifest.json is not a manifest this tool reads \\(pages: `),
      ),
    });
    expect(parseManifest(Buffer.from(text), '20260301T100000Z-bbbbbbbb')).toEqual({
      problem: `builds/20260301T100000Z-bbbbbbbb/manifest.json is the manifest of ${LIVE}`,
    });
    expect(parseManifest(Buffer.from('{'), LIVE)).toEqual({
      problem: `builds/${LIVE}/manifest.json is not JSON`,
    });
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

  it('measure a shrink against a live build only: nothing live, or a pointer naming nothing, publishes', () => {
    expect(decide(candidate(10), whole(44), guards)).toMatchObject({ guard: 'shrink' });
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

  it('publish the same plans when another input changed', () => {
    expect(decide(candidate(44, { inputsHash: 'other' }), whole(44), guards).action).toBe('publish');
    expect(decide(candidate(44, { plansHash: 'other' }), whole(44), guards).action).toBe('publish');
  });

  it('replace an identical live build whose objects are damaged, saying why; live pages alone do not', () => {
    const damaged: LiveCatalog = {
      ...(whole(44) as Extract<LiveCatalog, { kind: 'build' }>),
      damage: ['catalog.json has 40 bytes, not 100'],
    };
    expect(decide(candidate(44), damaged, guards)).toEqual({
      action: 'publish',
      note: `live build ${LIVE} is damaged (catalog.json has 40 bytes, not 100): a fresh build replaces it`,
    });
    const pagesOnly: LiveCatalog = {
      ...(whole(44) as Extract<LiveCatalog, { kind: 'build' }>),
      pageDamage: [`plans/${PLAN(1)}.html is missing`],
    };
    expect(decide(candidate(44), pagesOnly, guards).action).toBe('skip');
  });
});

describe('the builds at an origin', () => {
  const ids = [
    '20260101T000000Z-00000001',
    '20260201T000000Z-00000002',
    '20260301T000000Z-00000003',
    '20260401T000000Z-00000004',
  ];
  const incomplete = '20260501T000000Z-00000005';
  const all = [...ids, incomplete];
  const complete = new Set(ids);

  it('are pruned to the newest, never the live, the pinned or the rollback target', () => {
    const none = { live: null, pinned: null, previous: null };
    expect(buildsToPrune(all, 2, none)).toEqual([ids[2], ids[1], ids[0]]);
    expect(buildsToPrune(all, 2, { ...none, live: ids[3] as string })).toEqual([ids[2], ids[1], ids[0]]);
    expect(buildsToPrune(all, 1, { ...none, live: ids[3] as string, pinned: ids[0] as string })).toEqual([
      ids[2],
      ids[1],
    ]);
    // The build that was live before, not the newest older build (which may never have been live).
    expect(buildsToPrune(all, 1, { live: incomplete, pinned: null, previous: ids[1] as string })).toEqual([
      ids[3],
      ids[2],
      ids[0],
    ]);
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
      rollbackTarget(complete, all, { live: ids[3] as string, previous: [ids[1] as string] }, undefined),
    ).toEqual({
      id: ids[1],
    });
    // A build of the line that is gone or incomplete is passed over.
    expect(
      rollbackTarget(
        complete,
        all,
        { live: ids[3] as string, previous: ['20250101T000000Z-0000000a', incomplete, ids[0] as string] },
        undefined,
      ),
    ).toEqual({ id: ids[0] });
    expect(rollbackTarget(complete, all, { live: ids[3] as string, previous: [] }, ids[2])).toEqual({
      id: ids[2],
    });
  });

  it('refuse a rollback to an unknown or incomplete build, or when no earlier live build is recorded', () => {
    const pointer = { live: ids[3] as string, previous: [] };
    expect(rollbackTarget(complete, all, pointer, '20250101T000000Z-ffffffff')).toEqual({
      error: expect.stringMatching(
        new RegExp(`^${settingRef('to')} "20250101T000000Z-ffffffff": no such build \\(builds: `),
      ),
    });
    expect(rollbackTarget(complete, all, pointer, incomplete)).toEqual({
      error: `${settingRef('to')} "${incomplete}": the build is incomplete (no manifest.json)`,
    });
    expect(rollbackTarget(complete, all, pointer, undefined)).toEqual({
      error: `no build is recorded as live before live build ${ids[3]}; roll back ${settingRef('to')} a build (catalog builds marks the builds that were live)`,
    });
    expect(
      rollbackTarget(
        complete,
        all,
        { live: ids[3] as string, previous: ['20250101T000000Z-0000000a'] },
        undefined,
      ),
    ).toEqual({
      error: `none of the builds live before live build ${ids[3]} is complete at the origin any more (20250101T000000Z-0000000a); roll back ${settingRef('to')} a build (catalog builds marks the builds that were live)`,
    });
  });
});

describe('the pages', () => {
  const [one, two, three] = [digest('1'), digest('2'), digest('3')];
  const kept = [
    { key: `pages/${one}.html`, size: 1, md5: one },
    { key: `pages/${two}.html`, size: 1, md5: two },
  ];

  it('are named by plan id live and by digest kept; other keys name neither', () => {
    expect(planOf(`plans/${PLAN(1)}.html`)).toBe(PLAN(1));
    expect(planOf(`plans/${PLAN(1).toUpperCase()}.html`)).toBeNull();
    expect(planOf('plans/-.html')).toBeNull();
    expect(digestOf(`pages/${one}.html`)).toBe(one);
    expect(digestOf('pages/map-0123.json')).toBeNull();
    expect(digestOf(`plans/${one}.html`)).toBeNull();
  });

  it('live hold the digest their listing gives (their MD5), else nothing known', () => {
    const held = livePagesOf([
      { key: `plans/${PLAN(1)}.html`, size: 1, md5: one },
      { key: `plans/${PLAN(2)}.html`, size: 1, md5: two },
      { key: `plans/${PLAN(3)}.html`, size: 1, md5: 'a multipart ETag-2' },
      { key: 'plans/index.html', size: 1, md5: three },
    ]);
    expect(held).toEqual(
      new Map([
        [PLAN(1), one],
        [PLAN(2), two],
        [PLAN(3), null],
      ]),
    );
  });

  it('kept are those whose listed MD5 is their name: not one changed after it was kept, nor another file', () => {
    const listed = [
      ...kept,
      { key: `pages/${three}.html`, size: 1, md5: one },
      { key: 'pages/left-by-an-older-tool.pack', size: 1, md5: two },
    ];
    expect(keptPagesOf(listed)).toEqual(new Set([one, two]));
  });

  it('differ from a build’s where they are missing, another page, or of a plan it lacks, each named', () => {
    const wanted = { [PLAN(1)]: one, [PLAN(2)]: three, [PLAN(5)]: two };
    const held = new Map<string, string | null>([
      [PLAN(1), one],
      [PLAN(2), two],
      [PLAN(3), null],
    ]);
    expect(liveDamage(manifest(LIVE, 3, {}, wanted), held)).toEqual([
      `plans/${PLAN(2)}.html is not the build’s page`,
      `plans/${PLAN(5)}.html is missing`,
      `plans/${PLAN(3)}.html is not a page of the build`,
    ]);
    expect(liveDamage(manifest(LIVE, 3, {}, wanted), new Map(Object.entries(wanted)))).toEqual([]);
  });

  it('kept are swept when no kept build names them (mark and sweep)', () => {
    const builds = [{ pages: { [PLAN(1)]: one } }, { pages: { [PLAN(1)]: one, [PLAN(2)]: three } }];
    const all = [
      ...kept,
      { key: `pages/${three}.html`, size: 1, md5: three },
      { key: 'pages/left-by-an-older-tool.pack', size: 1, md5: three },
    ];
    expect(unreferencedPages(all, builds)).toEqual([`pages/${two}.html`, 'pages/left-by-an-older-tool.pack']);
    expect(unreferencedPages(all, [])).toEqual(all.map((page) => page.key));
  });
});
