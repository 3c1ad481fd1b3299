import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { StoreError } from '../contract/errors.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { DirectoryOrigin, FSYNC_FILES_UP_TO, writeFlat } from './dir-origin.ts';
import type { ObjectToWrite } from './origin.ts';

/** An object to write, from its chunks. */
function object(
  key: string,
  chunks: readonly (string | Buffer)[],
  extra: Partial<ObjectToWrite> = {},
): ObjectToWrite {
  const buffers = chunks.map((chunk) => Buffer.from(chunk));
  const body = Buffer.concat(buffers);
  return {
    key,
    chunks: buffers,
    size: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
    md5: createHash('md5').update(body).digest('hex'),
    contentType: 'application/json; charset=utf-8',
    cacheControl: 'public, max-age=300',
    ...extra,
  };
}

/** The object files under a directory (not their metadata). */
async function objectFiles(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
  return entries.filter((path) => !path.startsWith('.meta/')).sort();
}

/**
 * Runs `work` with a `sync` command first on PATH that records its arguments and runs the real one, and
 * fsync(2) counted on every file handle; answers the `sync` commands run and the fsyncs made.
 */
async function syncsDuring(
  dir: string,
  work: () => Promise<void>,
): Promise<{ commands: string[]; fsyncs: number }> {
  const real = execFileSync('sh', ['-c', 'command -v sync'], { encoding: 'utf8' }).trim();
  const bin = join(dir, 'bin');
  const log = join(dir, 'sync.log');
  await mkdir(bin, { recursive: true });
  await writeFile(log, '');
  await writeFile(join(bin, 'sync'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  await chmod(join(bin, 'sync'), 0o755);
  const handle = await open(log, 'r');
  const fsync = vi.spyOn(Object.getPrototypeOf(handle) as { sync(): Promise<void> }, 'sync');
  await handle.close();
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  let fsyncs: number;
  try {
    await work();
  } finally {
    process.env.PATH = path;
    fsyncs = fsync.mock.calls.length;
    fsync.mockRestore();
  }
  const commands = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  return { commands, fsyncs };
}

describe('a directory origin', () => {
  const scratch = useScratchDir();

  it('syncs the few files written since the last sync, each with its folders, and nothing else', async () => {
    const root = join(scratch.dir, 'origin');
    const origin = new DirectoryOrigin(root);
    const synced = await syncsDuring(scratch.dir, async () => {
      await origin.put(object('builds/b1/catalog.json', ['{}']), { overwrite: false });
      await origin.copy('builds/b1/catalog.json', 'builds/b2/catalog.json', { overwrite: false });
      // Found there already: nothing is written, nothing more to sync.
      await origin.put(object('builds/b1/catalog.json', ['{}']), { overwrite: false });
      await origin.sync();
      // Nothing written since: nothing synced.
      await origin.sync();
    });
    // Four files (two objects, their metadata); builds/b1, builds/b2, builds, the root, and the same four
    // folders of the metadata under .meta.
    expect(synced).toEqual({ commands: [], fsyncs: 4 + 8 });
  });

  it(`syncs the whole file system once after more than ${FSYNC_FILES_UP_TO} files, then counts afresh`, async () => {
    const root = join(scratch.dir, 'origin');
    const origin = new DirectoryOrigin(root);
    const many = FSYNC_FILES_UP_TO / 2 + 1;
    const bulk = await syncsDuring(scratch.dir, async () => {
      for (let index = 0; index < many; index += 1)
        await origin.put(object(`plans/p${index}.html`, ['<p>']), { overwrite: false });
      await origin.sync();
    });
    expect(bulk).toEqual({ commands: [`-f ${root}`], fsyncs: 0 });
    const few = await syncsDuring(scratch.dir, async () => {
      await origin.put(object('plans/one-more.html', ['<p>']), { overwrite: false });
      await origin.sync();
    });
    // The page and its metadata; plans, .meta/plans, .meta and the root.
    expect(few).toEqual({ commands: [], fsyncs: 2 + 4 });
  });

  it('compares and swaps without the key ever missing: a create-if-absent racing a replace finds it', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    let current = object('state/run-lock.json', ['0']);
    expect(await origin.put(current, { overwrite: false })).toBe('written');
    for (let round = 1; round <= 100; round += 1) {
      const next = object('state/run-lock.json', [`${round}`]);
      const [replaced, ...created] = await Promise.all([
        origin.replace(next, current.md5),
        ...Array.from({ length: 4 }, () =>
          origin.put(object('state/run-lock.json', ['another run']), { overwrite: false }),
        ),
      ]);
      expect(created, `round ${round}`).toEqual(['exists', 'exists', 'exists', 'exists']);
      expect(replaced, `round ${round}`).toBe(true);
      current = next;
    }
    expect((await origin.get('state/run-lock.json'))?.body.toString()).toBe('100');
  });

  it('lets one of two replacers of the same version win, and the other sees the change', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    const first = object('state/run-lock.json', ['first']);
    await origin.put(first, { overwrite: false });
    const results = await Promise.all(
      ['a', 'b', 'c'].map((name) => origin.replace(object('state/run-lock.json', [name]), first.md5)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = ['a', 'b', 'c'][results.indexOf(true)];
    expect((await origin.get('state/run-lock.json'))?.body.toString()).toBe(winner);
    expect(await readdir(join(scratch.dir, 'state'))).toEqual(['run-lock.json']);
  });

  it('stores an object with the metadata S3 would keep, and answers it back', async () => {
    const origin = new DirectoryOrigin(join(scratch.dir, 'origin'));
    const written = object('builds/b/catalog.json.br', ['{"a":', '1}'], {
      contentEncoding: 'br',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    expect(await origin.put(written, { overwrite: false })).toBe('written');
    const read = await origin.get('builds/b/catalog.json.br');
    expect(read).toMatchObject({
      key: 'builds/b/catalog.json.br',
      size: 7,
      md5: written.md5,
      contentType: 'application/json; charset=utf-8',
      contentEncoding: 'br',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    expect(read?.body.toString()).toBe('{"a":1}');
    expect(await origin.get('builds/b/missing.json')).toBeNull();
    expect(await origin.list('builds/')).toEqual([
      expect.objectContaining({ key: 'builds/b/catalog.json.br', size: 7, md5: written.md5 }),
    ]);
  });

  it('never overwrites an object unless told to, and keeps the first one whole', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/manifest.json', ['first']), { overwrite: false });
    expect(
      await origin.put(object('builds/b/manifest.json', ['second'], { contentType: 'text/plain' }), {
        overwrite: false,
      }),
    ).toBe('exists');
    expect(await origin.get('builds/b/manifest.json')).toMatchObject({
      contentType: 'application/json; charset=utf-8',
    });
    expect((await origin.get('builds/b/manifest.json'))?.body.toString()).toBe('first');
    await origin.put(object('errors/500.json', ['one']), { overwrite: true });
    await origin.put(object('errors/500.json', ['two']), { overwrite: true });
    expect((await origin.get('errors/500.json'))?.body.toString()).toBe('two');
    expect(await objectFiles(scratch.dir)).toEqual(['builds/b/manifest.json', 'errors/500.json']);
  });

  it('lists a truncated file with its true size, so the damage shows', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/catalog.json', ['0123456789']), { overwrite: false });
    await truncate(join(scratch.dir, 'builds/b/catalog.json'), 4);
    expect((await origin.list('builds/b/'))[0]).toMatchObject({ size: 4 });
  });

  it('lists the MD5 recorded at write time, and hashes the bytes as they are now on request', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    const written = object('builds/b/catalog.json', ['0123456789']);
    await origin.put(written, { overwrite: false });
    await writeFile(join(scratch.dir, 'builds/b/catalog.json'), '9876543210');
    expect((await origin.list('builds/b/'))[0]).toMatchObject({ size: 10, md5: written.md5 });
    expect(await origin.md5('builds/b/catalog.json')).toBe(
      createHash('md5').update('9876543210').digest('hex'),
    );
    expect(await origin.md5('builds/b/missing.json')).toBeNull();
    await expect(origin.md5('../outside.json')).rejects.toThrow(StoreError);
  });

  it('refuses a key that leads outside the directory or into its metadata', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await expect(origin.get('../outside.json')).rejects.toThrow(StoreError);
    await expect(origin.put(object('.meta/x.json', ['x']), { overwrite: true })).rejects.toThrow(StoreError);
  });

  it('deletes objects with their metadata', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/x.json', ['x']), { overwrite: false });
    await origin.delete(['builds/b/x.json', 'builds/b/never.json']);
    expect(await origin.list('builds/')).toEqual([]);
    expect(await readdir(join(scratch.dir, '.meta', 'builds', 'b'))).toEqual([]);
  });
});

describe('writing a flat build into a directory', () => {
  const scratch = useScratchDir();

  it('creates the directory and nested folders, and leaves no temporary files', async () => {
    const out = join(scratch.dir, 'a', 'origin');
    await writeFlat(out, [object('catalog.json', ['{"n":1}']), object('errors/500.json', ['{}'])]);
    expect(await objectFiles(out)).toEqual(['catalog.json', 'errors/500.json']);
    expect(await readFile(join(out, 'catalog.json'), 'utf8')).toBe('{"n":1}');
    expect(await new DirectoryOrigin(out).get('catalog.json')).toMatchObject({
      contentType: 'application/json; charset=utf-8',
    });
  });

  it('writes an object given in many chunks as their concatenation', async () => {
    const chunks = Array.from({ length: 2500 }, (_, i) => `${i},`);
    await writeFlat(scratch.dir, [object('catalog.json', chunks)]);
    expect(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')).toBe(chunks.join(''));
  });

  it('replaces previous files', async () => {
    await writeFlat(scratch.dir, [object('catalog.json', ['old'])]);
    await writeFlat(scratch.dir, [object('catalog.json', ['new'])]);
    expect(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')).toBe('new');
  });

  it('leaves the previous output untouched when a write fails midway', async () => {
    await writeFlat(scratch.dir, [
      object('catalog-running.json', ['old running']),
      object('catalog.json', ['old all']),
    ]);
    // `errors` is a plain file, so the third object cannot be written after two were staged.
    await writeFile(join(scratch.dir, 'errors'), 'in the way');
    const failing = writeFlat(scratch.dir, [
      object('catalog-running.json', ['new running']),
      object('catalog.json', ['new all']),
      object('errors/500.json', ['{}']),
    ]);
    await expect(failing).rejects.toThrow(StoreError);
    await expect(failing).rejects.toThrow(/the previous output is untouched/);
    expect(await readFile(join(scratch.dir, 'catalog-running.json'), 'utf8')).toBe('old running');
    expect(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')).toBe('old all');
    expect(await objectFiles(scratch.dir)).toEqual(['catalog-running.json', 'catalog.json', 'errors']);
  });

  it('fails with a clear error when the target is not a directory', async () => {
    await mkdir(join(scratch.dir, 'x'));
    await writeFile(join(scratch.dir, 'file'), '');
    await expect(writeFlat(join(scratch.dir, 'file'), [object('catalog.json', ['{}'])])).rejects.toThrow(
      /cannot write/,
    );
  });
});
