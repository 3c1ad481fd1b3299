/**
 * The local stack's canary (docs/decisions.md#the-canary): `catalog start` runs the deployed canary's beats
 * (app/canary.ts) against its own edge: the full table once the publish is served, then the probe every
 * `canaryRateMinutes` and the full table every `canaryFullRateMinutes` (and at once when a probe finds the live
 * catalogs changed: a `catalog publish` to the local stack), with a key of the partner `monitoring` kept in
 * `.catalog/monitoring-key` and the CORS origin the local store holds at each run. Each report is stored at the
 * local origin, where `catalog status` reads it as it reads the deployed one's. A run says one line; what each
 * failing row expected and got goes to the log.
 */
import { hostname } from 'node:os';
import { CANARY_HEADER, type CanaryBeat } from '../contract/index.ts';
import {
  beatLabel,
  type CanaryReport,
  type CanaryTrigger,
  canaryLogLines,
  conformanceSummary,
  type ReportStore,
  runCanaryBeat,
} from './canary.ts';
import { defaultOf } from './settings/index.ts';

/** The local canary, running: its first run's report (the full table), and `stop` (waits for a run in flight). */
export interface LocalCanary {
  readonly first: Promise<CanaryReport>;
  stop(): Promise<void>;
}

/** The one line a run says: `canary (probe): 5 of 5 rows pass`, with the diagnosis when there is one. */
export function canaryLine(report: CanaryReport): string {
  const diagnosis = report.diagnosis ? ` (${report.diagnosis})` : '';
  return `canary (${beatLabel(report)}): ${conformanceSummary(report)}${diagnosis}`;
}

/**
 * Starts the canary: the full table now, then each beat every period of its own (never two runs at once: a probe
 * due while a run goes on is skipped, a full run waits for it). Each report is stored at `origin`; each run says
 * one line to `report`, and its log lines (one per failed row, never the key, and one for the run) go to `log`.
 */
export function startLocalCanary(options: {
  readonly baseUrl: string;
  readonly key: string;
  readonly origin: ReportStore;
  /** The CORS origin the local store holds now (read at each run: `catalog cors set` changes it). */
  readonly cors: () => Promise<string | undefined>;
  readonly periodsMs: Readonly<Record<CanaryBeat, number>>;
  readonly report: (line: string) => void;
  readonly log: (entry: object) => void;
}): LocalCanary {
  const runner = { kind: 'local', host: hostname(), pid: process.pid } as const;
  let running: Promise<CanaryReport> | null = null;
  let fullDue = false;
  const run = async (beat: CanaryBeat, trigger: CanaryTrigger): Promise<CanaryReport> => {
    const outcomes = await runCanaryBeat({
      beat,
      trigger,
      check: {
        baseUrl: options.baseUrl,
        key: options.key,
        alwaysHeaders: [[CANARY_HEADER, options.key]],
        cors: (await options.cors()) ?? null,
        maxAgeMs: defaultOf('maxAge'),
        timeoutMs: defaultOf('checkTimeout'),
        // Below the probe's period, as the deployed canary's.
        deadlineMs: Math.min(defaultOf('checkDeadline'), Math.max(1_000, options.periodsMs.probe - 1_000)),
      },
      periodsMs: options.periodsMs,
      runner,
      store: options.origin,
    });
    for (const { report, storeProblem } of outcomes) {
      if (storeProblem) options.report(`catalog: warning: ${storeProblem}`);
      const time = new Date().toISOString();
      for (const line of canaryLogLines(report)) options.log({ time, ...line });
      options.report(canaryLine(report));
    }
    return (outcomes[0] as { report: CanaryReport }).report;
  };
  const next = (beat: CanaryBeat, trigger: CanaryTrigger): Promise<CanaryReport> | null => {
    if (running) {
      if (beat === 'full') fullDue = true;
      return null;
    }
    const started = run(beat, trigger).finally(() => {
      running = null;
      if (fullDue) {
        fullDue = false;
        next('full', 'schedule')?.catch(failed);
      }
    });
    running = started;
    return started;
  };
  const failed = (error: unknown) => options.report(`catalog: warning: the canary failed: ${String(error)}`);
  const first = next('full', 'start') as Promise<CanaryReport>;
  const timers = (['probe', 'full'] as const).map((beat) =>
    setInterval(() => next(beat, 'schedule')?.catch(failed), options.periodsMs[beat]),
  );
  return {
    first,
    async stop() {
      for (const timer of timers) clearInterval(timer);
      fullDue = false;
      await running?.catch(() => {});
    },
  };
}
