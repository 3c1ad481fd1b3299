/**
 * The application layer: the one place where the service's operations are put together from their parts.
 * The command line, the builder Lambda, `npm start`, the test helpers and the benchmarks all call these; none
 * of them opens a source, runs a build or publishes on its own. Clients are built by the caller (see
 * clients.ts) and passed in; progress and warnings go to the caller's `report`.
 */
import { type BuildResult, buildCatalog } from '../builder/build.ts';
import { formatInvalidRow, type InvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import type { PlanSource } from '../builder/source.ts';
import { openSource } from '../builder/sources/index.ts';
import type { SourceOptions } from '../builder/sources/options.ts';
import {
  type BuildListing,
  listBuilds,
  type PublishClients,
  type PublishSummary,
  publishBuild,
  type RollbackSummary,
  rollback as restoreBuild,
} from '../publish/publish.ts';
import type { SettingsIn } from './settings/index.ts';

/** What an operation tells its caller as it goes: warnings and the rows a failed build refused. */
export type Report = (line: string) => void;

/** The settings a build reads (the same names on the command line, in the Lambda and in CDK). */
export type BuildSettings = Pick<
  SettingsIn<'build'>,
  | 'baseUrl'
  | 'appScheme'
  | 'skipInvalid'
  | 'sourceRelation'
  | 'sourceStatementTimeout'
  | 'sourceConnectTimeout'
  | 'sourceHeadersTimeout'
  | 'sourceBodyTimeout'
  | 'sourceMaxBytes'
  | 'sourceRetries'
> & {
  /** The source spec (a path, `postgres://…`, `http(s)://…`). */
  readonly source: string;
  /** The bearer token of an HTTP source. */
  readonly sourceToken?: string | undefined;
};

/** The source settings of a build, as the sources take them. */
export function sourceOptions(settings: BuildSettings): SourceOptions {
  return {
    relation: settings.sourceRelation,
    statementTimeoutMs: settings.sourceStatementTimeout,
    connectTimeoutMs: settings.sourceConnectTimeout,
    headersTimeoutMs: settings.sourceHeadersTimeout,
    bodyTimeoutMs: settings.sourceBodyTimeout,
    maxBodyBytes: settings.sourceMaxBytes,
    retries: settings.sourceRetries,
    token: settings.sourceToken,
  };
}

/** Opens the source the settings name (no connection is made until it is read). */
export function openSourceOf(settings: BuildSettings): Promise<PlanSource> {
  return openSource(settings.source, sourceOptions(settings));
}

/**
 * Reads the source and builds in memory, stamped `now`. Invalid rows are reported one line each — as warnings
 * with `skipInvalid`, else as the list of a failed build, which then throws {@link InvalidRowsError}.
 */
export async function build(settings: BuildSettings, now: Date, report: Report): Promise<BuildResult> {
  return buildFrom(await openSourceOf(settings), settings, now, report);
}

/** {@link build} from a source already open (tests and benchmarks make rows in memory). */
export async function buildFrom(
  source: PlanSource,
  settings: Pick<BuildSettings, 'baseUrl' | 'appScheme' | 'skipInvalid'>,
  now: Date,
  report: Report,
): Promise<BuildResult> {
  try {
    const result = await buildCatalog(source, {
      links: { baseUrl: settings.baseUrl, appScheme: settings.appScheme },
      skipInvalid: settings.skipInvalid,
      now,
      openapiTemplate: OPENAPI_TEMPLATE,
    });
    for (const problem of result.warnings) report(`warning: invalid ${formatInvalidRow(problem)}`);
    return result;
  } catch (error) {
    if (error instanceof InvalidRowsError) for (const line of error.lines()) report(`invalid ${line}`);
    throw error;
  }
}

/** The settings a publish reads, beyond the build's. */
export type PublishSettings = BuildSettings &
  Pick<SettingsIn<'publish'>, 'bucket' | 'distribution' | 'allowEmpty' | 'minRatio' | 'keepBuilds'>;

/** What a publish did, and the invalid rows it left out (with `skipInvalid`). */
export interface PublishOutcome {
  readonly summary: PublishSummary;
  readonly invalidRows: readonly InvalidRow[];
}

/**
 * Builds from the source and publishes the result (see publish/README.md): guards, archive, upload,
 * invalidation, pruning. `force` overrides the shrink and identical-content guards.
 */
export async function publish(
  settings: PublishSettings,
  clients: PublishClients,
  options: { readonly now: Date; readonly force: boolean; readonly report: Report },
): Promise<PublishOutcome> {
  const started = performance.now();
  const built = await build(settings, options.now, options.report);
  const summary = await publishBuild(built, clients, {
    bucket: settings.bucket,
    distributionId: settings.distribution,
    force: options.force,
    allowEmpty: settings.allowEmpty,
    minRatio: settings.minRatio,
    keep: settings.keepBuilds,
    buildMs: performance.now() - started,
  });
  for (const warning of summary.warnings) options.report(`warning: ${warning}`);
  return { summary, invalidRows: built.warnings };
}

/** Restores an earlier build (the one before the live build unless `to` names one) and invalidates. */
export function rollback(
  settings: { readonly bucket: string; readonly distribution: string; readonly to?: string | undefined },
  clients: PublishClients,
  now: Date,
): Promise<RollbackSummary> {
  return restoreBuild(clients, {
    bucket: settings.bucket,
    distributionId: settings.distribution,
    ...(settings.to !== undefined ? { to: settings.to } : {}),
    now,
  });
}

/** The live build and the history of a bucket, newest first. */
export function builds(settings: { readonly bucket: string }, clients: Pick<PublishClients, 's3'>) {
  return listBuilds(clients.s3, settings.bucket) as Promise<BuildListing[]>;
}
