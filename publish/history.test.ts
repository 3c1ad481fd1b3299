import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useScratchDir } from '../testing/scratch.ts';
import { DirectoryOrigin } from './dir-origin.ts';
import { everLive, listMoves, moveKey, parseMoveKey, readHistory, recordMove } from './history.ts';

const A = '20260301T100000Z-0000000a';
const B = '20260302T100000Z-0000000b';

describe("the live pointer's history", () => {
  const scratch = useScratchDir({ prefix: 'catalog-history-' });

  it('names each move by its time, kind and build, so a listing alone reads it', () => {
    const key = moveKey({ at: '2026-03-02T10:00:00.123Z', kind: 'rollback', to: A });
    expect(key).toMatch(
      /^state\/history\/20260302T100000123Z-rollback-20260301T100000Z-0000000a-[0-9a-f]{4}\.json$/,
    );
    expect(parseMoveKey(key)).toEqual({ key, time: '20260302T100000123Z', kind: 'rollback', to: A });
    expect(moveKey({ at: '2026-03-02T10:00:00.123Z', kind: 'publish', to: '../..' })).toMatch(
      /-publish-none-[0-9a-f]{4}\.json$/,
    );
    expect(parseMoveKey('state/history/notes.txt')).toBeNull();
  });

  it('lists the moves newest first, and the builds ever made live (an unpin makes none)', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await recordMove(origin, {
      at: '2026-03-01T10:00:00.000Z',
      kind: 'publish',
      from: null,
      to: A,
      by: 'a@h',
    });
    await recordMove(origin, { at: '2026-03-02T10:00:00.000Z', kind: 'publish', from: A, to: B, by: 'a@h' });
    await recordMove(origin, {
      at: '2026-03-03T10:00:00.000Z',
      kind: 'rollback',
      from: B,
      to: A,
      by: 'b@h',
      reason: `rolled back from ${B}`,
    });
    await recordMove(origin, { at: '2026-03-04T10:00:00.000Z', kind: 'unpin', from: A, to: A, by: 'b@h' });
    const moves = await listMoves(origin);
    expect(moves.map((move) => move.kind)).toEqual(['unpin', 'rollback', 'publish', 'publish']);
    expect([...everLive(moves)].sort()).toEqual([A, B]);
    expect(await readHistory(origin, 2)).toEqual([
      { at: '2026-03-04T10:00:00.000Z', kind: 'unpin', from: A, to: A, by: 'b@h' },
      {
        at: '2026-03-03T10:00:00.000Z',
        kind: 'rollback',
        from: B,
        to: A,
        by: 'b@h',
        reason: `rolled back from ${B}`,
      },
    ]);
  });

  it('shows a move whose object cannot be read from its key alone, saying so', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await recordMove(origin, {
      at: '2026-03-01T10:00:00.000Z',
      kind: 'publish',
      from: null,
      to: A,
      by: 'a@h',
    });
    const [move] = await listMoves(origin);
    await writeFile(join(scratch.dir, move?.key ?? ''), 'not json');
    expect(await readHistory(origin, 5)).toEqual([
      {
        at: '2026-03-01T10:00:00.000Z',
        kind: 'publish',
        from: null,
        to: A,
        by: `(unreadable: ${move?.key})`,
      },
    ]);
  });
});
