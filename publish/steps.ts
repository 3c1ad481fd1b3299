/**
 * The steps of a publish, a rollback and an unpin (publish/README.md), as functions of values that app/run.ts calls
 * in order; the decisions are core.ts's. A failure to act on is a `CatalogError` (errors.ts) naming what failed.
 */
import pLimit from 'p-limit';
import type { BuildObject, BuildResult } from '../builder/build.ts';
import { CatalogError, describeCause, settingRef } from '../contract/errors.ts';
import {
  BUILD_ID_PATTERN,
  BUILDS_PREFIX,
  MANIFEST,
  PAGE_OBJECT_PREFIX,
  PAGES_PREFIX,
  pageContentKey,
  planPageKey,
  STATE_HISTORY_PREFIX,
} from '../contract/index.ts';
import type { KeyValueStore } from '../keys/store.ts';
import {
  buildIdsOf,
  buildKey,
  buildsToPrune,
  keptPagesOf,
  type LiveCatalog,
  liveDamage,
  livePagesOf,
  objectDamage,
  parseManifest,
  rollbackTarget,
  type StoredManifest,
  unreferencedPages,
} from './core.ts';
import { failing, HistoryError, storeFailure, UploadError } from './errors.ts';
import { type PointerMove, recordMove } from './history.ts';
import { acquireRunLock, type LockAttempt } from './lock.ts';
import { type OriginStore, objectToWrite } from './origin.ts';
import {
  type Binding,
  bindingOf,
  DeploymentError,
  mismatch,
  type Pin,
  PinnedError,
  type Pointer,
  readPointer,
  shownValue,
  unpinPointer,
} from './pointer.ts';

/** Where a build goes live: the origin that stores it, and the store that holds the live pointer. */
export interface PublishTarget {
  readonly origin: OriginStore;
  readonly kvs: KeyValueStore;
}

/** What a long operation is doing now (for a progress display), and how far it is when counted. */
export interface Progress {
  readonly stage: string;
  readonly done?: number;
  readonly total?: number;
}

/** Hears each {@link Progress} of an operation, as it goes. */
export type ProgressSink = (progress: Progress) => void;

/** What every step of a run is given: where it acts, who runs it and when, where progress and warnings go. */
export interface Run {
  readonly target: PublishTarget;
  readonly at: Date;
  readonly by: string;
  readonly progress: ProgressSink;
  readonly warn: (warning: string) => void;
}

/** Writes at once: the SDK's HTTP agent keeps 50 sockets. */
export const WRITE_CONCURRENCY = 32;

/** Reads a build's manifest: the manifest, or why it is not one (null: there is none). */
export async function readManifest(
  origin: OriginStore,
  id: string,
): Promise<StoredManifest | { problem: string } | null> {
  const object = await origin.get(buildKey(id, MANIFEST));
  return object ? parseManifest(object.body, id) : null;
}

const isManifest = (read: Awaited<ReturnType<typeof readManifest>>): read is StoredManifest =>
  read !== null && !('problem' in read);

/** The live pages as a listing of `plans/` gives them, and the kept pages' digests once listed (when needed). */
export interface LivePages {
  /** Plan id → the digest of what its live page holds (null: no page's). */
  readonly held: ReadonlyMap<string, string | null>;
  readonly kept?: ReadonlySet<string> | undefined;
}

/**
 * What is live at the origin and what is wrong with it, judged by the MD5s the listings give: its objects and its
 * pages' bytes against its manifest, and each live page. The kept pages are listed only when a live page is not
 * the build's: while each is, every page's bytes are there.
 */
export async function readLive(
  origin: OriginStore,
  live: string | null,
  /** The live build's manifest as this run already read it (a build's manifest never changes). */
  known?: StoredManifest,
): Promise<LivePages & { readonly live: LiveCatalog }> {
  const held = livePagesOf(await origin.list(PAGE_OBJECT_PREFIX));
  const unreadable = (reason: string) => ({
    live: { kind: 'unreadable', id: live ?? '', reason } as const,
    held,
  });
  if (live === null) return { live: { kind: 'none' }, held };
  if (!BUILD_ID_PATTERN.test(live)) return unreadable('not a build id');
  const manifest = known?.buildId === live ? known : await readManifest(origin, live);
  if (!isManifest(manifest))
    return unreadable(manifest?.problem ?? `no ${buildKey(live, MANIFEST)} at ${origin.name}`);
  const own = await origin.list(buildKey(live, ''));
  const pageDamage = liveDamage(manifest, held);
  const kept = pageDamage.length > 0 ? keptPagesOf(await origin.list(PAGES_PREFIX)) : undefined;
  const damage = objectDamage(manifest, own, kept ?? 'all live', held);
  return { live: { kind: 'build', id: live, manifest, damage, pageDamage }, held, kept };
}

/**
 * Proves that the store and the origin are one deployment (docs/decisions.md#live-build): a store that records an
 * origin records this one; one that records none takes it only while neither holds a build, or with `recover`
 * (`note`); a publish's live build (`live`) is at the origin unless `recover`. Else a {@link DeploymentError}.
 */
export async function proveDeployment(
  target: PublishTarget,
  options: { readonly recover?: boolean; readonly live?: boolean },
): Promise<{
  readonly binding: Binding;
  readonly pointer: Pointer;
  readonly note?: string;
  /** The live build's manifest, when `live` asked for it and it reads. */
  readonly manifest?: StoredManifest;
}> {
  const { origin, kvs } = target;
  const recover = settingRef('recover');
  const [pointer, bound, builds, manifest] = await failing(
    `reading ${kvs.name} and ${origin.name}`,
    async () => {
      const pointer = await readPointer(kvs);
      const { live } = pointer;
      // `true`: the live build's manifest was not asked for; null: the pointer names no build id.
      const manifest =
        !options.live || live === null
          ? true
          : BUILD_ID_PATTERN.test(live)
            ? readManifest(origin, live)
            : null;
      const builds = pointer.origin === null ? origin.listPrefixes(BUILDS_PREFIX).then(buildIdsOf) : [];
      return Promise.all([pointer, bindingOf(origin.name, kvs.name), builds, manifest] as const);
    },
  );
  const binding = { origin: origin.name, binding: bound };
  if (pointer.origin !== null && pointer.origin !== bound)
    throw mismatch(kvs.name, origin.name, pointer.origin, bound);
  let note: string | undefined;
  if (pointer.origin === null) {
    const taken =
      pointer.live !== null
        ? `the store has a live build (${shownValue(pointer.live)}) but records no origin`
        : builds.length > 0
          ? `the store records no origin, and ${origin.name} holds ${builds.length} build${builds.length === 1 ? '' : 's'} of another store`
          : undefined;
    if (taken !== undefined && !options.recover)
      throw new DeploymentError(
        `${kvs.name} and ${origin.name} are not shown to be one deployment: ${taken}; nothing was changed (give the store and the origin of one deployment; ${recover} makes this store serve ${origin.name})`,
      );
    if (taken !== undefined) note = `${recover}: ${kvs.name} now serves ${origin.name} (${taken})`;
  }
  if (manifest !== true && !isManifest(manifest) && !options.recover) {
    const live = shownValue(pointer.live ?? '');
    throw new DeploymentError(
      `${kvs.name}: its live build ${manifest === null ? `${live} is not at ${origin.name}, the origin it serves` : `${live} cannot be read: ${manifest.problem}`} (the edge cannot serve it); nothing was changed (catalog rollback --to a build makes it live; ${recover} publishes a fresh build in its place${pointer.pin ? `, with ${settingRef('unpin')} to lift the pin on it` : ''})`,
    );
  }
  return {
    binding,
    pointer,
    ...(note ? { note } : {}),
    ...(manifest !== true && isManifest(manifest) ? { manifest } : {}),
  };
}

/** Takes the run lock at the origin (lock.ts) for `by`, or finds the run that holds it. */
export function takeRunLock(origin: OriginStore, by: string): Promise<LockAttempt> {
  return failing(`taking the run lock at ${origin.name}`, () => acquireRunLock(origin, by));
}

/** Removes a rollback's pin, recording the move; the pinned build stays live. Returns the pin removed, if any. */
export async function removePin(run: Run, binding: Binding): Promise<Pin | null> {
  const removed = await unpinPointer(run.target.kvs, binding);
  const reason = removed && `pinned since ${removed.at} by ${removed.by} (${removed.reason})`;
  if (reason) await inHistory(run, { kind: 'unpin', from: removed.build, to: removed.build, reason });
  return removed;
}

/**
 * Puts right each live page that is not the live build's (a cut run, a hand) from the kept pages, and deletes
 * those of plans it lacks; a page kept nowhere is the build's damage, which a fresh build writes (core.ts
 * `decide`). Returns the live pages then, and how many it put right.
 */
export async function putLivePagesRight(
  run: Run,
  live: LiveCatalog,
  pages: LivePages,
): Promise<LivePages & { readonly put: number }> {
  if (live.kind !== 'build' || live.pageDamage.length === 0) return { ...pages, put: 0 };
  const now = await matchLivePages(run, live.manifest.pages, pages, {});
  const ids = new Set([...pages.held.keys(), ...now.held.keys()]);
  return { ...now, put: [...ids].filter((id) => pages.held.get(id) !== now.held.get(id)).length };
}

/** Writes the build's own objects, each never over another, then, its commit point, its manifest. */
export async function upload(run: Run, built: BuildResult, live: string | null): Promise<void> {
  const { origin } = run.target;
  const isOwn = (object: BuildObject) =>
    object.key !== MANIFEST && !object.key.startsWith(PAGE_OBJECT_PREFIX);
  const own = built.objects.filter(isOwn);
  const manifest = built.objects.filter((object) => object.key === MANIFEST);
  let written = 0;
  const total = own.length + manifest.length;
  run.progress({ stage: 'uploading', done: 0, total });
  // The first failure starts no further write, and is thrown once the writes under way have settled.
  let failed: Error | undefined;
  for (const batch of [own, manifest]) {
    await pLimit(WRITE_CONCURRENCY).map(batch, async (object) => {
      const key = buildKey(built.buildId, object.key);
      if (failed) return;
      try {
        await origin.put(objectToWrite(object, key), { overwrite: false });
        written += 1;
        run.progress({ stage: 'uploading', done: written, total });
      } catch (error) {
        // One of ours (the bucket's encryption) is said as it is: every run would fail alike, and leave nothing.
        failed ??=
          error instanceof CatalogError
            ? error
            : new UploadError(
                `uploading build ${built.buildId} to ${origin.name} failed at ${key} (${describeCause(error)}): ${written} of ${total} objects written; the live build is still ${live ?? '(none)'}, and ${built.buildId} is left unreferenced (pruned later); run publish again`,
                { cause: error },
              );
      }
    });
    if (failed) throw failed;
  }
}

/** Lists the build's folder and compares it with its manifest. */
export async function verify(origin: OriginStore, built: BuildResult, live: string | null): Promise<void> {
  const damage = await failing(`verifying build ${built.buildId} at ${origin.name}`, async () => {
    const manifest = parseManifest(Buffer.from(JSON.stringify(built.manifest)), built.buildId);
    if ('problem' in manifest) throw new Error(manifest.problem);
    return objectDamage(manifest, await origin.list(buildKey(built.buildId, '')), 'all live');
  });
  if (damage.length > 0)
    throw new UploadError(
      `build ${built.buildId} at ${origin.name} does not match its manifest (${damage.slice(0, 3).join('; ')}); the live build is still ${live ?? '(none)'}; run publish again`,
    );
}

/** Writes the error pages (the build's root objects) whose bytes differ from those at the origin's root. */
export function writeErrorPages(origin: OriginStore, built: BuildResult): Promise<void> {
  return failing(`writing the error pages of build ${built.buildId} to ${origin.name}`, async () => {
    for (const object of built.root)
      if ((await origin.get(object.key))?.md5 !== object.md5)
        await origin.put(objectToWrite(object, object.key), { overwrite: true });
  });
}

/** The pointer after a run moved it, what it held before, and when (`performance.now()`). */
export interface Moved {
  readonly before: Pointer;
  readonly after: Pointer;
  readonly at: number;
}

/**
 * Chooses the build a rollback makes live (core.ts `rollbackTarget`) from the pointer read under the lock, and
 * refuses one that is not whole (see {@link readLive}), moving nothing.
 */
export async function choose(
  run: Run,
  to: string | undefined,
): Promise<
  LivePages & { readonly id: string; readonly manifest: StoredManifest; readonly pointer: Pointer }
> {
  const { origin, kvs } = run.target;
  run.progress({ stage: 'reading the builds' });
  const [pointer, ids] = await failing(`reading the builds of ${origin.name}`, () =>
    Promise.all([readPointer(kvs), origin.listPrefixes(BUILDS_PREFIX).then(buildIdsOf)]),
  );
  let manifest: StoredManifest | undefined;
  for (const id of (to !== undefined ? [to] : pointer.previous).filter((id) => ids.includes(id))) {
    const read = await readManifest(origin, id);
    manifest = isManifest(read) ? read : undefined;
    if (manifest) break;
  }
  const chosen = rollbackTarget(new Set(manifest ? [manifest.buildId] : []), ids, pointer, to);
  if ('error' in chosen) throw new HistoryError(`${origin.name}: ${chosen.error}`);
  run.progress({ stage: `checking build ${chosen.id}` });
  const read = await readLive(origin, chosen.id, manifest);
  if (read.live.kind !== 'build' || read.live.damage.length > 0) {
    const damage = read.live.kind === 'build' ? read.live.damage : [];
    throw new HistoryError(
      `build ${chosen.id} at ${origin.name} is damaged (${damage.slice(0, 3).join('; ')}${damage.length > 3 ? '; …' : ''}); nothing was moved: the live build is still ${pointer.live ?? '(none)'} (roll back --to another build, or publish a fresh one)`,
    );
  }
  return { ...read, id: chosen.id, manifest: read.live.manifest, pointer };
}

/**
 * After a publish moved the pointer to `live`, under the lock: deletes the builds beyond `keep` but the live,
 * pinned and previous ones, then the kept pages no kept build names. Returns them; a failure is a warning.
 */
export async function prune(run: Run, live: string, keep: number): Promise<string[]> {
  const { origin, kvs } = run.target;
  try {
    const pointer = await readPointer(kvs);
    if (pointer.live !== live) return [];
    const ids = buildIdsOf(await origin.listPrefixes(BUILDS_PREFIX));
    const protect = { live, pinned: pointer.pin?.build ?? null, previous: pointer.previous[0] ?? null };
    const doomed = buildsToPrune(ids, keep, protect);
    if (doomed.length === 0) return [];
    run.progress({ stage: 'pruning old builds' });
    const builds = await pLimit(4).map(
      ids.filter((id) => !doomed.includes(id)),
      (id) => readManifest(origin, id),
    );
    for (const id of doomed) await origin.deletePrefix(buildKey(id, ''));
    await origin.delete(unreferencedPages(await origin.list(PAGES_PREFIX), builds.filter(isManifest)));
    return doomed;
  } catch (error) {
    run.warn(`pruning old builds of ${origin.name} failed: ${describeCause(error)}`);
    return [];
  }
}

/** A move of the pointer: what moves it, from which build, why, and its one conditional write. */
export interface Move {
  readonly kind: 'publish' | 'rollback';
  readonly from: string | null;
  readonly reason?: string | undefined;
  readonly write: () => Promise<{ readonly before: Pointer; readonly after: Pointer }>;
}

/**
 * Makes a build live (publish/README.md, step 9): the pages that differ, the pointer's conditional write, the
 * deletion of the live pages it lacks (a failure there is a warning), the history. When the pages or the write
 * fail (a {@link PinnedError} too), the live pages are put back to the live build's, else the next run does.
 */
export async function goLive(
  run: Run,
  build: { readonly id: string; readonly pages: Readonly<Record<string, string>> },
  pages: LivePages,
  move: Move,
  how: PageWrites = {},
): Promise<Moved> {
  const { origin, kvs } = run.target;
  let now: LivePages;
  let moved: Moved;
  try {
    now = await writeLivePages(run, build.pages, pages, how);
    run.progress({ stage: 'moving the live pointer' });
    moved = { ...(await move.write()), at: performance.now() };
  } catch (error) {
    try {
      const back = await readLive(origin, (await readPointer(kvs)).live);
      if (back.live.kind === 'build') await matchLivePages(run, back.live.manifest.pages, back, {});
    } catch {}
    if (error instanceof CatalogError) throw error;
    throw storeFailure(`making the pages of build ${build.id} live at ${origin.name} failed`, {
      cause: error,
    });
  }
  try {
    await removeLivePages(origin, build.pages, now);
  } catch (error) {
    run.warn(
      `deleting the live pages build ${build.id} lacks at ${origin.name} failed (${describeCause(error)}); they answer until the next run`,
    );
  }
  const { kind, from, reason } = move;
  await inHistory(run, { kind, from, to: build.id, ...(reason ? { reason } : {}) });
  return moved;
}

/** `bytes`: the new build's pages, by digest; with `force`, every page is written again from them. */
interface PageWrites {
  readonly force?: boolean;
  readonly bytes?: ReadonlyMap<string, BuildObject>;
}

/** Makes the live pages exactly `wanted` where their bytes are kept or in `bytes`; returns the live pages then. */
async function matchLivePages(
  run: Run,
  wanted: Readonly<Record<string, string>>,
  pages: LivePages,
  how: PageWrites,
): Promise<LivePages> {
  return removeLivePages(run.target.origin, wanted, await writeLivePages(run, wanted, pages, how));
}

/**
 * Makes the live pages hold `wanted` (plan id → digest) where they do not (all of them with `bytes` and `force`): a
 * copy of the kept page, else a write of its `bytes`; a page neither kept nor in `bytes` is left. Each live page it
 * overwrites is kept first. Every write settles before a failure is thrown. Returns the live pages then.
 */
async function writeLivePages(
  run: Run,
  wanted: Readonly<Record<string, string>>,
  pages: LivePages,
  { bytes, force }: PageWrites,
): Promise<LivePages> {
  const { origin } = run.target;
  const kept = new Set(pages.kept ?? keptPagesOf(await origin.list(PAGES_PREFIX)));
  const rewrite = bytes !== undefined && force === true;
  const place = Object.entries(wanted).filter(
    ([id, digest]) => (rewrite || pages.held.get(id) !== digest) && (kept.has(digest) || bytes?.has(digest)),
  );
  const held = new Map(pages.held);
  let done = 0;
  const limit = pLimit(WRITE_CONCURRENCY);
  const writes = await Promise.allSettled(
    place.map(([id, digest]) =>
      limit(async () => {
        await keep(origin, kept, id, pages.held.get(id), digest);
        const page = bytes?.get(digest);
        if (page && (rewrite || !kept.has(digest)))
          await origin.put(objectToWrite(page, planPageKey(id)), { overwrite: true });
        else
          await origin.copy(pageContentKey(digest), planPageKey(id), { overwrite: true, sourceMd5: digest });
        held.set(id, digest);
        done += 1;
        run.progress({ stage: 'updating the live pages', done, total: place.length });
      }),
    ),
  );
  const failure = writes.find((write): write is PromiseRejectedResult => write.status === 'rejected');
  if (failure) throw failure.reason;
  return { held, kept };
}

/**
 * Keeps the bytes a live page holds (`digest`, as the run read it) under their digest before they are overwritten
 * (by `next`) or deleted, for every build that names them. It copies only while the page holds them: one changed
 * since the run read it fails the run, and is never overwritten unseen.
 */
async function keep(
  origin: OriginStore,
  kept: Set<string>,
  id: string,
  digest?: string | null,
  next?: string,
) {
  if (digest === null || digest === undefined || digest === next) return;
  await origin.copy(planPageKey(id), pageContentKey(digest), { overwrite: true, sourceMd5: digest });
  kept.add(digest);
}

/** Deletes the live pages of the plans `wanted` lacks, each kept first; returns the live pages then. */
async function removeLivePages(
  origin: OriginStore,
  wanted: Readonly<Record<string, string>>,
  pages: LivePages,
): Promise<LivePages> {
  const remove = [...pages.held].filter(([id]) => !Object.hasOwn(wanted, id));
  const kept = new Set(pages.kept);
  await pLimit(WRITE_CONCURRENCY).map(remove, ([id, digest]) => keep(origin, kept, id, digest));
  await origin.delete(remove.map(([id]) => planPageKey(id)));
  return { held: new Map([...pages.held].filter(([id]) => Object.hasOwn(wanted, id))), kept };
}

/** Records a move in the history at the origin; a failure is a warning (the pointer did move). */
async function inHistory(run: Run, move: Omit<PointerMove, 'at' | 'by'>): Promise<void> {
  try {
    await recordMove(run.target.origin, { at: run.at.toISOString(), by: run.by, ...move });
  } catch (error) {
    run.warn(
      `recording the ${move.kind} of ${move.to ?? '(none)'} in ${STATE_HISTORY_PREFIX} at ${run.target.origin.name} failed (${describeCause(error)}); the pointer did move, and catalog history will not show it`,
    );
  }
}
