/**
 * What a publish run reports and leaves behind: its summary (`catalog publish` prints it, the Lambda logs it) and
 * its record at the origin, `state/last-run.json`, which `catalog status` reads.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { InvalidRow } from '../builder/errors.ts';
import { sourceKind } from '../builder/sources/index.ts';
import { redactUrl } from '../builder/sources/redact.ts';
import { CatalogError, describeCause, SourceNotConfiguredError } from '../contract/errors.ts';
import {
  DISCIPLINES,
  type Discipline,
  perDiscipline,
  STATE_LAST_RUN,
  totalPlans,
} from '../contract/index.ts';
import { isSuccessfulOutcome, RUN_OUTCOMES, type RunOutcome } from '../contract/metrics.ts';
import { PublishRefusedError } from '../publish/errors.ts';
import type { LockHolder } from '../publish/lock.ts';
import { type ObjectToWrite, type OriginStore, parseStoredJson, stateObject } from '../publish/origin.ts';
import type { Pin } from '../publish/pointer.ts';

const Counts = z.record(z.enum(DISCIPLINES), z.number().int().min(0));

/** The fields of a run's record (the record is {@link LastRun}). */
const RunFields = z.object({
  /** When the run started and when its outcome was settled (ISO 8601 UTC). */
  started: z.iso.datetime(),
  finished: z.iso.datetime(),
  outcome: z.enum(RUN_OUTCOMES),
  /** The guard that refused the catalog (outcome `refused`): `empty` or `shrink`. */
  guard: z.string().optional(),
  /** The error's class name (outcomes `refused` and `failed`), e.g. `SourceError`. */
  error: z.string().optional(),
  /** Why, in one line, with settings named as the entry point that ran takes them. */
  reason: z.string(),
  /** The build this run made (the live one when identical); null when the build itself failed. */
  buildId: z.string().nullable(),
  /** Its plans per discipline and in all; null when the build itself failed. */
  counts: Counts.nullable(),
  plans: z.number().int().min(0).nullable(),
  /** Published+approved rows that broke a rule (left out with skipInvalid, or why the build failed). */
  invalidRows: z.number().int().min(0).nullable(),
  durationMs: z.number().int().min(0),
  /** Each step's duration, by its name (publish/README.md names the steps). */
  durationsMs: z.record(z.string(), z.number().int().min(0)).optional(),
  /**
   * The last run that left the live build matching the source — it published it, or found the source
   * identical to it — and that build: carried over from the previous record by a run that did neither.
   */
  confirmed: z.object({ at: z.iso.datetime(), buildId: z.string() }).nullable(),
  /**
   * What the run was given, as a command that runs it again needs it ({@link runSettings}); carried over from
   * the previous record by a run that never came to its source (busy). Absent in records written before it
   * was kept.
   */
  settings: z
    .object({
      /** The source, its secrets redacted (redact.ts); a file as an absolute path. */
      source: z.string(),
      /** Whether a bearer token went with it (never the token). */
      withToken: z.boolean(),
      /** The base URL the build linked to. */
      baseUrl: z.string(),
    })
    .optional(),
});

/** What a run was given, as its record keeps it. */
export type RunSettings = NonNullable<z.output<typeof RunFields>['settings']>;

/**
 * What a record keeps of a run's source and base URL: a URL with its password and secret query values replaced
 * by `***` (builder/sources/redact.ts), a file path made absolute (its run's working directory is not the
 * reader's), whether a token went with it.
 */
export function runSettings(source: string, sourceToken: string | undefined, baseUrl: string): RunSettings {
  return {
    source: sourceKind(source) === 'file' ? resolve(source) : redactUrl(source),
    withToken: sourceToken !== undefined,
    baseUrl: redactUrl(baseUrl),
  };
}

/** A run that did not succeed, as a later record remembers it. */
const Failure = RunFields.pick({ finished: true, outcome: true, guard: true, reason: true });
export type Failure = z.output<typeof Failure>;

/** The last run's record, as stored. */
export const LastRun = RunFields.extend({
  /**
   * The latest run since the last success that failed, was refused or found no source configured: this run
   * when it is one, carried over by a run that is neither (busy), null after a success. Absent in records
   * written before it was kept (see {@link failureOf}).
   */
  failure: Failure.nullable().optional(),
});
export type LastRun = z.output<typeof LastRun>;

/**
 * What a run learned before it ended: the build it made (if it got that far), with the invalid rows it left out
 * (`warnings`, builder/build.ts), or the invalid rows a build failed on.
 */
export interface RunProgress {
  readonly built?: {
    readonly buildId: string;
    readonly counts: Readonly<Record<Discipline, number>>;
    readonly warnings: readonly InvalidRow[];
  };
  /** Invalid rows of a build that failed because of them. */
  readonly invalid?: readonly InvalidRow[];
}

/** The one JSON line `catalog publish` prints (and the Lambda logs and returns). */
export interface PublishSummary {
  readonly command: 'publish';
  readonly result: 'published' | 'skipped-identical' | 'skipped-pinned';
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Readonly<Record<Discipline, number>>;
  readonly plans: number;
  readonly bytes: number;
  readonly plansHash: string;
  /** The build live when the publish started. */
  readonly previousBuildId: string | null;
  /** Why nothing was published (`skipped-*`). */
  readonly reason?: string;
  /** The pin that held the pointer (`skipped-pinned`). */
  readonly pin?: Pin;
  /** Builds beyond `keepBuilds` deleted. */
  readonly pruned: readonly string[];
  /** Problems that did not fail the run. */
  readonly warnings: readonly string[];
  /** Each step's duration, by its name, and the whole run's (`total`). */
  readonly durationsMs: Readonly<Record<string, number>>;
}

/** A run that found another run holding the run lock: it did nothing (publish/lock.ts). */
export interface BusySummary {
  readonly command: 'publish';
  readonly result: 'busy';
  /** Why, naming the run that holds the lock. */
  readonly reason: string;
  readonly holder: LockHolder;
  readonly durationsMs: { readonly total: number };
}

/** A scheduled run that found the deployment's source not set yet: it did nothing, and says what to do. */
export interface NotConfiguredSummary {
  readonly command: 'publish';
  readonly result: 'not-configured';
  readonly reason: string;
}

/** What a publish run reports: its publish summary, or that another run was busy. */
export type RunSummary = PublishSummary | BusySummary;

/** How a run ended: its summary, or the error it failed with. */
export type RunEnd = { readonly summary: RunSummary } | { readonly error: unknown };

/** The longest reason kept: a record is a status line, not a log. */
const MAX_REASON = 2000;

/** A message as one line, cut to {@link MAX_REASON} characters. */
export function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON - 1)}…` : line;
}

/** The failure a record remembers: its own, or the one it carried over (a record older than the field: its own). */
export function failureOf(record: LastRun): Failure | null {
  if (record.failure !== undefined) return record.failure;
  if (isSuccessfulOutcome(record.outcome) || record.outcome === 'busy') return null;
  const { finished, outcome, guard, reason } = record;
  return { finished, outcome, ...(guard !== undefined ? { guard } : {}), reason };
}

/** The record of a run; `previous` is the record it replaces (its confirmation is carried over). */
export function lastRunOf(run: {
  readonly started: Date;
  readonly finished: Date;
  readonly durationMs: number;
  /** Each step's duration so far, by name. */
  readonly durationsMs?: Readonly<Record<string, number>>;
  readonly progress: RunProgress;
  readonly end: RunEnd;
  readonly previous: LastRun | null;
  readonly present: (message: string) => string;
  /** What the run was given ({@link runSettings}); undefined when it never came to its source. */
  readonly settings?: RunSettings | undefined;
}): LastRun {
  const { built } = run.progress;
  const invalid = built?.warnings ?? run.progress.invalid;
  const settings = run.settings ?? run.previous?.settings;
  const common = {
    started: run.started.toISOString(),
    finished: run.finished.toISOString(),
    buildId: built?.buildId ?? null,
    counts: built ? perDiscipline((discipline) => built.counts[discipline]) : null,
    plans: built ? totalPlans(built.counts) : null,
    // Rows, not problems: a row may break several rules.
    invalidRows: invalid ? new Set(invalid.map((problem) => problem.row)).size : null,
    durationMs: Math.max(0, Math.round(run.durationMs)),
    ...(run.durationsMs ? { durationsMs: { ...run.durationsMs } } : {}),
    ...(settings ? { settings } : {}),
  };
  if ('error' in run.end) {
    const { error } = run.end;
    const message = error instanceof CatalogError ? error.message : describeCause(error);
    const outcome: RunOutcome =
      error instanceof PublishRefusedError
        ? 'refused'
        : error instanceof SourceNotConfiguredError
          ? 'not-configured'
          : 'failed';
    const failure: Failure = {
      finished: common.finished,
      outcome,
      ...(error instanceof PublishRefusedError ? { guard: error.guard } : {}),
      reason: oneLine(run.present(message)),
    };
    return {
      ...common,
      ...failure,
      error: error instanceof Error ? error.name : 'Error',
      confirmed: run.previous?.confirmed ?? null,
      failure,
    };
  }
  const { summary } = run.end;
  if (summary.result === 'busy')
    return {
      ...common,
      outcome: 'busy',
      reason: oneLine(run.present(summary.reason)),
      confirmed: run.previous?.confirmed ?? null,
      failure: run.previous ? failureOf(run.previous) : null,
    };
  const reason =
    summary.result === 'published'
      ? `published build ${summary.buildId} (${summary.plans} plans); the live build was ${summary.previousBuildId ?? '(none)'}`
      : run.present(summary.reason ?? summary.result);
  const live = summary.result === 'published' ? summary.buildId : summary.previousBuildId;
  const confirms = summary.result !== 'skipped-pinned' && live !== null;
  return {
    ...common,
    // A run that found the source identical wrote nothing: its build is the live one.
    ...(summary.result === 'skipped-identical' ? { buildId: summary.buildId } : {}),
    outcome: summary.result,
    reason: oneLine(reason),
    confirmed: confirms ? { at: common.finished, buildId: live } : (run.previous?.confirmed ?? null),
    failure: null,
  };
}

/** The record as the object written at the origin: JSON, `Cache-Control: no-store`, overwriting the last one. */
export function lastRunObject(record: LastRun): ObjectToWrite {
  return stateObject(STATE_LAST_RUN, `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * Leaves a run's record at the origin (`state/last-run.json`), the record it replaces read first (its confirmation
 * and failure are carried over); a failure to write it is a warning. Returns the record.
 */
export async function writeLastRun(
  origin: OriginStore,
  run: Omit<Parameters<typeof lastRunOf>[0], 'previous'>,
  warn: (warning: string) => void,
): Promise<LastRun> {
  const stored = await origin.get(STATE_LAST_RUN).catch(() => null);
  const parsed = stored ? parseLastRun(stored.body) : null;
  const record = lastRunOf({ ...run, previous: parsed && 'record' in parsed ? parsed.record : null });
  try {
    await origin.put(lastRunObject(record), { overwrite: true });
  } catch (error) {
    warn(
      `writing ${STATE_LAST_RUN} to ${origin.name} failed (${describeCause(error)}); catalog status shows the run before this one`,
    );
  }
  return record;
}

/** Reads a stored record: the record, or why it is not one. */
export function parseLastRun(body: Uint8Array): { record: LastRun } | { problem: string } {
  const read = parseStoredJson(body, STATE_LAST_RUN, LastRun, { what: 'a run record', noun: 'record' });
  return 'value' in read ? { record: read.value } : read;
}
