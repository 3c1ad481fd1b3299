import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { StoreError } from '../contract/errors.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { DirectoryOrigin } from './dir-origin.ts';
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
  const md5 = (text: string) => createHash('md5').update(text).digest('hex');

  it('lists every object with the MD5 of its bytes, each version of a file read once, remembered across runs', async () => {
    const dir = join(scratch.dir, 'origin');
    const first = new DirectoryOrigin(dir);
    await first.put(object('plans/a.html', ['<p>a</p>']), { overwrite: true });
    await first.put(object('plans/b.html', ['<p>b</p>']), { overwrite: false });
    const listed = [
      { key: 'plans/a.html', size: 8, md5: md5('<p>a</p>') },
      { key: 'plans/b.html', size: 8, md5: md5('<p>b</p>') },
    ];
    // What this origin wrote it knows: a later run (another origin object) reads no file to list them.
    const later = new DirectoryOrigin(dir);
    expect(await later.list('plans/')).toEqual(listed);
    expect(later.hashed).toBe(0);
    // A byte changed in place at once, the same size: the file's stamp changed, so it is read again. Changed by
    // another hand within the last two seconds, it is not remembered yet (a write in the same tick of the file
    // system's clock would leave its stamp as it is): read at each listing until it has settled, then once more.
    const handle = await open(join(dir, 'plans/a.html'), 'r+');
    await handle.write('A', 3);
    await handle.close();
    const changed = [{ ...listed[0], md5: md5('<p>A</p>') }, listed[1]];
    expect(await later.list('plans/')).toEqual(changed);
    expect(await later.list('plans/')).toEqual(changed);
    expect(later.hashed).toBe(2);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_000 });
    try {
      expect(await later.list('plans/')).toEqual(changed);
      expect(await later.list('plans/')).toEqual(changed);
      const third = new DirectoryOrigin(dir);
      expect(await third.list('plans/')).toEqual(changed);
      expect(third.hashed).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(later.hashed).toBe(3);
    // Truncated, then deleted, by hand.
    await truncate(join(dir, 'plans/b.html'), 0);
    expect((await later.list('plans/'))[1]).toEqual({ key: 'plans/b.html', size: 0, md5: md5('') });
    await rm(join(dir, 'plans/b.html'));
    expect((await later.list('plans/')).map((object) => object.key)).toEqual(['plans/a.html']);
  });

  it('loses only reads when its memory is cut by a kill or a full disk, never gives a wrong MD5', async () => {
    const dir = join(scratch.dir, 'origin');
    const origin = new DirectoryOrigin(dir);
    for (const name of ['a', 'b', 'c'])
      await origin.put(object(`pages/${name}.html`, [`<p>${name}</p>`]), { overwrite: true });
    const journal = join(dir, '.digests');
    const lines = (await readFile(journal, 'utf8')).split('\n').filter(Boolean);
    expect(lines).toHaveLength(3);
    // The last line cut in its MD5, and a line whose key another write cut.
    await writeFile(journal, `${lines[0]}\n${lines[1]?.slice(0, 40)}${lines[2]?.slice(0, 60)}`);
    const next = new DirectoryOrigin(dir);
    expect((await next.list('pages/')).map((object) => object.md5)).toEqual(
      ['a', 'b', 'c'].map((name) => md5(`<p>${name}</p>`)),
    );
    expect(next.hashed).toBe(2);
    // A memory that is gone or unreadable is no memory: every file is read.
    await writeFile(journal, 'not a journal');
    const fresh = new DirectoryOrigin(dir);
    expect(await fresh.list('pages/')).toHaveLength(3);
    expect(fresh.hashed).toBe(3);
  });

  it('copies the bytes its source holds, and refuses to copy other bytes or to write bytes of another MD5', async () => {
    const origin = new DirectoryOrigin(join(scratch.dir, 'origin'));
    const page = object('plans/0a1b2c3d-0000-4000-8000-000000000001.html', ['<p>one</p>']);
    await origin.put(page, { overwrite: true });
    const kept = `pages/${page.md5}.html`;
    expect(await origin.copy(page.key, kept, { overwrite: true, sourceMd5: page.md5 })).toBe('written');
    expect(await origin.copy(page.key, kept, { overwrite: false, sourceMd5: page.md5 })).toBe('exists');
    expect(await origin.get(kept)).toMatchObject({
      md5: page.md5,
      cacheControl: 'public, max-age=31536000, immutable',
    });
    // The copy is bytes of its own: the source changed later leaves it as it was.
    await writeFile(join(scratch.dir, 'origin', page.key), '<p>0ne</p>');
    expect((await origin.get(kept))?.body.toString()).toBe('<p>one</p>');
    await expect(
      origin.copy(page.key, 'pages/other.html', { overwrite: true, sourceMd5: page.md5 }),
    ).rejects.toThrow(
      new StoreError(`${origin.name}: ${page.key} no longer holds the bytes of MD5 ${page.md5}`),
    );
    expect(await origin.get('pages/other.html')).toBeNull();
    await expect(
      origin.copy('pages/none.html', 'plans/q.html', { overwrite: true, sourceMd5: page.md5 }),
    ).rejects.toThrow(StoreError);
    await expect(
      origin.put({ ...object('errors/500.json', ['{}']), md5: page.md5 }, { overwrite: true }),
    ).rejects.toThrow(/the bytes of errors\/500\.json have MD5 [0-9a-f]{32}, not /);
    expect(await origin.get('errors/500.json')).toBeNull();
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

  it('answers an object with the headers of its key and the MD5 of its bytes, which no record can contradict', async () => {
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
    expect(await origin.list('builds/')).toEqual([
      { key: 'builds/b/catalog.json.br', size: 7, md5: written.md5 },
    ]);
    // Changed in place, it answers its bytes as they are: no digest kept apart can disagree with them.
    await writeFile(join(scratch.dir, 'origin/builds/b/catalog.json.br'), '{"a":2}');
    expect((await origin.get('builds/b/catalog.json.br'))?.md5).toBe(md5('{"a":2}'));
    expect((await origin.list('builds/'))[0]?.md5).toBe(md5('{"a":2}'));
    // Beside the object, only the origin's memory of MD5s (dot files are no objects).
    expect(await allFiles(join(scratch.dir, 'origin'))).toEqual(['.digests', 'builds/b/catalog.json.br']);
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
    expect(await allFiles(scratch.dir)).toEqual(['.digests', 'builds/b/manifest.json', 'errors/500.json']);
  });

  it('lists a truncated file with its true size, so the damage shows', async () => {
    const origin = new DirectoryOrigin(scratch.dir);
    await origin.put(object('builds/b/catalog.json', ['0123456789']), { overwrite: false });
    await truncate(join(scratch.dir, 'builds/b/catalog.json'), 4);
    expect((await origin.list('builds/b/'))[0]).toMatchObject({ size: 4 });
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
    expect(await allFiles(scratch.dir)).toEqual([
      '.digests',
      `.tmp/${process.pid}-0123456789ab`,
      'errors/500.json',
    ]);
    // An origin kept open across runs: a writer killed after its first writes is swept by its next ones.
    await writeFile(join(scratch.dir, '.tmp', `${dead}-ba9876543210`), 'half a page');
    await origin.put(object('errors/404.html', ['<p>no</p>']), { overwrite: true });
    expect(await allFiles(scratch.dir)).toEqual([
      '.digests',
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
