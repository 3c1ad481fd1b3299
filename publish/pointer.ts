/**
 * The live build (`build:live`, which the viewer-request function reads), a rollback's pin (`build:pin`) and the
 * rollback line (`build:previous`, newest first). Each move is one conditional write from the build it started
 * from, the line changed in that same write: no crash leaves the pointer moved and the line behind.
 */
import { realpath } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { z } from 'zod';
import { CatalogError } from '../contract/errors.ts';
import {
  BUILD_ID_PATTERN,
  KVS_LIVE_BUILD,
  KVS_ORIGIN,
  KVS_PIN,
  KVS_PREVIOUS_BUILDS,
  PREVIOUS_BUILDS_KEPT,
} from '../contract/index.ts';
import type { KeyValueStore } from '../keys/store.ts';
import { bucketOf } from './origin.ts';

/** The pin a rollback sets: which build, since when, by what, and why. */
export const Pin = z.object({
  build: z.string().regex(BUILD_ID_PATTERN),
  at: z.iso.datetime(),
  by: z.string(),
  reason: z.string(),
});
export type Pin = z.output<typeof Pin>;

/** The pointer as the store holds it now. */
export interface Pointer {
  /** The live build, or null: no build is live (the catalog paths answer 500). */
  readonly live: string | null;
  readonly pin: Pin | null;
  /** The rollback line: the builds live before the live one, newest first. */
  readonly previous: readonly string[];
  /** The origin the store serves (`build:origin`), or null: recorded by no move yet. */
  readonly origin: string | null;
}

/** The store and the origin are not one deployment: a move could point the edge at nothing. */
export class DeploymentError extends CatalogError {
  override name = 'DeploymentError';
}

/**
 * How a store records the origin it serves (`build:origin`, docs/decisions.md#live-build): a bucket as
 * `s3://bucket`; a directory as its real path from the folder of the store file, so that a directory and its
 * store file can move or be copied together.
 */
export async function bindingOf(origin: string, store: string): Promise<string> {
  if (bucketOf(origin)) return origin.replace(/\/$/, '');
  const real = (path: string) => realpath(path).catch(() => resolve(path));
  const [folder, root] = await Promise.all([real(dirname(resolve(store))), real(origin)]);
  return relative(folder, root) || '.';
}

/** A binding as a message shows it: a directory's in full (relative to the store file's folder, resolved). */
function shownBinding(store: string, binding: string): string {
  return JSON.stringify(
    bucketOf(binding) ? binding : resolve(dirname(resolve(store)), binding.slice(0, 1024)),
  );
}

/** The refusal of a store that records another origin than the one given. */
export function mismatch(store: string, origin: string, bound: string, binding: string): DeploymentError {
  return new DeploymentError(
    `${store} and ${origin} are not one deployment: the store serves the origin ${shownBinding(store, bound)}, not ${shownBinding(store, binding)}; nothing was changed`,
  );
}

/** Records `binding` as the origin the store serves, in the write that moves the pointer; refuses another one. */
function bindOrigin(entries: Map<string, string>, store: string, where: Binding): void {
  const bound = entries.get(KVS_ORIGIN);
  if (bound !== undefined && bound !== where.binding)
    throw mismatch(store, where.origin, bound, where.binding);
  entries.set(KVS_ORIGIN, where.binding);
}

/** Where a move of the pointer goes: the origin's name (for messages) and how the store records it. */
export interface Binding {
  readonly origin: string;
  readonly binding: string;
}

/** The pointer moved after a publish or rollback read it: another one won. Nothing was moved. */
export class PointerMovedError extends CatalogError {
  override name = 'PointerMovedError';
  readonly winner: string | null;
  constructor(store: string, expected: string | null, winner: string | null, what: 'publish' | 'rollback') {
    const won = winner === null ? 'that build' : shownValue(winner);
    super(
      `${store}: the live build moved from ${expected === null ? '(none)' : shownValue(expected)} to ${winner === null ? '(none)' : shownValue(winner)} while this ${what} ran; ${won} stays live and ${what === 'publish' ? 'this build was not published' : 'nothing was rolled back (run it again to roll back from it)'}`,
    );
    this.winner = winner;
  }
}

/** The pointer is pinned: publishing moves nothing until `catalog unpin` (the message says so). */
export class PinnedError extends CatalogError {
  override name = 'PinnedError';
  readonly pin: Pin;
  constructor(pin: Pin) {
    const build = shownValue(pin.build);
    super(
      `pinned to ${build} since ${pin.at} by ${pin.by}; not published: ${build} stays live until catalog unpin removes the pin, and the next publish after that goes live`,
    );
    this.pin = pin;
  }
}

/** The longest part of a stored value a message quotes. */
const SHOWN_MAX = 80;

/** A value of the store as a one-line message shows it: a build id as it is, else JSON-quoted and cut. */
export function shownValue(value: string): string {
  if (BUILD_ID_PATTERN.test(value)) return value;
  const json = JSON.stringify(value.length > SHOWN_MAX ? value.slice(0, SHOWN_MAX) : value);
  return json.length > SHOWN_MAX + 2 ? `${json.slice(0, SHOWN_MAX - 1)}..."` : json;
}

/** The rollback line as stored: build ids only. */
function previousOf(raw: string | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(parsed)
      ? parsed.filter((id) => typeof id === 'string' && BUILD_ID_PATTERN.test(id))
      : [];
  } catch {
    return [];
  }
}

/** Writes the rollback line into `entries` (no entry for an empty line). */
function setPrevious(entries: Map<string, string>, line: readonly string[]): void {
  const kept = line.slice(0, PREVIOUS_BUILDS_KEPT);
  if (kept.length === 0) entries.delete(KVS_PREVIOUS_BUILDS);
  else entries.set(KVS_PREVIOUS_BUILDS, JSON.stringify(kept));
}

/** The rollback line after `from` stops being live: `from` first, and nowhere else. */
function lineAfterLeaving(from: string | null, line: readonly string[]): string[] {
  if (from === null || !BUILD_ID_PATTERN.test(from)) return [...line];
  return [from, ...line.filter((id) => id !== from)];
}

/** The pointer in a set of entries; a pin that cannot be read counts as a pin (to the live build). */
export function pointerOf(entries: ReadonlyMap<string, string>): Pointer {
  const live = entries.get(KVS_LIVE_BUILD) ?? null;
  const raw = entries.get(KVS_PIN);
  let pin: Pin | null = null;
  if (raw !== undefined) {
    try {
      pin = Pin.parse(JSON.parse(raw));
    } catch {
      pin = {
        build: live ?? '',
        at: new Date(0).toISOString(),
        by: 'unknown',
        reason: `unreadable pin ${shownValue(raw)}`,
      };
    }
  }
  return {
    live,
    pin,
    previous: previousOf(entries.get(KVS_PREVIOUS_BUILDS)),
    origin: entries.get(KVS_ORIGIN) ?? null,
  };
}

/** Reads the pointer. */
export async function readPointer(store: KeyValueStore): Promise<Pointer> {
  return pointerOf(await store.read());
}

/**
 * Moves the live build from `from` to `to` (a publish), only if it is still `from`, unpinned, and the store
 * serves `where` (recorded in the same write); throws and changes nothing otherwise.
 */
export async function movePointer(
  store: KeyValueStore,
  from: string | null,
  to: string,
  where: Binding,
): Promise<{ readonly before: Pointer; readonly after: Pointer }> {
  return store.update((entries) => {
    const before = pointerOf(entries);
    bindOrigin(entries, store.name, where);
    if (before.pin) throw new PinnedError(before.pin);
    if (before.live !== from) throw new PointerMovedError(store.name, from, before.live, 'publish');
    entries.set(KVS_LIVE_BUILD, to);
    setPrevious(entries, lineAfterLeaving(from, before.previous));
    return { before, after: pointerOf(entries) };
  });
}

/**
 * Points at `pin.build` and pins it there (a rollback), as {@link movePointer} does. The line becomes what was
 * below it, so a second rollback goes further back; a build not in it (`--to`) is put before the one that was live.
 */
export async function pinPointer(
  store: KeyValueStore,
  pin: Pin,
  from: string | null,
  where: Binding,
): Promise<{ readonly before: Pointer; readonly after: Pointer }> {
  return store.update((entries) => {
    const before = pointerOf(entries);
    bindOrigin(entries, store.name, where);
    if (before.live !== from) throw new PointerMovedError(store.name, from, before.live, 'rollback');
    const at = before.previous.indexOf(pin.build);
    const line =
      at >= 0
        ? before.previous.slice(at + 1)
        : lineAfterLeaving(before.live, before.previous).filter((id) => id !== pin.build);
    entries.set(KVS_LIVE_BUILD, pin.build);
    entries.set(KVS_PIN, JSON.stringify(pin));
    setPrevious(entries, line);
    return { before, after: pointerOf(entries) };
  });
}

/** Removes the pin (the store must serve the origin `where`); returns the pin removed, or null when there was none. */
export async function unpinPointer(store: KeyValueStore, where: Binding): Promise<Pin | null> {
  return store.update((entries) => {
    bindOrigin(entries, store.name, where);
    const before = pointerOf(entries).pin;
    entries.delete(KVS_PIN);
    return before;
  });
}
