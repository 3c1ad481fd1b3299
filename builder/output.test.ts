import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useScratchDir } from '../testing/scratch.ts';
import { type OriginFile, originFile } from './build.ts';
import { OutputError } from './errors.ts';
import { writeOriginDir } from './output.ts';

const file = (key: string, body: string): OriginFile =>
  originFile(key, [Buffer.from(body)], 'application/json; charset=utf-8', 'public, max-age=300');

async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

describe('writing the origin directory', () => {
  const scratch = useScratchDir();

  it('creates the directory and nested folders and leaves no temporary files', async () => {
    const out = join(scratch.dir, 'a', 'origin');
    await writeOriginDir(out, [file('catalog.json', '{"n":1}'), file('errors/500.json', '{}')]);
    expect(await listAll(out)).toEqual(['catalog.json', 'errors', 'errors/500.json']);
    expect(await readFile(join(out, 'catalog.json'), 'utf8')).toBe('{"n":1}');
  });

  it('writes a file given in many chunks as their concatenation', async () => {
    const chunks = Array.from({ length: 2500 }, (_, i) => Buffer.from(`${i},`));
    await writeOriginDir(scratch.dir, [originFile('catalog.json', chunks, 'application/json', 'no-store')]);
    expect(await readFile(join(scratch.dir, 'catalog.json'))).toEqual(Buffer.concat(chunks));
  });

  it('replaces previous files', async () => {
    await writeOriginDir(scratch.dir, [file('catalog.json', 'old')]);
    await writeOriginDir(scratch.dir, [file('catalog.json', 'new')]);
    expect(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')).toBe('new');
  });

  it('leaves the previous output untouched when a write fails midway', async () => {
    await writeOriginDir(scratch.dir, [
      file('catalog-running.json', 'old running'),
      file('catalog.json', 'old all'),
    ]);
    // `errors` is a plain file, so the third file cannot be written after two were staged.
    await writeFile(join(scratch.dir, 'errors'), 'in the way');
    const failing = writeOriginDir(scratch.dir, [
      file('catalog-running.json', 'new running'),
      file('catalog.json', 'new all'),
      file('errors/500.json', '{}'),
    ]);
    await expect(failing).rejects.toThrow(OutputError);
    await expect(failing).rejects.toThrow(/the previous output is untouched/);
    expect(await readFile(join(scratch.dir, 'catalog-running.json'), 'utf8')).toBe('old running');
    expect(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')).toBe('old all');
    expect(await listAll(scratch.dir)).toEqual(['catalog-running.json', 'catalog.json', 'errors']);
  });

  it('fails with a clear error when the target is not a directory', async () => {
    await mkdir(join(scratch.dir, 'x'));
    await writeFile(join(scratch.dir, 'file'), '');
    await expect(writeOriginDir(join(scratch.dir, 'file'), [file('catalog.json', '{}')])).rejects.toThrow(
      /cannot write/,
    );
  });
});
