/**
 * Publish, roll back and unpin, as every entry point calls them (README.md): each reads top to bottom through the
 * steps publish/README.md lists (app/build.ts's and publish/steps.ts's), each timed by `timed`.
 */

import { completeBuild, type PreparedBuild } from '../builder/build.ts';
import { type InvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { ConfigError, settingRef } from '../contract/errors.ts';
import { type Discipline, PAGE_OBJECT_PREFIX, totalPlans } from '../contract/index.ts';
import { decide } from '../publish/core.ts';
import { failing, PublishRefusedError, RunLockBusyError } from '../publish/errors.ts';
import { describeHolder, type HeldRunLock, RUN_LOCK_TTL_MS, tookOverWarning } from '../publish/lock.ts';
import {
  movePointer,
  type Pin,
  PinnedError,
  pinPointer,
  readPointer,
  shownValue,
} from '../publish/pointer.ts';
import * as steps from '../publish/steps.ts';
import { type BuildSettings, prepare, type Report, type RunSource } from './build.ts';
import {
  type LastRun,
  type PublishSummary,
  type RunEnd,
  type RunSettings,
  type RunSummary,
  runSettings,
  writeLastRun,
} from './last-run.ts';
import { renderMessage, type SettingsIn } from './settings/index.ts';

export type { Progress, ProgressSink, PublishTarget } from '../publish/steps.ts';
export type { PublishSummary } from './last-run.ts';

/** The settings a publish reads, beyond the build's. */
export type PublishSettings = BuildSettings &
  Pick<SettingsIn<'publish'>, 'allowEmpty' | 'minRatio' | 'keepBuilds'>;

/** What a run hands `ended`: how it ended, its record, the build live after it, when it moved the pointer. */
export interface RunEnded {
  readonly end: RunEnd;
  readonly record: LastRun;
  readonly live: string | null;
  /** `performance.now()` at the move. */
  readonly movedAt?: number;
}

/** How a publish runs, and what it reports besides its summary. */
export interface PublishRunOptions {
  /** The run's start: it stamps the build and the record. */
  readonly now: Date;
  readonly force: boolean;
  readonly unpin?: boolean;
  /** Take an origin the store does not record, or replace a live build the origin lacks (`proveDeployment`). */
  readonly recover?: boolean;
  readonly report: Report;
  /** Hears the run's stages and the objects uploaded. */
  readonly progress?: steps.ProgressSink;
  /** Reads the source when the run starts instead of taking it from the settings; its failure is recorded. */
  readonly source?: () => Promise<RunSource>;
  /** A build whose first step the caller already took (builder/build.ts `prepareBuild`): the source is not read. */
  readonly prepared?: PreparedBuild;
  /** Shows a message the way the entry point names settings, secrets removed (default: the command line's). */
  readonly present?: (message: string) => string;
  /** What runs, as the run lock names it (default `catalog publish`). */
  readonly runBy?: string;
  /** Who runs it, for the history of the live pointer (`user@host`, the builder function's name). */
  readonly actor?: string;
  /** Called once the outcome is recorded, whatever it is (the Lambda measures propagation, sends its metrics). */
  readonly ended?: (run: RunEnded) => Promise<void>;
}

/** What a publish did, and the invalid rows it left out (with `skipInvalid`). */
export interface PublishOutcome {
  /** What the publish did, or `busy`: another run held the run lock and this one did nothing. */
  readonly summary: RunSummary;
  readonly invalidRows: readonly InvalidRow[];
  /** The run's record, as written to the origin's `state/last-run.json` (unless `warnings` says otherwise). */
  readonly record: LastRun;
  /** Problems after the outcome that did not change it: the record not written. */
  readonly warnings: readonly string[];
}

/** A run's context for publish/steps.ts, its warnings, and `timed`, which keeps each step's ms in `durationsMs`. */
function start(
  target: steps.PublishTarget,
  options: { readonly now: Date; readonly actor?: string; readonly progress?: steps.ProgressSink },
) {
  const warnings: string[] = [];
  const durationsMs: Record<string, number> = {};
  const run: steps.Run = {
    target,
    at: options.now,
    by: options.actor ?? 'unknown',
    progress: options.progress ?? (() => {}),
    warn: (warning) => void warnings.push(warning),
  };
  async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await step();
    } finally {
      durationsMs[name] = Math.round(performance.now() - started);
    }
  }
  return { run, warnings, durationsMs, timed, started: performance.now() };
}

/**
 * Builds and publishes (publish/README.md): proves the deployment (a failure there writes nothing), then under the
 * run lock (held elsewhere: `busy`) prepares the build and runs the steps to the pointer's move; whatever the
 * outcome, records the run, prunes, unlocks and calls `ended`, none of which changes it. A failed run throws.
 */
export async function publish(
  settings: Omit<PublishSettings, 'source'> & { readonly source?: string | undefined },
  target: steps.PublishTarget,
  options: PublishRunOptions,
): Promise<PublishOutcome> {
  const { run, warnings, durationsMs, timed, started } = start(target, options);
  const proven = await timed('prove', () =>
    steps.proveDeployment(target, { recover: options.recover ?? false, live: true }),
  );
  if (proven.note) run.warn(proven.note);
  const lock = await timed('lock', () =>
    steps.takeRunLock(target.origin, options.runBy ?? 'catalog publish'),
  );
  let candidate: PreparedBuild | undefined;
  let invalid: readonly InvalidRow[] | undefined;
  // What the run's record keeps of its source, for the command that runs it again (the Lambda's: once read).
  let given: RunSettings | undefined =
    settings.source === undefined
      ? undefined
      : runSettings(settings.source, settings.sourceToken, settings.baseUrl);
  let ran: Ran | undefined;
  let end: RunEnd;
  /** The summary of a publish that ran its steps. */
  const summary = (prepared: PreparedBuild, done: Ran, pruned: readonly string[] = []): PublishSummary => {
    const { result, reason, pin, pointer, live, built } = done;
    const identical = result === 'skipped-identical' && live.kind === 'build' ? live : undefined;
    return {
      command: 'publish',
      result,
      buildId: identical?.id ?? prepared.buildId,
      generatedAt: identical?.manifest.generatedAt ?? prepared.generatedAt,
      counts: prepared.counts,
      plans: totalPlans(prepared.counts),
      bytes: built?.objects.reduce((sum, object) => sum + object.size, 0) ?? 0,
      plansHash: prepared.plansHash,
      previousBuildId: pointer.live,
      ...(reason ? { reason } : {}),
      ...(pin ? { pin } : {}),
      pruned: [...pruned],
      warnings: [...warnings],
      durationsMs: { ...durationsMs, total: Math.round(performance.now() - started) },
    };
  };
  if ('busy' in lock) {
    const reason = `busy: another run holds the run lock at ${target.origin.name}: ${describeHolder(lock.busy)}; this run did nothing`;
    const total = Math.round(performance.now() - started);
    end = {
      summary: { command: 'publish', result: 'busy', reason, holder: lock.busy, durationsMs: { total } },
    };
  } else {
    if (lock.held.tookOver) run.warn(tookOverWarning(lock.held.tookOver));
    try {
      candidate = await timed('prepare', () =>
        prepareRun(settings, options, run.progress, (source) => {
          given = runSettings(source.source, source.sourceToken, settings.baseUrl);
        }),
      );
      const { allowEmpty, minRatio } = settings;
      ran = await publishPrepared(run, candidate, proven, { ...options, allowEmpty, minRatio, timed });
      end = { summary: summary(candidate, ran) };
    } catch (error) {
      if (error instanceof InvalidRowsError) invalid = error.invalid;
      end = { error };
    }
  }
  const after: string[] = [];
  const record = await timed('record', () => {
    const progress = candidate ? { built: candidate } : invalid ? { invalid } : {};
    const present = options.present ?? ((message: string) => renderMessage(message, 'cli'));
    const times = { started: options.now, finished: new Date(), durationMs: performance.now() - started };
    return writeLastRun(
      target.origin,
      { ...times, durationsMs, progress, end, present, settings: given },
      (line) => after.push(line),
    );
  });
  let pruned: string[] = [];
  if ('held' in lock) {
    const moved = ran?.moved?.after.live;
    if (moved) pruned = await timed('prune', () => steps.prune(run, moved, settings.keepBuilds));
    await timed('unlock', () => unlock(run, lock.held));
  }
  const live = ran?.moved?.after.live ?? ran?.pointer.live ?? proven.pointer.live;
  await options.ended?.({ end, record, live, ...(ran?.moved ? { movedAt: ran.moved.at } : {}) });
  for (const warning of [...warnings, ...after]) options.report(`warning: ${warning}`);
  if ('error' in end) throw end.error;
  return {
    // Again, now that the prune and the unlock are timed too.
    summary: candidate && ran ? summary(candidate, ran, pruned) : end.summary,
    invalidRows: candidate?.warnings ?? [],
    record,
    warnings: after,
  };
}

/** The run's build, its first step (builder/build.ts `prepareBuild`): the caller's, or from the run's source (told to `read`). */
async function prepareRun(
  settings: Omit<BuildSettings, 'source'> & { readonly source?: string | undefined },
  options: PublishRunOptions,
  progress: steps.ProgressSink,
  read: (source: { readonly source: string; readonly sourceToken?: string | undefined }) => void,
): Promise<PreparedBuild> {
  if (options.prepared) return options.prepared;
  const from = options.source ? await options.source() : settings;
  if (from.source === undefined) throw new ConfigError(`${settingRef('source')}: is required`);
  const source = { source: from.source, sourceToken: from.sourceToken };
  read(source);
  return prepare({ ...settings, ...source }, options.now, options.report, progress);
}

/** How a publish's steps after its build's first one ended, and what they read and made on the way. */
type Ran = Awaited<ReturnType<typeof publishPrepared>>;

/** A publish from its build's first step to its outcome (publish/README.md, steps 4 to 9). */
async function publishPrepared(
  run: steps.Run,
  candidate: PreparedBuild,
  proven: Awaited<ReturnType<typeof steps.proveDeployment>>,
  how: Pick<PublishRunOptions, 'force' | 'unpin'> &
    Pick<PublishSettings, 'allowEmpty' | 'minRatio'> & { readonly timed: ReturnType<typeof start>['timed'] },
) {
  const { target, progress, warn } = run;
  const { timed } = how;
  if (how.unpin) {
    const pin = await timed('unpin', () => steps.removePin(run, proven.binding));
    if (pin) warn(`unpinned ${pin.build} (pinned since ${pin.at} by ${pin.by})`);
  }
  const read = await timed('read', () =>
    failing(`reading the live build from ${target.kvs.name} and ${target.origin.name}`, async () => {
      const pointer = await readPointer(target.kvs);
      return { pointer, ...(await steps.readLive(target.origin, pointer.live, proven.manifest)) };
    }),
  );
  const { pointer, live } = read;
  const right = await timed('put right', () => steps.putLivePagesRight(run, live, read));
  if (right.put > 0 && live.kind === 'build')
    warn(`put ${right.put} live page(s) back to build ${live.id}'s`);
  if (pointer.pin) {
    if (live.kind === 'build' && live.damage.length > 0)
      warn(
        `live build ${live.id} is damaged (${live.damage.slice(0, 3).join('; ')}) and stays live while pinned: catalog publish ${settingRef('unpin')} replaces it with a fresh build`,
      );
    const reason = new PinnedError(pointer.pin).message;
    return { result: 'skipped-pinned' as const, reason, pin: pointer.pin, pointer, live };
  }
  const plans = totalPlans(candidate.counts);
  const decision = decide(
    { plans, plansHash: candidate.plansHash, inputsHash: candidate.inputsHash },
    live,
    how,
  );
  if (decision.action === 'refuse') throw new PublishRefusedError(decision.guard, decision.reason);
  if (decision.action === 'skip')
    return { result: 'skipped-identical' as const, reason: decision.reason, pointer, live };
  if (decision.note) warn(decision.note);
  const recovered =
    live.kind === 'unreadable' && `recovered: build:live named ${shownValue(live.id)} (${live.reason})`;
  if (recovered) warn(`${recovered}; a fresh build replaces it`);
  const built = await timed('complete', async () => {
    progress({ stage: 'compressing and rendering pages' });
    return completeBuild(candidate);
  });
  await timed('upload', () => steps.upload(run, built, pointer.live));
  await timed('verify', async () => {
    progress({ stage: 'verifying' });
    await steps.verify(target.origin, built, pointer.live);
  });
  await timed('error pages', () => steps.writeErrorPages(target.origin, built));
  const pages = built.objects.filter((object) => object.key.startsWith(PAGE_OBJECT_PREFIX));
  const bytes = new Map(pages.map((page) => [page.md5, page]));
  const write = () => movePointer(target.kvs, pointer.live, built.buildId, proven.binding);
  const move = { kind: 'publish', from: pointer.live, reason: recovered || undefined, write } as const;
  try {
    const to = { id: built.buildId, pages: built.manifest.pages };
    const moved = await timed('go live', () =>
      steps.goLive(run, to, right, move, { force: how.force, bytes }),
    );
    return { result: 'published' as const, pointer, live, built, moved };
  } catch (error) {
    if (!(error instanceof PinnedError)) throw error;
    return { result: 'skipped-pinned' as const, reason: error.message, pin: error.pin, pointer, live, built };
  }
}

/** Releases the run lock, saying so when another run took it over meanwhile (this one stalled past its expiry). */
async function unlock(run: steps.Run, held: HeldRunLock): Promise<void> {
  if (held.lost())
    run.warn(
      `the run lock at ${run.target.origin.name} was taken over by another run while this one ran (it stalled past the lock's expiry)`,
    );
  await held.release();
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
  readonly progress?: steps.ProgressSink;
}

/**
 * Makes an earlier whole build live (`to`, else the head of the rollback line) and pins it there, under the run
 * lock once the deployment is proven; a build that is not whole is refused, nothing moved.
 */
export async function rollback(
  target: steps.PublishTarget,
  options: MoveOptions & { readonly to?: string },
): Promise<RollbackSummary> {
  const { run, warnings, durationsMs, timed, started } = start(target, options);
  const proven = await timed('prove', () => steps.proveDeployment(target, {}));
  if (proven.note) run.warn(proven.note);
  const lock = await timed('lock', () => steps.takeRunLock(target.origin, 'catalog rollback'));
  if ('busy' in lock)
    throw new RunLockBusyError(
      `another run holds the run lock at ${target.origin.name}: ${describeHolder(lock.busy)}; nothing was changed (roll back once it ends; a run that died leaves its lock to expire within ${RUN_LOCK_TTL_MS / 60_000} minutes)`,
    );
  if (lock.held.tookOver) run.warn(tookOverWarning(lock.held.tookOver));
  let chosen: Awaited<ReturnType<typeof steps.choose>>;
  let pin: Pin;
  let moved: steps.Moved;
  try {
    chosen = await timed('choose', () => steps.choose(run, options.to));
    const from = chosen.pointer.live;
    const reason = `rolled back from ${from === null ? '(none)' : shownValue(from)}`;
    pin = { build: chosen.id, at: options.now.toISOString(), by: 'rollback', reason };
    const write = () => pinPointer(target.kvs, pin, from, proven.binding);
    const to = { id: chosen.id, pages: chosen.manifest.pages };
    moved = await timed('go live', () =>
      steps.goLive(run, to, chosen, { kind: 'rollback', from, reason, write }),
    );
  } finally {
    await timed('unlock', () => unlock(run, lock.held));
  }
  return {
    command: 'rollback',
    buildId: chosen.id,
    generatedAt: chosen.manifest.generatedAt,
    counts: chosen.manifest.counts,
    previousBuildId: moved.before.live,
    pin,
    previous: moved.after.previous,
    warnings,
    durationsMs: { ...durationsMs, total: Math.round(performance.now() - started) },
  };
}

/** Removes a rollback's pin (the pinned build stays live until the next publish); returns it, if any. */
export async function unpin(
  target: steps.PublishTarget,
  options: Omit<MoveOptions, 'progress'>,
): Promise<{ command: 'unpin'; unpinned: Pin | null; warnings: readonly string[] }> {
  const { run, warnings } = start(target, options);
  const proven = await steps.proveDeployment(target, {});
  if (proven.note) run.warn(proven.note);
  return { command: 'unpin', unpinned: await steps.removePin(run, proven.binding), warnings };
}
