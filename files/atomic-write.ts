/**
 * The one way a state file on the local disk is replaced (the key store's file, the partner proxy's cache file):
 * whole or not at all. The bytes go to a temporary file beside it, flushed to the disk, then renamed over it, and
 * the folder is flushed: a failed write (a full disk) leaves the old file whole and removes the temporary file; a
 * writer killed at any moment (`kill -9`) leaves the old file or the new one under the name, never part of one.
 * What a killed writer leaves is a temporary file named by its process id, which the next write removes.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isAlive } from './alive.ts';

/** A temporary file of `<name>` is `<name>.tmp-<pid of its writer>-<8 hex>`. */
const TEMPORARY_INFIX = '.tmp-';
const TEMPORARY_TAIL = /^(\d+)-[0-9a-f]{8}$/;

/**
 * Replaces the file at `path` with `data`, atomically and durably: done when this resolves, unchanged when it
 * throws. A new file is readable by its owner only (0600); a replaced one keeps its permissions. The folder must
 * exist.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await removeDeadTemporaries(path);
  const temporary = `${path}${TEMPORARY_INFIX}${process.pid}-${randomBytes(4).toString('hex')}`;
  const mode = await stat(path).then(
    (info) => info.mode & 0o777,
    () => 0o600,
  );
  try {
    await writeFile(temporary, data, { mode, flush: true });
    await rename(temporary, path);
  } catch (error) {
    // On a full disk the temporary file exists, cut short, when the write fails.
    await rm(temporary, { force: true });
    throw error;
  }
  // The rename itself made durable; some file systems refuse to flush a folder, which is harmless.
  await open(dirname(path), 'r')
    .then(async (folder) => {
      await folder.sync().catch(() => {});
      await folder.close();
    })
    .catch(() => {});
}

/**
 * Removes the temporary files of `path` whose writer is gone (killed while it wrote): each can be as large as the
 * file, and nothing else would remove them. A running writer's file stays.
 */
export async function removeDeadTemporaries(path: string): Promise<void> {
  const prefix = `${basename(path)}${TEMPORARY_INFIX}`;
  const names = await readdir(dirname(path)).catch(() => []);
  const dead = names.filter((name) => {
    const pid = TEMPORARY_TAIL.exec(name.startsWith(prefix) ? name.slice(prefix.length) : '')?.[1];
    return pid !== undefined && !isAlive(Number(pid));
  });
  await Promise.all(dead.map((name) => rm(join(dirname(path), name), { force: true })));
}
