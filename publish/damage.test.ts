/**
 * Damage at rest, on both origins (a directory, and s3rver changed through the S3 API): a byte flipped at the same
 * size, a truncation and a deletion of each object a rollback or a publish relies on — the catalog variant of the
 * build before the live one, a kept page, a live page and a variant of the live build. A rollback refuses a
 * damaged target, naming the object, and moves nothing; an unchanged publish ends with every served byte right.
 * Both origins judge by the MD5s their listings give, so both answer alike.
 */
import { createHash } from 'node:crypto';
import { open, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { publish, rollback } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import type { PreparedBuild } from '../builder/build.ts';
import { settingRef } from '../contract/errors.ts';
import { pageContentKey, planPageKey } from '../contract/index.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { fewRows, prepareRows, startS3, type TestS3 } from '../testing/aws.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { publishSummaryOf } from '../testing/targets.ts';
import { buildKey, type StoredManifest } from './core.ts';
import { DirectoryOrigin } from './dir-origin.ts';
import { HistoryError } from './errors.ts';
import type { OriginStore } from './origin.ts';
import { readPointer } from './pointer.ts';
import { S3Origin } from './s3-origin.ts';
import { type PublishTarget, readManifest } from './steps.ts';

const ORIGINS = ['a directory', 's3rver'] as const;
const OBJECTS = [
  'a variant of the build before',
  'a kept page',
  'a live page',
  'a variant of the live build',
] as const;
const DAMAGES = ['a byte flipped', 'truncated', 'deleted'] as const;
type Origin = (typeof ORIGINS)[number];
type Damaged = (typeof OBJECTS)[number];
type Damage = (typeof DAMAGES)[number];

/**
 * What an unchanged publish does: skips (the live build is whole), or replaces the live build with a fresh one,
 * saying why. A rollback refuses in every case: the build before names the damaged object (the live page too: its
 * bytes were that build's page as well) — but the live build's variant, where the rollback runs after the
 * publish and so goes back to the damaged build.
 */
const FRESH: readonly Damaged[] = ['a live page', 'a variant of the live build'];

let rows: { id: string; title: string }[];
let s3: TestS3;
beforeAll(async () => {
  rows = (await fewRows()) as typeof rows;
  s3 = await startS3();
});
afterAll(() => s3.stop());

const scratch = useScratchDir({ prefix: 'catalog-damage-' });
/** Builds, made once: A; B, plan 1 retitled (A's page of plan 1 is then kept); B again, later. */
const builds = new Map<string, Promise<PreparedBuild>>();
const prepared = (name: 'a' | 'b' | 'b again') => {
  let made = builds.get(name);
  if (!made) {
    const subset =
      name === 'a' ? rows : rows.map((row, n) => (n === 1 ? { ...row, title: `${row.title} b` } : row));
    const at = {
      a: '2026-03-01T10:00:00.000Z',
      b: '2026-03-01T11:00:00.000Z',
      'b again': '2026-03-01T12:00:00.000Z',
    };
    made = prepareRows(subset, new Date(at[name]));
    builds.set(name, made);
  }
  return made;
};

async function publishBuild(build: PreparedBuild, target: PublishTarget, extra: { unpin?: boolean } = {}) {
  const settings = {
    ...parseSettings('build', () => undefined, String),
    baseUrl: 'https://plans.example.com',
    allowEmpty: false,
    minRatio: 0.5,
    keepBuilds: defaultOf('keepBuilds'),
  };
  const options = {
    now: new Date(build.generatedAt),
    force: false,
    report: () => {},
    prepared: build,
    ...extra,
  };
  return publishSummaryOf((await publish(settings, target, options)).summary);
}

/** Damages the object at `key` as `damage` says: in place on a directory, through the S3 API on s3rver. */
async function damage(origin: Origin, target: PublishTarget, key: string, how: Damage): Promise<void> {
  const body = (await target.origin.get(key))?.body;
  if (!body) throw new Error(`${key} is not there to damage`);
  if (origin === 'a directory') {
    const path = join(scratch.dir, 'origin', key);
    if (how === 'deleted') await rm(path);
    else if (how === 'truncated') await truncate(path, Math.floor(body.length / 2));
    else {
      const file = await open(path, 'r+');
      await file.write(Buffer.from([(body[body.length - 1] ?? 0) ^ 1]), 0, 1, body.length - 1);
      await file.close();
    }
    return;
  }
  if (how === 'deleted') await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
  else {
    const bytes = how === 'truncated' ? body.subarray(0, Math.floor(body.length / 2)) : Buffer.from(body);
    if (how === 'a byte flipped') bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes }));
  }
}

const md5 = (bytes: Buffer | undefined) => bytes && createHash('md5').update(bytes).digest('hex');

/** Every byte the edge serves is the live build's: its objects, and each live page, read and hashed here. */
async function expectServedRight(target: PublishTarget, when: string): Promise<string> {
  const { live } = await readPointer(target.kvs);
  const manifest = (await readManifest(target.origin, live ?? '')) as StoredManifest;
  for (const [key, entry] of Object.entries(manifest.objects))
    expect(md5((await target.origin.get(buildKey(manifest.buildId, key)))?.body), `${when}: ${key}`).toBe(
      entry.md5,
    );
  for (const [id, digest] of Object.entries(manifest.pages))
    expect(md5((await target.origin.get(planPageKey(id)))?.body), `${when}: the page of ${id}`).toBe(digest);
  const listed = (await target.origin.list('plans/')).map((object) => object.key).sort();
  expect(listed, when).toEqual(Object.keys(manifest.pages).map(planPageKey).sort());
  return manifest.buildId;
}

describe.each(ORIGINS)('damage at rest on %s', (origin) => {
  let target: PublishTarget;
  beforeEach(async () => {
    const store: OriginStore =
      origin === 'a directory'
        ? new DirectoryOrigin(join(scratch.dir, 'origin'))
        : new S3Origin(s3.client, s3.bucket);
    if (origin === 's3rver') await store.deletePrefix('');
    target = { origin: store, kvs: new FileKeyValueStore(join(scratch.dir, 'kvs.json'), { create: true }) };
  });

  describe.each(OBJECTS)('of %s', (object) => {
    it.each(DAMAGES)(
      '%s: a rollback refuses a damaged target, naming it; an unchanged publish serves right',
      async (how) => {
        const a = await publishBuild(await prepared('a'), target);
        const b = await publishBuild(await prepared('b'), target);
        const manifest = async (id: string) => (await readManifest(target.origin, id)) as StoredManifest;
        const [before, live] = [await manifest(a.buildId), await manifest(b.buildId)];
        const changed = rows[1]?.id.toLowerCase() ?? '';
        const shared = rows[2]?.id.toLowerCase() ?? '';
        const kept = pageContentKey(before.pages[changed] ?? '');
        const key = {
          'a variant of the build before': buildKey(a.buildId, 'catalog.json.br'),
          'a kept page': kept,
          'a live page': planPageKey(shared),
          'a variant of the live build': buildKey(b.buildId, 'catalog.json.gz'),
        }[object];
        // What a refusal names: the object, or the page whose bytes were in it.
        const named = {
          'a variant of the build before': 'catalog.json.br',
          'a kept page': `the page of ${changed} (${before.pages[changed]}) is neither live nor at ${kept}`,
          'a live page': `the page of ${shared} (${before.pages[shared]}) is neither live nor at ${pageContentKey(before.pages[shared] ?? '')}`,
          'a variant of the live build': 'catalog.json.gz',
        }[object];
        expect(live.pages[shared]).toBe(before.pages[shared]);
        await damage(origin, target, key, how);

        const refuse = async (damagedBuild: string) => {
          const pointer = await readPointer(target.kvs);
          const pages = await target.origin.list('plans/');
          const refused = rollback(target, { now: new Date('2026-03-02T00:00:00.000Z') });
          await expect(refused).rejects.toThrow(HistoryError);
          await expect(refused).rejects.toThrow(
            `build ${damagedBuild} at ${target.origin.name} is damaged (`,
          );
          await expect(refused).rejects.toThrow(named);
          // Nothing moved: the pointer, and every live page.
          expect(await readPointer(target.kvs)).toEqual(pointer);
          expect(await target.origin.list('plans/')).toEqual(pages);
        };
        if (object !== 'a variant of the live build') await refuse(a.buildId);

        const again = await publishBuild(await prepared('b again'), target);
        if (!FRESH.includes(object))
          expect(again).toMatchObject({ result: 'skipped-identical', warnings: [] });
        else {
          expect(again.result).toBe('published');
          expect(again.warnings).toEqual([
            expect.stringMatching(
              new RegExp(`^live build ${b.buildId} is damaged \\(.*${named.replaceAll(/[().]/g, '\\$&')}`),
            ),
          ]);
        }
        expect(await expectServedRight(target, `${object} ${how}, then a publish`)).toBe(
          FRESH.includes(object) ? again.buildId : b.buildId,
        );
        if (object === 'a variant of the live build') await refuse(b.buildId);
      },
    );
  });

  it('pinned, an unchanged run over a damaged live build moves nothing, names the damage and --unpin', async () => {
    const a = await publishBuild(await prepared('a'), target);
    await publishBuild(await prepared('b'), target);
    await rollback(target, { now: new Date('2026-03-02T00:00:00.000Z') });
    await damage(origin, target, buildKey(a.buildId, 'catalog.json.br'), 'a byte flipped');
    const pinned = await publishBuild(await prepared('b again'), target);
    expect(pinned).toMatchObject({ result: 'skipped-pinned', previousBuildId: a.buildId });
    expect(pinned.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^live build ${a.buildId} is damaged \\(catalog\\.json\\.br has other bytes \\(MD5 [0-9a-f]{32}\\)\\) and stays live while pinned: catalog publish ${settingRef('unpin')} replaces it with a fresh build$`,
        ),
      ),
    ]);
    expect((await readPointer(target.kvs)).live).toBe(a.buildId);
    const unpinned = await publishBuild(await prepared('b again'), target, { unpin: true });
    expect(unpinned.result).toBe('published');
    expect(await expectServedRight(target, 'unpinned')).toBe(unpinned.buildId);
  });
});
