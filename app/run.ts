/**
 * The application layer: the one place where the service's operations are put together from their parts.
 * The command line, the builder Lambda, `npm start`, the test helpers and the benchmarks all call these; none
 * of them opens a source, runs a build or publishes on its own. Clients are built by the caller (see
 * clients.ts) and passed in; progress and warnings go to the caller's `report`.
 */

import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import type { S3Client } from '@aws-sdk/client-s3';
import { type BuildResult, buildCatalog } from '../builder/build.ts';
import { formatInvalidRow, type InvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import type { PlanSource } from '../builder/source.ts';
import { openSource } from '../builder/sources/index.ts';
import type { SourceOptions } from '../builder/sources/options.ts';
import { ConfigError, settingRef } from '../contract/errors.ts';
import { HEADER_VALUES } from '../contract/index.ts';
import { bucketOf } from '../publish/origin.ts';
import type { PublishSummary, PublishTarget, RollbackSummary } from '../publish/publish.ts';
import type { SettingsIn } from './settings/index.ts';

/** What an operation tells its caller as it goes: warnings and the rows a failed build refused. */
export type Report = (line: string) => void;

/** The settings a build reads (the same names on the command line, in the Lambda and in CDK). */
export type BuildSettings = Pick<
  SettingsIn<'build'>,
  | 'baseUrl'
  | 'webBaseUrl'
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
  settings: Pick<BuildSettings, 'baseUrl' | 'appScheme' | 'skipInvalid'> &
    Partial<Pick<BuildSettings, 'webBaseUrl'>>,
  now: Date,
  report: Report,
): Promise<BuildResult> {
  try {
    const result = await buildCatalog(source, {
      links: { baseUrl: settings.baseUrl, appScheme: settings.appScheme, webBaseUrl: settings.webBaseUrl },
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

/**
 * Writes one build flat into a directory (`catalog build --out`): its objects at the root, with the flat
 * layout's Cache-Control, plus the root objects. The directory is replaced as a whole or not at all.
 */
export async function writeFlatBuild(dir: string, result: BuildResult): Promise<void> {
  const { writeFlat } = await import('../publish/dir-origin.ts');
  await writeFlat(dir, [
    ...result.objects.map((object) => ({ ...object, cacheControl: HEADER_VALUES.cacheable })),
    ...result.root.map((object) => ({
      ...object,
      cacheControl: object.cacheControl ?? HEADER_VALUES.noStore,
    })),
  ]);
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
  if (aws) {
    if (settings.bucket === undefined)
      throw new ConfigError(`${settingRef('bucket')}: is required with ${settingRef('kvsArn')}`);
    if (settings.kvsArn === undefined)
      throw new ConfigError(`${settingRef('kvsArn')}: is required with ${settingRef('bucket')}`);
    return 'aws';
  }
  if (local) {
    if (settings.origin === undefined)
      throw new ConfigError(`${settingRef('origin')}: is required with ${settingRef('store')}`);
    if (settings.store === undefined)
      throw new ConfigError(`${settingRef('store')}: is required with ${settingRef('origin')}`);
    if (bucketOf(settings.origin))
      throw new ConfigError(
        `${settingRef('origin')}: publishing to a bucket takes ${settingRef('bucket')} and ${settingRef('kvsArn')}`,
      );
    return 'local';
  }
  throw new ConfigError(`no target: give ${forms}`);
}

/** The AWS clients a target on AWS needs, built by the entry point. */
export interface TargetClients {
  readonly s3: S3Client;
  readonly kvs: CloudFrontKeyValueStoreClient;
}

/**
 * Opens the target the settings name (see {@link targetKind}). `clients` is called only for an AWS target, so
 * a local one never loads the AWS SDK.
 */
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

/** What a publish did, and the invalid rows it left out (with `skipInvalid`). */
export interface PublishOutcome {
  readonly summary: PublishSummary;
  readonly invalidRows: readonly InvalidRow[];
}

/**
 * Builds from the source and publishes the result (see publish/README.md): the guards, the upload of a new
 * build, its verification, the move of the live pointer, pruning. `force` overrides the shrink and
 * identical-content guards; `unpin` removes a rollback's pin first.
 */
export async function publish(
  settings: PublishSettings,
  target: PublishTarget,
  options: { readonly now: Date; readonly force: boolean; readonly unpin?: boolean; readonly report: Report },
): Promise<PublishOutcome> {
  const started = performance.now();
  const built = await build(settings, options.now, options.report);
  const { publishBuild } = await import('../publish/publish.ts');
  const summary = await publishBuild(built, target, {
    force: options.force,
    allowEmpty: settings.allowEmpty,
    minRatio: settings.minRatio,
    keep: settings.keepBuilds,
    unpin: options.unpin ?? false,
    buildMs: performance.now() - started,
  });
  for (const warning of summary.warnings) options.report(`warning: ${warning}`);
  return { summary, invalidRows: built.warnings };
}

/** Makes an earlier build live and pins it (the one before the live build unless `to` names one). */
export async function rollback(
  settings: { readonly to?: string | undefined },
  target: PublishTarget,
  now: Date,
): Promise<RollbackSummary> {
  const { rollback: pinBuild } = await import('../publish/publish.ts');
  return pinBuild(target, { ...(settings.to !== undefined ? { to: settings.to } : {}), now });
}

/** Removes a rollback's pin. */
export async function unpin(target: PublishTarget) {
  const publishing = await import('../publish/publish.ts');
  return publishing.unpin(target);
}

/** The builds at an origin, newest first, with the live and pinned ones marked. */
export async function builds(target: PublishTarget) {
  const { listBuilds } = await import('../publish/publish.ts');
  return listBuilds(target);
}
