/**
 * The pure part of publishing: build ids, object metadata, what the live objects say, the guards, history
 * selection (archive, prune, rollback target), invalidation paths and caller references. No I/O here: the
 * pipeline in `publish.ts` reads the bucket, asks these functions what to do, and does it.
 */
import { createHash } from 'node:crypto';
import { settingRef } from '../contract/errors.ts';
import { type Discipline, ORIGIN_FILES, PATHS } from '../contract/index.ts';
import type { GuardName } from './errors.ts';

/** The live objects at the bucket root, in upload order (the order of `BuildResult.files`). */
export const LIVE_KEYS: readonly string[] = [
  ORIGIN_FILES.strength,
  ORIGIN_FILES.running,
  ORIGIN_FILES.all,
  ORIGIN_FILES.openapi,
  ORIGIN_FILES.errorPage,
];

/** Earlier builds live under `history/<build id>/<live key>`. */
export const HISTORY_PREFIX = 'history/';

/**
 * Holds the id of the last build whose invalidation CloudFront accepted. A build that is live but not in this
 * object never had its paths invalidated (the invalidation failed after the upload): the next run makes it,
 * even when the content is unchanged. The gateway never serves this key (only the catalog paths).
 */
export const INVALIDATED_MARKER = 'state/invalidated-build';

/**
 * User metadata stamped on the served objects (sent by S3 as `x-amz-meta-<name>`; the viewer-response
 * function strips them). The error page carries none: CloudFront serves it as the 500 answer without any
 * function, so its metadata would reach clients. catalog.json records the error page's digests instead.
 */
export const META = {
  buildId: 'build-id',
  generatedAt: 'generated-at',
  plansHash: 'plans-hash',
  countRunning: 'count-running',
  countStrength: 'count-strength',
  /** SHA-256 of the object's own bytes: tells whether openapi.yaml changed. */
  sha256: 'sha256',
  /** On catalog.json: SHA-256 of the error page of the same build (whether it changed). */
  errorPageSha256: 'error-page-sha256',
  /** On catalog.json: MD5 of the error page, which S3 reports as its ETag (whether the live page is this build's). */
  errorPageMd5: 'error-page-md5',
} as const;

/** The live objects that carry the build's metadata: all but the error page. */
export const STAMPED_KEYS: readonly string[] = LIVE_KEYS.filter((key) => key !== ORIGIN_FILES.errorPage);

/** Plans per discipline. */
export type Counts = Readonly<Record<Discipline, number>>;

/** What identifies one build, stamped on each of its objects. */
export interface BuildStamp {
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Counts;
  readonly plansHash: string;
}

/** A build id: `generatedAt` compacted (sortable), a dash and a random suffix; `-legacy` for unstamped ones. */
export const BUILD_ID = /^\d{8}T\d{9}Z-[0-9a-z]{1,16}$/;

/** `2026-03-01T10:15:00.123Z` → `20260301T101500123Z`. Throws on anything but that exact ISO form. */
export function compactTime(iso: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/.exec(iso);
  if (!match) throw new Error(`not an ISO 8601 UTC time with milliseconds: ${JSON.stringify(iso)}`);
  const [, year, month, day, hours, minutes, seconds, millis] = match;
  return `${year}${month}${day}T${hours}${minutes}${seconds}${millis}Z`;
}

/**
 * The id of a new build: sortable by time (the compacted `generatedAt`) and unique (the random `suffix`, a few
 * lowercase hex or base-36 characters).
 */
export function newBuildId(generatedAt: string, suffix: string): string {
  const id = `${compactTime(generatedAt)}-${suffix}`;
  if (!BUILD_ID.test(id)) throw new Error(`bad build id suffix ${JSON.stringify(suffix)}`);
  return id;
}

/** SHA-256 of some bytes, hex. */
export function sha256Hex(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * The user metadata of each object of a build, by key: the stamp on every served object, the error page's
 * digests on catalog.json, and nothing on the error page itself.
 */
export function buildMetadata(
  stamp: BuildStamp,
  files: readonly { readonly key: string; readonly body: Uint8Array }[],
): Record<string, Record<string, string>> {
  const errorPage = files.find((file) => file.key === ORIGIN_FILES.errorPage);
  const result: Record<string, Record<string, string>> = {};
  for (const file of files) {
    if (file.key === ORIGIN_FILES.errorPage) {
      result[file.key] = {};
      continue;
    }
    result[file.key] = {
      [META.buildId]: stamp.buildId,
      [META.generatedAt]: stamp.generatedAt,
      [META.plansHash]: stamp.plansHash,
      [META.countRunning]: String(stamp.counts.running),
      [META.countStrength]: String(stamp.counts.strength),
      [META.sha256]: sha256Hex(file.body),
      ...(file.key === ORIGIN_FILES.all && errorPage
        ? {
            [META.errorPageSha256]: sha256Hex(errorPage.body),
            [META.errorPageMd5]: createHash('md5').update(errorPage.body).digest('hex'),
          }
        : {}),
    };
  }
  return result;
}

/** An object as a HEAD request describes it. */
export interface StoredObject {
  readonly metadata: Readonly<Record<string, string>>;
  readonly lastModified: Date | null;
  /** The entity tag S3 reports (quotes removed): the MD5 of a single-part upload. */
  readonly etag: string | null;
}

/** Reads the per-discipline counts from an object's metadata, or null when they are missing or malformed. */
export function countsFromMetadata(metadata: Readonly<Record<string, string>>): Counts | null {
  const read = (name: string) => {
    const text = metadata[name];
    return text !== undefined && /^\d+$/.test(text) ? Number(text) : null;
  };
  const running = read(META.countRunning);
  const strength = read(META.countStrength);
  return running === null || strength === null ? null : { running, strength };
}

/** What the live objects say about the build they hold. */
export interface LiveState {
  /** Whether `catalog.json` exists: a live catalog to protect. */
  readonly exists: boolean;
  /** The build id stamped on `catalog.json`, or null. */
  readonly buildId: string | null;
  readonly generatedAt: string | null;
  readonly plansHash: string | null;
  /** Plans in `catalog.json` according to its metadata, or null when it does not say. */
  readonly plans: number | null;
  /** The live keys that are missing. */
  readonly missing: readonly string[];
  /** Every live key exists and carries the same build id: one whole build (not a half-finished upload). */
  readonly complete: boolean;
  /** The `sha256` metadata of each live key (null when missing or unstamped). */
  readonly sha256: Readonly<Record<string, string | null>>;
  /**
   * The id to archive the live objects under before they are replaced: the build id of a complete build,
   * `<catalog.json's last-modified, compacted>-legacy` when all objects exist but none is stamped (uploaded
   * by hand), else null (nothing whole to archive: a half-finished upload, whose previous build was archived
   * before it started).
   */
  readonly archiveId: string | null;
}

/** Describes the live objects from their HEAD answers (null: missing), keyed by live key. */
export function describeLive(objects: Readonly<Record<string, StoredObject | null>>): LiveState {
  const catalog = objects[ORIGIN_FILES.all] ?? null;
  const buildIdOf = (key: string) => objects[key]?.metadata[META.buildId] ?? null;
  const missing = LIVE_KEYS.filter((key) => !objects[key]);
  const buildId = catalog?.metadata[META.buildId] ?? null;
  const errorPage = objects[ORIGIN_FILES.errorPage] ?? null;
  const recordedMd5 = catalog?.metadata[META.errorPageMd5] ?? null;
  const errorPageOfBuild = errorPage !== null && recordedMd5 !== null && errorPage.etag === recordedMd5;
  const complete =
    missing.length === 0 &&
    buildId !== null &&
    STAMPED_KEYS.every((key) => buildIdOf(key) === buildId) &&
    errorPageOfBuild;
  const unstamped = missing.length === 0 && STAMPED_KEYS.every((key) => buildIdOf(key) === null);
  let archiveId: string | null = null;
  if (complete) archiveId = buildId;
  else if (unstamped)
    archiveId = `${compactTime((catalog?.lastModified ?? new Date(0)).toISOString())}-legacy`;
  const counts = catalog ? countsFromMetadata(catalog.metadata) : null;
  const sha256: Record<string, string | null> = {};
  for (const key of STAMPED_KEYS) sha256[key] = objects[key]?.metadata[META.sha256] ?? null;
  sha256[ORIGIN_FILES.errorPage] = errorPageOfBuild
    ? (catalog?.metadata[META.errorPageSha256] ?? null)
    : null;
  return {
    exists: catalog !== null,
    buildId,
    generatedAt: catalog?.metadata[META.generatedAt] ?? null,
    plansHash: catalog?.metadata[META.plansHash] ?? null,
    plans: counts ? counts.running + counts.strength : null,
    missing,
    complete,
    sha256,
    archiveId,
  };
}

/** Counts the plans of a catalog body, or null when it is not a catalog (for live objects without metadata). */
export function countPlans(body: Uint8Array): number | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    const plans = (parsed as { plans?: unknown } | null)?.plans;
    return Array.isArray(plans) ? plans.length : null;
  } catch {
    return null;
  }
}

/** The new build as the guards see it. */
export interface Candidate {
  readonly plans: number;
  readonly plansHash: string;
  /** SHA-256 of each file's bytes, by key. */
  readonly sha256: Readonly<Record<string, string>>;
}

export interface GuardOptions {
  /** Publish even when the catalog shrank below `minRatio`, or is identical to the live one. */
  readonly force: boolean;
  /** Publish a catalog with no plans. */
  readonly allowEmpty: boolean;
  /** The new catalog must have at least `minRatio` × the live plan count (0–1). */
  readonly minRatio: number;
}

/** What to do with a new build. */
export type Decision =
  | { readonly action: 'upload'; readonly openapiChanged: boolean }
  | { readonly action: 'skip'; readonly reason: string }
  | { readonly action: 'refuse'; readonly guard: GuardName; readonly reason: string };

/**
 * The guards, in order: an empty catalog is refused unless `allowEmpty`; one with fewer than `minRatio` × the
 * live plans is refused unless `force`; one identical to a whole live build (same plans hash, same
 * openapi.yaml and error page) is skipped unless `force`. `livePlans` is the live plan count (null: unknown
 * or no live catalog, so no shrink guard).
 */
export function decide(
  candidate: Candidate,
  live: LiveState,
  livePlans: number | null,
  options: GuardOptions,
): Decision {
  const liveName = live.buildId ? `live build ${live.buildId}` : 'the live catalog';
  if (candidate.plans === 0 && !options.allowEmpty) {
    const now = livePlans === null ? '' : ` (${liveName} has ${livePlans})`;
    return {
      action: 'refuse',
      guard: 'empty',
      reason: `refused: the new catalog has 0 plans${now}; ${settingRef('allowEmpty')} publishes an empty catalog`,
    };
  }
  if (livePlans !== null && candidate.plans < options.minRatio * livePlans && !options.force) {
    const threshold = Math.ceil(options.minRatio * livePlans);
    return {
      action: 'refuse',
      guard: 'shrink',
      reason: `refused: the new catalog has ${candidate.plans} plans, fewer than ${options.minRatio} × the ${livePlans} plans of ${liveName} (${threshold}); ${settingRef('force')} publishes it anyway`,
    };
  }
  const openapiChanged = live.sha256[ORIGIN_FILES.openapi] !== candidate.sha256[ORIGIN_FILES.openapi];
  const identical =
    live.complete &&
    live.plansHash === candidate.plansHash &&
    !openapiChanged &&
    live.sha256[ORIGIN_FILES.errorPage] === candidate.sha256[ORIGIN_FILES.errorPage];
  if (identical && !options.force) {
    return {
      action: 'skip',
      reason: `identical to ${liveName} (plans hash ${candidate.plansHash.slice(0, 12)}…); ${settingRef('force')} publishes it anyway`,
    };
  }
  return { action: 'upload', openapiChanged };
}

/** The key of a live object's copy in the history of build `id`. */
export function historyKey(id: string, key: string): string {
  return `${HISTORY_PREFIX}${id}/${key}`;
}

/** One build of the history, from a listing. */
export interface HistoryBuild {
  readonly id: string;
  /** The live keys it holds. */
  readonly keys: readonly string[];
  /** Whether it holds every live key (only complete builds are restored). */
  readonly complete: boolean;
}

/** Groups a listing of `history/…` keys into builds, newest first. Keys of any other shape are ignored. */
export function groupHistory(keys: readonly string[]): HistoryBuild[] {
  const byId = new Map<string, Set<string>>();
  for (const key of keys) {
    if (!key.startsWith(HISTORY_PREFIX)) continue;
    const rest = key.slice(HISTORY_PREFIX.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) continue;
    const id = rest.slice(0, slash);
    const file = rest.slice(slash + 1);
    if (!LIVE_KEYS.includes(file)) continue;
    const files = byId.get(id) ?? new Set<string>();
    files.add(file);
    byId.set(id, files);
  }
  return [...byId.entries()]
    .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
    .map(([id, files]) => ({
      id,
      keys: LIVE_KEYS.filter((key) => files.has(key)),
      complete: LIVE_KEYS.every((key) => files.has(key)),
    }));
}

/** The builds to delete so that only the newest `keep` remain (`builds` newest first). */
export function buildsToPrune(builds: readonly HistoryBuild[], keep: number): string[] {
  return builds.slice(keep).map((build) => build.id);
}

/**
 * The build a rollback restores: `to` when given, else the newest complete build older than the live one
 * (the newest complete build when the live one has no id). Returns the reason as `error` when there is none.
 */
export function rollbackTarget(
  builds: readonly HistoryBuild[],
  liveBuildId: string | null,
  to: string | undefined,
): { readonly id: string } | { readonly error: string } {
  if (to !== undefined) {
    const build = builds.find((candidate) => candidate.id === to);
    if (!build) {
      const known =
        builds.length > 0 ? `; history: ${builds.map((b) => b.id).join(', ')}` : '; history is empty';
      return { error: `${settingRef('to')} ${JSON.stringify(to)}: no such build in the history${known}` };
    }
    if (!build.complete) {
      const missing = LIVE_KEYS.filter((key) => !build.keys.includes(key));
      return {
        error: `${settingRef('to')} ${JSON.stringify(to)}: the history build is incomplete (missing ${missing.join(', ')})`,
      };
    }
    return { id: build.id };
  }
  const previous = builds.find((build) => build.complete && (liveBuildId === null || build.id < liveBuildId));
  if (!previous) {
    const live = liveBuildId === null ? '' : ` older than live build ${liveBuildId}`;
    return { error: `no complete build${live} in the history (${builds.length} builds there)` };
  }
  return { id: previous.id };
}

/**
 * The paths to invalidate: the viewer path `/api/plans` and the objects it is rewritten to (`/catalog*`, one
 * wildcard path for the three catalogs), and `/openapi.yaml` only when that object changed.
 */
export function invalidationPaths(openapiChanged: boolean): string[] {
  return [PATHS.plans, '/catalog*', ...(openapiChanged ? [PATHS.openapi] : [])];
}

/**
 * The caller reference of a publish's invalidation: derived from the build id, so a retried request for the
 * same build is the same invalidation (CloudFront answers the existing one), and each build gets its own.
 */
export function publishCallerReference(buildId: string): string {
  return `publish-${buildId}`;
}

/** The caller reference of a rollback's invalidation: the restored build and the time (rollbacks repeat). */
export function rollbackCallerReference(buildId: string, now: Date): string {
  return `rollback-${buildId}-${compactTime(now.toISOString())}`;
}

/** Milliseconds, rounded, for summaries. */
export function ms(start: number, end: number): number {
  return Math.round(end - start);
}
