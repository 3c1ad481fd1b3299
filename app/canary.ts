/**
 * The canary (docs/decisions.md#the-canary): `catalog check`'s rows run against a deployment on a schedule, within
 * a deadline below the schedule's period. Each run leaves one report at the origin (`state/canary.json`, never
 * served), which `catalog status` judges; one log line per failed row (never the key) and the run's metrics
 * (contract/metrics.ts `CANARY_METRICS`) go to the caller. The deployed canary is lambda/canary.ts; `catalog
 * start` runs the same one against the local edge (app/local.ts). Everything here but {@link runCanary} is pure.
 */
import { z } from 'zod';
import { describeCause, settingRef } from '../contract/errors.ts';
import { STATE_CANARY } from '../contract/index.ts';
import { CANARY_METRICS, type MetricsSink } from '../contract/metrics.ts';
import { type ObjectToWrite, parseStoredJson, stateObject } from '../publish/origin.ts';
import { formatAge } from './age.ts';
import { type CheckOptions, checkDeployment } from './check.ts';
import { type CheckReport, checkSteps } from './check-rows.ts';

/** Time a run leaves, after its deadline, for storing its report and its metrics before the function's timeout. */
export const CANARY_RESERVE_MS = 20_000;

/** At most this many failing rows are kept in a report (the count says how many failed). */
const KEPT_FAILURES = 50;

/** Who runs the canary: the deployed function, or `catalog start`'s process on a host (the local stack). */
const Runner = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('lambda'), name: z.string() }),
  z.object({ kind: z.literal('local'), host: z.string(), pid: z.number().int() }),
]);
export type Runner = z.output<typeof Runner>;

const Count = z.number().int().min(0);

/** A canary run's report, as stored at the origin. */
export const CanaryReport = z.object({
  baseUrl: z.string(),
  /** When the run started and ended (ISO 8601 UTC), and how long it took. */
  started: z.iso.datetime(),
  finished: z.iso.datetime(),
  durationMs: Count,
  /** How often this canary runs: two periods without a report is a silent canary. */
  periodSeconds: z.number().int().positive(),
  runner: Runner,
  /** What the CORS rows were judged against: an origin, `off`, or `unchecked`. */
  cors: z.string(),
  /** False when the first request got no answer at all. */
  reachable: z.boolean(),
  /** The first answer refused the canary's key: the rows that send it were not sent. */
  keyRefused: z.boolean(),
  /** The run's deadline came before every row was run. */
  deadlineReached: z.boolean(),
  counts: z.object({ pass: Count, fail: Count, skip: Count, warn: Count, notRun: Count }),
  /** Every row of the run, skipped ones included. */
  rows: Count,
  /** The failing rows (the first {@link KEPT_FAILURES}): what each expected and what came. */
  failing: z.array(z.object({ name: z.string(), request: z.string(), lines: z.array(z.string()) })),
  /** What the run's failures most likely mean, in one line (a refused key, no answer, CORS…), or null. */
  diagnosis: z.string().nullable(),
});
export type CanaryReport = z.output<typeof CanaryReport>;

/** What a report says beyond the check's: when, how often, by whom. */
export interface CanaryRun {
  readonly started: Date;
  readonly finished: Date;
  readonly periodMs: number;
  readonly runner: Runner;
}

/** The one-line diagnosis of a check's report, or null when it needs none. */
function diagnose(report: CheckReport): string | null {
  if (!report.reachable)
    return `the deployment at ${report.baseUrl} cannot be reached: ${report.rows[0]?.lines[0] ?? 'no answer'}`;
  if (report.keyRefused)
    return "the canary's key is refused (401 to the whole catalog): it was revoked, has expired, or is not a key of this deployment; the rows that send it were not sent";
  if (report.corsCause) return `likely cause of the CORS failures: ${report.corsCause}`;
  if (report.deadline.reached) {
    const ran = report.rows.length - report.counts['not-run'];
    return `${settingRef('checkDeadline')} ${formatAge(report.deadline.ms / 1000)} passed after ${ran} of ${report.rows.length} rows: the deployment answers too slowly`;
  }
  return null;
}

/** A check's report as the canary keeps it (the check's report holds no key: app/check.ts). */
export function canaryReportOf(report: CheckReport, run: CanaryRun): CanaryReport {
  const failing = report.rows
    .filter((row) => row.verdict === 'fail')
    .slice(0, KEPT_FAILURES)
    .map(({ name, request, lines }) => ({ name, request, lines: [...lines] }));
  return {
    baseUrl: report.baseUrl,
    started: run.started.toISOString(),
    finished: run.finished.toISOString(),
    durationMs: Math.max(0, run.finished.getTime() - run.started.getTime()),
    periodSeconds: Math.round(run.periodMs / 1000),
    runner: run.runner,
    cors: report.cors,
    reachable: report.reachable,
    keyRefused: report.keyRefused,
    deadlineReached: report.deadline.reached,
    counts: {
      pass: report.counts.pass,
      fail: report.counts.fail,
      skip: report.counts.skip,
      warn: report.counts.warn,
      notRun: report.counts['not-run'],
    },
    rows: report.rows.length,
    failing,
    diagnosis: diagnose(report),
  };
}

/**
 * The report of a run that could not start (its key could not be read): every row not run, `reason` the
 * diagnosis. It fails the conformance as a failing row would: nothing was proved.
 */
export function unrunReport(baseUrl: string, reason: string, run: CanaryRun): CanaryReport {
  const rows = checkSteps().length;
  return {
    baseUrl,
    started: run.started.toISOString(),
    finished: run.finished.toISOString(),
    durationMs: Math.max(0, run.finished.getTime() - run.started.getTime()),
    periodSeconds: Math.round(run.periodMs / 1000),
    runner: run.runner,
    cors: 'unchecked',
    reachable: true,
    keyRefused: false,
    deadlineReached: false,
    counts: { pass: 0, fail: 0, skip: 0, warn: 0, notRun: rows },
    rows,
    failing: [],
    diagnosis: reason,
  };
}

/** Runs the check as a scheduled run (no key in a URL) and makes its report; `now` is the clock (a test's may be another). */
export async function runCanary(options: {
  readonly check: CheckOptions;
  readonly periodMs: number;
  readonly runner: Runner;
  readonly now?: () => Date;
}): Promise<CanaryReport> {
  const now = options.now ?? (() => new Date());
  const started = now();
  // Run on a schedule: never the key in a URL, where access logs would keep it.
  const report = await checkDeployment({ ...options.check, keyInUrl: false });
  return canaryReportOf(report, {
    started,
    finished: now(),
    periodMs: options.periodMs,
    runner: options.runner,
  });
}

/** The rows that count: those meant to run (skipped ones are not), and of them those that passed. */
export function conformanceOf(report: CanaryReport): { passing: number; counted: number } {
  const { pass, warn, fail, notRun } = report.counts;
  return { passing: pass + warn, counted: pass + warn + fail + notRun };
}

/** Whether a report proves the deployment conforms: reached, every row meant to run ran and passed. */
export function conforms(report: CanaryReport): boolean {
  return report.reachable && report.counts.fail === 0 && report.counts.notRun === 0;
}

/** `146 of 147 rows pass, failing: "a plan page"` (and how many more, and the rows not run). */
export function conformanceSummary(report: CanaryReport): string {
  if (!report.reachable) return report.diagnosis ?? `${report.baseUrl} cannot be reached`;
  const { passing, counted } = conformanceOf(report);
  const parts = [`${passing} of ${counted} rows pass`];
  const [first] = report.failing;
  if (first !== undefined) {
    const more = report.counts.fail - 1;
    parts.push(`failing: "${first.name}"${more > 0 ? ` and ${more} more` : ''}`);
  }
  if (report.counts.notRun > 0) parts.push(`${report.counts.notRun} not run`);
  return parts.join(', ');
}

/** How a report is judged at `now`: the one line status shows, and why it is degraded (null: it is not). */
export interface ConformanceJudgement {
  readonly line: string;
  readonly problem: string | null;
  /** Seconds since the run finished. */
  readonly ageSeconds: number;
  /** No report for more than two of its periods (not judged once the canary stopped). */
  readonly silent: boolean;
}

/**
 * Judges a report at `now`: degraded when a row failed or was not run, the deployment could not be reached, or
 * the canary has not reported for two of its periods. `stopped`: the local stack's canary stopped with its
 * `catalog start`, or the deployment no longer has a canary, so its last report is shown, not judged.
 */
export function judgeConformance(report: CanaryReport, now: Date, stopped: boolean): ConformanceJudgement {
  const ageSeconds = Math.max(0, Math.round((now.getTime() - Date.parse(report.finished)) / 1000));
  const ago = `${formatAge(ageSeconds)} ago`;
  const summary = conformanceSummary(report);
  const diagnosis = report.diagnosis && report.reachable ? `; ${report.diagnosis}` : '';
  if (stopped)
    return {
      line: `${summary}, ${ago} (${report.runner.kind === 'local' ? 'the canary stopped with catalog start' : 'the deployment has no canary now: its last report'})`,
      problem: null,
      ageSeconds,
      silent: false,
    };
  const silent = ageSeconds > 2 * report.periodSeconds;
  const line = `${summary}, ${ago}`;
  if (silent)
    return {
      line,
      problem: `conformance: the canary has not reported for ${formatAge(ageSeconds)}, more than two of its ${formatAge(report.periodSeconds)} periods (its last run: ${summary})`,
      ageSeconds,
      silent,
    };
  if (!conforms(report))
    return {
      line,
      problem: `conformance: ${summary}, ${ago}${diagnosis}; catalog check --base-url ${report.baseUrl} says what each row expected and got`,
      ageSeconds,
      silent,
    };
  return { line, problem: null, ageSeconds, silent };
}

/** The report as the object written at the origin: JSON, `Cache-Control: no-store`, overwriting the last one. */
export function canaryReportObject(report: CanaryReport): ObjectToWrite {
  return stateObject(STATE_CANARY, `${JSON.stringify(report, null, 2)}\n`);
}

/** Reads a stored report: the report, or why it is not one. */
export function parseCanaryReport(body: Uint8Array): { report: CanaryReport } | { problem: string } {
  const read = parseStoredJson(body, STATE_CANARY, CanaryReport, {
    what: 'a canary report',
    noun: 'report',
  });
  return 'value' in read ? { report: read.value } : read;
}

/**
 * The run's log lines: one per failed row (its name, its request with placeholders for keys, what it expected
 * and what came), then one for the run. The report holds no key, so neither do they.
 */
export function canaryLogLines(report: CanaryReport): object[] {
  const rows = report.failing.map((row) => ({
    level: 'error',
    message: 'conformance row failed',
    row: row.name,
    request: row.request,
    problems: row.lines,
    baseUrl: report.baseUrl,
  }));
  const run = {
    level: conforms(report) ? 'info' : 'error',
    message: `conformance: ${conformanceSummary(report)}`,
    baseUrl: report.baseUrl,
    counts: report.counts,
    durationMs: report.durationMs,
    ...(report.diagnosis ? { diagnosis: report.diagnosis } : {}),
  };
  return [...rows, run];
}

/**
 * Hands the run's metrics to the sink, stamped with the run's start (one run per schedule period): failed rows,
 * rows not run, the deployment unreachable (1 or 0), and, only when the report was stored, the run's duration
 * (what the silence alarm counts).
 */
export function emitCanaryMetrics(
  sink: MetricsSink & { setTimestamp(timestamp: Date): unknown },
  report: CanaryReport,
  stored: boolean,
): void {
  const add = (key: keyof typeof CANARY_METRICS, value: number) =>
    sink.addMetric(CANARY_METRICS[key].name, CANARY_METRICS[key].unit, value);
  sink.setTimestamp(new Date(report.started));
  add('failedRows', report.counts.fail);
  add('rowsNotRun', report.counts.notRun);
  add('unreachable', report.reachable ? 0 : 1);
  if (stored) add('runDuration', report.durationMs);
  sink.addMetadata('baseUrl', report.baseUrl);
  if (report.diagnosis) sink.addMetadata('diagnosis', report.diagnosis);
  sink.publishStoredMetrics();
}

/** Why a report could not be stored, in one line. */
export function storeFailure(origin: string, error: unknown): string {
  return `the canary's report could not be written to ${origin}/${STATE_CANARY} (${describeCause(error)})`;
}
