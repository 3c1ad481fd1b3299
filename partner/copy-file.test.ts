import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useScratchDir } from '../testing/scratch.ts';
import { loadState, type StoredState, saveState } from './copy-file.ts';

const STATE: StoredState = {
  copy: {
    body: '{"generatedAt":"2026-11-21T08:00:00.000Z","plans":[]}',
    etag: '"e1"',
    fetchedAt: '2026-11-21T08:00:01.000Z',
    validatedAt: '2026-11-21T08:05:00.000Z',
  },
  changes: { history: randomUUID(), sequence: 0, sets: [] },
  notified: 0,
};

describe('the proxy state file', () => {
  const scratch = useScratchDir();

  it('reads back what it saved', async () => {
    const path = join(scratch.dir, 'state', 'catalog.json');
    await saveState(path, STATE);
    expect(await loadState(path)).toEqual(STATE);
    expect(await readdir(join(scratch.dir, 'state'))).toEqual(['catalog.json']);
  });

  it('removes, when it loads, the temporary files of writers that are gone, and keeps a running one’s', async () => {
    const path = join(scratch.dir, 'catalog.json');
    await saveState(path, STATE);
    // A process that has ended: its id names no process now.
    const gone = spawnSync('true').pid;
    const left = [`catalog.json.tmp-${gone}-0123abcd`, `catalog.json.tmp-${gone}-89abcdef`];
    const running = `catalog.json.tmp-${process.pid}-fedcba98`;
    const others = ['notes.json.tmp-1-0123abcd', 'catalog.json.tmp-x-0123abcd', 'catalog.json.bak'];
    for (const name of [...left, running, ...others]) await writeFile(join(scratch.dir, name), 'partial');
    expect(await loadState(path)).toEqual(STATE);
    expect((await readdir(scratch.dir)).sort()).toEqual(['catalog.json', running, ...others].sort());
  });

  it('loads nothing, and sweeps, when no state was saved yet', async () => {
    const path = join(scratch.dir, 'catalog.json');
    const gone = spawnSync('true').pid;
    await writeFile(join(scratch.dir, `catalog.json.tmp-${gone}-0123abcd`), 'partial');
    expect(await loadState(path)).toBeUndefined();
    expect(await readdir(scratch.dir)).toEqual([]);
  });
});
