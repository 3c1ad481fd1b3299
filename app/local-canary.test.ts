/**
 * The local canary's loop against the local edge (the built bundles over a published world): the full table as
 * soon as it starts, then each beat every period of its own, never two runs at once, none after `stop`; each
 * report stored at the origin under its beat, exactly one line per run (the failing rows' details go to the log);
 * the CORS origin read from the store at each run; a revoked key is one diagnosis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CanaryBeat, MONITORING_PARTNER, STATE_CANARY } from '../contract/index.ts';
import { showCorsOrigin } from '../keys/cors.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey, revokeKeys } from '../keys/manage.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { freePort } from '../testing/postgres.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { type CanaryReport, parseCanaryReport } from './canary.ts';
import { type RunningEdge, serveLocal } from './local.ts';
import { startLocalCanary } from './local-canary.ts';

let world: TestWorld;
let edge: RunningEdge;
let key: string;

beforeAll(async () => {
  const port = await freePort();
  world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
  key = (
    await issueKey(new FileKeyValueStore(world.stores.cors), { partner: MONITORING_PARTNER, now: new Date() })
  ).key;
  edge = await serveLocal(
    { origin: world.originDir, store: world.stores.cors, port, host: '127.0.0.1' },
    () => {},
  );
});
afterAll(async () => {
  await edge?.close();
  await world?.remove();
});

/** The canary over the world, each beat every period of `periodsMs`; what it reported, and its lines. */
function canary(periodsMs: Record<CanaryBeat, number>, options: { key?: string } = {}) {
  const lines: string[] = [];
  const logged: object[] = [];
  const origin = new DirectoryOrigin(world.originDir);
  const running = startLocalCanary({
    baseUrl: edge.url,
    key: options.key ?? key,
    origin,
    cors: () => showCorsOrigin(new FileKeyValueStore(world.stores.cors)),
    periodsMs,
    report: (line) => lines.push(line),
    log: (entry) => logged.push(entry),
  });
  const stored = async (beat: CanaryBeat): Promise<CanaryReport> => {
    const object = await origin.get(STATE_CANARY[beat]);
    const parsed = parseCanaryReport(object?.body ?? Buffer.from(''), beat);
    if ('problem' in parsed) throw new Error(parsed.problem);
    return parsed.report;
  };
  return { running, lines, logged, stored };
}

describe('the local canary', () => {
  it('runs the full table at once, then the probe every period, one line a run, storing each report; nothing after stop', async () => {
    const { running, lines, logged, stored } = canary({ probe: 4_000, full: 60_000 });
    const first = await running.first;
    expect(first).toMatchObject({ beat: 'full', trigger: 'start' });
    expect(first.counts).toMatchObject({ fail: 0, notRun: 0 });
    expect(first.cors).toBe((await showCorsOrigin(new FileKeyValueStore(world.stores.cors))) ?? 'off');
    expect(first.runner).toMatchObject({ kind: 'local', pid: process.pid });
    expect(first.periodSeconds).toBe(60);
    expect(await stored('full')).toEqual(first);
    const passing = first.counts.pass + first.counts.warn;
    expect(lines).toEqual([`canary (full, at catalog start): ${passing} of ${passing} rows pass`]);
    // No row failed: the log has the run's own line only.
    expect(logged).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^conformance \(full/) }),
    ]);
    // The probe comes with its period: a line of its own, its report beside the full table's.
    for (let waited = 0; lines.length < 2 && waited < 400; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^canary \(probe\): (\d+) of \1 rows pass$/);
    const probe = await stored('probe');
    expect(probe).toMatchObject({ beat: 'probe', trigger: 'schedule', periodSeconds: 4 });
    expect(Date.parse(probe.started)).toBeGreaterThanOrEqual(Date.parse(first.finished));
    expect(await stored('full')).toEqual(first);
    await running.stop();
    const after = lines.length;
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(lines).toHaveLength(after);
  });

  it('says once, in one line, that its key is refused; the failing row goes to the log alone, never the key', async () => {
    const revoked = (
      await issueKey(new FileKeyValueStore(world.stores.cors), { partner: 'monitoring-old', now: new Date() })
    ).key;
    await revokeKeys(new FileKeyValueStore(world.stores.cors), {
      target: { partner: 'monitoring-old' },
      now: new Date(),
    });
    const { running, lines, logged } = canary({ probe: 60_000, full: 60_000 }, { key: revoked });
    try {
      const report = await running.first;
      expect(report.keyRefused).toBe(true);
      expect(report.counts.fail).toBe(1);
      expect(report.diagnosis).toMatch(/^the canary's key is refused/);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^canary \(full, at catalog start\): \d+ of \d+ rows pass, failing: "the whole catalog", \d+ not run \(the canary's key is refused /,
      );
      // What the row expected and got is in the log, with the run's line; not on the terminal.
      expect(logged).toEqual([
        expect.objectContaining({
          message: 'conformance row failed',
          beat: 'full',
          row: 'the whole catalog',
          problems: ['status: expected 200, got 401 (tag:training-plan-catalog,2026:problem:unauthorized)'],
        }),
        expect.objectContaining({ level: 'error', beat: 'full' }),
      ]);
      expect(lines.join('\n')).not.toContain('status: expected 200, got 401');
      expect(JSON.stringify(logged)).not.toContain(revoked);
    } finally {
      await running.stop();
    }
  });
});
