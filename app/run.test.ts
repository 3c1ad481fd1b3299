import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as catalogsModule from '../builder/catalogs.ts';
import * as compressModule from '../builder/compress.ts';
import * as pagesModule from '../builder/pages.ts';
import { SourceError } from '../contract/errors.ts';
import { CATALOGS, STATE_LAST_RUN, STATE_RUN_LOCK } from '../contract/index.ts';
import { PublishRefusedError } from '../publish/errors.ts';
import { acquireRunLock } from '../publish/lock.ts';
import type { OriginStore } from '../publish/origin.ts';
import { readPointer } from '../publish/pointer.ts';
import type { PublishTarget } from '../publish/steps.ts';
import { fewPlansFile } from '../testing/aws.ts';
import { ROOT } from '../testing/cli.ts';
import { refusedPort } from '../testing/postgres.ts';
import {
  publishSummaryOf,
  runClock,
  TARGET_KINDS,
  testPublishSettings,
  usePublishTarget,
} from '../testing/targets.ts';
import { type LastRun, parseLastRun } from './last-run.ts';
import { type PublishSettings, publish } from './run.ts';

/**
 * How many variants a build compressed, how often it rendered a plan page and the catalogs, counted through the
 * real functions (spies on their modules' exports, which the builder calls through; restored after the file).
 */
const work = { compressions: 0, pages: 0, catalogs: 0 };
beforeAll(() => {
  const { compress } = compressModule;
  const { renderCatalogs } = catalogsModule;
  const { renderPlanPage } = pagesModule;
  vi.spyOn(compressModule, 'compress').mockImplementation((jobs) => {
    work.compressions += jobs.length;
    return compress(jobs);
  });
  vi.spyOn(catalogsModule, 'renderCatalogs').mockImplementation((...args) => {
    work.catalogs += 1;
    return renderCatalogs(...args);
  });
  vi.spyOn(pagesModule, 'renderPlanPage').mockImplementation((...args) => {
    work.pages += 1;
    return renderPlanPage(...args);
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

/** The source of the runs: a few plans of the fixtures (testing/aws.ts), 14: 10 running, 4 strength. */
let PLANS = '';
beforeAll(async () => {
  PLANS = await fewPlansFile();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Publish settings: the defaults, a few plans, an https base URL; a source that fails, fails at once. */
const settings = (extra: Partial<PublishSettings> = {}) =>
  testPublishSettings(PLANS, { sourceRetries: 0, sourceConnectTimeout: 2_000, ...extra });
const runOptions = runClock();

/** The record the last run left at the origin. */
async function lastRun(origin: OriginStore): Promise<LastRun> {
  const object = await origin.get(STATE_LAST_RUN);
  expect(object, `${STATE_LAST_RUN} at ${origin.name}`).not.toBeNull();
  expect(object?.cacheControl).toBe('no-store');
  const parsed = parseLastRun(object?.body ?? Buffer.alloc(0));
  if (!('record' in parsed)) throw new Error(parsed.problem);
  return parsed.record;
}

/** A source URL nothing listens on: the source is down. */
async function downSource(): Promise<string> {
  return `http://127.0.0.1:${await refusedPort()}/plans.json`;
}

describe.each(TARGET_KINDS)('every run leaves its record, on %s', (kind) => {
  const under = usePublishTarget(kind, 'catalog-run-');

  it('a publish: published, the build, its counts, and it confirms the live build', async () => {
    const outcome = await publish(settings(), under.target, runOptions());
    const record = await lastRun(under.target.origin);
    expect(record).toEqual(outcome.record);
    expect(record).toMatchObject({
      outcome: 'published',
      buildId: publishSummaryOf(outcome.summary).buildId,
      counts: { running: 10, strength: 4 },
      plans: 14,
      invalidRows: 0,
      confirmed: { buildId: publishSummaryOf(outcome.summary).buildId },
    });
    expect(outcome.warnings).toEqual([]);
  });

  it('a run whose source is down: failed, the reason, and the live build and its confirmation stay', async () => {
    const first = await publish(settings(), under.target, runOptions());
    const source = await downSource();
    const failed = publish(settings({ source }), under.target, runOptions());
    await expect(failed).rejects.toThrow(SourceError);
    const record = await lastRun(under.target.origin);
    expect(record).toMatchObject({
      outcome: 'failed',
      error: 'SourceError',
      buildId: null,
      counts: null,
      confirmed: first.record.confirmed,
    });
    expect(record.reason).toMatch(
      new RegExp(`^source ${source.replaceAll('.', '\\.')}: .*connection refused`),
    );
    expect((await readPointer(under.target.kvs)).live).toBe(publishSummaryOf(first.summary).buildId);
  });

  it('a run whose source file is missing: failed, naming the file', async () => {
    const missing = `${under.dir}/no-such-plans.json`;
    await expect(publish(settings({ source: missing }), under.target, runOptions())).rejects.toThrow(
      SourceError,
    );
    expect(await lastRun(under.target.origin)).toMatchObject({
      outcome: 'failed',
      reason: expect.stringContaining(missing),
    });
  });

  it('a run refused by a guard: refused, the guard, the counts of the refused build', async () => {
    await publish(settings(), under.target, runOptions());
    const empty = `${ROOT}/fixtures/empty.json`;
    await expect(publish(settings({ source: empty }), under.target, runOptions())).rejects.toThrow(
      PublishRefusedError,
    );
    expect(await lastRun(under.target.origin)).toMatchObject({
      outcome: 'refused',
      guard: 'empty',
      counts: { running: 0, strength: 0 },
      reason: expect.stringMatching(
        /^refused: the new catalog has 0 plans .*--allow-empty publishes an empty catalog$/,
      ),
    });
  });

  it('a record that cannot be written: the run keeps its own outcome or error, and a warning says so', async () => {
    const reported: string[] = [];
    const origin = under.target.origin;
    const broken: PublishTarget = {
      kvs: under.target.kvs,
      origin: {
        name: origin.name,
        get: (key) => origin.get(key),
        list: (prefix) => origin.list(prefix),
        listPrefixes: (prefix) => origin.listPrefixes(prefix),
        delete: (keys) => origin.delete(keys),
        deletePrefix: (prefix) => origin.deletePrefix(prefix),
        replace: (object, md5) => origin.replace(object, md5),
        copy: (from, to, options) => origin.copy(from, to, options),
        put: (object, options) =>
          object.key === STATE_LAST_RUN
            ? Promise.reject(Object.assign(new Error('AccessDenied'), { name: 'AccessDenied' }))
            : origin.put(object, options),
      },
    };
    const outcome = await publish(settings(), broken, runOptions({ report: (line) => reported.push(line) }));
    expect(outcome.summary.result).toBe('published');
    const warning = `writing state/last-run.json to ${origin.name} failed (AccessDenied: AccessDenied); catalog status shows the run before this one`;
    expect(outcome.warnings).toEqual([warning]);
    expect(reported).toContain(`warning: ${warning}`);

    reported.length = 0;
    const down = publish(
      settings({ source: await downSource() }),
      broken,
      runOptions({ report: (line) => reported.push(line) }),
    );
    await expect(down).rejects.toThrow(SourceError);
    expect(reported).toContain(`warning: ${warning}`);
    expect(await origin.get(STATE_LAST_RUN)).toBeNull();
  });
});

/** Every object at the origin (the lock and the run record included), by key, with the MD5 of its bytes. */
async function objectsAt(origin: OriginStore): Promise<Map<string, string>> {
  const keys = (await origin.list('')).map((object) => object.key);
  return new Map(
    await Promise.all(keys.map(async (key) => [key, (await origin.get(key))?.md5 ?? ''] as const)),
  );
}

/** The keys added, removed or changed between two snapshots of an origin. */
function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])]
    .filter((key) => before.get(key) !== after.get(key))
    .sort();
}

describe.each(TARGET_KINDS)('a run costs what changed, one run at a time, on %s', (kind) => {
  const under = usePublishTarget(kind, 'catalog-run-cost-');

  it('an unchanged run compresses nothing, renders no page nor catalog, and writes only its run record', async () => {
    work.compressions = 0;
    work.pages = 0;
    work.catalogs = 0;
    const first = publishSummaryOf((await publish(settings(), under.target, runOptions())).summary);
    expect(work.compressions).toBeGreaterThan(0);
    expect(work.pages).toBeGreaterThanOrEqual(14);
    expect(work.catalogs).toBe(1);
    const before = await objectsAt(under.target.origin);
    work.compressions = 0;
    work.pages = 0;
    work.catalogs = 0;
    under.s3?.requests.splice(0);

    const again = await publish(settings(), under.target, runOptions());
    expect(publishSummaryOf(again.summary)).toMatchObject({
      result: 'skipped-identical',
      previousBuildId: first.buildId,
      bytes: 0,
    });
    expect(work).toEqual({ compressions: 0, pages: 0, catalogs: 0 });
    expect(changedKeys(before, await objectsAt(under.target.origin))).toEqual([STATE_LAST_RUN]);
    expect(await lastRun(under.target.origin)).toMatchObject({ outcome: 'skipped-identical' });
    if (under.s3) {
      // Its writes at the bucket: the run lock taken, the run record, the run lock released (a bulk delete).
      const writes = under.s3.requests
        .filter((request) => request.method !== 'GET' && request.method !== 'HEAD')
        .map((request) => `${request.method} ${request.key}`);
      expect(writes).toEqual([`PUT ${STATE_RUN_LOCK}`, `PUT ${STATE_LAST_RUN}`, 'POST ']);
    }
  });

  it('a run after a change compresses its served objects, openapi.yaml to the same bytes as before', async () => {
    work.compressions = 0;
    const first = publishSummaryOf((await publish(settings(), under.target, runOptions())).summary);
    // Both variants of the three catalogs and openapi.yaml.
    expect(work.compressions).toBe(2 * (CATALOGS.length + 1));
    const rows = JSON.parse(await readFile(PLANS, 'utf8')) as { title: string }[];
    const source = `${under.dir}/retitled.json`;
    const retitled = rows.map((row, n) => (n === 5 ? { ...row, title: `${row.title} renamed` } : row));
    await writeFile(source, JSON.stringify(retitled));
    work.compressions = 0;
    under.s3?.requests.splice(0);

    const next = publishSummaryOf((await publish(settings({ source }), under.target, runOptions())).summary);
    expect(next).toMatchObject({ result: 'published', previousBuildId: first.buildId });
    // Each catalog holds generatedAt, so each is new; openapi.yaml is made again (a few milliseconds).
    expect(work.compressions).toBe(2 * (CATALOGS.length + 1));
    const variants = ['openapi.yaml.br', 'openapi.yaml.gz'];
    for (const build of [first.buildId, next.buildId]) {
      const objects = await under.target.origin.list(`builds/${build}/openapi.yaml`);
      expect(objects.map((object) => object.key.slice(`builds/${build}/`.length)).sort()).toEqual([
        'openapi.yaml',
        ...variants,
      ]);
    }
    const [was, now] = await Promise.all(
      [first.buildId, next.buildId].map(async (build) =>
        Promise.all(
          variants.map(async (key) => (await under.target.origin.get(`builds/${build}/${key}`))?.body),
        ),
      ),
    );
    expect(now).toEqual(was);
  });

  it('a second run during a first exits busy, naming the first, and changes nothing but its run record', async () => {
    const live = publishSummaryOf((await publish(settings(), under.target, runOptions())).summary);
    // The first run holds the lock, paused where it reads its source.
    let resume = () => {};
    let reading = () => {};
    const paused = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const inSource = new Promise<void>((resolve) => {
      reading = resolve;
    });
    const running = publish(settings({ baseUrl: 'https://catalog.example.org' }), under.target, {
      ...runOptions(),
      source: async () => {
        reading();
        await paused;
        return { source: PLANS };
      },
    });
    await inSource;
    const before = await objectsAt(under.target.origin);
    const pointer = await readPointer(under.target.kvs);
    work.compressions = 0;
    work.pages = 0;
    work.catalogs = 0;

    const second = await publish(
      settings({ baseUrl: 'https://other.example.org' }),
      under.target,
      runOptions(),
    );
    expect(second.summary).toMatchObject({
      command: 'publish',
      result: 'busy',
      holder: { by: 'catalog publish', pid: process.pid },
    });
    expect(second.summary.result === 'busy' && second.summary.reason).toMatch(
      /^busy: another run holds the run lock at .+: catalog publish \(pid \d+ on .+, since .+, lock until .+\); this run did nothing$/,
    );
    expect(work).toEqual({ compressions: 0, pages: 0, catalogs: 0 });
    expect(changedKeys(before, await objectsAt(under.target.origin))).toEqual([STATE_LAST_RUN]);
    expect(await readPointer(under.target.kvs)).toEqual(pointer);
    expect(await lastRun(under.target.origin)).toMatchObject({
      outcome: 'busy',
      confirmed: { buildId: live.buildId },
    });

    resume();
    const first = publishSummaryOf((await running).summary);
    expect(first).toMatchObject({ result: 'published', previousBuildId: live.buildId });
    expect(await under.target.origin.get(STATE_RUN_LOCK)).toBeNull();
  });

  it('a run takes over the expired lock of a run that crashed, says so, and publishes', async () => {
    // A run that took the lock ten minutes ago and never came back (its renewals never fire, no release).
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'], now: Date.now() - 600_000 });
    const crashed = await acquireRunLock(under.target.origin, 'lambda');
    vi.useRealTimers();
    expect('held' in crashed).toBe(true);
    const lines: string[] = [];
    const outcome = await publish(
      settings(),
      under.target,
      runOptions({ report: (line) => lines.push(line) }),
    );
    const summary = publishSummaryOf(outcome.summary);
    expect(summary.result).toBe('published');
    expect(summary.warnings).toEqual([
      expect.stringMatching(/^took over the run lock of lambda \(pid \d+ on .+\), which had expired$/),
    ]);
    expect(lines).toContain(`warning: ${summary.warnings[0]}`);
    expect(await under.target.origin.get(STATE_RUN_LOCK)).toBeNull();
  });
});
