/**
 * The live build: one entry of the key-value store (`build:live`) that the viewer-request function reads on
 * every request, and the pin a rollback sets (`build:pin`). Moving the pointer is one conditional write
 * through the store's atomic update (CloudFront KeyValueStore: one UpdateKeys with IfMatch, re-read and
 * re-decided on a conflict; the local file: under its lock), and it moves only from the build it started from.
 */
import { z } from 'zod';
import { CatalogError } from '../contract/errors.ts';
import { BUILD_ID_PATTERN, KVS_LIVE_BUILD, KVS_PIN } from '../contract/index.ts';
import type { KeyValueStore } from '../keys/store.ts';

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
  /** The live build, or null: no build is live (the gateway serves the origin's flat root). */
  readonly live: string | null;
  readonly pin: Pin | null;
}

/** The pointer moved after the publish read it: another publish or a rollback won. Nothing was moved. */
export class PointerMovedError extends CatalogError {
  override name = 'PointerMovedError';
  readonly winner: string | null;
  constructor(store: string, expected: string | null, winner: string | null) {
    super(
      `${store}: the live build moved from ${expected === null ? '(none)' : shownValue(expected)} to ${winner === null ? '(none)' : shownValue(winner)} while this publish ran; ${winner === null ? 'that build' : shownValue(winner)} stays live and this build was not published`,
    );
    this.winner = winner;
  }
}

/**
 * The pointer is pinned: publishing moves nothing until `catalog unpin`. The message says how to resume and
 * what that does, for whoever reads it (the command line, the run's record, `catalog status`).
 */
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

/**
 * A value of the store as a message shows it: a build id as it is; anything else JSON-quoted, so that a
 * newline or a control character cannot break the one-line message, and cut to {@link SHOWN_MAX} characters.
 */
export function shownValue(value: string): string {
  if (BUILD_ID_PATTERN.test(value)) return value;
  const json = JSON.stringify(value.length > SHOWN_MAX ? value.slice(0, SHOWN_MAX) : value);
  return json.length > SHOWN_MAX + 2 ? `${json.slice(0, SHOWN_MAX - 1)}..."` : json;
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
  return { live, pin };
}

/** Reads the pointer. */
export async function readPointer(store: KeyValueStore): Promise<Pointer> {
  return pointerOf(await store.read());
}

/**
 * Moves the live build from `from` to `to`, only if it is still `from` and not pinned; throws
 * {@link PointerMovedError} or {@link PinnedError} otherwise (and changes nothing).
 */
export async function movePointer(store: KeyValueStore, from: string | null, to: string): Promise<void> {
  await store.update((entries) => {
    const now = pointerOf(entries);
    if (now.pin) throw new PinnedError(now.pin);
    if (now.live !== from) throw new PointerMovedError(store.name, from, now.live);
    entries.set(KVS_LIVE_BUILD, to);
  });
}

/** Points at `build` and pins it there (a rollback), from whatever was live; returns the previous pointer. */
export async function pinPointer(store: KeyValueStore, pin: Pin): Promise<Pointer> {
  return store.update((entries) => {
    const before = pointerOf(entries);
    entries.set(KVS_LIVE_BUILD, pin.build);
    entries.set(KVS_PIN, JSON.stringify(pin));
    return before;
  });
}

/** Removes the pin; returns the pin removed, or null when there was none. */
export async function unpinPointer(store: KeyValueStore): Promise<Pin | null> {
  return store.update((entries) => {
    const before = pointerOf(entries).pin;
    entries.delete(KVS_PIN);
    return before;
  });
}
