import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { settingRef } from '../contract/errors.ts';
import {
  BUILD_ID,
  buildMetadata,
  buildsToPrune,
  type Candidate,
  compactTime,
  decide,
  describeLive,
  type GuardOptions,
  groupHistory,
  historyKey,
  invalidationPaths,
  LIVE_KEYS,
  type LiveState,
  META,
  newBuildId,
  publishCallerReference,
  rollbackCallerReference,
  rollbackTarget,
  type StoredObject,
} from './core.ts';

const OPENAPI = 'openapi.yaml';
const ERROR_PAGE = 'errors/500.json';

function stamped(buildId: string | null, extra: Record<string, string> = {}): StoredObject {
  const metadata: Record<string, string> = { ...extra };
  if (buildId !== null) {
    metadata[META.buildId] = buildId;
    metadata[META.plansHash] = 'hash-a';
    metadata[META.countRunning] = '22';
    metadata[META.countStrength] = '22';
    metadata[META.generatedAt] = '2026-03-01T10:00:00.000Z';
  }
  return { metadata, lastModified: new Date('2026-03-01T10:00:01.500Z'), etag: 'etag-of-object' };
}

/** A whole live build as S3 describes it: the served objects stamped, the error page bare with its MD5 ETag. */
function wholeLive(buildId: string, sha: Record<string, string> = {}): Record<string, StoredObject | null> {
  const objects = Object.fromEntries(
    LIVE_KEYS.map((key) => [key, stamped(buildId, sha[key] ? { [META.sha256]: sha[key] } : {})]),
  );
  const catalog = objects['catalog.json'] as StoredObject;
  objects['catalog.json'] = {
    ...catalog,
    metadata: {
      ...catalog.metadata,
      [META.errorPageMd5]: 'md5-500',
      [META.errorPageSha256]: sha[ERROR_PAGE] ?? 'none',
    },
  };
  objects[ERROR_PAGE] = { metadata: {}, lastModified: catalog.lastModified, etag: 'md5-500' };
  return objects;
}

const options: GuardOptions = { force: false, allowEmpty: false, minRatio: 0.5 };
const sha = { [OPENAPI]: 'sha-openapi', [ERROR_PAGE]: 'sha-500' };
const candidate = (plans: number, plansHash = 'hash-b'): Candidate => ({ plans, plansHash, sha256: sha });

describe('build ids', () => {
  it('compacts generatedAt so ids sort by build time, with a random suffix', () => {
    expect(compactTime('2026-03-01T10:15:00.123Z')).toBe('20260301T101500123Z');
    const early = newBuildId('2026-03-01T09:59:59.999Z', 'ffffff');
    const late = newBuildId('2026-03-01T10:00:00.000Z', '000000');
    expect(early).toBe('20260301T095959999Z-ffffff');
    expect(early < late).toBe(true);
    expect(BUILD_ID.test(late)).toBe(true);
  });

  it('fails on a time that is not ISO 8601 UTC with milliseconds', () => {
    expect(() => compactTime('2026-03-01T10:15:00Z')).toThrow('"2026-03-01T10:15:00Z"');
  });

  it('stamps every served object with the build, the plans hash, the counts and its own SHA-256', () => {
    const stamp = {
      buildId: 'b1',
      generatedAt: '2026-03-01T10:00:00.000Z',
      counts: { running: 3, strength: 4 },
      plansHash: 'h',
    };
    const metadata = buildMetadata(stamp, [
      { key: 'catalog-running.json', body: Buffer.from('abc') },
      { key: 'catalog.json', body: Buffer.from('abc') },
      { key: ERROR_PAGE, body: Buffer.from('oops') },
    ]);
    const common = {
      'build-id': 'b1',
      'generated-at': '2026-03-01T10:00:00.000Z',
      'plans-hash': 'h',
      'count-running': '3',
      'count-strength': '4',
      sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    };
    expect(metadata['catalog-running.json']).toEqual(common);
    expect(metadata['catalog.json']).toEqual({
      ...common,
      'error-page-sha256': createHash('sha256').update('oops').digest('hex'),
      'error-page-md5': createHash('md5').update('oops').digest('hex'),
    });
  });

  it('puts no metadata on the error page, which CloudFront serves without any function', () => {
    const stamp = {
      buildId: 'b1',
      generatedAt: '2026-03-01T10:00:00.000Z',
      counts: { running: 0, strength: 0 },
      plansHash: 'h',
    };
    expect(buildMetadata(stamp, [{ key: ERROR_PAGE, body: Buffer.from('{}') }])[ERROR_PAGE]).toEqual({});
  });
});

describe('what the live objects say', () => {
  it('recognises one whole build and archives it under its id', () => {
    const live = describeLive(wholeLive('b1'));
    expect(live).toMatchObject({ exists: true, buildId: 'b1', plans: 44, complete: true, archiveId: 'b1' });
  });

  it('does not archive a half-finished upload (objects of two builds)', () => {
    const objects = wholeLive('b1');
    objects['catalog-strength.json'] = stamped('b2');
    const live = describeLive(objects);
    expect(live).toMatchObject({ buildId: 'b1', complete: false, archiveId: null });
  });

  it('archives objects uploaded by hand (no metadata) under a legacy id from their time', () => {
    const objects = Object.fromEntries(LIVE_KEYS.map((key) => [key, stamped(null)]));
    expect(describeLive(objects)).toMatchObject({
      exists: true,
      buildId: null,
      plans: null,
      complete: false,
      archiveId: '20260301T100001500Z-legacy',
    });
  });

  it('does not take an error page of another build for this build', () => {
    const objects = wholeLive('b1');
    objects[ERROR_PAGE] = { metadata: {}, lastModified: null, etag: 'md5-of-another-page' };
    expect(describeLive(objects)).toMatchObject({ buildId: 'b1', complete: false, archiveId: null });
  });

  it('names the missing objects of an empty bucket', () => {
    const live = describeLive(Object.fromEntries(LIVE_KEYS.map((key) => [key, null])));
    expect(live).toMatchObject({ exists: false, complete: false, archiveId: null, missing: LIVE_KEYS });
  });
});

describe('guards', () => {
  const live: LiveState = describeLive(wholeLive('b1', sha));

  it('refuses an empty catalog, naming the live count and the flag', () => {
    expect(decide(candidate(0), live, 44, options)).toEqual({
      action: 'refuse',
      guard: 'empty',
      reason: `refused: the new catalog has 0 plans (live build b1 has 44); ${settingRef('allowEmpty')} publishes an empty catalog`,
    });
  });

  it('refuses a catalog below the ratio of the live plans, naming the numbers', () => {
    expect(decide(candidate(21), live, 44, options)).toEqual({
      action: 'refuse',
      guard: 'shrink',
      reason: `refused: the new catalog has 21 plans, fewer than 0.5 × the 44 plans of live build b1 (22); ${settingRef('force')} publishes it anyway`,
    });
  });

  it('accepts exactly the ratio, and less with --force', () => {
    expect(decide(candidate(22), live, 44, options).action).toBe('upload');
    expect(decide(candidate(1), live, 44, { ...options, force: true }).action).toBe('upload');
  });

  it('needs both --allow-empty and --force to empty a live catalog', () => {
    expect(decide(candidate(0), live, 44, { ...options, allowEmpty: true })).toMatchObject({
      guard: 'shrink',
    });
    expect(decide(candidate(0), live, 44, { ...options, allowEmpty: true, force: true }).action).toBe(
      'upload',
    );
  });

  it('has no shrink guard without a live catalog', () => {
    expect(decide(candidate(1), describeLive({}), null, options)).toEqual({
      action: 'upload',
      openapiChanged: true,
    });
  });

  it('skips content identical to the live build, unless forced', () => {
    expect(decide(candidate(44, 'hash-a'), live, 44, options)).toMatchObject({
      action: 'skip',
      reason: expect.stringContaining('identical to live build b1'),
    });
    expect(decide(candidate(44, 'hash-a'), live, 44, { ...options, force: true })).toEqual({
      action: 'upload',
      openapiChanged: false,
    });
  });

  it('uploads the same plans when openapi.yaml or the error page changed', () => {
    const otherOpenapi = { ...candidate(44, 'hash-a'), sha256: { ...sha, [OPENAPI]: 'new' } };
    expect(decide(otherOpenapi, live, 44, options)).toEqual({ action: 'upload', openapiChanged: true });
    const otherPage = { ...candidate(44, 'hash-a'), sha256: { ...sha, [ERROR_PAGE]: 'new' } };
    expect(decide(otherPage, live, 44, options)).toEqual({ action: 'upload', openapiChanged: false });
  });

  it('uploads the same plans over a half-finished upload, so a re-run converges', () => {
    const objects = wholeLive('b1', sha);
    objects[ERROR_PAGE] = null;
    expect(decide(candidate(44, 'hash-a'), describeLive(objects), 44, options).action).toBe('upload');
  });
});

describe('history', () => {
  const keys = [
    ...LIVE_KEYS.map((key) => historyKey('20260101T000000000Z-aaaaaa', key)),
    ...LIVE_KEYS.map((key) => historyKey('20260301T000000000Z-cccccc', key)),
    historyKey('20260201T000000000Z-bbbbbb', 'catalog.json'),
    'history/stray.txt',
    'history/20260201T000000000Z-bbbbbb/other.txt',
  ];

  it('groups keys into builds, newest first, marking incomplete ones', () => {
    expect(groupHistory(keys).map((build) => [build.id, build.complete])).toEqual([
      ['20260301T000000000Z-cccccc', true],
      ['20260201T000000000Z-bbbbbb', false],
      ['20260101T000000000Z-aaaaaa', true],
    ]);
  });

  it('prunes all but the newest builds', () => {
    expect(buildsToPrune(groupHistory(keys), 1)).toEqual([
      '20260201T000000000Z-bbbbbb',
      '20260101T000000000Z-aaaaaa',
    ]);
    expect(buildsToPrune(groupHistory(keys), 20)).toEqual([]);
  });

  it('rolls back to the newest complete build older than the live one by default', () => {
    const builds = groupHistory(keys);
    expect(rollbackTarget(builds, '20260401T000000000Z-dddddd', undefined)).toEqual({
      id: '20260301T000000000Z-cccccc',
    });
    // The live build is itself in the history (after a rollback): go one further back, skipping incomplete.
    expect(rollbackTarget(builds, '20260301T000000000Z-cccccc', undefined)).toEqual({
      id: '20260101T000000000Z-aaaaaa',
    });
    expect(rollbackTarget(builds, '20260101T000000000Z-aaaaaa', undefined)).toEqual({
      error:
        'no complete build older than live build 20260101T000000000Z-aaaaaa in the history (3 builds there)',
    });
  });

  it('fails to roll back to an unknown or incomplete build, saying why', () => {
    const builds = groupHistory(keys);
    expect(rollbackTarget(builds, null, '20250101T000000000Z-zzzzzz')).toMatchObject({
      error: expect.stringContaining('no such build in the history'),
    });
    expect(rollbackTarget(builds, null, '20260201T000000000Z-bbbbbb')).toEqual({
      error: `${settingRef('to')} "20260201T000000000Z-bbbbbb": the history build is incomplete (missing catalog-strength.json, catalog-running.json, openapi.yaml, errors/500.json)`,
    });
  });
});

describe('invalidation', () => {
  it('invalidates the viewer path and the rewritten catalogs, and openapi.yaml only when it changed', () => {
    expect(invalidationPaths(false)).toEqual(['/api/plans', '/catalog*']);
    expect(invalidationPaths(true)).toEqual(['/api/plans', '/catalog*', '/openapi.yaml']);
  });

  it('derives caller references from the build id', () => {
    expect(publishCallerReference('20260301T000000000Z-cccccc')).toBe('publish-20260301T000000000Z-cccccc');
    expect(rollbackCallerReference('20260301T000000000Z-cccccc', new Date('2026-03-02T08:00:00.000Z'))).toBe(
      'rollback-20260301T000000000Z-cccccc-20260302T080000000Z',
    );
  });
});
