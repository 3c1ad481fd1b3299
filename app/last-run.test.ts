/** The last run's record, from how a run ended: pure, no I/O. */

import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InvalidRow } from '../builder/errors.ts';
import { InvalidRowsError } from '../builder/errors.ts';
import { SourceError, SourceNotConfiguredError, settingRef } from '../contract/errors.ts';
import { STATE_LAST_RUN } from '../contract/index.ts';
import { storedHeaders } from '../contract/objects.ts';
import { PublishRefusedError } from '../publish/errors.ts';
import { planCounts } from '../testing/counts.ts';
import {
  type LastRun,
  lastRunObject,
  lastRunOf,
  oneLine,
  parseLastRun,
  type RunEnd,
  type RunProgress,
  runSettings,
} from './last-run.ts';
import type { PublishSummary } from './run.ts';
import { renderMessage } from './settings/index.ts';

const STARTED = new Date('2026-03-01T10:00:00.000Z');
const FINISHED = new Date('2026-03-01T10:00:04.250Z');
const BUILD = '20260301T100000Z-0123abcd';
const LIVE = '20260228T100000Z-fedc4321';

function summary(result: PublishSummary['result'], extra: Partial<PublishSummary> = {}): PublishSummary {
  return {
    command: 'publish',
    result,
    buildId: BUILD,
    generatedAt: STARTED.toISOString(),
    counts: planCounts({ running: 22, strength: 21 }),
    plans: 43,
    bytes: 1000,
    plansHash: 'ab'.repeat(32),
    previousBuildId: LIVE,
    pruned: [],
    warnings: [],
    durationsMs: { build: 1, read: 1, upload: 1, verify: 1, flip: 1, prune: 1, total: 6 },
    ...extra,
  };
}

const built: RunProgress = {
  built: { buildId: BUILD, counts: planCounts({ running: 22, strength: 21 }), warnings: [] },
};
const cli = (message: string) => renderMessage(message, 'cli');

function record(end: RunEnd, progress: RunProgress = built, previous: LastRun | null = null): LastRun {
  return lastRunOf({
    started: STARTED,
    finished: FINISHED,
    durationMs: 4250.4,
    progress,
    end,
    previous,
    present: cli,
  });
}

/** The record of a run a second after FINISHED that found another holding the run lock. */
const busyAfter = (previous: LastRun) =>
  lastRunOf({
    started: FINISHED,
    finished: new Date(FINISHED.getTime() + 1000),
    durationMs: 5,
    progress: {},
    end: {
      summary: {
        command: 'publish',
        result: 'busy',
        reason: 'busy: another run holds the run lock',
        holder: { by: 'catalog publish', host: 'h', pid: 1, since: '', expires: '' },
        durationsMs: { total: 5 },
      },
    },
    previous,
    present: cli,
  });

describe('the record of a run', () => {
  it('of a publish: outcome, build, counts, and it confirms the new live build', () => {
    expect(record({ summary: summary('published') })).toEqual({
      started: '2026-03-01T10:00:00.000Z',
      finished: '2026-03-01T10:00:04.250Z',
      outcome: 'published',
      reason: `published build ${BUILD} (43 plans); the live build was ${LIVE}`,
      buildId: BUILD,
      counts: planCounts({ running: 22, strength: 21 }),
      plans: 43,
      invalidRows: 0,
      durationMs: 4250,
      confirmed: { at: '2026-03-01T10:00:04.250Z', buildId: BUILD },
      failure: null,
    });
  });

  it('of a run that found the source identical: the reason as the entry point says it, the live build (not the one never written), confirmed', () => {
    const skipped = record({
      summary: summary('skipped-identical', {
        buildId: LIVE,
        reason: `identical to live build ${LIVE}; ${settingRef('force')} publishes it anyway`,
      }),
    });
    expect(skipped).toMatchObject({
      outcome: 'skipped-identical',
      reason: `identical to live build ${LIVE}; --force publishes it anyway`,
      buildId: LIVE,
      confirmed: { at: FINISHED.toISOString(), buildId: LIVE },
    });
  });

  it('of a run held by a pin: it confirms nothing and keeps the previous confirmation', () => {
    const previous = record({ summary: summary('published') });
    const pinned = record(
      {
        summary: summary('skipped-pinned', {
          reason: `pinned to ${LIVE} since … by rollback; not published`,
        }),
      },
      built,
      previous,
    );
    expect(pinned.outcome).toBe('skipped-pinned');
    expect(pinned.confirmed).toEqual(previous.confirmed);
  });

  it('of a run refused by a guard: outcome refused, the guard, the reason, and the counts of the refused build', () => {
    const refused = record({
      error: new PublishRefusedError(
        'shrink',
        `refused: the new catalog has 10 plans, fewer than 0.5 × the 44 plans of live build ${LIVE} (22); ${settingRef('force')} publishes it anyway`,
      ),
    });
    expect(refused).toMatchObject({
      outcome: 'refused',
      guard: 'shrink',
      error: 'PublishRefusedError',
      reason: `refused: the new catalog has 10 plans, fewer than 0.5 × the 44 plans of live build ${LIVE} (22); --force publishes it anyway`,
      buildId: BUILD,
      counts: planCounts({ running: 22, strength: 21 }),
      confirmed: null,
    });
  });

  it('of a run whose source is down: outcome failed, the error and its reason in one line, no build', () => {
    const previous = record({ summary: summary('published') });
    const failed = record(
      {
        error: new SourceError('http://127.0.0.1:9/plans', 'cannot reach the service\n(connection refused)'),
      },
      {},
      previous,
    );
    expect(failed).toEqual({
      started: STARTED.toISOString(),
      finished: FINISHED.toISOString(),
      outcome: 'failed',
      error: 'SourceError',
      reason: 'source http://127.0.0.1:9/plans: cannot reach the service (connection refused)',
      buildId: null,
      counts: null,
      plans: null,
      invalidRows: null,
      durationMs: 4250,
      confirmed: previous.confirmed,
      failure: {
        finished: FINISHED.toISOString(),
        outcome: 'failed',
        reason: 'source http://127.0.0.1:9/plans: cannot reach the service (connection refused)',
      },
    });
  });

  it('keeps the failure before a busy run, and forgets it only when a run succeeds', () => {
    const failed = record({ error: new SourceError('plans.json', 'cannot be read (no such file)') }, {});
    const remembered = { finished: FINISHED.toISOString(), outcome: 'failed', reason: failed.reason };
    expect(busyAfter(failed)).toMatchObject({ outcome: 'busy', failure: remembered });
    expect(busyAfter(busyAfter(failed)).failure).toEqual(remembered);
    // A record from before the field: a failed one is its own failure.
    const { failure: _, ...older } = failed;
    expect(busyAfter(older).failure).toEqual(remembered);
    expect(record({ summary: summary('skipped-identical') }, built, busyAfter(failed)).failure).toBeNull();
    expect(record({ summary: summary('skipped-pinned') }, built, busyAfter(failed)).failure).toBeNull();
    const refused = record({ error: new PublishRefusedError('empty', 'refused: 0 plans') }, built, failed);
    expect(refused.failure).toEqual({
      finished: FINISHED.toISOString(),
      outcome: 'refused',
      guard: 'empty',
      reason: 'refused: 0 plans',
    });
  });

  it('of a run whose source is not configured yet: outcome not-configured, remembered like a failure', () => {
    const unset = record(
      { error: new SourceNotConfiguredError('secret arn:…: the source is not set yet') },
      {},
      record({ summary: summary('published') }),
    );
    expect(unset).toMatchObject({
      outcome: 'not-configured',
      error: 'SourceNotConfiguredError',
      reason: 'secret arn:…: the source is not set yet',
      failure: { outcome: 'not-configured', reason: 'secret arn:…: the source is not set yet' },
    });
  });

  it('of a build failed by invalid rows: their number of rows', () => {
    const invalid: InvalidRow[] = [
      { row: 3, id: 'a', field: 'title', reason: 'empty' },
      { row: 3, id: 'a', field: 'level', reason: 'unknown' },
      { row: 7, id: 'b', field: 'discipline', reason: 'unknown' },
    ];
    const failed = record({ error: new InvalidRowsError('fixtures/x.json', invalid) }, { invalid });
    expect(failed).toMatchObject({
      outcome: 'failed',
      error: 'InvalidRowsError',
      invalidRows: 2,
      reason:
        'source fixtures/x.json: 2 invalid rows; nothing was written (--skip-invalid publishes the valid rows)',
    });
  });

  it('of an unexpected error: described, and shown through the entry point (secrets removed)', () => {
    const failed = lastRunOf({
      started: STARTED,
      finished: FINISHED,
      durationMs: 1,
      progress: {},
      end: {
        error: Object.assign(new Error('connect ECONNREFUSED postgres://u:hunter2@db'), {
          code: 'ECONNREFUSED',
        }),
      },
      previous: null,
      present: (message) => message.replaceAll('hunter2', '***'),
    });
    expect(failed.reason).toBe(
      'cannot reach the service (connection refused: connect ECONNREFUSED postgres://u:***@db)',
    );
    expect(failed.error).toBe('Error');
  });

  it('keeps a reason to one line of at most 2000 characters', () => {
    expect(oneLine(' a\n  b \r\n c ')).toBe('a b c');
    const long = oneLine('x'.repeat(5000));
    expect(long).toHaveLength(2000);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('what a record keeps of the run’s source, to run it again', () => {
  it('a file by its absolute path, a URL with no password nor secret query value, whether a token went with it', () => {
    expect(runSettings('fixtures/plans.json', undefined, 'https://catalog.example.com')).toEqual({
      source: resolve('fixtures/plans.json'),
      withToken: false,
      baseUrl: 'https://catalog.example.com',
    });
    const url = runSettings(
      'postgres://reader:s3cret@db:5432/plans?sslmode=require',
      undefined,
      'https://c.example',
    );
    expect(url.source).toBe('postgres://reader:***@db:5432/plans?sslmode=require');
    const http = runSettings('https://cms.example/plans?api_key=k3y', 'tok3n', 'https://c.example');
    expect(http).toEqual({
      source: 'https://cms.example/plans?api_key=***',
      withToken: true,
      baseUrl: 'https://c.example',
    });
    expect(JSON.stringify([url, http])).not.toMatch(/s3cret|k3y|tok3n/);
  });

  it('is the run’s own, or, for a run that never came to its source (busy), the previous record’s', () => {
    const first = runSettings('/srv/plans.json', undefined, 'https://c.example');
    const mine = lastRunOf({
      started: STARTED,
      finished: FINISHED,
      durationMs: 1,
      progress: built,
      end: { summary: summary('published') },
      previous: null,
      present: cli,
      settings: first,
    });
    expect(mine.settings).toEqual(first);
    expect(parseLastRun(Buffer.concat(lastRunObject(mine).chunks))).toEqual({ record: mine });
    expect(busyAfter(mine).settings).toEqual(first);
    // A record written before the field was kept still reads.
    const { settings: _, ...older } = mine;
    expect(parseLastRun(Buffer.from(JSON.stringify(older)))).toEqual({ record: older });
  });
});

describe('the stored record', () => {
  it('is state/last-run.json, JSON, no-store, with its digests, and reads back the same', () => {
    const run = record({ summary: summary('published') });
    const object = lastRunObject(run);
    expect(object.key).toBe(STATE_LAST_RUN);
    expect(storedHeaders(object.key)).toEqual({
      contentType: 'application/json; charset=utf-8',
      cacheControl: 'no-store',
    });
    const body = Buffer.concat(object.chunks);
    expect(object.size).toBe(body.length);
    expect(object.md5).toMatch(/^[0-9a-f]{32}$/);
    expect(parseLastRun(body)).toEqual({ record: run });
  });

  it('names what is wrong with an object that is not a record', () => {
    expect(parseLastRun(Buffer.from('nope'))).toEqual({ problem: 'state/last-run.json is not JSON' });
    expect(parseLastRun(Buffer.from('{"outcome":"exploded"}'))).toEqual({
      problem: expect.stringMatching(/^state\/last-run\.json is not a run record \(started: /),
    });
  });
});
