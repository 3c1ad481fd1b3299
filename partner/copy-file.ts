/**
 * The proxy's last good copy on disk, so a restart does not start empty. Written atomically (a temporary file
 * in the same directory, flushed, then renamed over the old one), so a crash mid-write leaves the previous copy
 * whole. Read back only when the file and the catalog in it are valid.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
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

const CopyFile = z.object({
  version: z.literal(1),
  body: z.string(),
  etag: z.string().optional(),
  fetchedAt: z.iso.datetime(),
  validatedAt: z.iso.datetime(),
});

/** Writes the copy to `path` atomically. */
export async function saveCopy(path: string, copy: StoredCopy): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(JSON.stringify({ version: 1, ...copy }));
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
 * The copy saved at `path`: `undefined` when there is no file, an error message when the file or the catalog
 * in it is not valid (the proxy then starts empty rather than serve it).
 */
export async function loadCopy(path: string): Promise<StoredCopy | { readonly error: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { error: `cannot read ${path}: ${(error as Error).message}` };
  }
  let stored: z.output<typeof CopyFile>;
  try {
    const parsed = CopyFile.safeParse(JSON.parse(text));
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
  const { version: _version, etag, ...copy } = stored;
  return etag === undefined ? copy : { ...copy, etag };
}
