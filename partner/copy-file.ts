/**
 * The proxy's state on disk, so a restart does not start empty: the last good copy, the history of change sets
 * that goes with it (so sequence numbers carry on), and how far the notify hook has delivered. One file, written
 * atomically (a temporary file in the same directory, flushed, then renamed over the old one), so a crash
 * mid-write leaves the previous state whole and the copy and its history always agree. Read back only when the
 * file and the catalog in it are valid. A file of the first version (a copy, no history) reads as a copy with
 * an empty history.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { StoredChanges } from './changes.ts';
import { Catalog, describeIssues } from './schema.ts';

/** A copy of the catalog as the proxy holds it. */
export interface StoredCopy {
  /** The body exactly as the service sent it. */
  readonly body: string;
  readonly etag?: string;
  /** When the body was downloaded (ISO 8601). */
  readonly fetchedAt: string;
  /** When the service last confirmed it (a 200 or a 304; ISO 8601). */
  readonly validatedAt: string;
}

/** Everything the proxy keeps across a restart. */
export interface StoredState {
  readonly copy: StoredCopy;
  /** The change history that ends with this copy. */
  readonly changes: StoredChanges;
  /** The sequence of the last change set the notify hook delivered, once there has been a hook. */
  readonly notified?: number;
}

const CopyFields = {
  body: z.string(),
  etag: z.string().optional(),
  fetchedAt: z.iso.datetime(),
  validatedAt: z.iso.datetime(),
};
const StateFile = z.discriminatedUnion('version', [
  z.object({ version: z.literal(1), ...CopyFields }),
  z.object({
    version: z.literal(2),
    ...CopyFields,
    changes: StoredChanges,
    notified: z.int().min(0).optional(),
  }),
]);

/** Writes the state to `path` atomically. */
export async function saveState(path: string, state: StoredState): Promise<void> {
  const { copy, changes, notified } = state;
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(
      JSON.stringify({ version: 2, ...copy, changes, ...(notified === undefined ? {} : { notified }) }),
    );
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The state saved at `path`: `undefined` when there is no file, an error message when the file or the catalog
 * in it is not valid (the proxy then starts empty rather than serve it).
 */
export async function loadState(path: string): Promise<StoredState | { readonly error: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { error: `cannot read ${path}: ${(error as Error).message}` };
  }
  let stored: z.output<typeof StateFile>;
  try {
    const parsed = StateFile.safeParse(JSON.parse(text));
    if (!parsed.success) return { error: `${path} is not a saved copy: ${describeIssues(parsed.error)}` };
    stored = parsed.data;
  } catch {
    return { error: `${path} is not JSON` };
  }
  try {
    const catalog = Catalog.safeParse(JSON.parse(stored.body));
    if (!catalog.success)
      return { error: `${path} holds an invalid catalog: ${describeIssues(catalog.error)}` };
  } catch {
    return { error: `${path} holds a catalog that is not JSON` };
  }
  const { body, etag, fetchedAt, validatedAt } = stored;
  const copy = { body, ...(etag === undefined ? {} : { etag }), fetchedAt, validatedAt };
  if (stored.version === 1) return { copy, changes: { sequence: 0, sets: [] } };
  return {
    copy,
    changes: stored.changes,
    ...(stored.notified === undefined ? {} : { notified: stored.notified }),
  };
}
