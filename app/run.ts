/**
 * Build and publish, the only orchestration (see README.md): every entry point calls these. Clients are built by
 * the caller and passed in; progress and warnings go to the caller's `report`.
 */

import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import type { S3Client } from '@aws-sdk/client-s3';
import { type BuildResult, completeBuild, type PreparedBuild, prepareBuild } from '../builder/build.ts';
import { formatInvalidRow, type InvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { openSource } from '../builder/sources/index.ts';
import { CatalogError, ConfigError, describeCause, StoreError, settingRef } from '../contract/errors.ts';
import { HEADER_VALUES, STATE_LAST_RUN } from '../contract/index.ts';
import { acquireRunLock, describeHolder, type HeldRunLock } from '../publish/lock.ts';
import { bucketOf, objectToWrite } from '../publish/origin.ts';
import { readPointer } from '../publish/pointer.ts';
import {
  type ProgressSink,
  type PublishSummary,
  type PublishTarget,
  protectedBy,
  proveDeployment,
  pruneBuilds,
  pruneFailure,
  publishBuild,
  readManifest,
} from '../publish/publish.ts';

export type { Progress, ProgressSink } from '../publish/publish.ts';

import {
  type BusySummary,
  type LastRun,
  lastRunObject,
  lastRunOf,
  parseLastRun,
  type RunEnd,
  type RunProgress,
  type RunSummary,
} from './last-run.ts';
import { measurePropagation, type PropagationResult } from './propagation.ts';
import { emitRunMetrics, type MetricsSink, runFigures } from './run-metrics.ts';
import { renderMessage, type SettingsIn } from './settings/index.ts';

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
  await writeFlat(dir, [
    ...result.objects.map((object) => objectToWrite(object, object.key, HEADER_VALUES.cacheable)),
    ...result.root.map((object) =>
      objectToWrite(object, object.key, object.cacheControl ?? HEADER_VALUES.noStore),
    ),
  ]);
  return performance.now() - started;
}

/** Where a publish, rollback or listing acts: an S3 bucket and a KeyValueStore, or a directory and a store file. */
export type TargetSettings = {
  readonly bucket?: string | undefined;
  readonly kvsArn?: string | undefined;
  readonly origin?: string | undefined;
  readonly store?: string | undefined;
};

/** Which kind of target the settings name; throws a {@link ConfigError} saying what is missing. */
export function targetKind(settings: TargetSettings): 'aws' | 'local' {
  const aws = settings.bucket !== undefined || settings.kvsArn !== undefined;
  const local = settings.origin !== undefined || settings.store !== undefined;
  const forms = `${settingRef('bucket')} with ${settingRef('kvsArn')} (AWS), or ${settingRef('origin')} with ${settingRef('store')} (a local origin)`;
  if (aws && local) throw new ConfigError(`give one target, not both: ${forms}`);
  if (!aws && !local) throw new ConfigError(`no target: give ${forms}`);
  // Each setting of the pair the settings name requires the other.
  const pair = aws ? (['bucket', 'kvsArn'] as const) : (['origin', 'store'] as const);
  for (const [name, other] of [pair, [pair[1], pair[0]]] as const)
    if (settings[name] === undefined)
      throw new ConfigError(`${settingRef(name)}: is required with ${settingRef(other)}`);
  if (local && bucketOf(settings.origin as string))
    throw new ConfigError(
      `${settingRef('origin')}: publishing to a bucket takes ${settingRef('bucket')} and ${settingRef('kvsArn')}`,
    );
  return aws ? 'aws' : 'local';
}

/** The AWS clients a target on AWS needs, built by the entry point. */
export interface TargetClients {
  readonly s3: S3Client;
  readonly kvs: CloudFrontKeyValueStoreClient;
}

/** Opens the target the settings name; `clients` is called only for an AWS target (a local one loads no SDK). */
export async function openTarget(
  settings: TargetSettings,
  clients: () => Promise<TargetClients> | TargetClients,
): Promise<PublishTarget> {
  if (targetKind(settings) === 'aws') {
    const [{ S3Origin }, { CloudFrontKeyValueStore }, aws] = await Promise.all([
      import('../publish/s3-origin.ts'),
      import('../keys/kvs-store.ts'),
      clients(),
    ]);
    return {
      origin: new S3Origin(aws.s3, settings.bucket as string),
      kvs: new CloudFrontKeyValueStore(aws.kvs, settings.kvsArn as string),
    };
  }
  const [{ DirectoryOrigin }, { FileKeyValueStore }] = await Promise.all([
    import('../publish/dir-origin.ts'),
    import('../keys/file-store.ts'),
  ]);
  return {
    origin: new DirectoryOrigin(settings.origin as string),
    kvs: new FileKeyValueStore(settings.store as string),
  };
}

/** The settings a publish reads, beyond the build's. */
export type PublishSettings = BuildSettings &
  Pick<SettingsIn<'publish'>, 'allowEmpty' | 'minRatio' | 'keepBuilds'>;

/** The source of a run when it is read at run time (the Lambda's secret) rather than taken from the settings. */
export type RunSource = Pick<BuildSettings, 'source' | 'sourceToken'>;

/** After a publish that moved the pointer: how long the edge takes to serve it (propagation.ts); never fails. */
export interface PropagationCheck {
  /** The monitoring key; resolves undefined when none is configured (the check is skipped, and says so). */
  readonly key: () => Promise<string | undefined>;
  /** How long to wait after the pointer move. */
  readonly maxWaitMs: number;
  readonly intervalMs: number;
  /** How long the caller may still wait (the Lambda: its remaining time less a reserve); nothing left: skipped. */
  readonly timeLeftMs?: () => number;
}

/** How a publish runs, and what it reports besides its summary. */
export interface PublishRunOptions {
  /** The run's start: it stamps the build and the record. */
  readonly now: Date;
  readonly force: boolean;
  readonly unpin?: boolean;
  /** Publish over a live build the origin does not hold (publish/publish.ts `proveDeployment`). */
  readonly recover?: boolean;
  readonly report: Report;
  /** Hears the run's stages and the objects uploaded. */
  readonly progress?: ProgressSink;
  /** Reads the source when the run starts instead of taking it from the settings; its failure is recorded. */
  readonly source?: () => Promise<RunSource>;
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

/** The live build's `generatedAt`, read after a run (null: no build is live, or its manifest is unreadable). */
async function liveGeneratedAt(target: PublishTarget): Promise<string | null> {
  const { live } = await readPointer(target.kvs);
  const value: unknown = live === null ? null : (await readManifest(target.origin, live))?.generatedAt;
  return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? value : null;
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

/** Runs the propagation check after a publish that moved the pointer at `movedAt` (`performance.now()`). */
async function checkPropagation(
  check: PropagationCheck,
  baseUrl: string,
  summary: PublishSummary,
  movedAt: number,
  present: (message: string) => string,
): Promise<PropagationResult> {
  if (summary.result !== 'published')
    return { outcome: 'skipped', reason: `nothing was published (${summary.result})` };
  const left = check.timeLeftMs?.() ?? Number.POSITIVE_INFINITY;
  if (left <= 0) return { outcome: 'skipped', reason: 'no time left for it before the run times out' };
  const maxWaitMs = Math.min(check.maxWaitMs, performance.now() - movedAt + left);
  let key: string | undefined;
  try {
    key = await check.key();
  } catch (error) {
    const message = error instanceof CatalogError ? error.message : describeCause(error);
    return { outcome: 'failed', reason: present(`reading the monitoring key failed: ${message}`), polls: 0 };
  }
  if (key === undefined)
    return {
      outcome: 'skipped',
      reason: present(`no monitoring key is configured (${settingRef('monitoringKeySecretArn')})`),
    };
  return measurePropagation({
    baseUrl,
    key,
    generatedAt: summary.generatedAt,
    since: movedAt,
    maxWaitMs,
    intervalMs: check.intervalMs,
  });
}

/**
 * Builds and publishes under the run lock (held elsewhere: `busy`), then leaves the run's record, prunes, measures
 * propagation and emits metrics (README.md). None of these changes the outcome: a failed run throws its own error.
 */
export async function publish(
  settings: Omit<PublishSettings, 'source'> & { readonly source?: string | undefined },
  target: PublishTarget,
  options: PublishRunOptions,
): Promise<PublishOutcome> {
  const started = performance.now();
  const present = options.present ?? ((message: string) => renderMessage(message, 'cli'));
  const warnings: string[] = [];
  const warn = (line: string) => {
    warnings.push(line);
    options.report(`warning: ${line}`);
  };
  // Before anything is built or written (the run lock, the run's record): a store and an origin of two
  // deployments are refused here, and this origin never hears of the run.
  try {
    await proveDeployment(target, await readPointer(target.kvs), {
      live: true,
      recover: options.recover ?? false,
    });
  } catch (error) {
    if (error instanceof CatalogError) throw error;
    throw new StoreError(
      `reading ${target.kvs.name} and ${target.origin.name} failed (${describeCause(error)}); nothing was changed`,
      { cause: error },
    );
  }

  let progress: RunProgress = {};
  let end: RunEnd;
  let built: PreparedBuild | undefined;
  let movedAt = 0;
  let lock: HeldRunLock | undefined;
  try {
    try {
      const attempt = await acquireRunLock(target.origin, options.runBy ?? 'catalog publish');
      if ('busy' in attempt) {
        const reason = `busy: another run holds the run lock at ${target.origin.name}: ${describeHolder(attempt.busy)}; this run did nothing`;
        throw new RunBusy({
          command: 'publish',
          result: 'busy',
          reason,
          holder: attempt.busy,
          durationsMs: { total: Math.round(performance.now() - started) },
        });
      }
      lock = attempt.held;
      if (lock.tookOver)
        warn(`took over the run lock of ${describeHolder(lock.tookOver)}, which had expired`);
    } catch (error) {
      if (error instanceof RunBusy) throw error;
      throw new StoreError(
        `taking the run lock at ${target.origin.name} failed (${describeCause(error)}); nothing was changed`,
        { cause: error },
      );
    }
    const from: { readonly source?: string | undefined; readonly sourceToken?: string | undefined } =
      options.source
        ? await options.source()
        : { source: settings.source, sourceToken: settings.sourceToken };
    if (from.source === undefined) throw new ConfigError(`${settingRef('source')}: is required`);
    try {
      built = await prepareFrom(
        { ...settings, source: from.source, sourceToken: from.sourceToken },
        options.now,
        options.report,
        options.progress,
      );
    } catch (error) {
      if (error instanceof InvalidRowsError) progress = { invalid: error.invalid };
      throw error;
    }
    progress = { built: { buildId: built.buildId, counts: built.counts, invalid: built.warnings } };
    const summary = await publishBuild(built, target, {
      force: options.force,
      allowEmpty: settings.allowEmpty,
      minRatio: settings.minRatio,
      unpin: options.unpin ?? false,
      recover: options.recover ?? false,
      ...(options.progress ? { progress: options.progress } : {}),
      buildMs: performance.now() - started,
      ...(options.actor !== undefined ? { actor: options.actor } : {}),
    });
    movedAt = performance.now();
    for (const warning of summary.warnings) options.report(`warning: ${warning}`);
    end = { summary };
  } catch (error) {
    end = error instanceof RunBusy ? { summary: error.summary } : { error };
  }

  try {
    const record = lastRunOf({
      started: options.now,
      finished: new Date(),
      durationMs: performance.now() - started,
      progress,
      end,
      previous: await previousRecord(target),
      present,
    });
    try {
      await target.origin.put(lastRunObject(record), { overwrite: true });
    } catch (error) {
      warn(
        `writing ${STATE_LAST_RUN} to ${target.origin.name} failed (${describeCause(error)}); catalog status shows the run before this one`,
      );
    }

    // After the pointer moved and the run's record is written: old builds go, while the edge is watched.
    let summary = 'summary' in end ? end.summary : undefined;
    if (summary?.result === 'published') options.progress?.({ stage: 'pruning old builds' });
    const pruning =
      summary?.result === 'published'
        ? prune(target, settings.keepBuilds, summary.buildId)
        : Promise.resolve(undefined);
    let propagation: PropagationResult | undefined;
    if (summary && summary.result !== 'busy' && options.propagation) {
      propagation = await checkPropagation(options.propagation, settings.baseUrl, summary, movedAt, present);
      if (propagation.outcome !== 'measured')
        options.report(
          `propagation ${propagation.outcome}: ${propagation.outcome === 'timeout' ? `still serving ${propagation.lastSeen} after ${propagation.waitedSeconds} s` : propagation.reason}`,
        );
    }
    const pruned = await pruning;
    if (pruned && summary && summary.result !== 'busy') {
      if (pruned.warning) options.report(`warning: ${pruned.warning}`);
      summary = {
        ...summary,
        pruned: pruned.ids,
        warnings: pruned.warning ? [...summary.warnings, pruned.warning] : summary.warnings,
        durationsMs: {
          ...summary.durationsMs,
          prune: pruned.ms,
          total: Math.round(performance.now() - started),
        },
      };
    }
    if (lock?.lost())
      warn(
        `the run lock at ${target.origin.name} was taken over by another run while this one ran (it stalled past the lock's expiry)`,
      );

    if (options.metrics) {
      let catalogAgeSeconds: number | undefined;
      try {
        const generatedAt = await liveGeneratedAt(target);
        if (generatedAt !== null) catalogAgeSeconds = (Date.now() - Date.parse(generatedAt)) / 1000;
      } catch (error) {
        warn(`reading the live build for the catalog age failed (${describeCause(error)})`);
      }
      try {
        emitRunMetrics(options.metrics, runFigures(record, { catalogAgeSeconds, propagation }));
      } catch (error) {
        warn(`emitting the run's metrics failed (${describeCause(error)})`);
      }
    }

    if ('error' in end) throw end.error;
    return {
      summary: summary as RunSummary,
      invalidRows: built?.warnings ?? [],
      record,
      ...(propagation ? { propagation } : {}),
      warnings,
    };
  } finally {
    await lock?.release();
  }
}

/** A run that found the lock held: carried to the end of {@link publish} as its summary. */
class RunBusy extends Error {
  readonly summary: BusySummary;
  constructor(summary: BusySummary) {
    super(summary.reason);
    this.summary = summary;
  }
}

/**
 * Prunes old builds, keeping what the pointer protects now; nothing when another run moved it from `live` since
 * (that run prunes). Never throws: a failure is the warning.
 */
async function prune(
  target: PublishTarget,
  keep: number,
  live: string,
): Promise<{ ids: string[]; ms: number; warning?: string }> {
  const started = performance.now();
  try {
    const pointer = await readPointer(target.kvs);
    const ids = pointer.live === live ? await pruneBuilds(target, keep, protectedBy(pointer)) : [];
    return { ids, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return {
      ids: [],
      ms: Math.round(performance.now() - started),
      warning: pruneFailure(target.origin, error),
    };
  }
}
