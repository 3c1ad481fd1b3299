import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { scratchDir } from '../testing/cli.ts';
import { FileKeyValueStore, StoreError } from './file-store.ts';
import { parseKvsFile } from './kvs-file.ts';

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

  it('takes over at once a lock left by a process that has exited', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    await writeFile(lockPath(), `${gone} ${hostname()} deadbeef\n`);
    const started = Date.now();
    await store.update((entries) => entries.set('b', '2'));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await store.read()).size).toBe(2);
    expect(await files()).toEqual(['kvs.json']);
  });

  it('waits for a live holder, never breaks its lock, and gives up with a clear error', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    const held = `${process.pid} ${hostname()} cafebabe\n`;
    await writeFile(lockPath(), held);
    // A lock dated ahead never turns stale; the clock runs fast until the store gives up waiting for it.
    const ahead = new Date(Date.now() + 3_600_000);
    await utimes(lockPath(), ahead, ahead);
    vi.useFakeTimers({ toFake: ['Date'] });
    const clock = setInterval(() => vi.setSystemTime(Date.now() + 1_000), 10);
    const update = store.update((entries) => entries.set('b', '2'));
    await update.catch(() => {});
    clearInterval(clock);
    vi.useRealTimers();
    await expect(update).rejects.toThrow(
      new StoreError(
        `${path} is locked by another command (process ${process.pid}, ${lockPath()}); nothing was changed`,
      ),
    );
    expect(await readFile(lockPath(), 'utf8')).toBe(held);
    expect((await store.read()).size).toBe(1);
  });

  it('goes ahead as soon as a live holder releases its lock', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    await writeFile(lockPath(), `${process.pid} ${hostname()} cafebabe\n`);
    const update = store.update((entries) => entries.set('b', '2'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await store.read()).size).toBe(1);
    await rm(lockPath());
    await update;
    expect((await store.read()).size).toBe(2);
  });

  it('takes over a lock older than the stale limit even if its holder looks alive', async () => {
    const store = new FileKeyValueStore(path, { create: true });
    await store.update((entries) => entries.set('a', '1'));
    await writeFile(lockPath(), `${process.pid} ${hostname()} cafebabe\n`);
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath(), old, old);
    await store.update((entries) => entries.set('b', '2'));
    expect((await store.read()).size).toBe(2);
    expect(await files()).toEqual(['kvs.json']);
  });
});
