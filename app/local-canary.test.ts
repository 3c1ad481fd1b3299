/**
 * The local canary's loop against the local edge (the built bundles over a published world): a run as soon as it
 * starts, one each period, never two at once, none after `stop`; each report stored at the origin, one summary
 * line per run; the CORS origin read from the store at each run; a revoked key is one diagnosis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MONITORING_PARTNER, STATE_CANARY } from '../contract/index.ts';
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

/** The canary over the world, every `periodMs`; what it reported, and its lines. */
function canary(periodMs: number, options: { key?: string } = {}) {
  const lines: string[] = [];
  const logged: object[] = [];
  const origin = new DirectoryOrigin(world.originDir);
  const running = startLocalCanary({
    baseUrl: edge.url,
    key: options.key ?? key,
    origin,
    cors: () => showCorsOrigin(new FileKeyValueStore(world.stores.cors)),
    periodMs,
    report: (line) => lines.push(line),
    log: (entry) => logged.push(entry),
  });
  const stored = async (): Promise<CanaryReport> => {
    const object = await origin.get(STATE_CANARY);
    const parsed = parseCanaryReport(object?.body ?? Buffer.from(''));
    if ('problem' in parsed) throw new Error(parsed.problem);
    return parsed.report;
  };
  return { running, lines, logged, stored };
}

describe('the local canary', () => {
  it('runs at once and every period, one run at a time, storing each report; nothing after stop', async () => {
    const { running, lines, logged, stored } = canary(4_000);
    const first = await running.first;
    expect(first.counts).toMatchObject({ fail: 0, notRun: 0 });
    expect(first.cors).toBe((await showCorsOrigin(new FileKeyValueStore(world.stores.cors))) ?? 'off');
    expect(first.runner).toMatchObject({ kind: 'local', pid: process.pid });
    expect(first.periodSeconds).toBe(4);
    expect(await stored()).toEqual(first);
    expect(lines).toEqual([
      `canary (partner monitoring): ${first.counts.pass + first.counts.warn} of ${first.counts.pass + first.counts.warn} rows pass`,
    ]);
    expect(logged).toEqual([]);
    // The next run comes with the period.
    for (let waited = 0; lines.length < 2 && waited < 400; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(2);
    const second = await stored();
    expect(Date.parse(second.started)).toBeGreaterThanOrEqual(Date.parse(first.finished));
    await running.stop();
    const after = lines.length;
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(lines).toHaveLength(after);
  });

  it('says once that its key is refused, and logs that row alone, never the key', async () => {
    const revoked = (
      await issueKey(new FileKeyValueStore(world.stores.cors), { partner: 'monitoring-old', now: new Date() })
    ).key;
    await revokeKeys(new FileKeyValueStore(world.stores.cors), {
      target: { partner: 'monitoring-old' },
      now: new Date(),
    });
    const { running, lines, logged } = canary(60_000, { key: revoked });
    try {
      const report = await running.first;
      expect(report.keyRefused).toBe(true);
      expect(report.counts.fail).toBe(1);
      expect(report.diagnosis).toMatch(/^the canary's key is refused/);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^canary \(partner monitoring\): \d+ of \d+ rows pass, failing: "the whole catalog", \d+ not run \(the canary's key is refused /,
      );
      expect(logged).toHaveLength(1);
      expect(JSON.stringify(logged)).not.toContain(revoked);
    } finally {
      await running.stop();
    }
  });
});
