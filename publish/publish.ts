/**
 * Putting a build live, and rollback, unpin and the list of builds (publish/README.md). The decisions are pure
 * functions in core.ts; nothing here reads the environment or builds a client.
 */
import pLimit from 'p-limit';
import {
  type BuildObject,
  type BuildResult,
  buildObject,
  type CompleteOptions,
  completeBuild,
  type PreparedBuild,
} from '../builder/build.ts';
import { CatalogError, describeCause, StoreError, settingRef } from '../contract/errors.ts';
import {
  BUILD_ID_PATTERN,
  BUILDS_PREFIX,
  type Discipline,
  HEADER_VALUES,
  MANIFEST,
  ORIGIN_FILES,
  PAGE_HEADERS,
  PAGE_OBJECT_PREFIX,
  PAGE_OBJECT_SUFFIX,
  PAGE_VERSIONS_PREFIX,
  STATE_DEPLOYMENT,
  STATE_HISTORY_PREFIX,
  totalPlans,
} from '../contract/index.ts';
import type { KeyValueStore } from '../keys/store.ts';
import {
  buildIdsOf,
  buildKey,
  buildsToPrune,
  countPlans,
  damageOf,
  decide,
  FLAT_OBJECTS,
  type GuardOptions,
  groupBuilds,
  hasManifest,
  IMMUTABLE,
  type LiveCatalog,
  ms,
  ownPagesOf,
  PACK_BYTES,
  type Protected,
  packKey,
  packPrefix,
  pageDamage,
  pagesOfShard,
  rollbackTarget,
  SHARD_PREFIX,
  type StoredManifest,
  shardCount,
  shardKey,
  shardOf,
  shardText,
  type WantedPage,
} from './core.ts';
import { HistoryError, PublishRefusedError, RunLockBusyError, storeFailure, UploadError } from './errors.ts';
import { everLive, listMoves, type PointerMove, recordMove } from './history.ts';
import { acquireRunLock, describeHolder, type LockAttempt, RUN_LOCK_TTL_MS } from './lock.ts';
import { bytesObject, type ObjectToWrite, type OriginStore, objectToWrite, stateObject } from './origin.ts';
import {
  type Binding,
  DeploymentError,
  mismatch,
  movePointer,
  type Pin,
  PinnedError,
  type Pointer,
  pinPointer,
  readPointer,
  shownValue,
  unpinPointer,
} from './pointer.ts';

/** Where a build goes live: the origin that stores it, and the store that holds the live pointer. */
export interface PublishTarget {
  readonly origin: OriginStore;
  readonly kvs: KeyValueStore;
}

/** What a long operation is doing now (for a progress display): its stage, and how far it is when counted. */
export interface Progress {
  readonly stage: string;
  readonly done?: number;
  readonly total?: number;
}

/** Hears each {@link Progress} of an operation, as it goes. */
export type ProgressSink = (progress: Progress) => void;

/** How a publish runs: the guards, and what it is told and tells. */
export interface PublishOptions extends GuardOptions {
  /** Remove a rollback's pin first. */
  readonly unpin?: boolean;
  /** How long the build took, reported in the summary. */
  readonly buildMs?: number;
  /** Uploads at once (default {@link UPLOAD_CONCURRENCY}). */
  readonly concurrency?: number;
  /** Who publishes, for the pointer's history (default `unknown`). */
  readonly actor?: string;
  readonly clock?: () => Date;
  /** Publish even though the store's live build is not at the origin (see {@link proveDeployment}). */
  readonly recover?: boolean;
  readonly progress?: ProgressSink;
}

/** Records a move in the history at the origin, adding a failure to `warnings` (never thrown). */
async function recordMoveOrWarn(origin: OriginStore, move: PointerMove, warnings: string[]): Promise<void> {
  try {
    await recordMove(origin, move);
  } catch (error) {
    warnings.push(
      `recording the ${move.kind} of ${move.to ?? '(none)'} in ${STATE_HISTORY_PREFIX} at ${origin.name} failed (${describeCause(error)}); the pointer did move, and catalog history will not show it`,
    );
  }
}

/** Uploads at once by default: the SDK's HTTP agent keeps 50 sockets. */
export const UPLOAD_CONCURRENCY = 32;

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
  /** Builds beyond `keep` deleted (app/run.ts prunes once the run's record is written). */
  readonly pruned: readonly string[];
  /** Problems that did not fail the run. */
  readonly warnings: readonly string[];
  readonly durationsMs: Readonly<
    Record<'build' | 'read' | 'upload' | 'verify' | 'flip' | 'prune' | 'total', number>
  >;
}

/** Reads a build's manifest; null when it is missing or not a manifest. */
export async function readManifest(origin: OriginStore, buildId: string): Promise<StoredManifest | null> {
  const object = await origin.get(buildKey(buildId, MANIFEST));
  if (!object) return null;
  try {
    const manifest = JSON.parse(object.body.toString('utf8')) as StoredManifest;
    return manifest.buildId === buildId && typeof manifest.objects === 'object' ? manifest : null;
  } catch {
    return null;
  }
}

/** What is wrong with a build's stored objects (its own, and the shared ones it uses) against its manifest. */
async function damageOfBuild(
  origin: OriginStore,
  buildId: string,
  manifest: StoredManifest,
): Promise<string[]> {
  // Where an MD5 is only a record kept beside the object (a directory), reading it for every object would say
  // nothing of the bytes: those are checked by hashing when asked.
  const listed = async (prefix: string, strip: number) =>
    new Map(
      (await origin.list(prefix, { md5: !origin.md5 })).map((object) => [object.key.slice(strip), object]),
    );
  const prefix = buildKey(buildId, '');
  const [own, shared] = await Promise.all([
    listed(prefix, prefix.length),
    manifest.shared ? listed(PAGE_VERSIONS_PREFIX, 0) : new Map(),
  ]);
  return [...damageOf(manifest, own), ...damageOf({ objects: manifest.shared ?? {} }, shared)];
}

/** The live pages a build wants, by key: from the shards of its page map (or, before those, its own folder). */
async function pagesOf(
  origin: OriginStore,
  buildId: string,
  manifest: StoredManifest,
): Promise<Map<string, WantedPage>> {
  if (!manifest.pageShards) return ownPagesOf(buildId, manifest);
  const shards = await pLimit(HASH_CONCURRENCY).map([...new Set(manifest.pageShards)], async (md5) =>
    pagesOfShard((await origin.get(shardKey(md5)))?.body.toString('utf8') ?? ''),
  );
  return new Map(shards.flat());
}

/** The live pages at the origin (`plans/<id>.html`), by key, with the MD5 of each when `md5`. */
async function heldPages(origin: OriginStore, md5 = true): Promise<Map<string, string>> {
  return new Map((await origin.list(PAGE_OBJECT_PREFIX, { md5 })).map((object) => [object.key, object.md5]));
}

/** Objects hashed at once when the bytes of a build are checked (files on one disk). */
const HASH_CONCURRENCY = 16;

/**
 * What is wrong with the bytes of objects (`[name, key, MD5]`) on an origin whose listing cannot tell (see
 * {@link OriginStore.md5}), skipping names already in `known`. Empty on any other origin.
 */
async function byteDamageOf(
  origin: OriginStore,
  objects: readonly (readonly [name: string, key: string, md5: string])[],
  known: readonly string[],
): Promise<string[]> {
  const md5 = origin.md5?.bind(origin);
  if (!md5) return [];
  const skip = new Set(known.map((line) => line.slice(0, line.indexOf(' '))));
  const checked = objects.filter(([name]) => !skip.has(name));
  const found = await pLimit(HASH_CONCURRENCY).map(checked, async ([name, key, expected]) => {
    const actual = await md5(key);
    if (actual === null) return `${name} is missing`;
    return actual === expected ? null : `${name} has other bytes (MD5 ${actual})`;
  });
  return found.filter((line): line is string => line !== null);
}

/** The live catalog (`unreadable`: a pointer the edge cannot serve); with `bytes`, a directory's files are hashed. */
export async function readLive(
  origin: OriginStore,
  live: string | null,
  options: { readonly bytes?: boolean } = {},
): Promise<LiveCatalog> {
  if (live !== null) {
    if (!BUILD_ID_PATTERN.test(live)) return { kind: 'unreadable', id: live, reason: 'not a build id' };
    const manifest = await readManifest(origin, live);
    if (!manifest)
      return {
        kind: 'unreadable',
        id: live,
        reason: `no readable ${buildKey(live, MANIFEST)} at ${origin.name}`,
      };
    const [damage, held, pages] = await Promise.all([
      damageOfBuild(origin, live, manifest),
      heldPages(origin, !origin.md5),
      pagesOf(origin, live, manifest),
    ]);
    damage.push(...pageDamage(pages, held));
    if (options.bytes) {
      const objects = Object.entries(manifest.objects).map(
        ([key, { md5 }]) => [key, buildKey(live, key), md5] as const,
      );
      const others = [...Object.entries(manifest.shared ?? {}), ...pages].map(
        ([key, { md5 }]) => [key, key, md5] as const,
      );
      damage.push(...(await byteDamageOf(origin, [...objects, ...others], damage)));
    }
    return { kind: 'build', id: live, manifest, pages, damage, held };
  }
  const flat = await origin.get(ORIGIN_FILES.all);
  return flat ? { kind: 'flat', plans: countPlans(flat.body) } : { kind: 'none' };
}

/** A build object as it is written at `key` (immutable unless it says otherwise). */
const toWrite = (object: BuildObject, key: string): ObjectToWrite =>
  objectToWrite(object, key, object.cacheControl ?? IMMUTABLE);

/** The pages of a build, by key (`plans/<id>.html`). */
const pageObjects = (build: BuildResult): Map<string, BuildObject> =>
  new Map(
    build.objects.filter(({ key }) => key.startsWith(PAGE_OBJECT_PREFIX)).map((page) => [page.key, page]),
  );

/** Packs rendered and held in memory at once. */
const PACK_CONCURRENCY = 2;

/** The keys the live build's damage check named (its own objects by key within it, shards and packs whole). */
function damagedKeys(live: LiveCatalog): Set<string> {
  return new Set(live.kind === 'build' ? live.damage.map((line) => line.slice(0, line.indexOf(' '))) : []);
}

/** The live build's own objects that are whole at the origin: a publish copies them rather than make them. */
function keptFrom(live: LiveCatalog): CompleteOptions {
  if (live.kind !== 'build') return {};
  const damaged = damagedKeys(live);
  return {
    kept: Object.fromEntries(Object.entries(live.manifest.objects).filter(([key]) => !damaged.has(key))),
  };
}

/**
 * Writes what a build adds at the origin, never overwriting (copied from the live build where the bytes are the
 * same): its own objects, the pages the live build does not hold in packs, the shards of its page map that
 * changed; then, once durable, the manifest: the build's commit point. Returns the manifest and the live pages
 * it wants. Throws {@link UploadError}.
 */
async function upload(
  origin: OriginStore,
  build: BuildResult,
  live: LiveCatalog,
  concurrency: number,
  progress: ProgressSink,
): Promise<{ readonly manifest: StoredManifest; readonly pages: Map<string, WantedPage> }> {
  const base = live.kind === 'build' ? live : undefined;
  const damaged = damagedKeys(live);
  const writes: { readonly key: string; readonly write: () => Promise<unknown> }[] = [];
  for (const object of build.objects) {
    if (object.key === MANIFEST || object.key.startsWith(PAGE_OBJECT_PREFIX)) continue;
    const key = buildKey(build.buildId, object.key);
    const same = base && base.manifest.objects[object.key]?.md5 === object.md5 && !damaged.has(object.key);
    writes.push({
      key,
      write: () =>
        same
          ? origin.copy(buildKey(base.id, object.key), key, { overwrite: false })
          : origin.put(toWrite(object, key), { overwrite: false }),
    });
  }
  // A page version the live build holds whole is kept where it is; the others go into this build's packs.
  const pages = new Map<string, WantedPage>();
  const shared: Record<string, { size: number; md5: string }> = {};
  const packs: BuildObject[][] = [];
  let packed = PACK_BYTES;
  for (const [key, page] of pageObjects(build)) {
    const held = base?.pages.get(key);
    if (held?.md5 === page.md5 && held.offset !== undefined && !damaged.has(held.source)) {
      pages.set(key, held);
      const entry = base?.manifest.shared?.[held.source];
      if (entry) shared[held.source] = entry;
      continue;
    }
    if (packed + page.size > PACK_BYTES && packed > 0) {
      packs.push([]);
      packed = 0;
    }
    pages.set(key, {
      md5: page.md5,
      source: packKey(build.buildId, packs.length - 1),
      offset: packed,
      size: page.size,
    });
    packed += page.size;
    packs.at(-1)?.push(page);
  }
  const packLimit = pLimit(PACK_CONCURRENCY);
  packs.forEach((pack, n) => {
    const key = packKey(build.buildId, n);
    writes.push({
      key,
      write: () =>
        packLimit(async () => {
          const object = bytesObject(
            key,
            pack.flatMap((page) => page.chunks),
            'application/octet-stream',
            IMMUTABLE,
          );
          shared[key] = { size: object.size, md5: object.md5 };
          return origin.put(object, { overwrite: false });
        }),
    });
  });
  const count = shardCount(pages.size);
  const shards = Array.from({ length: count }, () => new Map<string, WantedPage>());
  for (const [key, page] of pages) {
    const id = key.slice(PAGE_OBJECT_PREFIX.length, -PAGE_OBJECT_SUFFIX.length);
    shards[shardOf(id, count)]?.set(id, page);
  }
  const kept = new Set(base?.manifest.pageShards);
  const pageShards = shards.map((shard) => {
    const text = Buffer.from(shardText(shard));
    const object = bytesObject('', [text], HEADER_VALUES.json, IMMUTABLE);
    const key = shardKey(object.md5);
    if ((!kept.has(object.md5) || damaged.has(key)) && !shared[key])
      writes.push({ key, write: () => origin.put({ ...object, key }, { overwrite: false }) });
    shared[key] = { size: object.size, md5: object.md5 };
    return object.md5;
  });
  let written = 0;
  const total = writes.length + 1;
  const fail = (key: string, error: unknown) =>
    new UploadError(
      `uploading build ${build.buildId} to ${origin.name} failed at ${key} (${describeCause(error)}): ${written} of ${total} objects written; the live build is still ${base?.id ?? '(none)'}, and ${build.buildId} is left unreferenced (pruned later); run publish again`,
      { cause: error },
    );
  progress({ stage: 'uploading', done: 0, total });
  // The first failure starts no further write, and is thrown once the writes under way have settled.
  let failed: UploadError | undefined;
  const limit = pLimit(concurrency);
  await limit.map(writes, async ({ key, write }) => {
    if (failed) return;
    try {
      await write();
      written += 1;
      progress({ stage: 'uploading', done: written, total });
    } catch (error) {
      failed ??= fail(key, error);
    }
  });
  if (failed) throw failed;
  const { pages: _map, ...rest } = build.manifest;
  const manifest: StoredManifest = { ...rest, pageShards, shared };
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  const object = buildObject(MANIFEST, [Buffer.from(text)], { contentType: HEADER_VALUES.json });
  try {
    await origin.sync?.();
    await origin.put(toWrite(object, buildKey(build.buildId, MANIFEST)), { overwrite: false });
    await origin.sync?.();
  } catch (error) {
    throw fail(MANIFEST, error);
  }
  return { manifest, pages };
}

/**
 * Writes the pages of `wanted` that differ from `held` into place, durably — from `local` (the build being
 * published) when it holds the same bytes, else from where the build keeps them; returns the held pages it lacks.
 */
async function putLivePages(
  origin: OriginStore,
  wanted: ReadonlyMap<string, WantedPage>,
  held: ReadonlyMap<string, string>,
  progress: ProgressSink,
  local: ReadonlyMap<string, BuildObject> = new Map(),
): Promise<string[]> {
  const differing = [...wanted].filter(([key, { md5 }]) => held.get(key) !== md5);
  const write = async (key: string, page: WantedPage) => {
    const own = local.get(key);
    if (own?.md5 === page.md5)
      return origin.put(objectToWrite(own, key, PAGE_HEADERS.cacheable), { overwrite: true });
    if (page.offset === undefined) return origin.copy(page.source, key, { overwrite: true });
    const bytes = await origin.getRange(page.source, page.offset, page.size ?? 0);
    const object = bytesObject(key, bytes ? [bytes] : [], PAGE_HEADERS.html, PAGE_HEADERS.cacheable);
    if (object.md5 !== page.md5) throw new Error(`${page.source} does not hold the bytes of ${key}`);
    return origin.put(object, { overwrite: true });
  };
  let done = 0;
  const limit = pLimit(UPLOAD_CONCURRENCY);
  // Every write settles before a failure is thrown: the caller then puts the live pages back.
  const copies = await Promise.allSettled(
    differing.map(([key, page]) =>
      limit(async () => {
        await write(key, page);
        done += 1;
        progress({ stage: 'updating the live pages', done, total: differing.length });
      }),
    ),
  );
  const failure = copies.find((copy): copy is PromiseRejectedResult => copy.status === 'rejected');
  if (failure) throw failure.reason;
  await origin.sync?.();
  return [...held.keys()].filter((key) => !wanted.has(key));
}

/** Puts the live pages back to those of the build live now. Best effort: else the next publish does. */
async function restoreLivePages(target: PublishTarget): Promise<void> {
  try {
    const { live } = await readPointer(target.kvs);
    const manifest =
      live !== null && BUILD_ID_PATTERN.test(live) ? await readManifest(target.origin, live) : null;
    if (live === null || !manifest) return;
    const extra = await putLivePages(
      target.origin,
      await pagesOf(target.origin, live, manifest),
      await heldPages(target.origin),
      () => {},
    );
    await target.origin.delete(extra);
  } catch {}
}

/**
 * Makes a build live (publish and rollback): its pages, then `move`, then the deletion of the live pages it lacks
 * (a failure there is added to `warnings`). When the pages or the move fail, the live pages are put back.
 */
async function goLive<T>(
  target: PublishTarget,
  build: { readonly id: string; readonly pages: ReadonlyMap<string, WantedPage> },
  held: ReadonlyMap<string, string> | undefined,
  progress: ProgressSink,
  move: () => Promise<T>,
  warnings: string[],
  local?: ReadonlyMap<string, BuildObject>,
): Promise<T> {
  let extra: string[];
  let moved: T;
  try {
    held ??= await heldPages(target.origin);
    extra = await putLivePages(target.origin, build.pages, held, progress, local);
    progress({ stage: 'moving the live pointer' });
    moved = await move();
  } catch (error) {
    await restoreLivePages(target);
    if (error instanceof CatalogError) throw error;
    throw storeFailure(`making the pages of build ${build.id} live at ${target.origin.name} failed`, {
      cause: error,
    });
  }
  try {
    await target.origin.delete(extra);
  } catch (error) {
    warnings.push(
      `deleting the live pages build ${build.id} lacks at ${target.origin.name} failed (${describeCause(error)}); they answer until the next publish`,
    );
  }
  return moved;
}

/** Writes the root objects (the error page) whose stored bytes differ from the build's. */
async function writeRoot(origin: OriginStore, build: BuildResult): Promise<void> {
  for (const object of build.root) {
    const stored = await origin.get(object.key);
    if (stored && stored.md5 === object.md5 && stored.size === object.size) continue;
    await origin.put({ ...object, cacheControl: object.cacheControl ?? IMMUTABLE }, { overwrite: true });
  }
}

/**
 * Deletes the builds beyond `keep` but those protected, with the page bytes no kept build lists; returns their
 * ids. An origin that records another store (or none) is refused ({@link DeploymentError}).
 */
export async function pruneBuilds(
  target: PublishTarget,
  keep: number,
  protect: Protected,
): Promise<string[]> {
  const { origin } = target;
  const [owner, { store }] = await Promise.all([ownerOf(origin), origin.bindingFor(target.kvs.name)]);
  if (owner !== store) throw mismatch(target.kvs.name, origin.name, owner ?? '(none)', store, 'origin');
  const ids = buildIdsOf(await origin.listPrefixes(BUILDS_PREFIX));
  const doomed = buildsToPrune(ids, keep, protect);
  if (doomed.length === 0) return doomed;
  const sources = async (id: string) => Object.keys((await readManifest(origin, id))?.shared ?? {});
  const used = new Set((await Promise.all(ids.filter((id) => !doomed.includes(id)).map(sources))).flat());
  const keysUnder = async (prefix: string) =>
    (await origin.list(prefix, { md5: false })).map((object) => object.key);
  let died = false;
  for (const id of doomed) {
    // A manifest lists the packs of its build. A publish that died before writing it left packs only their
    // names tell (`pages/<build>-<n>.pack`): those go too, unless a kept build uses them.
    const manifest = await readManifest(origin, id);
    died ||= !manifest;
    const listed = manifest ? Object.keys(manifest.shared ?? {}) : await keysUnder(packPrefix(id));
    await origin.delete(listed.filter((key) => !used.has(key)));
    await origin.deletePrefix(buildKey(id, ''));
  }
  // Its shards are named by their content: those no kept build lists go (the run lock keeps out a publish
  // that has written shards and not yet its manifest).
  if (died) await origin.delete((await keysUnder(SHARD_PREFIX)).filter((key) => !used.has(key)));
  return doomed;
}

/** The store the origin records it belongs to (`state/deployment.json`), or null when it records none. */
async function ownerOf(origin: OriginStore): Promise<string | null> {
  const object = await origin.get(STATE_DEPLOYMENT);
  if (!object) return null;
  try {
    const { store } = JSON.parse(object.body.toString('utf8')) as { store?: unknown };
    if (typeof store === 'string') return store;
  } catch {}
  return `(unreadable ${STATE_DEPLOYMENT})`;
}

/**
 * Proves that the store and the origin of `target` are one deployment before anything moves the pointer, and
 * returns how the move records the origin (docs/decisions.md#live-build, publish/README.md step 1). With `live`
 * (a publish), the live build must be here unless `recover`. Throws {@link DeploymentError} naming both.
 */
export async function proveDeployment(
  target: PublishTarget,
  pointer: Pointer,
  options: { readonly live?: boolean; readonly recover?: boolean } = {},
): Promise<Binding> {
  const [{ origin: binding, store }, owner] = await Promise.all([
    target.origin.bindingFor(target.kvs.name),
    ownerOf(target.origin),
  ]);
  const notOwner = (recorded: string | null) =>
    mismatch(target.kvs.name, target.origin.name, recorded ?? '(none)', store, 'origin');
  if (owner !== null && owner !== store) throw notOwner(owner);
  if (pointer.origin !== null && pointer.origin !== binding)
    throw mismatch(target.kvs.name, target.origin.name, pointer.origin, binding);
  const { live } = pointer;
  const recover = `${settingRef('recover')} publishes a fresh build in its place, if it is truly lost`;
  if (
    live !== null &&
    !options.recover &&
    (pointer.origin === null || options.live) &&
    !(BUILD_ID_PATTERN.test(live) && (await readManifest(target.origin, live)))
  )
    throw new DeploymentError(
      pointer.origin === null
        ? `${target.kvs.name} and ${target.origin.name} are not shown to be one deployment: the store names no origin yet, and its live build ${shownValue(live)} is not at ${target.origin.name}; nothing was changed (give the origin that holds it; ${recover})`
        : `${target.kvs.name}: its live build ${shownValue(live)} is not at ${target.origin.name}, the origin it serves (the edge cannot serve it); nothing was changed (catalog rollback makes an earlier build live; ${recover})`,
    );
  if (owner === null) {
    if (
      pointer.origin === null &&
      live === null &&
      !options.recover &&
      (await target.origin.listPrefixes(BUILDS_PREFIX)).length > 0
    )
      throw new DeploymentError(
        `${target.kvs.name} and ${target.origin.name} are not shown to be one deployment: the store is new, and the origin holds builds but names no store yet; nothing was changed (give the store that serves it; ${settingRef('recover')} lets this store take it)`,
      );
    const claim = stateObject(STATE_DEPLOYMENT, `${JSON.stringify({ store })}\n`);
    if ((await target.origin.put(claim, { overwrite: false })) === 'exists') {
      const claimed = await ownerOf(target.origin);
      if (claimed !== store) throw notOwner(claimed);
    }
  }
  return { origin: target.origin.name, binding };
}

/**
 * Publishes a prepared build (publish/README.md): the guards first, so an identical run compresses and renders
 * nothing; then it completes, uploads, verifies and goes live from the build it started from. It never prunes.
 */
export async function publishBuild(
  candidate: PreparedBuild,
  target: PublishTarget,
  options: PublishOptions,
): Promise<PublishSummary> {
  const started = performance.now();
  const times: Partial<Record<keyof PublishSummary['durationsMs'], number>> = {};
  let mark = started;
  /** The time since the last lap (or the start). */
  const lap = () => {
    const now = performance.now();
    const took = now - mark;
    mark = now;
    return took;
  };
  const warnings: string[] = [];
  let bytes = 0;
  let completeMs = 0;
  const actor = options.actor ?? 'unknown';
  const clock = options.clock ?? (() => new Date());
  let pointer: Pointer;
  const summary = (rest: Pick<PublishSummary, 'result'> & Partial<PublishSummary>): PublishSummary => ({
    command: 'publish',
    buildId: candidate.buildId,
    generatedAt: candidate.generatedAt,
    counts: candidate.counts,
    plans: totalPlans(candidate.counts),
    bytes,
    plansHash: candidate.plansHash,
    previousBuildId: pointer.live,
    pruned: [],
    warnings,
    ...rest,
    durationsMs: {
      build: Math.round((options.buildMs ?? 0) + completeMs),
      read: 0,
      upload: 0,
      verify: 0,
      flip: 0,
      prune: 0,
      ...times,
      total: ms(started, performance.now()) + Math.round(options.buildMs ?? 0),
    },
  });

  let where: Binding;
  try {
    pointer = await readPointer(target.kvs);
    where = await proveDeployment(target, pointer, { live: true, recover: options.recover ?? false });
    if (options.unpin && pointer.pin) {
      const removed = await removePin(target, where, actor, clock, warnings);
      if (removed)
        warnings.unshift(`unpinned ${removed.build} (pinned since ${removed.at} by ${removed.by})`);
      pointer = { ...pointer, pin: null };
    }
  } catch (error) {
    if (error instanceof StoreError || error instanceof DeploymentError) throw error;
    throw storeFailure(`reading the live build from ${target.kvs.name} failed`, { cause: error });
  }
  const from = pointer.live;
  if (pointer.pin)
    return summary({
      result: 'skipped-pinned',
      reason: new PinnedError(pointer.pin).message,
      pin: pointer.pin,
    });
  let live: LiveCatalog;
  try {
    live = await readLive(target.origin, from);
  } catch (error) {
    throw storeFailure(`reading live build ${from ?? ''} from ${target.origin.name} failed`, {
      cause: error,
    });
  }
  times.read = Math.round(lap());

  const { plansHash, inputsHash } = candidate;
  const decision = decide({ plans: totalPlans(candidate.counts), plansHash, inputsHash }, live, options);
  if (decision.action === 'refuse') throw new PublishRefusedError(decision.guard, decision.reason);
  if (decision.action === 'skip') {
    // Nothing is written: the build it names is the live one.
    const { id, manifest } = live as Extract<LiveCatalog, { kind: 'build' }>;
    const { generatedAt } = manifest;
    return summary({ result: 'skipped-identical', reason: decision.reason, buildId: id, generatedAt });
  }
  if (decision.note) warnings.push(decision.note);
  // Only with `recover` (proveDeployment refused it otherwise): the move is recorded with why.
  const recovered =
    live.kind === 'unreadable'
      ? `recovered: build:live named ${shownValue(live.id)} (${live.reason}); a fresh build replaces it`
      : undefined;
  if (recovered) warnings.push(recovered);

  const progress = options.progress ?? (() => {});
  progress({ stage: 'compressing and rendering pages' });
  const built = await completeBuild(candidate, keptFrom(live));
  bytes = built.objects.reduce((sum, object) => sum + object.size, 0);
  completeMs = lap();

  const uploaded = await upload(
    target.origin,
    built,
    live,
    options.concurrency ?? UPLOAD_CONCURRENCY,
    progress,
  );
  times.upload = Math.round(lap());

  progress({ stage: 'verifying' });
  let damage: string[];
  try {
    damage = await damageOfBuild(target.origin, built.buildId, uploaded.manifest);
    if (damage.length === 0) await writeRoot(target.origin, built);
  } catch (error) {
    throw storeFailure(`verifying build ${built.buildId} at ${target.origin.name} failed`, { cause: error });
  }
  if (damage.length > 0)
    throw new UploadError(
      `build ${built.buildId} at ${target.origin.name} does not match its manifest (${damage.slice(0, 3).join('; ')}); the live build is still ${from ?? '(none)'}; run publish again`,
    );
  times.verify = Math.round(lap());

  // The new pages go live before the catalogs; the pages of removed plans go after them.
  try {
    // A directory's listing for the damage check left the MD5s out (catalog status hashes the pages instead).
    const held = live.kind === 'build' && !target.origin.md5 ? live.held : undefined;
    await goLive(
      target,
      { id: built.buildId, pages: uploaded.pages },
      held,
      progress,
      () => movePointer(target.kvs, from, built.buildId, where),
      warnings,
      pageObjects(built),
    );
  } catch (error) {
    if (error instanceof PinnedError)
      return summary({ result: 'skipped-pinned', reason: error.message, pin: error.pin });
    throw error;
  }
  times.flip = Math.round(lap());
  const reason = recovered ? { reason: recovered } : {};
  const move = {
    at: clock().toISOString(),
    kind: 'publish',
    from,
    to: built.buildId,
    by: actor,
    ...reason,
  } as const;
  await recordMoveOrWarn(target.origin, move, warnings);
  return summary({ result: 'published' });
}

/** What a prune must keep, by the pointer: the live build, the pinned one and the rollback target. */
export function protectedBy(pointer: Pointer): Protected {
  return { live: pointer.live, pinned: pointer.pin?.build ?? null, previous: pointer.previous[0] ?? null };
}

/** The warning of a prune that failed (it never fails the run). */
export function pruneFailure(origin: OriginStore, error: unknown): string {
  return `pruning old builds of ${origin.name} failed: ${describeCause(error)}`;
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
}

/** Removes the pin and records that (the pinned build stays live); returns the pin removed, if any. */
async function removePin(
  target: PublishTarget,
  where: Binding,
  by: string,
  clock: () => Date,
  warnings: string[],
): Promise<Pin | null> {
  const removed = await unpinPointer(target.kvs, where);
  if (removed) {
    const reason = `pinned since ${removed.at} by ${removed.by} (${removed.reason})`;
    const at = clock().toISOString();
    const move = { at, kind: 'unpin', from: removed.build, to: removed.build, by, reason } as const;
    await recordMoveOrWarn(target.origin, move, warnings);
  }
  return removed;
}

/** Makes an earlier whole build live (`to`, else the head of the rollback line) and pins it there. */
export async function rollback(
  target: PublishTarget,
  options: {
    readonly to?: string;
    readonly now: Date;
    readonly actor?: string;
    readonly progress?: ProgressSink;
  },
): Promise<RollbackSummary> {
  const progress = options.progress ?? (() => {});
  progress({ stage: 'reading the builds' });
  let pointer: Pointer;
  try {
    pointer = await readPointer(target.kvs);
  } catch (error) {
    throw storeFailure(`reading the live build from ${target.kvs.name} failed`, {
      cause: error,
      readOnly: true,
    });
  }
  const where = await proveDeployment(target, pointer);
  // The rest under the run lock, as a run's prune is: no prune deletes the build a rollback chooses and moves to.
  let attempt: LockAttempt;
  try {
    attempt = await acquireRunLock(target.origin, 'catalog rollback');
  } catch (error) {
    throw storeFailure(`taking the run lock at ${target.origin.name} failed`, { cause: error });
  }
  if ('busy' in attempt)
    throw new RunLockBusyError(
      `another run holds the run lock at ${target.origin.name}: ${describeHolder(attempt.busy)}; nothing was changed (roll back once it ends; a run that died leaves its lock to expire within ${RUN_LOCK_TTL_MS / 60_000} minutes)`,
    );
  try {
    return await rollbackLocked(target, options, where);
  } finally {
    await attempt.held.release();
  }
}

/** {@link rollback} once it holds the run lock. */
async function rollbackLocked(
  target: PublishTarget,
  options: Parameters<typeof rollback>[1],
  where: Binding,
): Promise<RollbackSummary> {
  const progress = options.progress ?? (() => {});
  // Read again under the lock: a run that ended between the first read and the lock may have moved the pointer.
  let pointer: Pointer;
  let builds: Map<string, string[]>;
  try {
    [pointer, builds] = await Promise.all([
      readPointer(target.kvs),
      target.origin.list('builds/').then(groupBuilds),
    ]);
  } catch (error) {
    throw storeFailure(`reading the builds of ${target.origin.name} failed`, { cause: error });
  }
  const chosen = rollbackTarget(builds, pointer, options.to);
  if ('error' in chosen) throw new HistoryError(`${target.origin.name}: ${chosen.error}`);
  progress({ stage: `checking build ${chosen.id}` });
  const manifest = await readManifest(target.origin, chosen.id);
  if (!manifest) throw new HistoryError(`${target.origin.name}: build ${chosen.id} has no readable manifest`);
  const damage = await damageOfBuild(target.origin, chosen.id, manifest);
  if (damage.length > 0)
    throw new HistoryError(
      `build ${chosen.id} is damaged (${damage.slice(0, 3).join('; ')}); the live build is unchanged`,
    );
  const from = pointer.live === null ? '(none)' : shownValue(pointer.live);
  const pin: Pin = {
    build: chosen.id,
    at: options.now.toISOString(),
    by: 'rollback',
    reason: `rolled back from ${from}`,
  };
  const warnings: string[] = [];
  const { before, after } = await goLive(
    target,
    { id: chosen.id, pages: await pagesOf(target.origin, chosen.id, manifest) },
    undefined,
    progress,
    () => pinPointer(target.kvs, pin, pointer.live, where),
    warnings,
  );
  const by = options.actor ?? 'unknown';
  const move = {
    at: pin.at,
    kind: 'rollback',
    from: before.live,
    to: chosen.id,
    by,
    reason: pin.reason,
  } as const;
  await recordMoveOrWarn(target.origin, move, warnings);
  return {
    command: 'rollback',
    buildId: chosen.id,
    generatedAt: manifest.generatedAt,
    counts: manifest.counts,
    previousBuildId: before.live,
    pin,
    previous: after.previous,
    warnings,
  };
}

/** Removes a rollback's pin (the pinned build stays live until the next publish); returns it, if any. */
export async function unpin(
  target: PublishTarget,
  options: { readonly now?: Date; readonly actor?: string } = {},
): Promise<{ command: 'unpin'; unpinned: Pin | null; warnings: string[] }> {
  const where = await proveDeployment(target, await readPointer(target.kvs));
  const warnings: string[] = [];
  const clock = () => options.now ?? new Date();
  const unpinned = await removePin(target, where, options.actor ?? 'unknown', clock, warnings);
  return { command: 'unpin', unpinned, warnings };
}

/** One row of `catalog builds`. */
export interface BuildListing {
  readonly id: string;
  readonly generatedAt: string | null;
  readonly counts: Readonly<Record<Discipline, number>> | null;
  readonly live: boolean;
  /** In the pointer's history, in the rollback line, or live now (else a publish lost a race, say). */
  readonly everLive: boolean;
  readonly pinned: boolean;
  /** Its manifest is there (the upload finished). */
  readonly complete: boolean;
}

/** The builds at an origin (newest first), and the flat objects from before builds still at its root. */
export async function listBuilds(
  target: PublishTarget,
): Promise<{ readonly builds: BuildListing[]; readonly flat: string[]; readonly pointer: Pointer }> {
  try {
    const listing = await target.origin.list('builds/');
    const [pointer, root, moves] = await Promise.all([
      readPointer(target.kvs),
      Promise.all(FLAT_OBJECTS.map(async (key) => ((await target.origin.get(key)) ? key : null))),
      listMoves(target.origin),
    ]);
    const wasLive = everLive(moves);
    for (const id of [pointer.live, ...pointer.previous]) if (id !== null) wasLive.add(id);
    const grouped = groupBuilds(listing);
    const ids = [...grouped.keys()].sort().reverse();
    const manifests = await Promise.all(
      ids.map((id) => (hasManifest(grouped.get(id) ?? []) ? readManifest(target.origin, id) : null)),
    );
    const builds = ids.map((id, index) => {
      const manifest = manifests[index] ?? null;
      return {
        id,
        generatedAt: manifest?.generatedAt ?? null,
        counts: manifest?.counts ?? null,
        live: id === pointer.live,
        everLive: wasLive.has(id),
        pinned: id === pointer.pin?.build,
        complete: manifest !== null,
      };
    });
    return { builds, flat: root.filter((key): key is string => key !== null), pointer };
  } catch (error) {
    throw storeFailure(`listing the builds of ${target.origin.name} failed`, {
      cause: error,
      readOnly: true,
    });
  }
}
