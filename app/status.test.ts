/**
 * `catalog status`: the judgement on facts made here (pure), then the facts read from real peers — s3rver with
 * the KeyValueStore API's stand-in, and a directory with the store file — after real runs.
 */
import { unlink, writeFile } from 'node:fs/promises';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { settingRef } from '../contract/errors.ts';
import { KVS_CORS_ORIGIN, KVS_KEY_PREFIX, KVS_LIVE_BUILD, KVS_PIN } from '../contract/index.ts';
import { issueKey } from '../keys/manage.ts';
import type { StoredManifest } from '../publish/core.ts';
import { acquireRunLock } from '../publish/lock.ts';
import { fewPlansFile } from '../testing/aws.ts';
import { planCounts } from '../testing/counts.ts';
import { publishSummaryOf, TARGET_KINDS, testPublishSettings, usePublishTarget } from '../testing/targets.ts';
import type { CanaryBeat, CanaryReport } from './canary.ts';
import type { LastRun } from './last-run.ts';
import { publish } from './run.ts';
import { renderMessage } from './settings/index.ts';
import {
  type AdviceTarget,
  catalogStatus,
  evaluateStatus,
  formatAge,
  type StatusFacts,
  StatusReport,
} from './status.ts';

const NOW = new Date('2026-03-02T12:00:00.000Z');
const HOUR = 3_600_000;
const MAX_AGE = 25 * HOUR;
const LIVE = '20260302T100000Z-0123abcd';

const manifest = (generatedAt: string): StoredManifest => ({
  buildId: LIVE,
  generatedAt,
  counts: planCounts({ running: 22, strength: 21 }),
  plans: 43,
  plansHash: 'ab'.repeat(32),
  inputsHash: 'cd'.repeat(32),
  objects: {
    'catalog.json': { size: 10, sha256: 'a'.repeat(64), md5: 'b'.repeat(32) },
    'catalog.json.br': { size: 5, sha256: 'c'.repeat(64), md5: 'd'.repeat(32) },
  },
  pages: {},
  root: {},
});

/** What the runs of these records were given. */
const SETTINGS = { source: '/srv/plans.json', withToken: false, baseUrl: 'https://catalog.example.com' };

const run = (extra: Partial<LastRun> = {}): LastRun => ({
  started: '2026-03-02T10:00:00.000Z',
  finished: '2026-03-02T10:00:05.000Z',
  outcome: 'published',
  reason: `published build ${LIVE} (43 plans); the live build was (none)`,
  buildId: LIVE,
  counts: planCounts({ running: 22, strength: 21 }),
  plans: 43,
  invalidRows: 0,
  durationMs: 5000,
  confirmed: { at: '2026-03-02T10:00:05.000Z', buildId: LIVE },
  settings: SETTINGS,
  ...extra,
});

const key = (partner: string, expires?: string) =>
  JSON.stringify({ partner, created: '2026-01-01T00:00:00.000Z', ...(expires ? { expires } : {}) });
/** A usable key: without one, every partner request gets 401 (degraded). */
const ACME: [string, string] = [`${KVS_KEY_PREFIX}${'0'.repeat(64)}`, key('acme')];
const STORE = 'arn:aws:cloudfront::123456789012:key-value-store/x';

function facts(extra: Partial<StatusFacts> = {}): StatusFacts {
  return {
    origin: 's3://catalog-origin',
    store: STORE,
    entries: new Map([[KVS_LIVE_BUILD, LIVE], ACME]),
    deployment: null,
    live: {
      kind: 'build',
      id: LIVE,
      manifest: manifest('2026-03-02T10:00:00.000Z'),
      damage: [],
      pageDamage: [],
    },
    lastRun: { record: run() },
    runLock: null,
    ...extra,
  };
}

/** The local stack: no setting names the target. */
const LOCAL: AdviceTarget = { kind: 'local-stack', flags: {} };

const judge = (f: StatusFacts, maxAgeMs = MAX_AGE) => evaluateStatus(f, { now: NOW, maxAgeMs });
const messages = (report: StatusReport) =>
  report.problems.map((p) => `${p.level}: ${renderMessage(p.message, 'cli')}`);

describe('the judgement', () => {
  it('healthy: the live build whole and fresh, the last run published; the report has the zod shape', () => {
    const report = judge(facts());
    expect(report).toMatchObject({
      health: 'healthy',
      exitCode: 0,
      problems: [],
      live: {
        state: 'build',
        buildId: LIVE,
        generatedAt: '2026-03-02T10:00:00.000Z',
        ageSeconds: 7200,
        confirmedAt: '2026-03-02T10:00:05.000Z',
        confirmedAgeSeconds: 7195,
        counts: planCounts({ running: 22, strength: 21 }),
        plans: 43,
        objects: { expected: 2, damaged: [] },
      },
      pin: null,
      lastRun: { outcome: 'published' },
      cors: { origin: null },
      thresholds: { maxAgeSeconds: 90_000, keyExpiryWarningSeconds: 604_800 },
    });
    expect(StatusReport.parse(report)).toEqual(report);
  });

  it('degraded: the catalog older than maxAge, unless a later run found the source unchanged', () => {
    const old = facts({
      live: {
        kind: 'build',
        id: LIVE,
        manifest: manifest('2026-03-01T10:00:00.000Z'),
        damage: [],
        pageDamage: [],
      },
      lastRun: { record: run({ confirmed: { at: '2026-03-01T10:00:00.000Z', buildId: LIVE } }) },
    });
    const stale = judge(old);
    expect(stale).toMatchObject({ health: 'degraded', exitCode: 1 });
    expect(messages(stale)).toEqual([
      'degraded: the catalog was last built or confirmed against the source 1d 2h ago (2026-03-01T10:00:00.000Z), more than --max-age 1d 1h',
    ]);
    const confirmed = judge({
      ...old,
      lastRun: {
        record: run({
          outcome: 'skipped-identical',
          confirmed: { at: '2026-03-02T11:00:00.000Z', buildId: LIVE },
        }),
      },
    });
    expect(confirmed.health).toBe('healthy');
    expect(confirmed.live).toMatchObject({ ageSeconds: 93_600, confirmedAgeSeconds: 3_600 });
    // A confirmation of another build (before a rollback) does not count for this one.
    const other = judge({
      ...old,
      lastRun: {
        record: run({ confirmed: { at: '2026-03-02T11:00:00.000Z', buildId: '20260301T000000Z-aaaaaaaa' } }),
      },
    });
    expect(other.health).toBe('degraded');
  });

  it('degraded: the last run failed or was refused, naming why', () => {
    const failed = judge(
      facts({
        lastRun: {
          record: run({
            outcome: 'failed',
            error: 'SourceError',
            finished: '2026-03-02T11:00:01.000Z',
            reason: 'source http://127.0.0.1:9/plans.json: cannot reach the service (connection refused)',
          }),
        },
      }),
    );
    expect(messages(failed)).toEqual([
      'degraded: the last run (finished 2026-03-02T11:00:01.000Z) failed: source http://127.0.0.1:9/plans.json: cannot reach the service (connection refused)',
    ]);
    const refused = judge(
      facts({ lastRun: { record: run({ outcome: 'refused', guard: 'shrink', reason: 'refused: …' }) } }),
    );
    expect(messages(refused)).toEqual([
      'degraded: the last run (finished 2026-03-02T10:00:05.000Z) was refused (shrink): refused: …',
    ]);
    expect(judge(facts({ lastRun: { problem: 'state/last-run.json is not JSON' } })).health).toBe('degraded');
  });

  it('degraded: a failure is not forgotten when a busy run follows it, until a run succeeds', () => {
    const failure = {
      finished: '2026-03-02T11:00:01.000Z',
      outcome: 'failed' as const,
      reason: 'source http://127.0.0.1:9/plans.json: cannot reach the service (connection refused)',
    };
    const busy = judge(
      facts({
        lastRun: {
          record: run({
            outcome: 'busy',
            started: '2026-03-02T11:00:08.000Z',
            finished: '2026-03-02T11:00:09.000Z',
            reason: 'busy: another run holds the run lock at s3://catalog-origin',
            failure,
          }),
        },
      }),
    );
    expect(messages(busy)).toEqual([
      `degraded: the run that finished 2026-03-02T11:00:01.000Z failed: ${failure.reason}; no run has succeeded since (the last, busy, finished 2026-03-02T11:00:09.000Z)`,
    ]);
    expect(judge(facts({ lastRun: { record: run({ failure: null }) } })).health).toBe('healthy');
  });

  it('degraded: a run that started and never finished (its lock expired, or its process is gone) counts as failed', () => {
    const holder = {
      by: 'catalog publish',
      host: 'builder-1',
      pid: 4242,
      since: '2026-03-02T11:50:00.000Z',
      expires: '2026-03-02T11:52:00.000Z',
    };
    const expired = judge(facts({ runLock: { holder, gone: false } }));
    expect(messages(expired)).toEqual([
      'degraded: a run never finished: catalog publish (pid 4242 on builder-1, since 2026-03-02T11:50:00.000Z, lock until 2026-03-02T11:52:00.000Z) let its run lock expire without recording how it ended (killed, or out of time); it counts as failed until a run succeeds',
    ]);
    expect(expired.runLock).toEqual({ ...holder, state: 'abandoned' });
    const running = { ...holder, expires: '2026-03-02T12:01:00.000Z' };
    const alive = judge(facts({ runLock: { holder: running, gone: false } }));
    expect(alive).toMatchObject({ health: 'healthy', runLock: { ...running, state: 'running' } });
    const gone = judge(facts({ runLock: { holder: running, gone: true } }));
    expect(messages(gone)).toEqual([
      'degraded: a run never finished: catalog publish (pid 4242 on builder-1, since 2026-03-02T11:50:00.000Z, lock until 2026-03-02T12:01:00.000Z) has exited without recording how it ended (killed, or out of time); it counts as failed until a run succeeds',
    ]);
    // Its record is there (it was stopped between the record and the release of its lock): it finished.
    const recorded = run({ started: '2026-03-02T11:49:59.000Z', finished: '2026-03-02T11:50:30.000Z' });
    expect(judge(facts({ runLock: { holder, gone: true }, lastRun: { record: recorded } })).health).toBe(
      'healthy',
    );
  });

  it('degraded: the source is not configured yet, saying what to do', () => {
    const reason =
      "secret arn:aws:secretsmanager:eu-west-1:123456789012:secret:src: holds no source yet (the placeholder the stack created); put the source there: aws secretsmanager put-secret-value --secret-id arn:aws:secretsmanager:eu-west-1:123456789012:secret:src --secret-string 'postgres://…'";
    const report = judge(
      facts({
        lastRun: {
          record: run({
            outcome: 'not-configured',
            error: 'SourceNotConfiguredError',
            finished: '2026-03-02T11:00:01.000Z',
            reason,
            failure: { finished: '2026-03-02T11:00:01.000Z', outcome: 'not-configured', reason },
          }),
        },
      }),
    );
    expect(messages(report)).toEqual([
      `degraded: the builder's source is not configured (run finished 2026-03-02T11:00:01.000Z): ${reason}`,
    ]);
  });

  it('degraded: no usable key, so every partner request gets 401, naming why', () => {
    const none = judge(facts({ entries: new Map([[KVS_LIVE_BUILD, LIVE]]) }));
    expect(messages(none)).toEqual([
      `degraded: no usable API key in ${STORE}: every partner request gets 401; issue one: catalog keys issue --partner LABEL`,
    ]);
    const unusable = judge(
      facts({
        entries: new Map([
          [KVS_LIVE_BUILD, LIVE],
          [`${KVS_KEY_PREFIX}${'4'.repeat(64)}`, key('gone', '2026-03-01T00:00:00.000Z')],
          [`${KVS_KEY_PREFIX}${'5'.repeat(64)}`, 'not a record'],
        ]),
      }),
    );
    expect(messages(unusable)).toEqual([
      `degraded: no usable API key in ${STORE} (1 expired, 1 unreadable): every partner request gets 401; issue one: catalog keys issue --partner LABEL`,
    ]);
  });

  it('healthy when pinned by a rollback and fresh, showing who pinned it and when', () => {
    const pin = { build: LIVE, at: '2026-03-02T11:00:00.000Z', by: 'rollback', reason: 'rolled back from X' };
    const report = judge(
      facts({
        entries: new Map([[KVS_LIVE_BUILD, LIVE], [KVS_PIN, JSON.stringify(pin)], ACME]),
        lastRun: { record: run({ outcome: 'skipped-pinned', reason: 'pinned' }) },
      }),
    );
    expect(report).toMatchObject({ health: 'healthy', pin });
  });

  it('broken: a live object missing or wrong, naming them, worst first', () => {
    const damage = [
      'catalog.json is missing',
      'catalog.json.br has 3 bytes, not 5',
      'catalog.json.gz has other bytes (MD5 00)',
      'openapi.yaml is missing',
    ];
    const report = judge(
      facts({
        live: {
          kind: 'build',
          id: LIVE,
          manifest: manifest('2026-03-02T10:00:00.000Z'),
          damage,
          pageDamage: [],
        },
        lastRun: { record: run({ outcome: 'failed', reason: 'x' }) },
      }),
    );
    expect(report).toMatchObject({ health: 'broken', exitCode: 2, live: { objects: { damaged: damage } } });
    expect(messages(report)[0]).toBe(
      `broken: live build ${LIVE} at s3://catalog-origin does not match its manifest: catalog.json is missing; catalog.json.br has 3 bytes, not 5; catalog.json.gz has other bytes (MD5 00); and 1 more; run catalog publish --source /srv/plans.json --force (a fresh build, every page written again), or catalog rollback`,
    );
    expect(report.problems.map((p) => p.level)).toEqual(['broken', 'degraded']);
  });

  it('broken: no live build, a pointer naming a build that is not there, or live pages that are not its pages', () => {
    expect(judge(facts({ entries: new Map(), live: { kind: 'none' }, lastRun: null })).exitCode).toBe(2);
    const missing = judge(
      facts({
        live: {
          kind: 'unreadable',
          id: LIVE,
          reason: `no readable builds/${LIVE}/manifest.json at s3://catalog-origin`,
        },
      }),
    );
    expect(messages(missing)).toEqual([
      `broken: build:live names ${LIVE}, which the edge cannot serve (no readable builds/${LIVE}/manifest.json at s3://catalog-origin): every catalog request gets 500; run catalog rollback (back to the build live before it, or --to another complete one), or catalog publish --source /srv/plans.json --recover`,
    ]);
    const garbage = judge(
      facts({
        entries: new Map([[KVS_LIVE_BUILD, '../..\nbuild']]),
        live: { kind: 'unreadable', id: '../..\nbuild', reason: 'not a build id' },
      }),
    );
    expect(garbage).toMatchObject({ health: 'broken', exitCode: 2, live: { buildId: '../..\nbuild' } });
    expect(messages(garbage)[0]).toBe(
      'broken: build:live names "../..\\nbuild", which the edge cannot serve (not a build id): every catalog request gets 500; run catalog rollback (back to the build live before it, or --to another complete one), or catalog publish --source /srv/plans.json --recover',
    );
    const pageDamage = ['plans/0a1b2c3d-0000-4000-8000-000000000001.html is not the build’s page'];
    const pages = judge(
      facts({
        live: {
          kind: 'build',
          id: LIVE,
          manifest: manifest('2026-03-02T10:00:00.000Z'),
          damage: [],
          pageDamage,
        },
      }),
    );
    expect(pages).toMatchObject({ health: 'broken', live: { pages: { expected: 0, damaged: pageDamage } } });
    expect(messages(pages)).toEqual([
      `broken: the live pages at s3://catalog-origin are not build ${LIVE}'s: ${pageDamage[0]}; run catalog publish --source /srv/plans.json (every run puts the live pages right first)`,
    ]);
  });

  it('advises each repair as a command that runs where status looked, with the source the last run read', () => {
    const damaged = (extra: Partial<StatusFacts> = {}) =>
      facts({
        live: {
          kind: 'build',
          id: LIVE,
          manifest: manifest('2026-03-02T10:00:00.000Z'),
          damage: ['catalog.json is missing'],
          pageDamage: [],
        },
        ...extra,
      });
    const advice = (f: StatusFacts, target: AdviceTarget) =>
      renderMessage(
        evaluateStatus(f, { now: NOW, maxAgeMs: MAX_AGE, target }).problems[0]?.message ?? '',
        'cli',
      )
        .replace(/^.*?; run /, '')
        .replace(' (a fresh build, every page written again)', '');
    const deployment: AdviceTarget = { kind: 'deployment', flags: { deployment: 'Prod' } };
    const pinned = new Map([
      [KVS_LIVE_BUILD, LIVE],
      ACME,
      ['build:pin', JSON.stringify({ build: LIVE, at: '2026-03-02T11:00:00.000Z', by: 'x', reason: 'y' })],
    ]);
    // A deployment: its builder, with its own source, runs again; a pin is removed first.
    expect(advice(damaged(), deployment)).toBe(
      'catalog rebuild --force --deployment Prod, or catalog rollback --deployment Prod',
    );
    expect(advice(damaged({ entries: pinned }), deployment)).toBe(
      'catalog unpin --deployment Prod, then catalog rebuild --force --deployment Prod, or catalog rollback --deployment Prod',
    );
    expect(advice(facts({ entries: new Map([ACME]), live: { kind: 'none' } }), deployment)).toBe(
      'catalog rebuild --deployment Prod',
    );
    // Settings that name the target: repeated as given, quoted for the shell, with the base URL the run linked to.
    const settingsTarget: AdviceTarget = {
      kind: 'settings',
      flags: { origin: "/srv/Bob's origin", store: 'kvs.json', s3PathStyle: true },
    };
    expect(advice(damaged({ entries: pinned }), settingsTarget)).toBe(
      `catalog publish --source /srv/plans.json --base-url https://catalog.example.com --force --unpin --origin '/srv/Bob'\\''s origin' --store kvs.json --s3-path-style, or catalog rollback --origin '/srv/Bob'\\''s origin' --store kvs.json --s3-path-style`,
    );
    // What the record does not keep is said: a source's secrets, its token, a source never recorded.
    const secret = { ...SETTINGS, source: 'postgres://catalog:***@db.internal:5432/plans', withToken: true };
    expect(advice(damaged({ lastRun: { record: run({ settings: secret }) } }), LOCAL)).toBe(
      `catalog publish --source 'postgres://catalog:***@db.internal:5432/plans' --force (with the secrets the record does not keep in place of ***; with the source's token in CATALOG_SOURCE_TOKEN), or catalog rollback`,
    );
    expect(advice(damaged({ lastRun: null }), settingsTarget)).toMatch(
      /^catalog publish --source SOURCE --base-url URL --force --origin .* \(SOURCE and URL: the plans source and the base URL, which no run has recorded\), or catalog rollback/,
    );
    // A key is issued where the store is: keys issue takes no origin.
    const keyless = facts({ entries: new Map([[KVS_LIVE_BUILD, LIVE]]) });
    expect(
      messages(evaluateStatus(keyless, { now: NOW, maxAgeMs: MAX_AGE, target: settingsTarget })),
    ).toEqual([
      'degraded: no usable API key in arn:aws:cloudfront::123456789012:key-value-store/x: every partner request gets 401; issue one: catalog keys issue --partner LABEL --store kvs.json',
    ]);
  });

  it('broken: a store and an origin of two deployments, naming both and advising no repair that would refuse', () => {
    const mismatch = `${STORE} and s3://staging are not one deployment: the store serves the origin "s3://catalog-origin", not "s3://staging"`;
    const report = judge(facts({ deployment: mismatch, live: { kind: 'none' } }));
    expect(report).toMatchObject({ health: 'broken', exitCode: 2, live: { state: 'none' } });
    expect(messages(report)).toEqual([`broken: ${mismatch}`]);
  });

  it('counts usable keys per partner and lists those expiring within 7 days; shows the CORS origin', () => {
    const report = judge(
      facts({
        entries: new Map([
          [KVS_LIVE_BUILD, LIVE],
          [`${KVS_KEY_PREFIX}${'1'.repeat(64)}`, key('acme')],
          [`${KVS_KEY_PREFIX}${'2'.repeat(64)}`, key('acme', '2026-03-05T00:00:00.000Z')],
          [`${KVS_KEY_PREFIX}${'3'.repeat(64)}`, key('acme', '2026-04-05T00:00:00.000Z')],
          [`${KVS_KEY_PREFIX}${'4'.repeat(64)}`, key('gone', '2026-03-01T00:00:00.000Z')],
          [`${KVS_KEY_PREFIX}${'5'.repeat(64)}`, 'not a record'],
          [KVS_CORS_ORIGIN, 'https://partner.example'],
        ]),
      }),
    );
    expect(report.keys).toEqual({
      partners: [
        { partner: 'acme', keys: 3 },
        { partner: 'gone', keys: 0 },
      ],
      expiringSoon: [{ partner: 'acme', id: '222222222222', expires: '2026-03-05T00:00:00.000Z' }],
      invalid: 1,
    });
    expect(report.cors).toEqual({ origin: 'https://partner.example' });
    expect(report.health).toBe('healthy');
  });

  it('writes ages with their two largest units', () => {
    expect([formatAge(0), formatAge(42), formatAge(3600), formatAge(93_784), formatAge(90_000)]).toEqual([
      '0s',
      '42s',
      '1h 0m',
      '1d 2h',
      '1d 1h',
    ]);
  });
});

/**
 * A report of `beat` finished `minutesAgo` before {@link NOW}: the probe every 5 minutes (5 rows), the full table
 * every hour (153 rows); `failing` rows failed.
 */
function canaryReport(minutesAgo: number, failing: string[] = [], beat: CanaryBeat = 'probe'): CanaryReport {
  const finished = new Date(NOW.getTime() - minutesAgo * 60_000);
  const rows = beat === 'probe' ? 5 : 153;
  return {
    beat,
    trigger: 'schedule',
    baseUrl: 'https://catalog.example.com',
    started: new Date(finished.getTime() - 4_000).toISOString(),
    finished: finished.toISOString(),
    durationMs: 4_000,
    periodSeconds: beat === 'probe' ? 300 : 3600,
    runner: { kind: 'lambda', name: 'catalog-canary' },
    cors: 'https://app.example.com',
    reachable: true,
    keyRefused: false,
    deadlineReached: false,
    counts: { pass: rows - 1 - failing.length, fail: failing.length, skip: 1, warn: 0, notRun: 0 },
    rows,
    requests: rows - 1,
    failing: failing.map((name) => ({
      name,
      request: 'GET /api/plans',
      lines: ['status: expected 200, got 500'],
    })),
    diagnosis: null,
  };
}

describe("the canary's conformance, each beat judged against its own period", () => {
  const withCanary = (probe: CanaryReport | null, full: CanaryReport | null = canaryReport(20, [], 'full')) =>
    judge(
      facts({
        canary: {
          probe: probe && { report: probe, stopped: false },
          full: full && { report: full, stopped: false },
        },
      }),
    );

  it('healthy: every row of both beats passed in its last period, each shown with its age', () => {
    const report = withCanary(canaryReport(3));
    expect(report.health).toBe('healthy');
    expect(report.conformance.probe?.line).toBe('4 of 4 rows pass, 3m 0s ago');
    expect(report.conformance.full?.line).toBe('152 of 152 rows pass, 20m 0s ago');
  });

  it('degraded: a row failed, naming its beat, the row and how to see what it expected and got', () => {
    const report = withCanary(canaryReport(3, ['running plans in brotli, 304 while unchanged']));
    expect(report.health).toBe('degraded');
    expect(report.exitCode).toBe(1);
    expect(report.conformance.probe?.line).toBe(
      '3 of 4 rows pass, failing: "running plans in brotli, 304 while unchanged", 3m 0s ago',
    );
    expect(messages(report)).toEqual([
      'degraded: conformance (probe): 3 of 4 rows pass, failing: "running plans in brotli, 304 while unchanged", 3m 0s ago; catalog check --base-url https://catalog.example.com says what each row expected and got',
    ]);
    const full = withCanary(canaryReport(3), canaryReport(30, ['a plan page'], 'full'));
    expect(messages(full)).toEqual([
      'degraded: conformance (full): 151 of 152 rows pass, failing: "a plan page", 30m 0s ago; catalog check --base-url https://catalog.example.com says what each row expected and got',
    ]);
  });

  it('degraded: no report of a beat for two of its periods (silent), even when its last one passed', () => {
    expect(withCanary(canaryReport(10)).health).toBe('healthy');
    const report = withCanary(canaryReport(11));
    expect(report.health).toBe('degraded');
    expect(report.conformance.probe?.silent).toBe(true);
    expect(messages(report)).toEqual([
      'degraded: conformance (probe): the canary has not reported for 11m 0s, more than two of its 5m 0s periods (its last run: 4 of 4 rows pass)',
    ]);
    // Two hours are two periods of the full table, not of the probe.
    expect(withCanary(canaryReport(3), canaryReport(120, [], 'full')).health).toBe('healthy');
    expect(messages(withCanary(canaryReport(3), canaryReport(121, [], 'full')))).toEqual([
      'degraded: conformance (full): the canary has not reported for 2h 1m, more than two of its 1h 0m periods (its last run: 152 of 152 rows pass)',
    ]);
  });

  it('says why a full run came outside its schedule', () => {
    const afterMove = { ...canaryReport(1, [], 'full'), trigger: 'live-build-changed' } as const;
    expect(withCanary(canaryReport(1), afterMove).conformance.full?.line).toBe(
      '152 of 152 rows pass, 1m 0s ago (the live build changed)',
    );
  });

  it('a beat with no report yet is shown as none, not judged; an unreadable one is degraded', () => {
    const none = withCanary(canaryReport(3), null);
    expect(none.health).toBe('healthy');
    expect(none.conformance.full).toBeNull();
    const unreadable = judge(
      facts({ canary: { probe: { problem: 'state/canary-probe.json is not JSON' }, full: null } }),
    );
    expect(messages(unreadable)).toEqual([
      "degraded: conformance (probe): the canary's report: state/canary-probe.json is not JSON",
    ]);
  });

  it('shows, without judging, the last reports of a local canary whose catalog start stopped', () => {
    const local = {
      ...canaryReport(60, ['a plan page']),
      runner: { kind: 'local', host: 'dev', pid: 4242 } as const,
    };
    const report = judge(facts({ canary: { probe: { report: local, stopped: true } } }));
    expect(report.health).toBe('healthy');
    expect(report.conformance.probe?.line).toBe(
      '3 of 4 rows pass, failing: "a plan page", 1h 0m ago (the canary stopped with catalog start)',
    );
  });

  it('shows, without judging, the last report of a deployed canary the stack no longer has', () => {
    const report = judge(
      facts({ canary: { full: { report: canaryReport(600, ['a plan page'], 'full'), stopped: true } } }),
    );
    expect(report.health).toBe('healthy');
    expect(report.conformance.full?.line).toBe(
      '151 of 152 rows pass, failing: "a plan page", 10h 0m ago (the deployment has no canary now: its last report)',
    );
  });
});

describe.each(TARGET_KINDS)('status after real runs, on %s', (kind) => {
  const under = usePublishTarget(kind, 'catalog-status-');

  const settings = (source: string) => testPublishSettings(source);
  const now = () => new Date();

  it('is healthy after a publish, degraded after a failed run saying why, broken without a live object', async () => {
    const published = await publish(settings(await fewPlansFile()), under.target, {
      now: now(),
      force: false,
      report: () => {},
    });
    await issueKey(under.target.kvs, { partner: 'acme', now: now() });
    const healthy = await catalogStatus(under.target, { now: now(), maxAgeMs: MAX_AGE });
    expect(healthy).toMatchObject({
      health: 'healthy',
      live: { buildId: publishSummaryOf(published.summary).buildId, objects: { damaged: [] } },
      lastRun: { outcome: 'published' },
      keys: { partners: [{ partner: 'acme', keys: 1 }] },
    });
    expect(healthy.live.objects?.expected).toBeGreaterThan(10);

    const missing = `${under.dir}/no-such-file.json`;
    await expect(
      publish(settings(missing), under.target, { now: now(), force: false, report: () => {} }),
    ).rejects.toThrow();
    const degraded = await catalogStatus(under.target, { now: now(), maxAgeMs: MAX_AGE });
    expect(degraded).toMatchObject({ health: 'degraded', exitCode: 1, lastRun: { outcome: 'failed' } });
    expect(degraded.problems).toEqual([
      {
        level: 'degraded',
        message: expect.stringMatching(/^the last run \(finished \S+\) failed: source .*no-such-file\.json/),
      },
    ]);

    const gone = `builds/${publishSummaryOf(published.summary).buildId}/catalog-strength.json.br`;
    if (under.s3) await under.s3.client.send(new DeleteObjectCommand({ Bucket: under.s3.bucket, Key: gone }));
    else await unlink(`${under.dir}/origin/${gone}`);
    const broken = await catalogStatus(under.target, { now: now(), maxAgeMs: MAX_AGE });
    expect(broken).toMatchObject({
      health: 'broken',
      exitCode: 2,
      live: { objects: { damaged: ['catalog-strength.json.br is missing'] } },
    });
    expect(broken.problems[0]?.message).toContain('catalog-strength.json.br is missing');
  });

  it('is degraded while a run that took the run lock never ended, until a run succeeds', async () => {
    const published = await publish(settings(await fewPlansFile()), under.target, {
      now: now(),
      force: false,
      report: () => {},
    });
    await issueKey(under.target.kvs, { partner: 'acme', now: now() });
    // A run that took the lock and stopped (this process stays alive, so only the expiry tells).
    const attempt = await acquireRunLock(under.target.origin, 'catalog publish');
    if (!('held' in attempt)) throw new Error('the lock is free');
    const later = () => new Date(Date.now() + 180_000);
    try {
      const report = await catalogStatus(under.target, { now: later(), maxAgeMs: MAX_AGE });
      expect(report.problems).toEqual([
        {
          level: 'degraded',
          message: expect.stringMatching(
            /^a run never finished: catalog publish \(pid \d+ on .*\) let its run lock expire without recording how it ended/,
          ),
        },
      ]);
      // The next run starts after the lock expired (a fake clock, so nothing waits).
      vi.useFakeTimers({ toFake: ['Date'], now: later() });
      const next = await publish(settings(await fewPlansFile()), under.target, {
        now: new Date(),
        force: true,
        report: () => {},
      });
      expect(next.summary).toMatchObject({ result: 'published' });
      expect(publishSummaryOf(next.summary).buildId).not.toBe(publishSummaryOf(published.summary).buildId);
      expect(await catalogStatus(under.target, { now: later(), maxAgeMs: MAX_AGE })).toMatchObject({
        health: 'healthy',
        runLock: null,
      });
    } finally {
      vi.useRealTimers();
      await attempt.held.release();
    }
  });

  it('is broken when a live object was changed in place to bytes of the same size', async () => {
    const published = await publish(settings(await fewPlansFile()), under.target, {
      now: now(),
      force: false,
      report: () => {},
    });
    const key = `builds/${publishSummaryOf(published.summary).buildId}/catalog-running.json`;
    const before = (await under.target.origin.get(key))?.body.toString('utf8') ?? '';
    // The same size, one letter of a title changed: what a hand edit or a flipped bit leaves (a title that starts
    // with an ASCII character, one byte as X or Y is).
    const at = before.search(/"title":"[ -~]/) + '"title":"'.length;
    const after = Buffer.from(
      `${before.slice(0, at)}${before[at] === 'X' ? 'Y' : 'X'}${before.slice(at + 1)}`,
    );
    expect(after.length).toBe(Buffer.byteLength(before));
    if (under.s3)
      await under.s3.client.send(new PutObjectCommand({ Bucket: under.s3.bucket, Key: key, Body: after }));
    else await writeFile(`${under.dir}/origin/${key}`, after);

    const report = await catalogStatus(under.target, { now: now(), maxAgeMs: MAX_AGE });
    expect(report).toMatchObject({ health: 'broken', exitCode: 2 });
    expect(report.live.objects?.damaged).toEqual([
      expect.stringMatching(/^catalog-running\.json has other bytes \((MD5|SHA-256) [0-9a-f]/),
    ]);
  });

  it.each(['../..', 'x\ny', ''])(
    'is broken (exit 2), not a read failure, when build:live is %j: no build the edge can serve',
    async (value) => {
      const source = await fewPlansFile();
      await publish(settings(source), under.target, {
        now: now(),
        force: false,
        report: () => {},
      });
      await under.target.kvs.update((entries) => {
        entries.set(KVS_LIVE_BUILD, value);
      });
      const report = await catalogStatus(under.target, { now: now(), maxAgeMs: MAX_AGE });
      expect(report).toMatchObject({
        health: 'broken',
        exitCode: 2,
        live: { state: 'unreadable', buildId: value },
      });
      expect(report.problems[0]?.message).toBe(
        `build:live names ${JSON.stringify(value)}, which the edge cannot serve (not a build id): every catalog request gets 500; run catalog rollback (back to the build live before it, or ${settingRef('to')} another complete one), or catalog publish ${settingRef('source')} ${source} ${settingRef('recover')}`,
      );
    },
  );
});
