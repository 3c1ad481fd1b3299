import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loadState, type StoredState, saveState } from '../partner/copy-file.ts';
import { ROOT, runProcess } from '../testing/cli.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { scriptCommand, spawnScript, TMPFS_IN_NAMESPACE } from '../testing/script.ts';
import { until } from '../testing/until.ts';
import { writeFileAtomic } from './atomic-write.ts';

const HELPER = new URL('./atomic-write.ts', import.meta.url).href;
const FILE_STORE = new URL('../keys/file-store.ts', import.meta.url).href;
const COPY_FILE = new URL('../partner/copy-file.ts', import.meta.url).href;

/**
 * What the writers killed mid-write alternate: two valid catalogs (the proxy's loadState checks its copy) of about
 * 2 MB, written in several pieces, so a kill can fall inside a write. As code, for the writers' processes too.
 */
const CATALOG_OF = `(letter) => '{"generatedAt":"2026-11-21T08:00:00.000Z","plans":[],"pad":"' + letter.repeat(2 * 1024 * 1024) + '"}'`;
const catalogOf = (letter: string) =>
  `{"generatedAt":"2026-11-21T08:00:00.000Z","plans":[],"pad":"${letter.repeat(2 * 1024 * 1024)}"}`;

/** A proxy's saved state whose catalog body is `body`. */
const stateOf = (body: string): StoredState => ({
  copy: { body, fetchedAt: '2026-11-21T08:00:01.000Z', validatedAt: '2026-11-21T08:00:01.000Z' },
  changes: { history: '3f9c2a61-0b7e-4d5a-9c1e-8a2b6f4d7e10', sequence: 0, sets: [] },
});

describe('the atomic write', () => {
  const scratch = useScratchDir();

  it('replaces a file whole and keeps its permissions; a new file is readable by its owner only', async () => {
    const path = join(scratch.dir, 'state.json');
    await writeFileAtomic(path, 'first');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await chmod(path, 0o640);
    await writeFileAtomic(path, Buffer.from('second'));
    expect(await readFile(path, 'utf8')).toBe('second');
    expect((await stat(path)).mode & 0o777).toBe(0o640);
    expect(await readdir(scratch.dir)).toEqual(['state.json']);
  });

  it('removes the temporary files its dead writers left, and keeps a running writer’s and every other file', async () => {
    const path = join(scratch.dir, 'state.json');
    const gone = spawnSync('true').pid;
    const dead = [`state.json.tmp-${gone}-0123abcd`, `state.json.tmp-${gone}-89abcdef`];
    const kept = [`state.json.tmp-${process.pid}-fedcba98`, 'other.json.tmp-1-0123abcd', 'state.json.bak'];
    for (const name of [...dead, ...kept]) await writeFile(join(scratch.dir, name), 'partial');
    await writeFileAtomic(path, 'whole');
    expect((await readdir(scratch.dir)).sort()).toEqual(['state.json', ...kept].sort());
  });

  it('fails when the folder is missing, and creates nothing', async () => {
    await expect(writeFileAtomic(join(scratch.dir, 'none', 'state.json'), 'x')).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(await readdir(scratch.dir)).toEqual([]);
  });

  it('killed with kill -9 while it writes, leaves the old file or the new one whole, never part of one: itself and the proxy’s cache', async () => {
    const helperPath = join(scratch.dir, 'helper.json');
    const cachePath = join(scratch.dir, 'cache.json');
    const contents = ['a', 'b'].map(catalogOf);
    await writeFileAtomic(helperPath, contents[0] ?? '');
    await saveState(cachePath, stateOf(contents[0] ?? ''));
    for (let round = 0; round < 2; round += 1) {
      const writers = [
        spawnScript(
          `const { writeFileAtomic } = await import(${JSON.stringify(HELPER)});
          const contents = ['a', 'b'].map(${CATALOG_OF});
          for (let i = 0; ; i += 1) {
            await writeFileAtomic(process.argv[1], contents[i % 2]);
            if (i === 0) process.stdout.write('writing\\n');
          }`,
          [helperPath],
        ),
        spawnScript(
          `const { saveState } = await import(${JSON.stringify(COPY_FILE)});
          const state = ${JSON.stringify(stateOf(''))};
          const contents = ['a', 'b'].map(${CATALOG_OF});
          for (let i = 0; ; i += 1) {
            await saveState(process.argv[1], { ...state, copy: { ...state.copy, body: contents[i % 2] } });
            if (i === 0) process.stdout.write('writing\\n');
          }`,
          [cachePath],
        ),
      ];
      try {
        for (const writer of writers) {
          await until(() => writer.stdout().includes('writing') || writer.stderr(), 'the writes under way');
          expect(writer.stderr()).toBe('');
        }
        await sleep(50 + Math.random() * 250);
      } finally {
        for (const writer of writers) writer.kill();
      }
      for (const writer of writers) await writer.exited;
      expect(contents).toContain(await readFile(helperPath, 'utf8'));
      const saved = await loadState(cachePath);
      expect(contents).toContain(saved !== undefined && 'copy' in saved ? saved.copy.body : saved);
      // What the killed writers left goes with the next write.
      await writeFileAtomic(helperPath, contents[0] ?? '');
      await saveState(cachePath, stateOf(contents[0] ?? ''));
      expect((await readdir(scratch.dir)).sort()).toEqual(['cache.json', 'helper.json']);
    }
  });
});

describe('the atomic write on a full disk', () => {
  const scratch = useScratchDir();

  it.skipIf(!TMPFS_IN_NAMESPACE)(
    'fails, leaving the old file whole and no temporary file: itself, the key store and the proxy’s cache alike (a real 64 KiB tmpfs, filled)',
    async () => {
      const disk = join(scratch.dir, 'disk');
      await mkdir(disk);
      // In a mount namespace of its own (unshare -rm): each writer writes its file while there is room, then the
      // disk is filled, then each writes again.
      const code = `
        const { open, readFile, readdir } = await import('node:fs/promises');
        const { writeFileAtomic } = await import(${JSON.stringify(HELPER)});
        const { FileKeyValueStore } = await import(${JSON.stringify(FILE_STORE)});
        const { saveState } = await import(${JSON.stringify(COPY_FILE)});
        const dir = process.argv[1];
        const state = ${JSON.stringify(stateOf('{"generatedAt":"2026-11-21T08:00:00.000Z","plans":[]}'))};
        const writers = {
          helper: [dir + '/helper.json', (value) => writeFileAtomic(dir + '/helper.json', value)],
          store: [dir + '/kvs.json', (value) => new FileKeyValueStore(dir + '/kvs.json', { create: true }).update((entries) => { entries.set('v', value); })],
          cache: [dir + '/cache.json', (value) => saveState(dir + '/cache.json', { ...state, notified: value.length })],
        };
        const before = {};
        for (const [name, [path, write]] of Object.entries(writers)) {
          await write('first');
          before[name] = await readFile(path, 'utf8');
        }
        const fill = await open(dir + '/fill', 'w');
        try { for (;;) await fill.write(Buffer.alloc(4096)); } catch (error) { if (error.code !== 'ENOSPC') throw error; }
        await fill.close();
        const outcome = {};
        for (const [name, [path, write]] of Object.entries(writers)) {
          const error = await write('second, longer').then(() => 'written', (error) => error.message);
          outcome[name] = { error, unchanged: (await readFile(path, 'utf8')) === before[name] };
        }
        console.log(JSON.stringify({ outcome, files: (await readdir(dir)).sort() }));
      `;
      const result = await runProcess(
        'unshare',
        [
          '-rm',
          'sh',
          '-c',
          'mount -t tmpfs -o size=64k tmpfs "$1" && shift && exec "$@"',
          'sh',
          disk,
          ...scriptCommand(code, [disk]),
        ],
        { cwd: ROOT, env: process.env },
      );
      expect(result.code, result.stderr).toBe(0);
      const failed = { error: expect.stringContaining('ENOSPC'), unchanged: true };
      expect(JSON.parse(result.stdout)).toEqual({
        outcome: { helper: failed, store: failed, cache: failed },
        files: ['cache.json', 'fill', 'helper.json', 'kvs.json'],
      });
    },
  );
});
