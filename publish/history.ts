/**
 * The history of the live pointer, for people: one object per move under `state/history/`, written once just after
 * the move, whose key says when, what kind and to which build. Nothing that decides anything reads it.
 */
import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { z } from 'zod';
import { BUILD_ID_PATTERN, STATE_HISTORY_PREFIX, unanchored } from '../contract/index.ts';
import { storeFailure } from './errors.ts';
import { type OriginStore, stateObject } from './origin.ts';

/** What moved the pointer (or, for `unpin`, released it). */
export const MOVE_KINDS = ['publish', 'rollback', 'unpin'] as const;
export type MoveKind = (typeof MOVE_KINDS)[number];

/** One move of the live pointer, as its object at the origin holds it. */
export const PointerMove = z.object({
  at: z.iso.datetime(),
  kind: z.enum(MOVE_KINDS),
  /** The build live before (null: none). For an unpin, the pinned build, which stays live. */
  from: z.string().nullable(),
  to: z.string().nullable(),
  /** Who moved it: `user@host` for the command line, the function's name for the scheduled builder. */
  by: z.string(),
  /** Why, in a few words (`rolled back from X`, `unpinned X, pinned since T by rollback`). */
  reason: z.string().optional(),
});
export type PointerMove = z.output<typeof PointerMove>;

/** `2026-03-01T10:00:00.123Z` → `20260301T100000123Z`: sorts as the time does, and is a safe file name. */
const compact = (iso: string) => iso.replace(/[-:.]/g, '');

/** A move's key: `state/history/<time>-<kind>-<to>-<4 random hex>.json`, unique even for moves in one millisecond. */
export function moveKey(move: Pick<PointerMove, 'at' | 'kind' | 'to'>): string {
  const to = move.to !== null && BUILD_ID_PATTERN.test(move.to) ? move.to : 'none';
  return `${STATE_HISTORY_PREFIX}${compact(move.at)}-${move.kind}-${to}-${randomBytes(2).toString('hex')}.json`;
}

const KEY = new RegExp(
  `^${STATE_HISTORY_PREFIX}(\\d{8}T\\d{9}Z)-(${MOVE_KINDS.join('|')})-(none|${unanchored(BUILD_ID_PATTERN).source})-[0-9a-f]{4}\\.json$`,
);

/** What a move's key says: when (compact), what kind, to which build. Null for a key that is not a move. */
export function parseMoveKey(
  key: string,
): { key: string; time: string; kind: MoveKind; to: string | null } | null {
  const match = KEY.exec(key);
  if (!match) return null;
  const [, time = '', kind = '', to = ''] = match;
  return { key, time, kind: kind as MoveKind, to: to === 'none' ? null : to };
}

/** Writes a move's object (once: never overwritten). Throws when the origin refuses it. */
export async function recordMove(origin: OriginStore, move: PointerMove): Promise<void> {
  await origin.put(stateObject(moveKey(move), `${JSON.stringify(move)}\n`), { overwrite: false });
}

/** The moves at the origin from their keys alone, newest first (one listing, no object read). */
export async function listMoves(
  origin: OriginStore,
): Promise<NonNullable<ReturnType<typeof parseMoveKey>>[]> {
  const moves = (await origin.list(STATE_HISTORY_PREFIX))
    .map((object) => parseMoveKey(object.key))
    .filter((move): move is NonNullable<typeof move> => move !== null);
  return moves.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
}

/** The builds a recorded publish or rollback made live. */
export function everLive(
  moves: readonly { readonly kind: MoveKind; readonly to: string | null }[],
): Set<string> {
  return new Set(moves.flatMap(({ kind, to }) => (kind !== 'unpin' && to !== null ? [to] : [])));
}

/** Objects read at once when the history is shown. */
const READ_CONCURRENCY = 8;

/** The newest `limit` moves, newest first; one whose object cannot be read is given from its key alone. */
export async function readHistory(origin: OriginStore, limit: number): Promise<PointerMove[]> {
  const read = pLimit(READ_CONCURRENCY);
  try {
    const shown = (await listMoves(origin)).slice(0, limit);
    return await Promise.all(
      shown.map((move) =>
        read(async (): Promise<PointerMove> => {
          const object = await origin.get(move.key);
          try {
            return PointerMove.parse(JSON.parse(object?.body.toString('utf8') ?? ''));
          } catch {
            const t = move.time;
            const at = `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}.${t.slice(15, 18)}Z`;
            return { at, kind: move.kind, from: null, to: move.to, by: `(unreadable: ${move.key})` };
          }
        }),
      ),
    );
  } catch (error) {
    throw storeFailure(`reading the history of ${origin.name} failed`, { cause: error, readOnly: true });
  }
}
