/**
 * The proxy's state on disk, so a restart does not start empty: the last good copy, its change history and the
 * notify progress, in one file replaced whole (files/atomic-write.ts), so a crash or a full disk leaves the
 * previous state whole. Read back only when it is valid.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { removeDeadTemporaries, writeFileAtomic } from '../files/atomic-write.ts';
import { StoredChanges } from './changes.ts';
import { parseJson } from './json.ts';
import { Catalog } from './schema.ts';

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

/** Writes the state to `path` atomically and durably (files/atomic-write.ts): it is on disk when this resolves. */
export async function saveState(path: string, state: StoredState): Promise<void> {
  const { copy, changes, notified } = state;
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(
    path,
    JSON.stringify({ version: 3, ...copy, changes, ...(notified === undefined ? {} : { notified }) }),
  );
}

/**
 * The state saved at `path`: undefined without a file, an error when it is not valid (the proxy starts empty).
 * The temporary files a killed writer left beside it are removed first.
 */
export async function loadState(path: string): Promise<StoredState | { readonly error: string } | undefined> {
  await removeDeadTemporaries(path);
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
