import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, rename, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../contract/errors.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { DirectoryOrigin, writeFlat } from './dir-origin.ts';
import type { ObjectToWrite } from './origin.ts';

/** An object to write, from its chunks. */
function object(key: string, chunks: readonly (string | Buffer)[]): ObjectToWrite {
  const buffers = chunks.map((chunk) => Buffer.from(chunk));
  const body = Buffer.concat(buffers);
  return {
    key,
    chunks: buffers,
    size: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
    md5: createHash('md5').update(body).digest('hex'),
  };
}

/** The files (and links) under a directory, every one, its own folders included. */
async function allFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => !entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describe('a directory origin', () => {
  const scratch = useScratchDir();

  it('keeps a live page as a link to its bytes under their digest, and keeps it by name without a copy of a link', async () => {
    const origin = new DirectoryOrigin(join(scratch.dir, 'origin'));
    const page = object('plans/0a1b2c3d-0000-4000-8000-000000000001.html', ['<p>one</p>']);
    const stored = `pages/${page.md5}.html`;
    expect(await origin.put(page, { overwrite: true })).toBe('written');
    expect(await origin.list('plans/')).toEqual([{ key: page.key, copyOf: stored }]);
    expect((await origin.get(stored))?.body.toString()).toBe('<p>one</p>');
    // Keeping the live page under its digest finds the file it links to: nothing to write, and the file stays;
    // bytes changed there at rest are for `catalog status` to name, not a reason to refuse the run.
    expect(await origin.copy(page.key, stored, { overwrite: true, sourceMd5: page.md5 })).toBe('exists');
    expect((await origin.get(stored))?.body.toString()).toBe('<p>one</p>');
    await writeFile(join(scratch.dir, 'origin', stored), '<p>0ne</p>');
    expect(await origin.copy(page.key, stored, { overwrite: true, sourceMd5: page.md5 })).toBe('exists');
    await writeFile(join(scratch.dir, 'origin', stored), '<p>one</p>');
    // A copy of a live page links to its bytes, not to the live page; one made for other bytes is refused.
    await origin.copy(page.key, 'plans/0a1b2c3d-0000-4000-8000-000000000002.html', { overwrite: true });
    expect(await readlink(join(scratch.dir, 'origin/plans/0a1b2c3d-0000-4000-8000-000000000002.html'))).toBe(
      `../${stored}`,
    );
    await expect(
      origin.copy(page.key, 'pages/other.html', { overwrite: true, sourceMd5: '0'.repeat(32) }),
    ).rejects.toThrow(StoreError);
    expect(await origin.get('pages/other.html')).toBeNull();
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

  it('answers an object with the headers of its key and the MD5 of its bytes, no record kept beside it', async () => {
    const origin = new DirectoryOrigin(join(scratch.dir, 'origin'));
    const written = object('builds/b/catalog.json.br', ['{"a":', '1}']);
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
    expect(await origin.list('builds/')).toEqual([{ key: 'builds/b/catalog.json.br', size: 7 }]);
    // Changed in place, it answers its bytes as they are: no digest recorded apart can disagree with them.
    await writeFile(join(scratch.dir, 'origin/builds/b/catalog.json.br'), '{"a":2}');
    expect((await origin.get('builds/b/catalog.json.br'))?.md5).toBe(
      createHash('md5').update('{"a":2}').digest('hex'),
    );
    expect(await allFiles(join(scratch.dir, 'origin'))).toEqual(['builds/b/catalog.json.br']);
  });

  it('never overwrites an object unless told to, and keeps the first one whole', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/manifest.json', ['first']), { overwrite: false });
    expect(await origin.put(object('builds/b/manifest.json', ['second']), { overwrite: false })).toBe(
      'exists',
    );
    expect((await origin.get('builds/b/manifest.json'))?.body.toString()).toBe('first');
    await origin.put(object('errors/500.json', ['one']), { overwrite: true });
    await origin.put(object('errors/500.json', ['two']), { overwrite: true });
    expect((await origin.get('errors/500.json'))?.body.toString()).toBe('two');
    expect(await allFiles(scratch.dir)).toEqual(['builds/b/manifest.json', 'errors/500.json']);
  });

  it('lists a truncated file with its true size, so the damage shows', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/catalog.json', ['0123456789']), { overwrite: false });
    await truncate(join(scratch.dir, 'builds/b/catalog.json'), 4);
    expect((await origin.list('builds/b/'))[0]).toMatchObject({ size: 4 });
  });

  it('copies by a relative link placed by one rename, which its listing names and a read follows', async () => {
    const origin = new DirectoryOrigin(join(scratch.dir, 'origin'));
    await origin.put(object('pages/one.html', ['<p>1']), { overwrite: false });
    await origin.put(object('pages/two.html', ['<p>2']), { overwrite: false });
    expect(await origin.copy('pages/one.html', 'plans/p.html', { overwrite: true })).toBe('written');
    expect(await origin.copy('pages/two.html', 'plans/p.html', { overwrite: false })).toBe('exists');
    expect(await origin.copy('pages/two.html', 'plans/p.html', { overwrite: true })).toBe('written');
    expect(await origin.list('plans/')).toEqual([{ key: 'plans/p.html', copyOf: 'pages/two.html' }]);
    expect(await origin.get('plans/p.html')).toMatchObject({
      contentType: 'text/html; charset=utf-8',
      cacheControl: 'public, max-age=300',
    });
    expect((await origin.get('plans/p.html'))?.body.toString()).toBe('<p>2');
    expect(await readlink(join(scratch.dir, 'origin/plans/p.html'))).toBe('../pages/two.html');
    // The directory moved whole still reads: the link is relative.
    await rename(join(scratch.dir, 'origin'), join(scratch.dir, 'moved'));
    expect((await new DirectoryOrigin(join(scratch.dir, 'moved')).get('plans/p.html'))?.body.toString()).toBe(
      '<p>2',
    );
    await expect(origin.copy('pages/none.html', 'plans/q.html', { overwrite: true })).rejects.toThrow();
  });

  it('lists no object for a link whose object is gone, and reads none', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('pages/one.html', ['<p>1']), { overwrite: false });
    await origin.copy('pages/one.html', 'plans/p.html', { overwrite: true });
    await origin.delete(['pages/one.html']);
    expect(await origin.list('plans/')).toEqual([]);
    expect(await origin.get('plans/p.html')).toBeNull();
  });

  it('sweeps the temporary files of a writer that was killed, at the next write, and lists none meanwhile', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    await mkdir(join(scratch.dir, '.tmp'), { recursive: true });
    await writeFile(join(scratch.dir, '.tmp', `${dead}-0123456789ab`), 'half a page');
    await writeFile(join(scratch.dir, '.tmp', `${process.pid}-0123456789ab`), 'a write of this process');
    const origin = new DirectoryOrigin(scratch.dir);
    expect(await origin.list('')).toEqual([]);
    await origin.put(object('errors/500.json', ['{}']), { overwrite: true });
    expect(await allFiles(scratch.dir)).toEqual([`.tmp/${process.pid}-0123456789ab`, 'errors/500.json']);
    // An origin kept open across runs: a writer killed after its first writes is swept by its next ones.
    await writeFile(join(scratch.dir, '.tmp', `${dead}-ba9876543210`), 'half a page');
    await origin.put(object('errors/404.html', ['<p>no</p>']), { overwrite: true });
    expect(await allFiles(scratch.dir)).toEqual([
      `.tmp/${process.pid}-0123456789ab`,
      'errors/404.html',
      'errors/500.json',
    ]);
  });

  it('refuses a key that leads outside the directory or into its own folders', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await expect(origin.get('../outside.json')).rejects.toThrow(StoreError);
    await expect(origin.put(object('.tmp/x.json', ['x']), { overwrite: true })).rejects.toThrow(StoreError);
    await expect(origin.get('plans/.hidden.html')).rejects.toThrow(StoreError);
  });

  it('deletes objects, a missing one no error', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/x.json', ['x']), { overwrite: false });
    await origin.delete(['builds/b/x.json', 'builds/b/never.json']);
    expect(await origin.list('builds/')).toEqual([]);
  });
});

describe('writing a flat build into a directory', () => {
  const scratch = useScratchDir();

  it('creates the directory and nested folders, and leaves no temporary files', async () => {
    const out = join(scratch.dir, 'a', 'origin');
    await writeFlat(out, [object('catalog.json', ['{"n":1}']), object('errors/500.json', ['{}'])]);
    expect(await allFiles(out)).toEqual(['catalog.json', 'errors/500.json']);
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
    expect(await allFiles(scratch.dir)).toEqual(['catalog-running.json', 'catalog.json', 'errors']);
  });

  it('fails with a clear error when the target is not a directory', async () => {
    await mkdir(join(scratch.dir, 'x'));
    await writeFile(join(scratch.dir, 'file'), '');
    await expect(writeFlat(join(scratch.dir, 'file'), [object('catalog.json', ['{}'])])).rejects.toThrow(
      /cannot write/,
    );
  });
});
