import { mkdir, readdir, readFile, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomic } from '../files/atomic-write.ts';
import { scratchDir } from '../testing/cli.ts';
import { spawnScript } from '../testing/script.ts';
import { until } from '../testing/until.ts';
import { FileKeyValueStore, STALE_LOCK_MS, StoreError } from './file-store.ts';
import { parseKvsFile, serializeKvsFile } from './kvs-file.ts';

const FILE_STORE = new URL('./file-store.ts', import.meta.url).href;

describe('the local store file', () => {
  let dir: string;
  let path: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await scratchDir('catalog-store-'));
    path = join(dir, 'sub', 'kvs.json');
  });
  afterEach(() => remove());

  const lockPath = () => `${path}.lock`;
  const files = async () => (await readdir(join(dir, 'sub'))).sort();

  it('refuses a missing file, reading or writing, and creates nothing, unless it may create the store', async () => {
    const missing = new StoreError(
      `store ${path} does not exist; check the path (catalog keys issue or cors set creates a store, npm start creates .catalog/kvs.json)`,
    );
    const store = new FileKeyValueStore(path);
    await expect(store.read()).rejects.toThrow(missing);
    await expect(store.update((entries) => entries.set('a', '1'))).rejects.toThrow(missing);
    await expect(readdir(dir)).resolves.toEqual([]);
  });

  it('with create, reads a missing file as empty, and creates it (and its folder) on the first write', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    expect(await store.read()).toEqual(new Map());
    await store.update((entries) => entries.set('a', '1'));
    expect(parseKvsFile(await readFile(path, 'utf8'))).toEqual(new Map([['a', '1']]));
    expect(await files()).toEqual(['kvs.json']);
    // Once it is there, any store of the file reads and writes it.
    await new FileKeyValueStore(path).update((entries) => entries.set('b', '2'));
    expect((await new FileKeyValueStore(path).read()).size).toBe(2);
  });

  it('keeps every entry when many updates run at once', async () => {
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        new FileKeyValueStore(path, { create: true }).update(async (entries) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          entries.set(`k${i}`, String(i));
        }),
      ),
    );
    expect((await new FileKeyValueStore(path).read()).size).toBe(12);
    expect(await files()).toEqual(['kvs.json']);
  });

  it('writes nothing when the change throws, and releases the lock', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    const before = await readFile(path, 'utf8');
    await expect(
      store.update((entries) => {
        entries.delete('a');
        throw new Error('rule broken');
      }),
    ).rejects.toThrow('rule broken');
    expect(await readFile(path, 'utf8')).toBe(before);
    expect(await files()).toEqual(['kvs.json']);
  });

  it('refuses to change a corrupt file instead of starting again from empty', async () => {
    await new FileKeyValueStore(path, { create: true }).update((entries) => entries.set('a', '1'));
    await writeFile(path, '{"data": [ {"key": "a"');
    await expect(new FileKeyValueStore(path).update((entries) => entries.set('b', '2'))).rejects.toThrow(
      /is not valid JSON .*; fix or restore the file, nothing was changed$/,
    );
    expect(await readFile(path, 'utf8')).toBe('{"data": [ {"key": "a"');
  });

  it('does not rewrite the file when the change changes nothing', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    await writeFile(path, '{"data":[{"key":"a","value":"1"}]}');
    await store.update((entries) => entries.set('a', '1'));
    expect(await readFile(path, 'utf8')).toBe('{"data":[{"key":"a","value":"1"}]}');
  });

  it('keeps every entry when updates run at once in several processes', async () => {
    const writers = ['a', 'b', 'c'].map((name) =>
      spawnScript(
        `const { FileKeyValueStore } = await import(${JSON.stringify(FILE_STORE)});
        const [path, name] = process.argv.slice(1);
        const store = new FileKeyValueStore(path, { create: true });
        for (let i = 0; i < 10; i += 1) await store.update((entries) => { entries.set(name + i, String(i)); });`,
        [path, name],
      ),
    );
    for (const writer of writers) expect(await writer.exited, writer.stderr()).toBe(0);
    expect((await new FileKeyValueStore(path).read()).size).toBe(30);
    expect(await files()).toEqual(['kvs.json']);
  });

  it('never loses the entries another holder wrote while it held the lock: it starts again on them', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    let runs = 0;
    await store.update(async (entries) => {
      runs += 1;
      // A second holder's write, as when two commands took over one stale lock at once.
      if (runs === 1) await writeFileAtomic(path, serializeKvsFile(new Map([...entries, ['other', '2']])));
      entries.set('mine', '3');
    });
    expect(runs).toBe(2);
    expect(await store.read()).toEqual(
      new Map([
        ['a', '1'],
        ['other', '2'],
        ['mine', '3'],
      ]),
    );
    expect(await files()).toEqual(['kvs.json']);
  });

  it('takes over the lock of a holder killed with kill -9 once it is stale, not before', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    const holder = spawnScript(
      `const { FileKeyValueStore } = await import(${JSON.stringify(FILE_STORE)});
      await new FileKeyValueStore(process.argv[1]).update(async (entries) => {
        entries.set('b', '2');
        process.stdout.write('holding\\n');
        await new Promise((resolve) => setTimeout(resolve, 600_000));
      });`,
      [path],
    );
    try {
      await until(() => holder.stdout().includes('holding') || holder.stderr(), 'the lock held');
      expect(holder.stderr()).toBe('');
    } finally {
      holder.kill();
    }
    await holder.exited;
    const renewed = (await stat(lockPath())).mtimeMs;
    let takenAt = 0;
    await withFastClock(() =>
      store.update((entries) => {
        takenAt = Date.now();
        entries.set('c', '3');
      }),
    );
    expect(takenAt - renewed).toBeGreaterThanOrEqual(STALE_LOCK_MS);
    expect([...(await store.read()).keys()]).toEqual(['a', 'c']);
    expect(await files()).toEqual(['kvs.json']);
  });

  it('killed with kill -9 while it writes, leaves the file whole, and the next update removes what it left', async () => {
    // About 1 MB, written in several pieces: a kill can fall inside a write.
    const padding = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`pad${i}`, 'x'.repeat(900)]));
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => {
      for (const [key, value] of Object.entries(padding)) entries.set(key, value);
    });
    for (let round = 0; round < 2; round += 1) {
      const writer = spawnScript(
        `const { FileKeyValueStore } = await import(${JSON.stringify(FILE_STORE)});
        const store = new FileKeyValueStore(process.argv[1]);
        for (let i = 0; ; i += 1) {
          await store.update((entries) => { entries.set('n', String(i)); });
          if (i === 0) process.stdout.write('writing\\n');
        }`,
        [path],
      );
      try {
        await until(() => writer.stdout().includes('writing') || writer.stderr(), 'the writes under way');
        expect(writer.stderr()).toBe('');
        await sleep(50 + Math.random() * 250);
      } finally {
        writer.kill();
      }
      await writer.exited;
      const entries = await store.read();
      expect(entries.size).toBe(1_001);
      expect(entries.get('n')).toMatch(/^\d+$/);
      // Its lock taken over (it held it most of the time), and its temporary file removed.
      await withFastClock(() => store.update((entries) => entries.set('n', `round ${round}`)));
      expect((await store.read()).get('n')).toBe(`round ${round}`);
      expect(await files()).toEqual(['kvs.json']);
    }
  });

  it('waits for a live holder, never breaks its lock, and gives up with a clear error', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    // A live holder's lock, renewed ahead: it never turns stale while the clock runs fast until the store gives up.
    await mkdir(lockPath());
    const ahead = new Date(Date.now() + 3_600_000);
    await utimes(lockPath(), ahead, ahead);
    const update = withFastClock(() => store.update((entries) => entries.set('b', '2')));
    await expect(update).rejects.toThrow(
      new StoreError(
        `${path} is locked by another command, which still holds it (${lockPath()}); nothing was changed`,
      ),
    );
    expect(Math.round((await stat(lockPath())).mtimeMs)).toBe(ahead.getTime());
    expect((await store.read()).size).toBe(1);
  });

  it('goes ahead as soon as a live holder releases its lock', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    await mkdir(lockPath());
    const update = store.update((entries) => entries.set('b', '2'));
    await sleep(200);
    expect((await store.read()).size).toBe(1);
    await rmdir(lockPath());
    await update;
    expect((await store.read()).size).toBe(2);
  });

  it('takes over a lock older than the stale limit even if its holder looks alive', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    await mkdir(lockPath());
    const old = new Date(Date.now() - STALE_LOCK_MS - 1_000);
    await utimes(lockPath(), old, old);
    const started = Date.now();
    await store.update((entries) => entries.set('b', '2'));
    expect(Date.now() - started).toBeLessThan(STALE_LOCK_MS);
    expect((await store.read()).size).toBe(2);
    expect(await files()).toEqual(['kvs.json']);
  });
});

/** Runs `work` with this process's clock going a second every 10 ms, so a lock turns stale at once. */
async function withFastClock<T>(work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'] });
  const clock = setInterval(() => vi.setSystemTime(Date.now() + 1_000), 10);
  try {
    return await work();
  } finally {
    clearInterval(clock);
    vi.useRealTimers();
  }
}
