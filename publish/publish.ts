/**
 * The publish pipeline and its siblings (rollback, history listing): read the live objects, decide with the
 * pure core, archive, write, invalidate, prune. The S3 and CloudFront clients are parameters; nothing here
 * reads the environment.
 */
import { randomBytes } from 'node:crypto';
import { type CloudFrontClient, CreateInvalidationCommand } from '@aws-sdk/client-cloudfront';
import type { S3Client } from '@aws-sdk/client-s3';
import type { BuildResult } from '../builder/build.ts';
import { describeCause, settingRef } from '../contract/errors.ts';
import { ORIGIN_FILES } from '../contract/index.ts';
import { CatalogBucket } from './bucket.ts';
import {
  buildMetadata,
  buildsToPrune,
  type Counts,
  countPlans,
  countsFromMetadata,
  decide,
  describeLive,
  type GuardOptions,
  groupHistory,
  HISTORY_PREFIX,
  historyKey,
  INVALIDATED_MARKER,
  invalidationPaths,
  LIVE_KEYS,
  type LiveState,
  META,
  ms,
  newBuildId,
  publishCallerReference,
  rollbackCallerReference,
  rollbackTarget,
  sha256Hex,
} from './core.ts';
import { HistoryError, InvalidationError, PublishRefusedError, storeFailure, UploadError } from './errors.ts';

/** The clients the pipeline uses, created by the entry point. */
export interface PublishClients {
  readonly s3: S3Client;
  readonly cloudfront: CloudFrontClient;
}

/** Where to publish and how the guards behave. */
export interface PublishOptions extends GuardOptions {
  readonly bucket: string;
  readonly distributionId: string;
  /** How many earlier builds the history keeps (the newest); older ones are deleted after a publish. */
  readonly keep: number;
  /** How long the build took, reported in the summary. */
  readonly buildMs?: number;
  /** The random part of the build id (default: 6 random hex digits). */
  readonly suffix?: string;
}

/** The one JSON line `catalog publish` prints (and the Lambda logs and returns). */
export interface PublishSummary {
  readonly command: 'publish';
  readonly result: 'uploaded' | 'skipped';
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Counts;
  readonly plans: number;
  /** Bytes of the five objects. */
  readonly bytes: number;
  readonly plansHash: string;
  /** The build that was live before this run (null: none, or unstamped). */
  readonly previousBuildId: string | null;
  /** Why the upload was skipped (`result: skipped`). */
  readonly reason?: string;
  /** The history id the live objects were copied to before being replaced (null: nothing whole to archive). */
  readonly archived: string | null;
  /** History builds deleted because they were beyond `keep`. */
  readonly pruned: readonly string[];
  readonly invalidationId: string | null;
  readonly invalidatedPaths: readonly string[];
  /** Problems that did not fail the run (e.g. pruning). */
  readonly warnings: readonly string[];
  readonly durationsMs: {
    readonly build: number;
    readonly read: number;
    readonly archive: number;
    readonly upload: number;
    readonly invalidate: number;
    readonly prune: number;
    readonly total: number;
  };
}

/** Creates an invalidation and returns its id. */
export async function invalidate(
  client: CloudFrontClient,
  distributionId: string,
  paths: readonly string[],
  callerReference: string,
): Promise<string> {
  const answer = await client.send(
    new CreateInvalidationCommand({
      DistributionId: distributionId,
      InvalidationBatch: {
        CallerReference: callerReference,
        Paths: { Quantity: paths.length, Items: [...paths] },
      },
    }),
  );
  const id = answer.Invalidation?.Id;
  if (!id) throw new Error('CloudFront answered without an invalidation id');
  return id;
}

/** Reads the live objects; `plans` falls back to counting catalog.json's body when its metadata is missing. */
async function readLive(bucket: CatalogBucket): Promise<{ live: LiveState; livePlans: number | null }> {
  try {
    const live = describeLive(await bucket.headAll(LIVE_KEYS));
    let livePlans = live.plans;
    if (live.exists && livePlans === null) {
      const body = await bucket.read(ORIGIN_FILES.all);
      livePlans = body ? countPlans(body) : null;
    }
    return { live, livePlans };
  } catch (error) {
    throw storeFailure(`reading the live objects of s3://${bucket.name} failed`, { cause: error });
  }
}

/** The build whose invalidation CloudFront last accepted (see {@link INVALIDATED_MARKER}); null if none. */
async function lastInvalidated(bucket: CatalogBucket): Promise<string | null> {
  try {
    return (await bucket.read(INVALIDATED_MARKER))?.toString('utf8').trim() || null;
  } catch (error) {
    throw storeFailure(`reading ${INVALIDATED_MARKER} of s3://${bucket.name} failed`, { cause: error });
  }
}

/**
 * Invalidates the paths of `buildId`, now live, and records it in {@link INVALIDATED_MARKER}. A failed
 * invalidation throws {@link InvalidationError} with `hint`; a failed record is returned as a warning (the
 * next run then invalidates once more, which is harmless).
 */
async function invalidateLive(
  clients: PublishClients,
  bucket: CatalogBucket,
  target: {
    distributionId: string;
    buildId: string;
    paths: readonly string[];
    callerReference: string;
    hint: string;
  },
): Promise<{ invalidationId: string; warnings: string[] }> {
  let invalidationId: string;
  try {
    invalidationId = await invalidate(
      clients.cloudfront,
      target.distributionId,
      target.paths,
      target.callerReference,
    );
  } catch (error) {
    throw new InvalidationError(target.distributionId, target.buildId, { cause: error, hint: target.hint });
  }
  try {
    await bucket.putText(INVALIDATED_MARKER, target.buildId);
    return { invalidationId, warnings: [] };
  } catch (error) {
    const where = `s3://${bucket.name}/${INVALIDATED_MARKER}`;
    return {
      invalidationId,
      warnings: [
        `recording the invalidation of ${target.buildId} in ${where} failed: ${describeCause(error)}`,
      ],
    };
  }
}

/**
 * Copies the live objects to `history/<id>/` when they form one whole build that the history does not hold
 * yet. Returns the history id, or null when there was nothing whole to archive.
 */
async function archiveLive(bucket: CatalogBucket, live: LiveState): Promise<string | null> {
  const id = live.archiveId;
  if (id === null) return null;
  try {
    const held = groupHistory(await bucket.list(`${HISTORY_PREFIX}${id}/`))[0];
    if (held?.complete) return id;
    for (const key of LIVE_KEYS) await bucket.copy(key, historyKey(id, key));
    return id;
  } catch (error) {
    throw storeFailure(`archiving live build ${id} to s3://${bucket.name}/${HISTORY_PREFIX}${id}/ failed`, {
      cause: error,
    });
  }
}

/** Deletes the history builds beyond the newest `keep`; returns their ids. */
async function prune(bucket: CatalogBucket, keep: number): Promise<string[]> {
  const keys = await bucket.list(HISTORY_PREFIX);
  const doomed = buildsToPrune(groupHistory(keys), keep);
  const prefixes = doomed.map((id) => `${HISTORY_PREFIX}${id}/`);
  await bucket.delete(keys.filter((key) => prefixes.some((prefix) => key.startsWith(prefix))));
  return doomed;
}

/**
 * Publishes a build: guards (refusals throw {@link PublishRefusedError}), archives the live build under
 * `history/`, uploads the files in order with their metadata, invalidates, prunes the history. An upload
 * failure throws {@link UploadError} naming what was and was not written, with no invalidation made; running
 * again converges (a half-finished upload is never archived nor taken for identical content).
 */
export async function publishBuild(
  build: BuildResult,
  clients: PublishClients,
  options: PublishOptions,
): Promise<PublishSummary> {
  const started = performance.now();
  const keys = build.files.map((file) => file.key);
  if (keys.join() !== LIVE_KEYS.join()) throw new Error(`unexpected build files ${keys.join(', ')}`);
  const bucket = new CatalogBucket(clients.s3, options.bucket);
  const stamp = {
    buildId: newBuildId(build.generatedAt, options.suffix ?? randomBytes(3).toString('hex')),
    generatedAt: build.generatedAt,
    counts: build.counts,
    plansHash: build.plansHash,
  };
  const plans = build.counts.running + build.counts.strength;
  const sha256 = Object.fromEntries(build.files.map((file) => [file.key, sha256Hex(file.body)]));

  const [{ live, livePlans }, invalidatedBuild] = await Promise.all([
    readLive(bucket),
    lastInvalidated(bucket),
  ]);
  const read = performance.now();
  const decision = decide({ plans, plansHash: build.plansHash, sha256 }, live, livePlans, options);
  if (decision.action === 'refuse') throw new PublishRefusedError(decision.guard, decision.reason);

  const summary = (rest: {
    result: PublishSummary['result'];
    reason?: string;
    archived?: string | null;
    pruned?: readonly string[];
    invalidationId?: string | null;
    invalidatedPaths?: readonly string[];
    warnings?: readonly string[];
    durations?: Partial<PublishSummary['durationsMs']>;
  }): PublishSummary => ({
    command: 'publish',
    result: rest.result,
    buildId: stamp.buildId,
    generatedAt: stamp.generatedAt,
    counts: stamp.counts,
    plans,
    bytes: build.files.reduce((sum, file) => sum + file.size, 0),
    plansHash: stamp.plansHash,
    previousBuildId: live.buildId,
    ...(rest.reason !== undefined ? { reason: rest.reason } : {}),
    archived: rest.archived ?? null,
    pruned: rest.pruned ?? [],
    invalidationId: rest.invalidationId ?? null,
    invalidatedPaths: rest.invalidatedPaths ?? [],
    warnings: rest.warnings ?? [],
    durationsMs: {
      build: Math.round(options.buildMs ?? 0),
      read: ms(started, read),
      archive: 0,
      upload: 0,
      invalidate: 0,
      prune: 0,
      ...rest.durations,
      total: ms(started, performance.now()) + Math.round(options.buildMs ?? 0),
    },
  });
  if (decision.action === 'skip') {
    // Unchanged content, but the live build's invalidation never went through: make it now. A fresh caller
    // reference: the build's own may belong to an earlier, accepted request for other paths.
    if (live.buildId === null || invalidatedBuild === live.buildId) {
      return summary({ result: 'skipped', reason: decision.reason });
    }
    const paths = invalidationPaths(true);
    const { invalidationId, warnings } = await invalidateLive(clients, bucket, {
      distributionId: options.distributionId,
      buildId: live.buildId,
      paths,
      callerReference: `${publishCallerReference(live.buildId)}-again-${Date.now()}`,
      hint: 'run publish again to invalidate',
    });
    return summary({
      result: 'skipped',
      reason: `${decision.reason}; its invalidation had not been made, so it was made now`,
      invalidationId,
      invalidatedPaths: paths,
      warnings,
      durations: { invalidate: ms(read, performance.now()) },
    });
  }

  const archived = await archiveLive(bucket, live);
  const archivedAt = performance.now();

  const written: string[] = [];
  const metadata = buildMetadata(stamp, build.files);
  for (const [index, file] of build.files.entries()) {
    try {
      await bucket.put(file, metadata[file.key] ?? {});
    } catch (error) {
      throw new UploadError(
        `uploading build ${stamp.buildId} to s3://${bucket.name}`,
        file.key,
        written,
        keys.slice(index),
        {
          cause: error,
          hint: 'run publish again to converge',
        },
      );
    }
    written.push(file.key);
  }
  const uploaded = performance.now();

  const paths = invalidationPaths(decision.openapiChanged);
  const { invalidationId, warnings } = await invalidateLive(clients, bucket, {
    distributionId: options.distributionId,
    buildId: stamp.buildId,
    paths,
    callerReference: publishCallerReference(stamp.buildId),
    hint: 'the new build is live; run publish again to invalidate',
  });
  const invalidated = performance.now();

  let pruned: string[] = [];
  try {
    pruned = await prune(bucket, options.keep);
  } catch (error) {
    warnings.push(`pruning the history of s3://${bucket.name} failed: ${describeCause(error)}`);
  }
  return summary({
    result: 'uploaded',
    archived,
    pruned,
    invalidationId,
    invalidatedPaths: paths,
    warnings,
    durations: {
      archive: ms(read, archivedAt),
      upload: ms(archivedAt, uploaded),
      invalidate: ms(uploaded, invalidated),
      prune: ms(invalidated, performance.now()),
    },
  });
}

export interface RollbackOptions {
  readonly bucket: string;
  readonly distributionId: string;
  /** The history build to restore (default: the newest complete build older than the live one). */
  readonly to?: string;
  readonly now: Date;
}

/** The one JSON line `catalog rollback` prints. */
export interface RollbackSummary {
  readonly command: 'rollback';
  /** The restored build, now live. */
  readonly buildId: string;
  readonly generatedAt: string | null;
  readonly counts: Counts | null;
  readonly previousBuildId: string | null;
  readonly archived: string | null;
  readonly invalidationId: string;
  readonly invalidatedPaths: readonly string[];
  readonly warnings: readonly string[];
  readonly durationsMs: { readonly total: number };
}

/**
 * Copies a history build back over the live objects (same bytes and metadata) and invalidates. The live
 * build is archived first when the history does not hold it, so a rollback can itself be undone.
 */
export async function rollback(clients: PublishClients, options: RollbackOptions): Promise<RollbackSummary> {
  const started = performance.now();
  const bucket = new CatalogBucket(clients.s3, options.bucket);
  let live: LiveState;
  let historyKeys: string[];
  try {
    [live, historyKeys] = await Promise.all([
      bucket.headAll(LIVE_KEYS).then(describeLive),
      bucket.list(HISTORY_PREFIX),
    ]);
  } catch (error) {
    throw storeFailure(`reading s3://${options.bucket} failed`, { cause: error });
  }
  const target = rollbackTarget(groupHistory(historyKeys), live.buildId, options.to);
  if ('error' in target) throw new HistoryError(`s3://${options.bucket}: ${target.error}`);
  const id = target.id;

  const archived = id === live.archiveId ? null : await archiveLive(bucket, live);
  let restored: {
    openapi: string | null;
    catalog: ReturnType<typeof countsFromMetadata>;
    generatedAt: string | null;
  };
  try {
    const [openapi, catalog] = await Promise.all([
      bucket.head(historyKey(id, ORIGIN_FILES.openapi)),
      bucket.head(historyKey(id, ORIGIN_FILES.all)),
    ]);
    restored = {
      openapi: openapi?.metadata[META.sha256] ?? null,
      catalog: catalog ? countsFromMetadata(catalog.metadata) : null,
      generatedAt: catalog?.metadata[META.generatedAt] ?? null,
    };
  } catch (error) {
    throw storeFailure(`reading history build ${id} of s3://${options.bucket} failed`, { cause: error });
  }

  const written: string[] = [];
  for (const [index, key] of LIVE_KEYS.entries()) {
    try {
      await bucket.copy(historyKey(id, key), key);
    } catch (error) {
      throw new UploadError(
        `restoring build ${id} in s3://${bucket.name}`,
        key,
        written,
        LIVE_KEYS.slice(index),
        {
          cause: error,
          hint: `run rollback ${settingRef('to')} ${id} again to converge`,
        },
      );
    }
    written.push(key);
  }

  const liveOpenapi = live.sha256[ORIGIN_FILES.openapi] ?? null;
  const openapiChanged =
    liveOpenapi === null || restored.openapi === null || liveOpenapi !== restored.openapi;
  const paths = invalidationPaths(openapiChanged);
  const { invalidationId, warnings } = await invalidateLive(clients, bucket, {
    distributionId: options.distributionId,
    buildId: id,
    paths,
    callerReference: rollbackCallerReference(id, options.now),
    hint: `run rollback ${settingRef('to')} ${id} again to invalidate`,
  });
  return {
    command: 'rollback',
    buildId: id,
    generatedAt: restored.generatedAt,
    counts: restored.catalog,
    previousBuildId: live.buildId,
    archived,
    invalidationId,
    invalidatedPaths: paths,
    warnings,
    durationsMs: { total: ms(started, performance.now()) },
  };
}

/** One row of `catalog builds`. */
export interface BuildListing {
  readonly id: string;
  readonly generatedAt: string | null;
  readonly counts: Counts | null;
  /** Whether this build is the one live now. */
  readonly live: boolean;
  /** Whether the history holds it (false for a live build not archived yet). */
  readonly inHistory: boolean;
  /** Whether the history copy holds every object (only complete builds can be restored). */
  readonly complete: boolean;
}

/** The live build and the history, newest first. */
export async function listBuilds(s3: S3Client, bucketName: string): Promise<BuildListing[]> {
  const bucket = new CatalogBucket(s3, bucketName);
  try {
    const [liveObjects, keys] = await Promise.all([bucket.headAll(LIVE_KEYS), bucket.list(HISTORY_PREFIX)]);
    const live = describeLive(liveObjects);
    const history = groupHistory(keys);
    const heads = await Promise.all(
      history.map((build) =>
        build.keys.includes(ORIGIN_FILES.all) ? bucket.head(historyKey(build.id, ORIGIN_FILES.all)) : null,
      ),
    );
    const rows: BuildListing[] = history.map((build, index) => {
      const metadata = heads[index]?.metadata ?? {};
      return {
        id: build.id,
        generatedAt: metadata[META.generatedAt] ?? null,
        counts: countsFromMetadata(metadata),
        live: build.id === live.buildId,
        inHistory: true,
        complete: build.complete,
      };
    });
    const liveCatalog = liveObjects[ORIGIN_FILES.all];
    if (liveCatalog && live.buildId !== null && !history.some((build) => build.id === live.buildId)) {
      rows.push({
        id: live.buildId,
        generatedAt: live.generatedAt,
        counts: countsFromMetadata(liveCatalog.metadata),
        live: true,
        inHistory: false,
        complete: live.complete,
      });
    }
    return rows.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  } catch (error) {
    throw storeFailure(`listing the builds of s3://${bucketName} failed`, { cause: error, readOnly: true });
  }
}
