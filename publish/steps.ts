/**
 * The steps a publish, a rollback and an unpin are made of (publish/README.md): each a small function over the
 * run's {@link RunState}, timed by {@link runSteps}. A step that settles the run's outcome returns it (`busy`,
 * `skipped-pinned`, `skipped-identical`); a failure is thrown. The lists themselves are in app/run.ts.
 */
import pLimit from 'p-limit';
import { type BuildObject, type BuildResult, completeBuild, type PreparedBuild } from '../builder/build.ts';
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
  totalPlans,
} from '../contract/index.ts';
import type { KeyValueStore } from '../keys/store.ts';
import {
  buildIdsOf,
  buildKey,
  buildsToPrune,
  decide,
  type GuardOptions,
  type LiveCatalog,
  liveDamage,
  livePagesOf,
  objectDamage,
  parseManifest,
  rollbackTarget,
  type StoredManifest,
  storedPagesOf,
  unreferencedPages,
} from './core.ts';
import { HistoryError, PublishRefusedError, RunLockBusyError, storeFailure, UploadError } from './errors.ts';
import { type PointerMove, recordMove } from './history.ts';
import {
  acquireRunLock,
  describeHolder,
  type HeldRunLock,
  type LockHolder,
  RUN_LOCK_TTL_MS,
} from './lock.ts';
import { type OriginStore, objectToWrite, type StoredObject } from './origin.ts';
import {
  type Binding,
  bindingOf,
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

/** Writes at once: the SDK's HTTP agent keeps 50 sockets. */
export const WRITE_CONCURRENCY = 32;

/** How a run was asked to go. */
export interface RunOptions extends GuardOptions {
  /** Remove a rollback's pin first (publish), or only that (unpin). */
  readonly unpin?: boolean;
  /** Take an origin the store does not record, or replace a live build the origin lacks (see {@link prove}). */
  readonly recover?: boolean;
  /** `--to` of a rollback. */
  readonly to?: string;
  /** Builds kept by a prune. */
  readonly keep?: number;
  /** Who runs it, for the history of the pointer (`user@host`, the builder function). */
  readonly actor?: string;
  /** What runs, as the run lock names it (`catalog publish`, `lambda`). */
  readonly runBy?: string;
  readonly clock?: () => Date;
  readonly progress?: ProgressSink;
}

/** How a run ended, when a step settled it: its result and why. */
export type Stop =
  | { readonly result: 'busy'; readonly reason: string; readonly holder: LockHolder }
  | { readonly result: 'skipped-pinned'; readonly reason: string; readonly pin: Pin }
  | { readonly result: 'skipped-identical'; readonly reason: string };

/** What the steps of one run know, as they learn it. */
export class RunState {
  readonly target: PublishTarget;
  readonly options: RunOptions;
  /** Problems that did not fail the run. */
  readonly warnings: string[] = [];
  /** Each step's duration, by name. */
  readonly durationsMs: Record<string, number> = {};
  binding?: Binding;
  pointer?: Pointer;
  /** The live build's manifest as `prove` read it. */
  proven?: { readonly id: string; readonly manifest: StoredManifest };
  lock?: HeldRunLock;
  /** Makes the new build's first step (app/run.ts reads the source); its result. */
  prepare?: () => Promise<PreparedBuild>;
  candidate?: PreparedBuild;
  live?: LiveCatalog;
  /** The digests of the stored pages (`pages/`), once listed; the pages this run stores are added. */
  stored?: Set<string> | undefined;
  /** What each live page held then (core.ts `livePagesOf`). */
  held?: ReadonlyMap<string, string | null>;
  built?: BuildResult;
  /** The build a rollback makes live, and its manifest. */
  chosen?: { readonly id: string; readonly manifest: StoredManifest };
  /** The pointer after this run moved it; what it held before. */
  moved?: { readonly before: Pointer; readonly after: Pointer; readonly at: number };
  /** The pin a rollback set, or an unpin removed. */
  pin?: Pin | null;
  pruned: string[] = [];

  constructor(target: PublishTarget, options: RunOptions) {
    this.target = target;
    this.options = options;
  }

  get progress(): ProgressSink {
    return this.options.progress ?? (() => {});
  }

  get now(): Date {
    return (this.options.clock ?? (() => new Date()))();
  }

  /** A value an earlier step sets: a step listed before its time is a mistake in the list. */
  need<K extends keyof this>(key: K): NonNullable<this[K]> {
    const value = this[key];
    if (value === undefined || value === null) throw new Error(`run step: ${String(key)} is not known yet`);
    return value as NonNullable<this[K]>;
  }
}

/** A step: its name (its duration's key) and what it does. */
export interface Step {
  readonly name: string;
  readonly run: (state: RunState) => Promise<Stop | undefined>;
}

/** Runs the steps in order, timing each, until one settles the outcome (returned) or throws. */
export async function runSteps(state: RunState, steps: readonly Step[]): Promise<Stop | undefined> {
  for (const step of steps) {
    const started = performance.now();
    try {
      const stop = await step.run(state);
      if (stop) return stop;
    } finally {
      state.durationsMs[step.name] = Math.round(performance.now() - started);
    }
  }
  return undefined;
}

/** A step with a name. */
const step = (name: string, run: Step['run']): Step => ({ name, run });

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

/**
 * What is live at the origin, and what is wrong with it: its own objects against its manifest, its pages' bytes,
 * and each live page. With `bytes`, objects whose listing gives no MD5 (a directory's) are read and hashed.
 *
 * The stored pages are listed only when a live page is not the build's, or with `bytes`: while every live page is
 * the build's, each of its pages' bytes is there.
 */
export async function readLive(
  origin: OriginStore,
  live: string | null,
  options: {
    readonly bytes?: boolean;
    /** The live build's manifest as this run already read it (a build's manifest never changes). */
    readonly known?: { readonly id: string; readonly manifest: StoredManifest };
  } = {},
): Promise<{
  readonly live: LiveCatalog;
  /** The digests of the stored pages, when they were listed. */
  readonly stored?: Set<string>;
  readonly held: ReadonlyMap<string, string | null>;
}> {
  const held = livePagesOf(await origin.list(PAGE_OBJECT_PREFIX));
  const unreadable = (reason: string) => ({
    live: { kind: 'unreadable', id: live ?? '', reason } as const,
    held,
  });
  if (live === null) return { live: { kind: 'none' }, held };
  if (!BUILD_ID_PATTERN.test(live)) return unreadable('not a build id');
  const manifest = options.known?.id === live ? options.known.manifest : await readManifest(origin, live);
  if (!isManifest(manifest))
    return unreadable(manifest?.problem ?? `no ${buildKey(live, MANIFEST)} at ${origin.name}`);
  const own = await origin.list(buildKey(live, ''));
  const pageDamage = liveDamage(manifest, held);
  const pages = pageDamage.length > 0 || options.bytes ? await origin.list(PAGES_PREFIX) : undefined;
  const stored = pages && storedPagesOf(pages);
  const damage = objectDamage(manifest, own, stored ?? 'all live', held);
  if (options.bytes) damage.push(...(await byteDamage(origin, manifest, [...own, ...(pages ?? [])], damage)));
  return {
    live: { kind: 'build', id: live, manifest, damage, pageDamage },
    ...(stored ? { stored } : {}),
    held,
  };
}

/** Objects read at once when bytes are checked. */
const READ_CONCURRENCY = 16;

/** The objects of a build whose bytes differ from their record: those whose listing gave no MD5, read and hashed. */
async function byteDamage(
  origin: OriginStore,
  manifest: StoredManifest,
  listed: readonly StoredObject[],
  known: readonly string[],
): Promise<string[]> {
  const unhashed = new Set(listed.filter((object) => object.md5 === undefined).map((object) => object.key));
  const named = new Set(known.map((line) => line.slice(0, line.indexOf(' '))));
  const checks: [name: string, key: string, md5: string][] = [
    ...Object.entries(manifest.objects).map(
      ([key, { md5 }]) => [key, buildKey(manifest.buildId, key), md5] as [string, string, string],
    ),
    ...[...new Set(Object.values(manifest.pages))].map(
      (digest) => [pageContentKey(digest), pageContentKey(digest), digest] as [string, string, string],
    ),
  ].filter(([name, key]) => unhashed.has(key) && !named.has(name));
  const found = await pLimit(READ_CONCURRENCY).map(checks, async ([name, key, md5]) => {
    const object = await origin.get(key);
    if (object === null) return `${name} is missing`;
    return object.md5 === md5 ? null : `${name} has other bytes (MD5 ${object.md5})`;
  });
  return found.filter((line): line is string => line !== null);
}

/**
 * Proves that the store and the origin are one deployment (docs/decisions.md#live-build): a store that records an
 * origin must record this one; one that records none takes this origin only while it holds no build and the
 * store no live build, or with `recover` (said as a warning); a publish's live build must be at the origin unless
 * `recover`. Throws {@link DeploymentError} naming both; nothing is written.
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
  let facts: [Pointer, string, string[], Awaited<ReturnType<typeof readManifest>> | true];
  try {
    const pointer = await readPointer(kvs);
    const { live } = pointer;
    facts = await Promise.all([
      pointer,
      bindingOf(origin.name, kvs.name),
      pointer.origin === null ? origin.listPrefixes(BUILDS_PREFIX).then(buildIdsOf) : [],
      options.live && live !== null
        ? BUILD_ID_PATTERN.test(live)
          ? readManifest(origin, live)
          : null
        : true,
    ]);
  } catch (error) {
    if (error instanceof CatalogError) throw error;
    throw storeFailure(`reading ${kvs.name} and ${origin.name} failed`, { cause: error });
  }
  const [pointer, bound, builds, manifest] = facts;
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

/** Proves the deployment (see {@link proveDeployment}); a publish also needs its live build at the origin. */
export const prove = (what: 'publish' | 'other') =>
  step('prove', async (state) => {
    const proven = await proveDeployment(state.target, {
      recover: state.options.recover ?? false,
      live: what === 'publish',
    });
    state.binding = proven.binding;
    state.pointer = proven.pointer;
    if (proven.manifest) state.proven = { id: proven.manifest.buildId, manifest: proven.manifest };
    if (proven.note) state.warnings.push(proven.note);
    return undefined;
  });

/** Takes the run lock (publish/lock.ts); held by another run: `busy`, or for a rollback a failure naming it. */
export const lock = (what: 'publish' | 'rollback') =>
  step('lock', async (state) => {
    const { origin } = state.target;
    let attempt: Awaited<ReturnType<typeof acquireRunLock>>;
    try {
      attempt = await acquireRunLock(origin, state.options.runBy ?? `catalog ${what}`);
    } catch (error) {
      throw storeFailure(`taking the run lock at ${origin.name} failed`, { cause: error });
    }
    if ('busy' in attempt) {
      const holder = describeHolder(attempt.busy);
      if (what === 'rollback')
        throw new RunLockBusyError(
          `another run holds the run lock at ${origin.name}: ${holder}; nothing was changed (roll back once it ends; a run that died leaves its lock to expire within ${RUN_LOCK_TTL_MS / 60_000} minutes)`,
        );
      return {
        result: 'busy',
        reason: `busy: another run holds the run lock at ${origin.name}: ${holder}; this run did nothing`,
        holder: attempt.busy,
      };
    }
    state.lock = attempt.held;
    if (attempt.held.tookOver)
      state.warnings.push(
        `took over the run lock of ${describeHolder(attempt.held.tookOver)}, which had expired`,
      );
    return undefined;
  });

/** Releases the run lock, saying so when another run took it over meanwhile (this one stalled past its expiry). */
export const unlock = step('unlock', async (state) => {
  if (state.lock?.lost())
    state.warnings.push(
      `the run lock at ${state.target.origin.name} was taken over by another run while this one ran (it stalled past the lock's expiry)`,
    );
  await state.lock?.release();
  return undefined;
});

/** Makes the candidate build's first, cheap step (builder/build.ts `prepareBuild`). */
export const prepare = step('prepare', async (state) => {
  state.candidate = await state.need('prepare')();
  return undefined;
});

/** Removes a rollback's pin when asked to, recording it; the pinned build stays live. */
export const unpin = step('unpin', async (state) => {
  if (!state.options.unpin) return undefined;
  const removed = await unpinPointer(state.target.kvs, state.need('binding'));
  state.pin = removed;
  if (removed) {
    state.pointer = { ...state.need('pointer'), pin: null };
    const reason = `pinned since ${removed.at} by ${removed.by} (${removed.reason})`;
    await record(state, { kind: 'unpin', from: removed.build, to: removed.build, reason });
  }
  return undefined;
});

/**
 * Reads the pointer again under the lock, and the live build; puts right each live page that is not the live
 * build's (a run cut between its pages and its move, or a hand-edited origin); then, held by a pin, the run is
 * `skipped-pinned`.
 */
export const read = step('read', async (state) => {
  const { origin, kvs } = state.target;
  try {
    state.pointer = await readPointer(kvs);
  } catch (error) {
    throw storeFailure(`reading the live build from ${kvs.name} failed`, { cause: error });
  }
  const { pin, live } = state.pointer;
  try {
    ({
      live: state.live,
      stored: state.stored,
      held: state.held,
    } = await readLive(origin, live, state.proven ? { known: state.proven } : {}));
  } catch (error) {
    throw storeFailure(`reading live build ${live ?? ''} from ${origin.name} failed`, { cause: error });
  }
  const now = state.live;
  if (now.kind === 'build' && now.pageDamage.length > 0) {
    // A page whose bytes are neither live nor stored is in `damage`: a fresh build writes it (`decide`).
    const written = await writeLivePages(state, now.manifest.pages, state.held);
    const put = [...written].filter(([id, digest]) => state.held?.get(id) !== digest).length;
    state.held = await removeLivePages(state, now.manifest.pages, written);
    const removed = written.size - state.held.size;
    state.warnings.push(`put ${put + removed} live page(s) back to build ${now.id}'s`);
  }
  if (pin) return { result: 'skipped-pinned', reason: new PinnedError(pin).message, pin };
  return undefined;
});

/** The guards (core.ts `decide`): refused, the run fails; identical to a whole live build, `skipped-identical`. */
export const guard = step('decide', async (state) => {
  const candidate = state.need('candidate');
  const live = state.need('live');
  const decision = decide(
    { plans: totalPlans(candidate.counts), plansHash: candidate.plansHash, inputsHash: candidate.inputsHash },
    live,
    state.options,
  );
  if (decision.action === 'refuse') throw new PublishRefusedError(decision.guard, decision.reason);
  if (decision.action === 'publish') {
    if (decision.note) state.warnings.push(decision.note);
    if (live.kind === 'unreadable')
      state.warnings.push(
        `recovered: build:live named ${shownValue(live.id)} (${live.reason}); a fresh build replaces it`,
      );
    return undefined;
  }
  return { result: 'skipped-identical', reason: decision.reason };
});

/** The costly part of the build: the catalogs, their variants (on every core) and the pages. */
export const complete = step('complete', async (state) => {
  state.progress({ stage: 'compressing and rendering pages' });
  state.built = await completeBuild(state.need('candidate'));
  return undefined;
});

/**
 * Writes the build's own objects under `builds/<id>/`, each never over another, then, its commit point, its
 * manifest (its pages go live in `go live`). Throws {@link UploadError}.
 */
export const upload = step('upload', async (state) => {
  const { origin } = state.target;
  const built = state.need('built');
  const from = state.pointer?.live ?? '(none)';
  const own = built.objects.filter(
    (object) => object.key !== MANIFEST && !object.key.startsWith(PAGE_OBJECT_PREFIX),
  );
  let written = 0;
  const total = own.length + 1;
  const fail = (key: string, error: unknown) =>
    new UploadError(
      `uploading build ${built.buildId} to ${origin.name} failed at ${key} (${describeCause(error)}): ${written} of ${total} objects written; the live build is still ${from}, and ${built.buildId} is left unreferenced (pruned later); run publish again`,
      { cause: error },
    );
  state.progress({ stage: 'uploading', done: 0, total });
  // The first failure starts no further write, and is thrown once the writes under way have settled.
  let failed: UploadError | undefined;
  await pLimit(WRITE_CONCURRENCY).map(own, async (object) => {
    const key = buildKey(built.buildId, object.key);
    if (failed) return;
    try {
      await origin.put(objectToWrite(object, key), { overwrite: false });
      written += 1;
      state.progress({ stage: 'uploading', done: written, total });
    } catch (error) {
      failed ??= fail(key, error);
    }
  });
  if (failed) throw failed;
  const manifest = built.objects.find((object) => object.key === MANIFEST);
  const key = buildKey(built.buildId, MANIFEST);
  try {
    if (manifest) await origin.put(objectToWrite(manifest, key), { overwrite: false });
  } catch (error) {
    throw fail(key, error);
  }
  return undefined;
});

/** Lists the build's folder and compares it with its manifest; then writes the error pages whose bytes changed. */
export const verify = step('verify', async (state) => {
  const { origin } = state.target;
  const built = state.need('built');
  state.progress({ stage: 'verifying' });
  let damage: string[];
  try {
    const manifest = parseManifest(Buffer.from(`${JSON.stringify(built.manifest)}`), built.buildId);
    if ('problem' in manifest) throw new Error(manifest.problem);
    damage = objectDamage(
      { ...manifest, pages: {} },
      await origin.list(buildKey(built.buildId, '')),
      'all live',
    );
    if (damage.length === 0)
      for (const object of built.root) {
        const current = await origin.get(object.key);
        if (current?.md5 !== object.md5)
          await origin.put(objectToWrite(object, object.key), { overwrite: true });
      }
  } catch (error) {
    throw storeFailure(`verifying build ${built.buildId} at ${origin.name} failed`, { cause: error });
  }
  if (damage.length > 0)
    throw new UploadError(
      `build ${built.buildId} at ${origin.name} does not match its manifest (${damage.slice(0, 3).join('; ')}); the live build is still ${state.pointer?.live ?? '(none)'}; run publish again`,
    );
  return undefined;
});

/** The digests of the stored pages, listed once a run (the pages it stores are added). */
async function storedOf(state: RunState): Promise<Set<string>> {
  state.stored ??= storedPagesOf(await state.target.origin.list(PAGES_PREFIX));
  return state.stored;
}

/**
 * Makes the live pages hold `wanted` (plan id → digest) where `held` says they do not (every one with `bytes` and
 * `--force`): a copy of the stored page, or a write of its bytes (`bytes`, by digest) where it is not stored. A page
 * neither stored nor in `bytes` is left (it is the live build's damage, which a fresh build writes). Before a live
 * page is overwritten its bytes are stored ({@link keepLivePage}). Returns what the live pages then hold.
 */
async function writeLivePages(
  state: RunState,
  wanted: Readonly<Record<string, string>>,
  held: ReadonlyMap<string, string | null>,
  bytes?: ReadonlyMap<string, BuildObject>,
): Promise<Map<string, string | null>> {
  const { origin } = state.target;
  const stored = await storedOf(state);
  const rewrite = bytes !== undefined && state.options.force;
  const place = Object.entries(wanted).filter(
    ([id, digest]) => (rewrite || held.get(id) !== digest) && (stored.has(digest) || bytes?.has(digest)),
  );
  const after = new Map(held);
  let done = 0;
  const limit = pLimit(WRITE_CONCURRENCY);
  // Every write settles before a failure is thrown: the caller then puts the live pages back.
  const writes = await Promise.allSettled(
    place.map(([id, digest]) =>
      limit(async () => {
        await keepLivePage(state, id, held.get(id), digest);
        const page = bytes?.get(digest);
        if (page && (rewrite || !stored.has(digest)))
          await origin.put(objectToWrite(page, planPageKey(id)), { overwrite: true });
        else await origin.copy(pageContentKey(digest), planPageKey(id), { overwrite: true });
        after.set(id, digest);
        done += 1;
        state.progress({ stage: 'updating the live pages', done, total: place.length });
      }),
    ),
  );
  const failure = writes.find((write): write is PromiseRejectedResult => write.status === 'rejected');
  if (failure) throw failure.reason;
  return after;
}

/**
 * Stores the bytes a live page holds (`digest`, as this run read it) under their digest before they are
 * overwritten (by `next`) or deleted, so that a build that names them (the live one, a rollback's target) keeps
 * them. The copy is made only while the live page still holds them: a live page that changed since this run read
 * it fails the run, and is never overwritten unseen.
 */
async function keepLivePage(
  state: RunState,
  id: string,
  digest: string | null | undefined,
  next?: string,
): Promise<void> {
  if (digest === null || digest === undefined || digest === next) return;
  await state.target.origin.copy(planPageKey(id), pageContentKey(digest), {
    overwrite: true,
    sourceMd5: digest,
  });
  state.need('stored').add(digest);
}

/**
 * Deletes the live pages of the plans `wanted` lacks, their bytes stored first ({@link keepLivePage}); returns
 * what the live pages then hold.
 */
async function removeLivePages(
  state: RunState,
  wanted: Readonly<Record<string, string>>,
  held: ReadonlyMap<string, string | null>,
): Promise<Map<string, string | null>> {
  const { origin } = state.target;
  await storedOf(state);
  const remove = [...held].filter(([id]) => !Object.hasOwn(wanted, id));
  await pLimit(WRITE_CONCURRENCY).map(remove, ([id, digest]) => keepLivePage(state, id, digest));
  await origin.delete(remove.map(([id]) => planPageKey(id)));
  return new Map([...held].filter(([id]) => Object.hasOwn(wanted, id)));
}

/** Puts the live pages back to those of the build live now. Best effort: else the next run does. */
async function restoreLivePages(state: RunState): Promise<void> {
  try {
    const { live } = await readPointer(state.target.kvs);
    const { live: now, held } = await readLive(state.target.origin, live);
    if (now.kind !== 'build') return;
    await removeLivePages(state, now.manifest.pages, await writeLivePages(state, now.manifest.pages, held));
  } catch {}
}

/**
 * Makes a build live: its pages that differ (copies of the stored pages, or writes of `bytes`), then `move` (the
 * pointer's conditional write), then the deletion of the live pages it lacks (a failure there is a warning). When
 * the pages or the move fail, the live pages are put back to the live build's.
 */
async function goLive(
  state: RunState,
  build: { readonly id: string; readonly manifest: Pick<StoredManifest, 'pages'> },
  held: ReadonlyMap<string, string | null>,
  move: () => Promise<{ before: Pointer; after: Pointer }>,
  bytes?: ReadonlyMap<string, BuildObject>,
): Promise<void> {
  const { origin } = state.target;
  let now: ReadonlyMap<string, string | null>;
  try {
    now = await writeLivePages(state, build.manifest.pages, held, bytes);
    state.progress({ stage: 'moving the live pointer' });
    state.moved = { ...(await move()), at: performance.now() };
  } catch (error) {
    await restoreLivePages(state);
    if (error instanceof CatalogError) throw error;
    throw storeFailure(`making the pages of build ${build.id} live at ${origin.name} failed`, {
      cause: error,
    });
  }
  try {
    await removeLivePages(state, build.manifest.pages, now);
  } catch (error) {
    state.warnings.push(
      `deleting the live pages build ${build.id} lacks at ${origin.name} failed (${describeCause(error)}); they answer until the next run`,
    );
  }
}

/** Makes the new build live, from the build live when the run read it; a pin set meanwhile: `skipped-pinned`. */
export const publishLive = step('go live', async (state) => {
  const built = state.need('built');
  const live = state.need('live');
  const from = state.need('pointer').live;
  try {
    const pages = built.objects.filter((object) => object.key.startsWith(PAGE_OBJECT_PREFIX));
    await goLive(
      state,
      { id: built.buildId, manifest: built.manifest },
      state.need('held'),
      async () => {
        const before = await readPointer(state.target.kvs);
        return {
          before,
          after: await movePointer(state.target.kvs, from, built.buildId, state.need('binding')),
        };
      },
      new Map(pages.map((page) => [page.md5, page])),
    );
  } catch (error) {
    if (error instanceof PinnedError)
      return { result: 'skipped-pinned', reason: error.message, pin: error.pin };
    throw error;
  }
  await record(state, {
    kind: 'publish',
    from,
    to: built.buildId,
    ...(live.kind === 'unreadable'
      ? { reason: `recovered: build:live named ${shownValue(live.id)} (${live.reason})` }
      : {}),
  });
  return undefined;
});

/** Records a move in the history at the origin; a failure is a warning (the pointer did move). */
async function record(state: RunState, move: Omit<PointerMove, 'at' | 'by'>): Promise<void> {
  const { origin } = state.target;
  try {
    await recordMove(origin, { at: state.now.toISOString(), by: state.options.actor ?? 'unknown', ...move });
  } catch (error) {
    state.warnings.push(
      `recording the ${move.kind} of ${move.to ?? '(none)'} in ${STATE_HISTORY_PREFIX} at ${origin.name} failed (${describeCause(error)}); the pointer did move, and catalog history will not show it`,
    );
  }
}

/**
 * Chooses the build a rollback makes live (core.ts `rollbackTarget`), reading the pointer again under the lock,
 * and checks that it is whole: its objects and its pages' bytes.
 */
export const choose = step('choose', async (state) => {
  const { origin, kvs } = state.target;
  state.progress({ stage: 'reading the builds' });
  let ids: string[];
  try {
    [state.pointer, ids] = await Promise.all([
      readPointer(kvs),
      origin.listPrefixes(BUILDS_PREFIX).then(buildIdsOf),
    ]);
  } catch (error) {
    throw storeFailure(`reading the builds of ${origin.name} failed`, { cause: error });
  }
  const pointer = state.pointer;
  const wanted = state.options.to !== undefined ? [state.options.to] : pointer.previous;
  const manifests = new Map<string, StoredManifest>();
  for (const id of wanted.filter((id) => ids.includes(id))) {
    const manifest = await readManifest(origin, id);
    if (isManifest(manifest)) {
      manifests.set(id, manifest);
      break;
    }
  }
  const chosen = rollbackTarget(new Set(manifests.keys()), ids, pointer, state.options.to);
  if ('error' in chosen) throw new HistoryError(`${origin.name}: ${chosen.error}`);
  const manifest = manifests.get(chosen.id) as StoredManifest;
  state.progress({ stage: `checking build ${chosen.id}` });
  const [own, pages, plans] = await Promise.all([
    origin.list(buildKey(chosen.id, '')),
    origin.list(PAGES_PREFIX),
    origin.list(PAGE_OBJECT_PREFIX),
  ]);
  const held = livePagesOf(plans);
  const stored = storedPagesOf(pages);
  const damage = objectDamage(manifest, own, stored, held);
  if (damage.length > 0)
    throw new HistoryError(
      `build ${chosen.id} is damaged (${damage.slice(0, 3).join('; ')}); the live build is unchanged`,
    );
  state.chosen = { id: chosen.id, manifest };
  state.live = { kind: 'none' };
  state.stored = stored;
  state.held = held;
  return undefined;
});

/** Makes the chosen build live and pins it there, in one conditional write from the build read under the lock. */
export const pinLive = step('go live', async (state) => {
  const { id, manifest } = state.need('chosen');
  const pointer = state.need('pointer');
  const from = pointer.live === null ? '(none)' : shownValue(pointer.live);
  const pin: Pin = {
    build: id,
    at: state.now.toISOString(),
    by: 'rollback',
    reason: `rolled back from ${from}`,
  };
  await goLive(state, { id, manifest }, state.need('held'), () =>
    pinPointer(state.target.kvs, pin, pointer.live, state.need('binding')),
  );
  state.pin = pin;
  await record(state, { kind: 'rollback', from: pointer.live, to: id, reason: pin.reason });
  return undefined;
});

/**
 * Prunes after a publish that moved the pointer, still holding it: deletes the builds beyond `keep` but the live,
 * pinned and previous ones, then the stored pages no kept build names (mark and sweep). A failure is a warning.
 */
export const prune = step('prune', async (state) => {
  const { origin, kvs } = state.target;
  if (!state.moved || state.options.keep === undefined) return undefined;
  try {
    const pointer = await readPointer(kvs);
    if (pointer.live !== state.moved.after.live) return undefined;
    const ids = buildIdsOf(await origin.listPrefixes(BUILDS_PREFIX));
    const protect = {
      live: pointer.live,
      pinned: pointer.pin?.build ?? null,
      previous: pointer.previous[0] ?? null,
    };
    const doomed = buildsToPrune(ids, state.options.keep, protect);
    if (doomed.length === 0) return undefined;
    state.progress({ stage: 'pruning old builds' });
    const kept = await pLimit(4).map(
      ids.filter((id) => !doomed.includes(id)),
      async (id) => readManifest(origin, id),
    );
    for (const id of doomed) await origin.deletePrefix(buildKey(id, ''));
    await origin.delete(unreferencedPages(await origin.list(PAGES_PREFIX), kept.filter(isManifest)));
    state.pruned = doomed;
  } catch (error) {
    state.warnings.push(`pruning old builds of ${origin.name} failed: ${describeCause(error)}`);
  }
  return undefined;
});
