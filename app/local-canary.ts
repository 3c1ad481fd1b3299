/**
 * The local stack's canary (docs/decisions.md#the-canary): `catalog start` runs the deployed canary's check
 * (app/canary.ts) against its own edge once the publish is served and then every `canaryRateMinutes`, with a
 * key of the partner `monitoring` kept in `.catalog/monitoring-key` and the CORS origin the local store holds,
 * and stores each report at the local origin, where `catalog status` reads it as it reads the deployed one's.
 */
import { hostname } from 'node:os';
import { CANARY_HEADER, MONITORING_PARTNER } from '../contract/index.ts';
import type { OriginStore } from '../publish/origin.ts';
import { type CanaryReport, canaryLogLines, canaryReportObject, runCanary, storeFailure } from './canary.ts';
import { defaultOf } from './settings/index.ts';

/** The local canary, running: its first run's report, and `stop` (waits for a run in flight). */
export interface LocalCanary {
  readonly first: Promise<CanaryReport>;
  stop(): Promise<void>;
}

/**
 * Starts the canary: a run now, then one every `periodMs` (never two at once: a run still going when its next
 * is due makes that one wait for the following period). Each report is stored at `origin`; the run's summary
 * goes to `report`, its log lines (one per failed row, never the key) to `log`.
 */
export function startLocalCanary(options: {
  readonly baseUrl: string;
  readonly key: string;
  readonly origin: OriginStore;
  /** The CORS origin the local store holds now (read at each run: `catalog cors set` changes it). */
  readonly cors: () => Promise<string | undefined>;
  readonly periodMs: number;
  readonly report: (line: string) => void;
  readonly log: (entry: object) => void;
}): LocalCanary {
  const runner = { kind: 'local', host: hostname(), pid: process.pid } as const;
  let running: Promise<CanaryReport> | null = null;
  const run = async (): Promise<CanaryReport> => {
    const report = await runCanary({
      check: {
        baseUrl: options.baseUrl,
        key: options.key,
        alwaysHeaders: [[CANARY_HEADER, options.key]],
        cors: (await options.cors()) ?? null,
        maxAgeMs: defaultOf('maxAge'),
        timeoutMs: defaultOf('checkTimeout'),
        // Below the period, as the deployed canary's.
        deadlineMs: Math.min(defaultOf('checkDeadline'), Math.max(1_000, options.periodMs - 1_000)),
      },
      periodMs: options.periodMs,
      runner,
    });
    try {
      await options.origin.put(canaryReportObject(report), { overwrite: true });
    } catch (error) {
      options.report(`catalog: warning: ${storeFailure(options.origin.name, error)}`);
    }
    const lines = canaryLogLines(report);
    for (const line of lines.slice(0, -1)) options.log({ time: new Date().toISOString(), ...line });
    const summary = lines.at(-1) as { message: string; diagnosis?: string };
    const diagnosis = summary.diagnosis ? ` (${summary.diagnosis})` : '';
    options.report(
      `canary (partner ${MONITORING_PARTNER}): ${summary.message.replace(/^conformance: /, '')}${diagnosis}`,
    );
    return report;
  };
  const next = () => {
    if (running) return running;
    running = run().finally(() => {
      running = null;
    });
    return running;
  };
  const first = next();
  const timer = setInterval(() => {
    next().catch((error: unknown) => options.report(`catalog: warning: the canary failed: ${String(error)}`));
  }, options.periodMs);
  return {
    first,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
