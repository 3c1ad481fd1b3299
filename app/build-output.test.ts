import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../contract/errors.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { writeFlat } from './build-output.ts';

/** A file of a flat build: its key and its bytes, in chunks. */
const object = (key: string, chunks: readonly string[]) => ({
  key,
  chunks: chunks.map((c) => Buffer.from(c)),
});

/** Every file under a directory, by its path there. */
const allFiles = async (dir: string) =>
  (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();

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
