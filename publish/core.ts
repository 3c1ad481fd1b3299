/**
 * The pure part of publishing: where a build's objects go, whether a build is whole, the guards, which builds
 * to prune, what a rollback restores. No I/O here: publish.ts reads the origin and the pointer, asks these
 * functions what to do, and does it.
 */
import { createHash } from 'node:crypto';
import type { Manifest } from '../builder/build.ts';
import { settingRef } from '../contract/errors.ts';
import {
  BUILD_ID_PATTERN,
  BUILDS_PREFIX,
  CATALOGS,
  catalogFile,
  MANIFEST,
  ORIGIN_FILES,
  PAGE_OBJECT_PREFIX,
  PAGE_VERSIONS_PREFIX,
  planPageKey,
} from '../contract/index.ts';
import type { GuardName } from './errors.ts';
import type { StoredObject } from './origin.ts';
import { shownValue } from './pointer.ts';

/** The key at the origin of a build's object. */
export function buildKey(buildId: string, key: string): string {
  return `${BUILDS_PREFIX}${buildId}/${key}`;
}

/**
 * Cache-Control of a build's objects at the origin: they never change, so CloudFront may keep them as long as
 * it likes (the viewer-response function still tells partners `max-age=300`).
 */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * A build's page map is split in shards, so a change to one page rewrites one shard; as many as the pages need,
 * up to this many (docs/decisions.md#plan-pages).
 */
export const MAX_PAGE_SHARDS = 64;

/** The pages a shard holds before the map splits into twice as many shards. */
export const PAGES_PER_SHARD = 512;

/** The shards of a map of `pages` pages: a power of two (one for a small catalog), at most {@link MAX_PAGE_SHARDS}. */
export function shardCount(pages: number): number {
  let count = 1;
  while (count < MAX_PAGE_SHARDS && count * PAGES_PER_SHARD < pages) count *= 2;
  return count;
}

/** The most page bytes one pack holds: a publish keeps each pack in memory while it writes it. */
export const PACK_BYTES = 8 * 1024 * 1024;

/** What the keys of the shards of page maps start with. */
export const SHARD_PREFIX = `${PAGE_VERSIONS_PREFIX}map-`;

/** The key of a shard of a page map, named by its MD5: `pages/map-<MD5>.json`, written once, shared by builds. */
export function shardKey(md5: string): string {
  return `${SHARD_PREFIX}${md5}.json`;
}

/** What the keys of a build's packs start with: `pages/<build>-`. */
export function packPrefix(buildId: string): string {
  return `${PAGE_VERSIONS_PREFIX}${buildId}-`;
}

/** The key of the `n`th pack of a build's new page versions: `pages/<build>-<n>.pack`, written once. */
export function packKey(buildId: string, n: number): string {
  return `${packPrefix(buildId)}${n}.pack`;
}

/** The shard of a plan's entry in a map of `count` shards: from the MD5 of its id (ids need not be random). */
export function shardOf(id: string, count: number): number {
  return (createHash('md5').update(id).digest()[0] ?? 0) % count;
}

/**
 * A live page a build wants: the MD5 of its bytes, and where those bytes are kept — `size` bytes at `offset` in
 * the pack `source`, or (a build from before packs) the whole object `source`.
 */
export interface WantedPage {
  readonly md5: string;
  readonly source: string;
  readonly offset?: number;
  readonly size?: number;
}

/** A shard's entry for a page: `[MD5, pack, offset, size]`. */
type ShardEntry = readonly [md5: string, pack: string, offset: number, size: number];

/** The text of a shard of a page map: plan id → entry, by id. */
export function shardText(pages: ReadonlyMap<string, WantedPage>): string {
  const entries = [...pages]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, page]): [string, ShardEntry] => [
      id,
      [page.md5, page.source, page.offset ?? 0, page.size ?? 0],
    ]);
  return `${JSON.stringify(Object.fromEntries(entries))}\n`;
}

/** The live pages (`plans/<id>.html`) of a shard's text; none when it is not a shard. */
export function pagesOfShard(text: string): [string, WantedPage][] {
  try {
    return Object.entries(JSON.parse(text) as Record<string, ShardEntry>).map(
      ([id, [md5, source, offset, size]]) => [planPageKey(id), { md5, source, offset, size }],
    );
  } catch {
    return [];
  }
}

/** A build's manifest as it is stored at the origin: the page map in shards rather than `pages`. */
export interface StoredManifest extends Manifest {
  /** The MD5 of each shard of the page map ({@link shardKey}), by shard number. */
  readonly pageShards?: readonly string[];
  /** The objects outside the build's folder it uses (its shards, the packs of its pages), by key. */
  readonly shared?: Readonly<Record<string, { readonly size: number; readonly md5: string }>>;
}

/** The live pages of a build from before shared pages, kept in its own folder. */
export function ownPagesOf(buildId: string, manifest: Pick<Manifest, 'objects'>): Map<string, WantedPage> {
  const pages = new Map<string, WantedPage>();
  for (const [key, { md5 }] of Object.entries(manifest.objects))
    if (key.startsWith(PAGE_OBJECT_PREFIX)) pages.set(key, { md5, source: buildKey(buildId, key) });
  return pages;
}

/**
 * What is wrong with the live pages at the origin (`held`: key → MD5) against the pages a build wants: each page
 * missing, with other bytes, or of a plan the build does not hold. Empty when they are the build's.
 */
export function pageDamage(
  wanted: ReadonlyMap<string, WantedPage>,
  held: ReadonlyMap<string, string>,
): string[] {
  const damage: string[] = [];
  for (const [key, { md5 }] of wanted) {
    const stored = held.get(key);
    if (stored === undefined) damage.push(`${key} is missing`);
    else if (stored !== '' && stored !== md5) damage.push(`${key} has other bytes (MD5 ${stored})`);
  }
  for (const key of held.keys()) if (!wanted.has(key)) damage.push(`${key} is not a page of the build`);
  return damage;
}

/**
 * What is wrong with the stored objects of a build against its manifest: each object missing, or stored with
 * another size or MD5. Empty when the build is whole.
 */
export function damageOf(
  manifest: { readonly objects: Readonly<Record<string, { readonly size: number; readonly md5: string }>> },
  stored: ReadonlyMap<string, Pick<StoredObject, 'size' | 'md5'>>,
): string[] {
  const damage: string[] = [];
  for (const [key, entry] of Object.entries(manifest.objects)) {
    const object = stored.get(key);
    if (!object) damage.push(`${key} is missing`);
    else if (object.size !== entry.size) damage.push(`${key} has ${object.size} bytes, not ${entry.size}`);
    else if (object.md5 !== '' && object.md5 !== entry.md5)
      damage.push(`${key} has other bytes (MD5 ${object.md5})`);
  }
  return damage;
}

/** The live catalog as the guards see it. */
export type LiveCatalog =
  /**
   * A build is live; `damage` lists what is wrong with its stored objects and the live pages (empty: whole);
   * `held` is every live page at the origin, by key, with its MD5 (empty on a directory, which keeps it apart);
   * `pages` the live pages the build wants.
   */
  | {
      readonly kind: 'build';
      readonly id: string;
      readonly manifest: StoredManifest;
      readonly pages: ReadonlyMap<string, WantedPage>;
      readonly damage: readonly string[];
      readonly held: ReadonlyMap<string, string>;
    }
  /** The pointer names no build the edge can serve: not a build id, or one whose manifest cannot be read. */
  | { readonly kind: 'unreadable'; readonly id: string; readonly reason: string }
  /** No build is live; the origin's root holds the flat objects from before builds, with this many plans. */
  | { readonly kind: 'flat'; readonly plans: number | null }
  /** Nothing is live at all. */
  | { readonly kind: 'none' };

/** The new build as the guards see it: known before its variants and pages are made. */
export interface Candidate {
  readonly plans: number;
  readonly plansHash: string;
  /** The fingerprint of every input that shapes its objects (builder/build.ts `BuildInputs`). */
  readonly inputsHash: string;
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
  | { readonly action: 'publish'; readonly note?: string }
  | { readonly action: 'skip'; readonly reason: string }
  | { readonly action: 'refuse'; readonly guard: GuardName; readonly reason: string };

/** The plans of the live catalog, when known. */
export function livePlans(live: LiveCatalog): number | null {
  if (live.kind === 'build') return live.manifest.plans;
  if (live.kind === 'flat') return live.plans;
  return null;
}

function liveName(live: LiveCatalog): string {
  if (live.kind === 'build') return `live build ${live.id}`;
  if (live.kind === 'unreadable') return `live build ${shownValue(live.id)}`;
  return 'the live catalog';
}

/**
 * The guards, in order: an empty catalog is refused unless `allowEmpty`; one with fewer than `minRatio` × the
 * live plans is refused unless `force`; one identical to a whole live build is skipped unless `force` —
 * identical meaning the same inputs (plans, base URLs, app scheme, tool version, openapi.yaml, error pages,
 * page renderer, encodings), so the decision is made before anything costly is built. A live build that is
 * not whole is replaced by the new one, even when identical: that is how a damaged live build is repaired.
 * A live build whose manifest records no inputs (made before they were recorded) is never identical.
 */
export function decide(candidate: Candidate, live: LiveCatalog, options: GuardOptions): Decision {
  const plans = livePlans(live);
  if (candidate.plans === 0 && !options.allowEmpty) {
    const now = plans === null ? '' : ` (${liveName(live)} has ${plans})`;
    return {
      action: 'refuse',
      guard: 'empty',
      reason: `refused: the new catalog has 0 plans${now}; ${settingRef('allowEmpty')} publishes an empty catalog`,
    };
  }
  if (plans !== null && candidate.plans < options.minRatio * plans && !options.force) {
    const threshold = Math.ceil(options.minRatio * plans);
    return {
      action: 'refuse',
      guard: 'shrink',
      reason: `refused: the new catalog has ${candidate.plans} plans, fewer than ${options.minRatio} × the ${plans} plans of ${liveName(live)} (${threshold}); ${settingRef('force')} publishes it anyway`,
    };
  }
  if (live.kind !== 'build' || options.force) return { action: 'publish' };
  const identical =
    live.manifest.inputsHash !== undefined &&
    live.manifest.plansHash === candidate.plansHash &&
    live.manifest.inputsHash === candidate.inputsHash;
  if (!identical) return { action: 'publish' };
  if (live.damage.length > 0)
    return {
      action: 'publish',
      note: `live build ${live.id} is damaged (${live.damage.slice(0, 3).join('; ')}${live.damage.length > 3 ? '; …' : ''}): a fresh build replaces it`,
    };
  return {
    action: 'skip',
    reason: `identical to ${liveName(live)} (plans ${candidate.plansHash.slice(0, 12)}…, inputs ${candidate.inputsHash.slice(0, 12)}…); ${settingRef('force')} publishes it anyway`,
  };
}

/** The builds at an origin, from a listing of `builds/`: id → the keys it holds (relative to the build). */
export function groupBuilds(listing: readonly Pick<StoredObject, 'key'>[]): Map<string, string[]> {
  const builds = new Map<string, string[]>();
  for (const { key } of listing) {
    if (!key.startsWith(BUILDS_PREFIX)) continue;
    const rest = key.slice(BUILDS_PREFIX.length);
    const slash = rest.indexOf('/');
    const id = rest.slice(0, slash);
    if (slash <= 0 || !BUILD_ID_PATTERN.test(id)) continue;
    builds.set(id, [...(builds.get(id) ?? []), rest.slice(slash + 1)]);
  }
  return builds;
}

/** Whether a build's listing has its manifest (it is written last: without it the upload never finished). */
export function hasManifest(keys: readonly string[]): boolean {
  return keys.includes(MANIFEST);
}

/**
 * The builds to delete so that only the newest `keep` remain — never the live build, the pinned build, or the
 * build a plain rollback would make live (`previous`: the build live before the live one, which may be older
 * than the newest `keep`). `ids` in any order.
 */
/** What a prune must keep: the live build, the pinned one and the rollback target. */
export interface Protected {
  readonly live: string | null;
  readonly pinned: string | null;
  readonly previous: string | null;
}

export function buildsToPrune(ids: readonly string[], keep: number, protect: Protected): string[] {
  const newest = [...ids].sort().reverse();
  const kept = new Set(
    [protect.live, protect.pinned, protect.previous].filter((id): id is string => typeof id === 'string'),
  );
  return newest.slice(keep).filter((id) => !kept.has(id));
}

/** The build ids among prefixes `builds/<id>/` (anything else under `builds/` is ignored). */
export function buildIdsOf(prefixes: readonly string[]): string[] {
  return prefixes.flatMap((prefix) => {
    const id =
      prefix.startsWith(BUILDS_PREFIX) && prefix.endsWith('/') ? prefix.slice(BUILDS_PREFIX.length, -1) : '';
    return BUILD_ID_PATTERN.test(id) ? [id] : [];
  });
}

/**
 * The build a rollback makes live: `to` when given (any complete build); else the first complete build of the
 * rollback line — the build that was live before the live one, never a build that was only uploaded (a
 * publish that lost a race leaves a complete build no one ever saw). Returns the reason as `error` when there
 * is none.
 */
export function rollbackTarget(
  builds: ReadonlyMap<string, readonly string[]>,
  pointer: { readonly live: string | null; readonly previous: readonly string[] },
  to: string | undefined,
): { readonly id: string } | { readonly error: string } {
  const known = [...builds.keys()].sort().reverse();
  if (to !== undefined) {
    const keys = builds.get(to);
    if (!keys)
      return {
        error: `${settingRef('to')} ${JSON.stringify(to)}: no such build${known.length > 0 ? ` (builds: ${known.slice(0, 5).join(', ')}${known.length > 5 ? ', …' : ''})` : '; there are no builds'}`,
      };
    if (!hasManifest(keys))
      return { error: `${settingRef('to')} ${JSON.stringify(to)}: the build is incomplete (no ${MANIFEST})` };
    return { id: to };
  }
  const previous = pointer.previous.find((id) => hasManifest(builds.get(id) ?? []));
  if (previous !== undefined) return { id: previous };
  const live = pointer.live === null ? 'no build' : `live build ${shownValue(pointer.live)}`;
  const choose = `roll back ${settingRef('to')} a build (catalog builds marks the builds that were live)`;
  if (pointer.previous.length === 0)
    return {
      error: `no build is recorded as live before ${live} (build:previous is empty: nothing was published before it, or it went live before the store kept that record); ${choose}`,
    };
  return {
    error: `none of the builds live before ${live} is complete at the origin any more (${pointer.previous.join(', ')}); ${choose}`,
  };
}

/** The flat objects at the origin's root from before builds (a migrated bucket keeps them until removed). */
export const FLAT_OBJECTS: readonly string[] = [...CATALOGS.map(catalogFile), ORIGIN_FILES.openapi];

/** Counts the plans of a catalog body, or null when it is not a catalog (the flat objects of old buckets). */
export function countPlans(body: Uint8Array): number | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    const plans = (parsed as { plans?: unknown } | null)?.plans;
    return Array.isArray(plans) ? plans.length : null;
  } catch {
    return null;
  }
}

/** Milliseconds, rounded, for summaries. */
export function ms(start: number, end: number): number {
  return Math.round(end - start);
}
