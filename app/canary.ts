/**
 * The canary (docs/decisions.md#the-canary): `catalog check` against a deployment on two beats. The probe, every
 * few minutes, reads each discipline's catalog as a good partner does (brotli, conditional on the ETag it saw
 * last: unchanged, a 304) with a refused key and the CORS preflight; the full table runs on a slower beat, after
 * each deploy, and at once when a probe finds the live catalogs changed. Each beat leaves its own report at the
 * origin (`state/canary-probe.json`, `state/canary-full.json`, never served), which `catalog status` judges; one
 * log line per failed row (never the key) and the run's metrics (contract/metrics.ts `CANARY_METRICS`, with the
 * beat) go to the caller. The deployed canary is lambda/canary.ts; `catalog start` runs the same one against the
 * local edge (app/local-canary.ts). Everything here but {@link runCanaryBeat} is pure.
 */
import { z } from 'zod';
import { describeCause, settingRef } from '../contract/errors.ts';
import { CANARY_BEATS, type CanaryBeat, DISCIPLINES, STATE_CANARY } from '../contract/index.ts';
import { CANARY_METRICS, METRICS_BEAT_DIMENSION, type MetricsSink } from '../contract/metrics.ts';
import { type ObjectToWrite, type OriginStore, parseStoredJson, stateObject } from '../publish/origin.ts';
import { formatAge } from './age.ts';
import { type CheckOptions, checkDeployment, type ProbeSeen, probeDeployment } from './check.ts';
import { type CheckReport, checkSteps, probeRowCount } from './check-rows.ts';

export type { CanaryBeat } from '../contract/index.ts';

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

/**
 * Why a run happened: its beat's schedule, a deploy (the stack runs the full table once its parts are deployed),
 * `catalog start` (the local stack's first run), or a probe that found the live catalogs changed.
 */
export const CANARY_TRIGGERS = ['schedule', 'deploy', 'start', 'live-build-changed'] as const;
export type CanaryTrigger = (typeof CANARY_TRIGGERS)[number];

const Count = z.number().int().min(0);

/** A run's report, as stored at the origin (one object per beat). */
export const CanaryReport = z.object({
  /** The probe's few rows, or the full table. */
  beat: z.enum(CANARY_BEATS),
  trigger: z.enum(CANARY_TRIGGERS),
  baseUrl: z.string(),
  /** When the run started and ended (ISO 8601 UTC), and how long it took. */
  started: z.iso.datetime(),
  finished: z.iso.datetime(),
  durationMs: Count,
  /** How often this beat runs: two periods without a report is a silent canary. */
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
  /** The requests the run sent (a request two rows judge is sent once). */
  requests: Count,
  /** The failing rows (the first {@link KEPT_FAILURES}): what each expected and what came. */
  failing: z.array(z.object({ name: z.string(), request: z.string(), lines: z.array(z.string()) })),
  /** What the run's failures most likely mean, in one line (a refused key, no answer, CORS…), or null. */
  diagnosis: z.string().nullable(),
  /** The probe's: the ETag and `generatedAt` of each discipline's brotli catalog, for the next probe. */
  seen: z
    .partialRecord(z.enum(DISCIPLINES), z.object({ etag: z.string(), generatedAt: z.iso.datetime() }))
    .optional(),
});
export type CanaryReport = z.output<typeof CanaryReport>;

/** What a report says beyond the check's: which beat and why, when, how often, by whom. */
export interface CanaryRun {
  readonly beat: CanaryBeat;
  readonly trigger: CanaryTrigger;
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
    return "the canary's key is refused (401 to its first request): it was revoked, has expired, or is not a key of this deployment; the rows that send it were not sent";
  if (report.corsCause) return `likely cause of the CORS failures: ${report.corsCause}`;
  if (report.deadline.reached) {
    const ran = report.rows.length - report.counts['not-run'];
    return `${settingRef('checkDeadline')} ${formatAge(report.deadline.ms / 1000)} passed after ${ran} of ${report.rows.length} rows: the deployment answers too slowly`;
  }
  return null;
}

/** What every report holds of its run. */
const runFields = (run: CanaryRun) => ({
  beat: run.beat,
  trigger: run.trigger,
  started: run.started.toISOString(),
  finished: run.finished.toISOString(),
  durationMs: Math.max(0, run.finished.getTime() - run.started.getTime()),
  periodSeconds: Math.round(run.periodMs / 1000),
  runner: run.runner,
});

/** A check's report as the canary keeps it (the check's report holds no key: app/check.ts). */
export function canaryReportOf(report: CheckReport, run: CanaryRun, seen?: ProbeSeen): CanaryReport {
  const failing = report.rows
    .filter((row) => row.verdict === 'fail')
    .slice(0, KEPT_FAILURES)
    .map(({ name, request, lines }) => ({ name, request, lines: [...lines] }));
  return {
    ...runFields(run),
    baseUrl: report.baseUrl,
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
    requests: report.requests,
    failing,
    diagnosis: diagnose(report),
    ...(seen === undefined ? {} : { seen: { ...seen } }),
  };
}

/** How many rows a beat has. */
const rowsOf = (beat: CanaryBeat) => (beat === 'probe' ? probeRowCount() : checkSteps().length);

/**
 * The report of a run that could not start (its key or the CORS origin could not be read): every row not run,
 * `reason` the diagnosis. It fails the conformance as a failing row would: nothing was proved.
 */
export function unrunReport(baseUrl: string, reason: string, run: CanaryRun): CanaryReport {
  const rows = rowsOf(run.beat);
  return {
    ...runFields(run),
    baseUrl,
    cors: 'unchecked',
    reachable: true,
    keyRefused: false,
    deadlineReached: false,
    counts: { pass: 0, fail: 0, skip: 0, warn: 0, notRun: rows },
    rows,
    requests: 0,
    failing: [],
    diagnosis: reason,
  };
}

/** The report as the object written at the origin: JSON, `Cache-Control: no-store`, overwriting its beat's last. */
export function canaryReportObject(report: CanaryReport): ObjectToWrite {
  return stateObject(STATE_CANARY[report.beat], `${JSON.stringify(report, null, 2)}\n`);
}

/** Reads a stored report of `beat`: the report, or why it is not one. */
export function parseCanaryReport(
  body: Uint8Array,
  beat: CanaryBeat,
): { report: CanaryReport } | { problem: string } {
  const read = parseStoredJson(body, STATE_CANARY[beat], CanaryReport, {
    what: 'a canary report',
    noun: 'report',
  });
  if (!('value' in read)) return read;
  if (read.value.beat !== beat)
    return {
      problem: `${STATE_CANARY[beat]} holds a report of the ${read.value.beat} beat, not the ${beat}`,
    };
  return { report: read.value };
}

/** Why a report could not be stored, in one line. */
export function storeFailure(origin: string, key: string, error: unknown): string {
  return `the canary's report could not be written to ${origin}/${key} (${describeCause(error)})`;
}

/** Where the canary keeps its reports: the deployment's bucket, or the local stack's origin. */
export type ReportStore = Pick<OriginStore, 'name' | 'get' | 'put'>;

/** A run's report and whether it was stored (the silence alarm counts stored reports only). */
export interface CanaryOutcome {
  readonly report: CanaryReport;
  /** Why the report could not be stored, or null: it was. */
  readonly storeProblem: string | null;
}

/** Stores a report at `store`: null, or why it could not be. */
export async function storeReport(store: ReportStore, report: CanaryReport): Promise<string | null> {
  try {
    await store.put(canaryReportObject(report), { overwrite: true });
    return null;
  } catch (error) {
    return storeFailure(store.name, STATE_CANARY[report.beat], error);
  }
}

/**
 * What the last probe saw, from its report (one small read): none when there is no report, it cannot be read or
 * parsed, or it is of another base URL. A probe without it reads the catalogs whole.
 */
async function lastSeen(store: ReportStore, baseUrl: string): Promise<ProbeSeen> {
  try {
    const object = await store.get(STATE_CANARY.probe);
    const parsed = object ? parseCanaryReport(object.body, 'probe') : null;
    if (!parsed || !('report' in parsed) || parsed.report.baseUrl !== baseUrl) return {};
    return parsed.report.seen ?? {};
  } catch {
    return {};
  }
}

/** What a run of the canary is given: its beat and why, the check, each beat's period, who runs it, where to store. */
export interface CanaryBeatOptions {
  readonly beat: CanaryBeat;
  readonly trigger: CanaryTrigger;
  /** The check; its deadline is the whole run's, a full run after a probe included. */
  readonly check: CheckOptions;
  /** How often each beat runs (the full table's period also for a full run a probe or a deploy started). */
  readonly periodsMs: Readonly<Record<CanaryBeat, number>>;
  readonly runner: Runner;
  readonly store: ReportStore;
  /** Applied to each report before it is stored (the Lambda names settings as its variables). */
  readonly render?: (report: CanaryReport) => CanaryReport;
  /** The clock (a test's may be another). */
  readonly now?: () => Date;
}

/**
 * Runs one beat as a scheduled run (never the key in a URL) and stores its report; a probe that finds the live
 * catalogs changed since the last probe (a 200 with another ETag instead of the 304) runs the full table at once,
 * within what is left of the deadline, and stores that report too. Resolves each report with how storing it went.
 */
export async function runCanaryBeat(options: CanaryBeatOptions): Promise<CanaryOutcome[]> {
  const now = options.now ?? (() => new Date());
  const render = options.render ?? ((report: CanaryReport) => report);
  const started = now();
  // Run on a schedule: never the key in a URL, where access logs would keep it.
  const check: CheckOptions = { ...options.check, keyInUrl: false };
  const run = (beat: CanaryBeat, trigger: CanaryTrigger, at: Date) => ({
    beat,
    trigger,
    started: at,
    periodMs: options.periodsMs[beat],
    runner: options.runner,
  });
  const stored = async (report: CanaryReport): Promise<CanaryOutcome> => {
    const rendered = render(report);
    return { report: rendered, storeProblem: await storeReport(options.store, rendered) };
  };
  const full = async (trigger: CanaryTrigger, at: Date) => {
    const spent = at.getTime() - started.getTime();
    const report = await checkDeployment({ ...check, deadlineMs: Math.max(1_000, check.deadlineMs - spent) });
    return stored(canaryReportOf(report, { ...run('full', trigger, at), finished: now() }));
  };
  if (options.beat === 'full') return [await full(options.trigger, started)];
  const seen = await lastSeen(options.store, check.baseUrl);
  const probe = await probeDeployment(check, seen);
  const outcomes = [
    await stored(
      canaryReportOf(
        probe.report,
        { ...run('probe', options.trigger, started), finished: now() },
        probe.seen,
      ),
    ),
  ];
  if (probe.changed) outcomes.push(await full('live-build-changed', now()));
  return outcomes;
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

/** How a beat is named in lines: `probe`, `full`, and why a run came outside its schedule. */
export function beatLabel(report: Pick<CanaryReport, 'beat' | 'trigger'>): string {
  const why = {
    schedule: '',
    deploy: ', after the deploy',
    start: ', at catalog start',
    'live-build-changed': ', the live build changed',
  }[report.trigger];
  return `${report.beat}${why}`;
}

/** How a report is judged at `now`: the one line status shows, and why it is degraded (null: it is not). */
export interface ConformanceJudgement {
  readonly line: string;
  readonly problem: string | null;
  /** Seconds since the run finished. */
  readonly ageSeconds: number;
  /** No report for more than two of its beat's periods (not judged once the canary stopped). */
  readonly silent: boolean;
}

/**
 * Judges a report at `now`: degraded when a row failed or was not run, the deployment could not be reached, or
 * the canary has not reported this beat for two of its periods. `stopped`: the local stack's canary stopped with
 * its `catalog start`, or the deployment no longer has a canary, so its last report is shown, not judged. A
 * problem names the beat.
 */
export function judgeConformance(report: CanaryReport, now: Date, stopped: boolean): ConformanceJudgement {
  const ageSeconds = Math.max(0, Math.round((now.getTime() - Date.parse(report.finished)) / 1000));
  const ago = `${formatAge(ageSeconds)} ago`;
  const summary = conformanceSummary(report);
  const diagnosis = report.diagnosis && report.reachable ? `; ${report.diagnosis}` : '';
  const beat = `conformance (${report.beat})`;
  const why = report.trigger === 'schedule' ? '' : ` (${beatLabel(report).replace(/^\w+, /, '')})`;
  if (stopped)
    return {
      line: `${summary}, ${ago} (${report.runner.kind === 'local' ? 'the canary stopped with catalog start' : 'the deployment has no canary now: its last report'})`,
      problem: null,
      ageSeconds,
      silent: false,
    };
  const silent = ageSeconds > 2 * report.periodSeconds;
  const line = `${summary}, ${ago}${why}`;
  if (silent)
    return {
      line,
      problem: `${beat}: the canary has not reported for ${formatAge(ageSeconds)}, more than two of its ${formatAge(report.periodSeconds)} periods (its last run: ${summary})`,
      ageSeconds,
      silent,
    };
  if (!conforms(report))
    return {
      line,
      problem: `${beat}: ${summary}, ${ago}${diagnosis}; catalog check --base-url ${report.baseUrl} says what each row expected and got`,
      ageSeconds,
      silent,
    };
  return { line, problem: null, ageSeconds, silent };
}

/**
 * The run's log lines: one per failed row (its beat, its name, its request with placeholders for keys, what it
 * expected and what came), then one for the run. The report holds no key, so neither do they.
 */
export function canaryLogLines(report: CanaryReport): object[] {
  const rows = report.failing.map((row) => ({
    level: 'error',
    message: 'conformance row failed',
    beat: report.beat,
    row: row.name,
    request: row.request,
    problems: row.lines,
    baseUrl: report.baseUrl,
  }));
  const run = {
    level: conforms(report) ? 'info' : 'error',
    message: `conformance (${beatLabel(report)}): ${conformanceSummary(report)}`,
    beat: report.beat,
    trigger: report.trigger,
    baseUrl: report.baseUrl,
    counts: report.counts,
    requests: report.requests,
    durationMs: report.durationMs,
    ...(report.diagnosis ? { diagnosis: report.diagnosis } : {}),
  };
  return [...rows, run];
}

/**
 * Hands the run's metrics to the sink, stamped with the run's start (one run per period of its beat) and with its
 * beat as a dimension: failed rows, rows not run, the deployment unreachable (1 or 0), and, only when the report
 * was stored, the run's duration (what the silence alarm of its beat counts).
 */
export function emitCanaryMetrics(
  sink: MetricsSink & {
    setTimestamp(timestamp: Date): unknown;
    addDimension(name: string, value: string): unknown;
  },
  report: CanaryReport,
  stored: boolean,
): void {
  const add = (key: keyof typeof CANARY_METRICS, value: number) =>
    sink.addMetric(CANARY_METRICS[key].name, CANARY_METRICS[key].unit, value);
  sink.setTimestamp(new Date(report.started));
  sink.addDimension(METRICS_BEAT_DIMENSION, report.beat);
  add('failedRows', report.counts.fail);
  add('rowsNotRun', report.counts.notRun);
  add('unreachable', report.reachable ? 0 : 1);
  if (stored) add('runDuration', report.durationMs);
  sink.addMetadata('baseUrl', report.baseUrl);
  sink.addMetadata('trigger', report.trigger);
  if (report.diagnosis) sink.addMetadata('diagnosis', report.diagnosis);
  sink.publishStoredMetrics();
}
