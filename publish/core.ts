/**
 * The pure part of publishing (publish/README.md): what a manifest is, what is wrong with a build and its live
 * pages, the guards, what a prune deletes, what a rollback makes live. The steps read, ask these, and act.
 */
import { z } from 'zod';
import { settingRef } from '../contract/errors.ts';
import {
  BUILD_ID_PATTERN,
  BUILDS_PREFIX,
  DISCIPLINES,
  MANIFEST,
  PAGE_OBJECT_PREFIX,
  PAGE_OBJECT_SUFFIX,
  PAGES_PREFIX,
  PLAN_ID_PATTERN,
  pageContentKey,
  planPageKey,
} from '../contract/index.ts';
import type { GuardName } from './errors.ts';
import { parseStoredJson, type StoredObject } from './origin.ts';
import { shownValue } from './pointer.ts';

/** The key at the origin of a build's object. */
export function buildKey(buildId: string, key: string): string {
  return `${BUILDS_PREFIX}${buildId}/${key}`;
}

/** A page's digest, its name: the MD5 of its bytes (hex), which every origin lists for each object. */
const DIGEST = /^[0-9a-f]{32}$/;

const Entry = z.object({
  size: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  md5: z.string().regex(/^[0-9a-f]{32}$/),
});
const Count = z.number().int().min(0);

/** `manifest.json` as a publish reads it back: what it checks a build and its pages against. */
export const StoredManifest = z.object({
  buildId: z.string().regex(BUILD_ID_PATTERN),
  generatedAt: z.iso.datetime(),
  counts: z.record(z.enum(DISCIPLINES), Count),
  plans: Count,
  plansHash: z.string(),
  inputsHash: z.string(),
  /** The build's own objects, by key within it. */
  objects: z.record(z.string(), Entry),
  /** Plan id → the digest of its page: its bytes are live at `plans/<id>.html`, or kept at `pages/<digest>.html`. */
  pages: z.record(z.string().regex(PLAN_ID_PATTERN), z.string().regex(DIGEST)),
  /** The objects written at the origin's root with the build (the error pages). */
  root: z.record(z.string(), Entry),
});
export type StoredManifest = z.output<typeof StoredManifest>;

/** A manifest's bytes read back: the manifest, or why it is not one of this build (an unknown layout too). */
export function parseManifest(body: Uint8Array, buildId: string): StoredManifest | { problem: string } {
  const read = parseStoredJson(body, buildKey(buildId, MANIFEST), StoredManifest, {
    what: 'a manifest this tool reads',
    noun: 'manifest',
  });
  if ('problem' in read) return read;
  const manifest = read.value;
  if (manifest.buildId !== buildId)
    return { problem: `${buildKey(buildId, MANIFEST)} is the manifest of ${shownValue(manifest.buildId)}` };
  return manifest;
}

/** The plan id of a live page's key (`plans/<id>.html`), or null for another key. */
export function planOf(key: string): string | null {
  if (!key.startsWith(PAGE_OBJECT_PREFIX) || !key.endsWith(PAGE_OBJECT_SUFFIX)) return null;
  const id = key.slice(PAGE_OBJECT_PREFIX.length, -PAGE_OBJECT_SUFFIX.length);
  return PLAN_ID_PATTERN.test(id) ? id : null;
}

/** The digest a page's key names (`pages/<digest>.html`), or null for another key. */
export function digestOf(key: string): string | null {
  if (!key.startsWith(PAGES_PREFIX) || !key.endsWith(PAGE_OBJECT_SUFFIX)) return null;
  const digest = key.slice(PAGES_PREFIX.length, -PAGE_OBJECT_SUFFIX.length);
  return DIGEST.test(digest) ? digest : null;
}

/** What each live page holds, by plan id: the digest of its bytes (its listed MD5), or null when it is no digest. */
export function livePagesOf(live: readonly StoredObject[]): Map<string, string | null> {
  const held = new Map<string, string | null>();
  for (const object of live) {
    const id = planOf(object.key);
    if (id !== null) held.set(id, DIGEST.test(object.md5) ? object.md5 : null);
  }
  return held;
}

/** The digests of the kept pages (`pages`, their listing): each page whose listed MD5 is its name. */
export function keptPagesOf(pages: readonly StoredObject[]): Set<string> {
  const kept = new Set<string>();
  for (const page of pages) if (digestOf(page.key) === page.md5) kept.add(page.md5);
  return kept;
}

/**
 * What is wrong with the objects of a build against its manifest: each of its own objects missing or listed with
 * another size or MD5, each of its pages whose bytes are neither kept (`kept`, the digests of the kept pages;
 * `'all live'` where the caller knows each page is live) nor live (`held`, what each live page holds).
 */
export function objectDamage(
  manifest: StoredManifest,
  own: readonly StoredObject[],
  kept: ReadonlySet<string> | 'all live',
  held: ReadonlyMap<string, string | null> = new Map(),
): string[] {
  const damage: string[] = [];
  const prefix = buildKey(manifest.buildId, '');
  const listed = new Map(own.map((object) => [object.key.slice(prefix.length), object]));
  for (const [key, entry] of Object.entries(manifest.objects)) {
    const object = listed.get(key);
    if (!object) damage.push(`${key} is missing`);
    else if (object.size !== entry.size) damage.push(`${key} has ${object.size} bytes, not ${entry.size}`);
    else if (object.md5 !== entry.md5) damage.push(`${key} has other bytes (MD5 ${object.md5})`);
  }
  if (kept === 'all live') return damage;
  for (const [id, digest] of Object.entries(manifest.pages))
    if (!kept.has(digest) && held.get(id) !== digest)
      damage.push(`the page of ${id} (${digest}) is neither live nor at ${pageContentKey(digest)}`);
  return damage;
}

/** What is wrong with the live pages against a build's: each one missing, another page, or of no plan of it. */
export function liveDamage(manifest: StoredManifest, held: ReadonlyMap<string, string | null>): string[] {
  const wrong = Object.entries(manifest.pages).filter(([id, digest]) => held.get(id) !== digest);
  return [
    ...wrong.map(([id]) => `${planPageKey(id)} ${held.has(id) ? 'is not the build’s page' : 'is missing'}`),
    ...[...held.keys()]
      .filter((id) => !Object.hasOwn(manifest.pages, id))
      .map((id) => `${planPageKey(id)} is not a page of the build`),
  ];
}

/**
 * The live catalog as the guards see it: a build, with what is wrong with its objects (`damage`: a publish
 * replaces it) and its live pages (`pageDamage`: any run puts them right); a pointer naming nothing the edge can
 * serve (`unreadable`); or nothing live.
 */
export type LiveCatalog =
  | {
      readonly kind: 'build';
      readonly id: string;
      readonly manifest: StoredManifest;
      readonly damage: readonly string[];
      readonly pageDamage: readonly string[];
    }
  | { readonly kind: 'unreadable'; readonly id: string; readonly reason: string }
  | { readonly kind: 'none' };

/** The new build as the guards see it, before its variants and pages are made (`inputsHash`: builder/build.ts). */
export interface Candidate {
  readonly plans: number;
  readonly plansHash: string;
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

/**
 * The guards, in order: an empty catalog is refused unless `allowEmpty`; one with fewer than `minRatio` × the
 * live plans unless `force`; one of the same inputs as a whole live build is skipped unless `force`, decided
 * before anything costly is built. A live build that is not whole is replaced, even by an identical one.
 */
export function decide(candidate: Candidate, live: LiveCatalog, options: GuardOptions): Decision {
  const plans = live.kind === 'build' ? live.manifest.plans : null;
  const name = live.kind === 'none' ? 'the live catalog' : `live build ${shownValue(live.id)}`;
  if (candidate.plans === 0 && !options.allowEmpty) {
    const now = plans === null ? '' : ` (${name} has ${plans})`;
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
      reason: `refused: the new catalog has ${candidate.plans} plans, fewer than ${options.minRatio} × the ${plans} plans of ${name} (${threshold}); ${settingRef('force')} publishes it anyway`,
    };
  }
  if (live.kind !== 'build' || options.force) return { action: 'publish' };
  const identical =
    live.manifest.plansHash === candidate.plansHash && live.manifest.inputsHash === candidate.inputsHash;
  if (!identical) return { action: 'publish' };
  if (live.damage.length > 0)
    return {
      action: 'publish',
      note: `live build ${live.id} is damaged (${live.damage.slice(0, 3).join('; ')}${live.damage.length > 3 ? '; …' : ''}): a fresh build replaces it`,
    };
  return {
    action: 'skip',
    reason: `identical to ${name} (plans ${candidate.plansHash.slice(0, 12)}…, inputs ${candidate.inputsHash.slice(0, 12)}…); ${settingRef('force')} publishes it anyway`,
  };
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
 * The builds to delete so that only the newest `keep` remain — never the live build, the pinned build, or the
 * build a plain rollback would make live (`previous`, which may be older than the newest `keep`).
 */
export function buildsToPrune(
  ids: readonly string[],
  keep: number,
  protect: Readonly<Record<'live' | 'pinned' | 'previous', string | null>>,
): string[] {
  const kept = new Set([protect.live, protect.pinned, protect.previous]);
  return [...ids]
    .sort()
    .reverse()
    .slice(keep)
    .filter((id) => !kept.has(id));
}

/** The kept pages (keys under `pages/`) that no kept build names: what a prune sweeps. */
export function unreferencedPages(
  pages: readonly StoredObject[],
  builds: readonly Pick<StoredManifest, 'pages'>[],
): string[] {
  const marked = new Set(builds.flatMap((manifest) => Object.values(manifest.pages)));
  return pages.map((page) => page.key).filter((key) => !marked.has(digestOf(key) ?? ''));
}

/**
 * The build a rollback makes live: `to` when given (a `complete` one, its manifest there); else the first complete
 * build of the rollback line, never a build that was only uploaded (a publish that lost a race). Else `error`.
 */
export function rollbackTarget(
  complete: ReadonlySet<string>,
  all: readonly string[],
  pointer: { readonly live: string | null; readonly previous: readonly string[] },
  to: string | undefined,
): { readonly id: string } | { readonly error: string } {
  if (to !== undefined) {
    if (complete.has(to)) return { id: to };
    if (all.includes(to))
      return { error: `${settingRef('to')} ${JSON.stringify(to)}: the build is incomplete (no ${MANIFEST})` };
    const known = [...all].sort().reverse();
    return {
      error: `${settingRef('to')} ${JSON.stringify(to)}: no such build${known.length > 0 ? ` (builds: ${known.slice(0, 5).join(', ')}${known.length > 5 ? ', …' : ''})` : '; there are no builds'}`,
    };
  }
  const previous = pointer.previous.find((id) => complete.has(id));
  if (previous !== undefined) return { id: previous };
  const live = pointer.live === null ? 'no build' : `live build ${shownValue(pointer.live)}`;
  const choose = `roll back ${settingRef('to')} a build (catalog builds marks the builds that were live)`;
  if (pointer.previous.length === 0)
    return { error: `no build is recorded as live before ${live}; ${choose}` };
  return {
    error: `none of the builds live before ${live} is complete at the origin any more (${pointer.previous.join(', ')}); ${choose}`,
  };
}
