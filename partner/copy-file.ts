/**
 * The proxy's state on disk, so a restart does not start empty: the last good copy, its change history and the
 * notify progress, in one file written atomically (a flushed temporary file renamed over the old one, the
 * directory flushed), so a crash leaves the previous state whole. Read back only when it is valid.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { StoredChanges } from './changes.ts';
import { Catalog, parseJson } from './schema.ts';

/** A copy of the catalog: the body as sent, when it was downloaded and last confirmed (200 or 304). */
export interface StoredCopy {
  readonly body: string;
  readonly etag?: string | undefined;
  readonly fetchedAt: string;
  readonly validatedAt: string;
}

/** Everything the proxy keeps across a restart (`notified`: the last change set the hook delivered). */
export interface StoredState {
  readonly copy: StoredCopy;
  readonly changes: StoredChanges;
  readonly notified?: number;
}

const StateFile = z.object({
  version: z.literal(3),
  body: z.string(),
  etag: z.string().optional(),
  fetchedAt: z.iso.datetime(),
  validatedAt: z.iso.datetime(),
  changes: StoredChanges,
  notified: z.int().min(0).optional(),
});

/** A temporary state file is `<path>.tmp-<pid of its writer>-<8 hex>`. */
const TEMPORARY_INFIX = '.tmp-';
const TEMPORARY_TAIL = /^(\d+)-[0-9a-f]{8}$/;

/** Whether a process with this id runs on this machine. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary files of `path` whose writer is gone (a proxy killed while it saved, `kill -9` or a
 * crash): each can be as large as the catalog, and nothing else would ever remove them. A running writer's file
 * stays. Answers the names removed.
 */
async function sweepTemporaries(path: string): Promise<string[]> {
  const prefix = `${basename(path)}${TEMPORARY_INFIX}`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return [];
  }
  const stale = names.filter((name) => {
    const pid = TEMPORARY_TAIL.exec(name.startsWith(prefix) ? name.slice(prefix.length) : '')?.[1];
    return pid !== undefined && !running(Number(pid));
  });
  await Promise.all(stale.map((name) => rm(join(dirname(path), name), { force: true })));
  return stale;
}

/** Writes the state to `path` atomically and durably: it is on disk when this resolves. */
export async function saveState(path: string, state: StoredState): Promise<void> {
  const { copy, changes, notified } = state;
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}${TEMPORARY_INFIX}${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await flushed(temporary, 'w', (file) =>
      file.writeFile(
        JSON.stringify({ version: 3, ...copy, changes, ...(notified === undefined ? {} : { notified }) }),
      ),
    );
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await flushed(dirname(path), 'r');
}

/** Opens `path`, runs `write` on it, flushes it to the disk and closes it. */
async function flushed(path: string, flags: string, write?: (file: FileHandle) => Promise<void>) {
  const file = await open(path, flags, 0o600);
  try {
    await write?.(file);
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * The state saved at `path`: undefined without a file, an error when it is not valid (the proxy starts empty).
 * The temporary files a killed writer left beside it are removed first.
 */
export async function loadState(path: string): Promise<StoredState | { readonly error: string } | undefined> {
  await sweepTemporaries(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { error: `cannot read ${path}: ${(error as Error).message}` };
  }
  const state = parseJson(StateFile, text);
  if ('error' in state) return { error: `${path} is not a saved copy: ${state.error}` };
  const { version: _, changes, notified, ...copy } = state.data;
  const catalog = parseJson(Catalog, copy.body);
  if ('error' in catalog) return { error: `${path} holds an invalid catalog: ${catalog.error}` };
  return { copy, changes, ...(notified === undefined ? {} : { notified }) };
}
