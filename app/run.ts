/**
 * Build, publish, roll back and unpin: every entry point calls these (README.md). Each is an explicit list of the
 * steps of publish/steps.ts, run in order and timed one by one; this file wires the source, the clients the
 * caller built and the metrics into them. Progress and warnings go to the caller's `report`.
 */

import { type BuildResult, completeBuild, type PreparedBuild, prepareBuild } from '../builder/build.ts';
import { formatInvalidRow, type InvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { openSource } from '../builder/sources/index.ts';
import { ConfigError, describeCause, settingRef } from '../contract/errors.ts';
import { type Discipline, STATE_LAST_RUN, totalPlans } from '../contract/index.ts';
import { type BuildListing, listBuilds } from '../publish/history.ts';
import { objectToWrite } from '../publish/origin.ts';
import { type Pin, readPointer } from '../publish/pointer.ts';
import {
  choose,
  complete,
  guard,
  lock,
  type Progress,
  type ProgressSink,
  type PublishTarget,
  pinLive,
  prepare,
  prove,
  prune,
  publishLive,
  RunState,
  read,
  readManifest,
  runSteps,
  type Step,
  type Stop,
  unlock,
  unpin as unpinStep,
  upload,
  verify,
} from '../publish/steps.ts';
import {
  type BusySummary,
  type LastRun,
  lastRunObject,
  lastRunOf,
  parseLastRun,
  type RunEnd,
  type RunProgress,
  type RunSettings,
  type RunSummary,
  runSettings,
} from './last-run.ts';
import { checkPropagation, type PropagationCheck, type PropagationResult } from './propagation.ts';
import { emitRunMetrics, type MetricsSink, runFigures } from './run-metrics.ts';
import { renderMessage, type SettingsIn } from './settings/index.ts';

export type { Progress, ProgressSink, PublishTarget };

/** What an operation tells its caller as it goes: warnings and the rows a failed build refused. */
export type Report = (line: string) => void;

/** The settings a build reads (the same names on the command line, in the Lambda and in CDK), but where it writes. */
export type BuildSettings = Omit<SettingsIn<'build'>, 'out' | 'json' | 'source' | 'sourceToken'> & {
  /** The source spec (a path, `postgres://…`, `http(s)://…`). */
  readonly source: string;
  /** The bearer token of an HTTP source. */
  readonly sourceToken?: string | undefined;
};

/** Reads the source and builds in memory, stamped `now`; invalid rows are reported one line each. */
export async function build(
  settings: BuildSettings,
  now: Date,
  report: Report,
  progress: ProgressSink,
): Promise<BuildResult> {
  const prepared = await prepareFrom(settings, now, report, progress);
  progress({ stage: 'compressing and rendering pages' });
  return completeBuild(prepared);
}

/** Reads the source and takes a build's first, cheap step (builder/build.ts `prepareBuild`), reporting invalid rows. */
async function prepareFrom(
  settings: BuildSettings,
  now: Date,
  report: Report,
  progress: ProgressSink | undefined,
): Promise<PreparedBuild> {
  progress?.({ stage: 'reading the source' });
  try {
    const prepared = await prepareBuild(await openSource(settings.source, settings), {
      links: { baseUrl: settings.baseUrl, appScheme: settings.appScheme, webBaseUrl: settings.webBaseUrl },
      skipInvalid: settings.skipInvalid,
      now,
      openapiTemplate: OPENAPI_TEMPLATE,
      contactAddress: settings.contactAddress,
    });
    for (const problem of prepared.warnings) report(`warning: invalid ${formatInvalidRow(problem)}`);
    return prepared;
  } catch (error) {
    if (error instanceof InvalidRowsError) for (const line of error.lines()) report(`invalid ${line}`);
    throw error;
  }
}

/** Writes one build flat into a directory (`catalog build --out`, publish/dir-origin.ts); resolves its ms. */
export async function writeFlatBuild(dir: string, result: BuildResult): Promise<number> {
  const started = performance.now();
  const { writeFlat } = await import('../publish/dir-origin.ts');
  await writeFlat(
    dir,
    [...result.objects, ...result.root].map((object) => objectToWrite(object, object.key)),
  );
  return performance.now() - started;
}

/** The settings a publish reads, beyond the build's. */
export type PublishSettings = BuildSettings &
  Pick<SettingsIn<'publish'>, 'allowEmpty' | 'minRatio' | 'keepBuilds'>;

/** The source of a run when it is read at run time (the Lambda's secret) rather than taken from the settings. */
export type RunSource = Pick<BuildSettings, 'source' | 'sourceToken'>;

/** How a publish runs, and what it reports besides its summary. */
export interface PublishRunOptions {
  /** The run's start: it stamps the build and the record. */
  readonly now: Date;
  readonly force: boolean;
  readonly unpin?: boolean;
  /** Take an origin the store does not record, or replace a live build the origin lacks (publish/steps.ts `prove`). */
  readonly recover?: boolean;
  readonly report: Report;
  /** Hears the run's stages and the objects uploaded. */
  readonly progress?: ProgressSink;
  /** Reads the source when the run starts instead of taking it from the settings; its failure is recorded. */
  readonly source?: () => Promise<RunSource>;
  /** A build whose first step the caller already took (builder/build.ts `prepareBuild`): the source is not read. */
  readonly prepared?: PreparedBuild;
  /** Shows a message the way the entry point names settings, secrets removed (default: the command line's). */
  readonly present?: (message: string) => string;
  /** Given, the run's figures go there once, at its end (the Lambda passes Powertools' Metrics). */
  readonly metrics?: MetricsSink;
  /** Given, a publish that moved the pointer measures how long the edge takes to serve the new build. */
  readonly propagation?: PropagationCheck;
  /** What runs, as the run lock names it (default `catalog publish`). */
  readonly runBy?: string;
  /** Who runs it, for the history of the live pointer (`user@host`, the builder function's name). */
  readonly actor?: string;
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

/** What a publish did, and the invalid rows it left out (with `skipInvalid`). */
export interface PublishOutcome {
  /** What the publish did, or `busy`: another run held the run lock and this one did nothing. */
  readonly summary: RunSummary;
  readonly invalidRows: readonly InvalidRow[];
  /** The run's record, as written to the origin's `state/last-run.json` (unless `warnings` says otherwise). */
  readonly record: LastRun;
  /** What the propagation check found, when one was asked for. */
  readonly propagation?: PropagationResult;
  /** Problems after the outcome that did not change it: the record or the metrics not written. */
  readonly warnings: readonly string[];
}

/** The summary of a publish's steps: how they ended (`stop`), or published when none settled it. */
function summaryOf(state: RunState, stop: Stop | undefined, started: number): RunSummary {
  const durationsMs = { ...state.durationsMs, total: Math.round(performance.now() - started) };
  if (stop?.result === 'busy') return { command: 'publish', ...stop, durationsMs } satisfies BusySummary;
  const candidate = state.need('candidate');
  const live = state.live;
  const identical = stop?.result === 'skipped-identical' && live?.kind === 'build' ? live : undefined;
  return {
    command: 'publish',
    result: stop?.result ?? 'published',
    buildId: identical?.id ?? candidate.buildId,
    generatedAt: identical?.manifest.generatedAt ?? candidate.generatedAt,
    counts: candidate.counts,
    plans: totalPlans(candidate.counts),
    bytes: state.built?.objects.reduce((sum, object) => sum + object.size, 0) ?? 0,
    plansHash: candidate.plansHash,
    previousBuildId: state.pointer?.live ?? null,
    ...(stop ? { reason: stop.reason } : {}),
    ...(stop?.result === 'skipped-pinned' ? { pin: stop.pin } : {}),
    pruned: state.pruned,
    warnings: state.pin
      ? [`unpinned ${state.pin.build} (pinned since ${state.pin.at} by ${state.pin.by})`, ...state.warnings]
      : state.warnings,
    durationsMs,
  };
}

/** The record the last run left at the origin, or null (none, unreadable, or not a record). */
async function previousRecord(target: PublishTarget): Promise<LastRun | null> {
  try {
    const object = await target.origin.get(STATE_LAST_RUN);
    const parsed = object ? parseLastRun(object.body) : null;
    return parsed && 'record' in parsed ? parsed.record : null;
  } catch {
    return null;
  }
}

/**
 * Builds and publishes (publish/README.md): proves the deployment (a failure there writes nothing anywhere), then
 * the steps under the run lock (held elsewhere: `busy`); whatever their outcome, the run's record, the prune, the
 * lock's release, the propagation check and the metrics, none of which changes it. A failed run throws its error.
 */
export async function publish(
  settings: Omit<PublishSettings, 'source'> & { readonly source?: string | undefined },
  target: PublishTarget,
  options: PublishRunOptions,
): Promise<PublishOutcome> {
  const started = performance.now();
  const present = options.present ?? ((message: string) => renderMessage(message, 'cli'));
  const state = new RunState(target, {
    force: options.force,
    allowEmpty: settings.allowEmpty,
    minRatio: settings.minRatio,
    keep: settings.keepBuilds,
    unpin: options.unpin ?? false,
    recover: options.recover ?? false,
    runBy: options.runBy ?? 'catalog publish',
    actor: options.actor ?? 'unknown',
    ...(options.progress ? { progress: options.progress } : {}),
  });
  let invalid: readonly InvalidRow[] | undefined;
  // What the run's record keeps of its source, for the command that runs it again (the Lambda's: once read).
  let given =
    settings.source === undefined
      ? undefined
      : runSettings(settings.source, settings.sourceToken, settings.baseUrl);
  state.prepare = async () => {
    if (options.prepared) return options.prepared;
    const from = options.source
      ? await options.source()
      : { source: settings.source, sourceToken: settings.sourceToken };
    if (from.source === undefined) throw new ConfigError(`${settingRef('source')}: is required`);
    given = runSettings(from.source, from.sourceToken, settings.baseUrl);
    try {
      return await prepareFrom(
        { ...settings, source: from.source, sourceToken: from.sourceToken },
        options.now,
        options.report,
        options.progress,
      );
    } catch (error) {
      if (error instanceof InvalidRowsError) invalid = error.invalid;
      throw error;
    }
  };
  await runSteps(state, [prove('publish')]);

  let stop: Stop | undefined;
  let failure: { error: unknown } | undefined;
  try {
    stop = await runSteps(state, [
      lock('publish'),
      prepare,
      unpinStep,
      read,
      guard,
      complete,
      upload,
      verify,
      publishLive,
    ]);
  } catch (error) {
    failure = { error };
  }
  const end: RunEnd = failure ?? { summary: summaryOf(state, stop, started) };
  const after = new AfterRun(state, options, settings.baseUrl, present);
  await runSteps(state, [
    after.record(started, end, invalid, given),
    ...(stop?.result === 'busy' ? [] : [prune, unlock]),
    after.propagation(end),
    after.metrics(),
  ]);
  for (const warning of [...state.warnings, ...after.warnings]) options.report(`warning: ${warning}`);
  if (failure) throw failure.error;
  return {
    // Again, now that the prune and the steps after the outcome are timed too.
    summary: summaryOf(state, stop, started),
    invalidRows: state.candidate?.warnings ?? [],
    record: after.written as LastRun,
    ...(after.propagated ? { propagation: after.propagated } : {}),
    warnings: after.warnings,
  };
}

/** The steps after a run's outcome: its record, the propagation check, the metrics. None throws. */
class AfterRun {
  readonly warnings: string[] = [];
  written?: LastRun;
  propagated?: PropagationResult;
  readonly #state: RunState;
  readonly #options: PublishRunOptions;
  readonly #baseUrl: string;
  readonly #present: (message: string) => string;

  constructor(
    state: RunState,
    options: PublishRunOptions,
    baseUrl: string,
    present: (message: string) => string,
  ) {
    this.#state = state;
    this.#options = options;
    this.#baseUrl = baseUrl;
    this.#present = present;
  }

  /** Leaves the run's record at the origin (`state/last-run.json`), whatever the outcome. */
  record(
    started: number,
    end: RunEnd,
    invalid: readonly InvalidRow[] | undefined,
    settings: RunSettings | undefined,
  ): Step {
    return {
      name: 'record',
      run: async () => {
        const candidate = this.#state.candidate;
        const progress: RunProgress = candidate
          ? { built: { buildId: candidate.buildId, counts: candidate.counts, invalid: candidate.warnings } }
          : invalid
            ? { invalid }
            : {};
        this.written = lastRunOf({
          started: this.#options.now,
          finished: new Date(),
          durationMs: performance.now() - started,
          durationsMs: this.#state.durationsMs,
          progress,
          end,
          previous: await previousRecord(this.#state.target),
          present: this.#present,
          settings,
        });
        try {
          await this.#state.target.origin.put(lastRunObject(this.written), { overwrite: true });
        } catch (error) {
          this.warnings.push(
            `writing ${STATE_LAST_RUN} to ${this.#state.target.origin.name} failed (${describeCause(error)}); catalog status shows the run before this one`,
          );
        }
        return undefined;
      },
    };
  }

  /** After a publish that moved the pointer: how long the edge takes to serve it, when the caller asked. */
  propagation(end: RunEnd): Step {
    return {
      name: 'propagation',
      run: async () => {
        const check = this.#options.propagation;
        if (!check || !('summary' in end) || end.summary.result === 'busy') return undefined;
        const { summary } = end;
        const movedAt = this.#state.moved?.at;
        this.propagated =
          summary.result !== 'published' || movedAt === undefined
            ? { outcome: 'skipped', reason: `nothing was published (${summary.result})` }
            : await checkPropagation(check, {
                baseUrl: this.#baseUrl,
                generatedAt: summary.generatedAt,
                movedAt,
                present: this.#present,
              });
        if (this.propagated.outcome !== 'measured')
          this.#options.report(
            `propagation ${this.propagated.outcome}: ${this.propagated.outcome === 'timeout' ? `still serving ${this.propagated.lastSeen} after ${this.propagated.waitedSeconds} s` : this.propagated.reason}`,
          );
        return undefined;
      },
    };
  }

  /** The run's figures to the caller's metrics sink, with the age of the catalog live after it. */
  metrics(): Step {
    return {
      name: 'metrics',
      run: async () => {
        const sink = this.#options.metrics;
        if (!sink || !this.written) return undefined;
        let catalogAgeSeconds: number | undefined;
        try {
          const { live } = this.#state.moved?.after ?? (await readPointer(this.#state.target.kvs));
          const manifest = live === null ? null : await readManifest(this.#state.target.origin, live);
          if (manifest && !('problem' in manifest))
            catalogAgeSeconds = (Date.now() - Date.parse(manifest.generatedAt)) / 1000;
        } catch (error) {
          this.warnings.push(`reading the live build for the catalog age failed (${describeCause(error)})`);
        }
        try {
          emitRunMetrics(sink, runFigures(this.written, { catalogAgeSeconds, propagation: this.propagated }));
        } catch (error) {
          this.warnings.push(`emitting the run's metrics failed (${describeCause(error)})`);
        }
        return undefined;
      },
    };
  }
}

/** The builds at the target's origin, newest first, marked by the pointer and its history (`catalog builds`). */
export function builds(target: PublishTarget): Promise<BuildListing[]> {
  return listBuilds(target.origin, target.kvs);
}

/** The one JSON line `catalog rollback` prints. */
export interface RollbackSummary {
  readonly command: 'rollback';
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Readonly<Record<Discipline, number>>;
  readonly previousBuildId: string | null;
  readonly pin: Pin;
  /** The rollback line after it, newest first. */
  readonly previous: readonly string[];
  readonly warnings: readonly string[];
  readonly durationsMs: Readonly<Record<string, number>>;
}

/** Who and how a rollback or an unpin runs. */
export interface MoveOptions {
  readonly now: Date;
  readonly actor?: string;
  readonly progress?: ProgressSink;
}

/**
 * Makes an earlier whole build live (`to`, else the head of the rollback line) and pins it there: proves the
 * deployment, then under the run lock chooses the build, makes its pages live and moves the pointer.
 */
export async function rollback(
  target: PublishTarget,
  options: MoveOptions & { readonly to?: string },
): Promise<RollbackSummary> {
  const started = performance.now();
  const state = new RunState(target, {
    force: false,
    allowEmpty: false,
    minRatio: 0,
    actor: options.actor ?? 'unknown',
    clock: () => options.now,
    ...(options.to !== undefined ? { to: options.to } : {}),
    ...(options.progress ? { progress: options.progress } : {}),
  });
  await runSteps(state, [prove('other'), lock('rollback')]);
  try {
    await runSteps(state, [choose, pinLive]);
  } finally {
    await runSteps(state, [unlock]);
  }
  const { id, manifest } = state.need('chosen');
  const moved = state.need('moved');
  return {
    command: 'rollback',
    buildId: id,
    generatedAt: manifest.generatedAt,
    counts: manifest.counts,
    previousBuildId: moved.before.live,
    pin: state.need('pin'),
    previous: moved.after.previous,
    warnings: state.warnings,
    durationsMs: { ...state.durationsMs, total: Math.round(performance.now() - started) },
  };
}

/** Removes a rollback's pin (the pinned build stays live until the next publish); returns it, if any. */
export async function unpin(
  target: PublishTarget,
  options: Omit<MoveOptions, 'progress'>,
): Promise<{ command: 'unpin'; unpinned: Pin | null; warnings: readonly string[] }> {
  const state = new RunState(target, {
    force: false,
    allowEmpty: false,
    minRatio: 0,
    unpin: true,
    actor: options.actor ?? 'unknown',
    clock: () => options.now,
  });
  await runSteps(state, [prove('other'), unpinStep]);
  return { command: 'unpin', unpinned: state.pin ?? null, warnings: state.warnings };
}
