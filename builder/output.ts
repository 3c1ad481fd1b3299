import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { OriginFile } from './build.ts';
import { OutputError } from './errors.ts';

/**
 * Writes a build into an origin directory without ever exposing a half-written file: every file is first
 * written completely under a temporary name beside its target, and only when all are written are they renamed
 * into place, in the given order. When a write fails, the temporary files are removed and the previous output
 * stays exactly as it was.
 */
export async function writeOriginDir(dir: string, files: readonly OriginFile[]): Promise<void> {
  const suffix = `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const staged: { temp: string; target: string }[] = [];
  try {
    for (const file of files) {
      const target = join(dir, file.key);
      const temp = target + suffix;
      await mkdir(dirname(target), { recursive: true });
      staged.push({ temp, target });
      const handle = await open(temp, 'w');
      try {
        await handle.writev([...file.chunks]);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    throw new OutputError(
      `cannot write ${dir}: ${(error as Error).message}; the previous output is untouched`,
      {
        cause: error,
      },
    );
  }
  for (const { temp, target } of staged) {
    try {
      await rename(temp, target);
    } catch (error) {
      await Promise.all(staged.map(({ temp: t }) => rm(t, { force: true })));
      throw new OutputError(`cannot replace ${target}: ${(error as Error).message}`, { cause: error });
    }
  }
}
