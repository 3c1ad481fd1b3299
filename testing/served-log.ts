/**
 * A test world served by the local edge in this process (the built bundles, as `catalog serve` runs them), every
 * access-log entry it writes kept in order, and the local canary run against it: the usage records of real
 * requests, for the tests of what reads them (`catalog usage`, the 4xx alarm's inputs). Test support only.
 */

import type { CanaryReport } from '../app/canary.ts';
import { serveLocal } from '../app/local.ts';
import { startLocalCanary } from '../app/local-canary.ts';
import type { AccessLogEntry } from '../gateway/local/server.ts';
import { showCorsOrigin } from '../keys/cors.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { freePort } from './postgres.ts';
import { createTestWorld, type TestWorld } from './world.ts';

/** The world, where it is served, and the access-log entries written so far. */
export interface LoggedWorld {
  readonly world: TestWorld;
  readonly url: string;
  readonly entries: AccessLogEntry[];
  close(): Promise<void>;
}

/** Publishes a test world and serves it (plain store) on a free port, keeping each access-log entry. */
export async function serveWorldLogged(): Promise<LoggedWorld> {
  const port = await freePort();
  const world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
  const entries: AccessLogEntry[] = [];
  const edge = await serveLocal(
    { origin: world.originDir, store: world.stores.plain, port, host: '127.0.0.1' },
    (entry) => {
      if (typeof (entry as { status?: unknown }).status === 'number') entries.push(entry as AccessLogEntry);
    },
  );
  return {
    world,
    url: edge.url,
    entries,
    close: async () => {
      await edge.close();
      await world.remove();
    },
  };
}

/**
 * One run of the local canary (app/local-canary.ts, as `npm start` runs it) against the served world, with the
 * world's key of the partner `monitoring`; resolves with its report once its requests are all answered.
 */
export async function runLocalCanaryOnce(served: LoggedWorld): Promise<CanaryReport> {
  const canary = startLocalCanary({
    baseUrl: served.url,
    key: served.world.keys.monitoring,
    origin: new DirectoryOrigin(served.world.originDir),
    cors: () => showCorsOrigin(new FileKeyValueStore(served.world.stores.plain)),
    // One run (the full table, as at start): the next would be an hour away.
    periodsMs: { probe: 3_600_000, full: 3_600_000 },
    report: () => {},
    log: () => {},
  });
  try {
    const report = await canary.first;
    if (report.counts.fail > 0 || report.counts.notRun > 0 || !report.reachable)
      throw new Error(`the canary found the world broken: ${JSON.stringify(report.counts)}`);
    return report;
  } finally {
    await canary.stop();
  }
}
