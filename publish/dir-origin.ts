/**
 * The origin as a directory, for the local stack: each object is a file at its key, its S3 metadata in
 * `.meta/<key>.json`. A write never exposes a half-written file (a temporary file, then a rename, or a hard link
 * where it must not overwrite). Writes are made durable together by {@link DirectoryOrigin.sync} before a build's
 * manifest, the commit point: the few files written since the last sync each synced with their folders, or else
 * one sync of the file system (docs/decisions.md#build-cost).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  createReadStream,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import {
  link,
  mkdir,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { setTimeout as sleep, setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { z } from 'zod';
import { StoreError } from '../contract/errors.ts';
import { MANIFEST } from '../contract/index.ts';
import type { FetchedObject, ObjectToWrite, OriginStore, StoredObject } from './origin.ts';

/** The folder of the metadata files, inside the origin directory. */
const META_DIR = '.meta';

/** The metadata file of an object. */
const Metadata = z.object({
  contentType: z.string(),
  contentEncoding: z.string().optional(),
  cacheControl: z.string().optional(),
  md5: z.string(),
});
type Metadata = z.output<typeof Metadata>;

const temporary = (path: string) => `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
const TEMPORARY = /\.tmp-\d+-[0-9a-f]{8}$/;

/** File operations at once: enough to keep the disk busy, few enough not to crowd libuv's pool. */
const FILE_CONCURRENCY = 16;

const metadataOf = (object: ObjectToWrite): Metadata => ({
  contentType: object.contentType,
  ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
  cacheControl: object.cacheControl,
  md5: object.md5,
});

/** Creates each folder once (a build writes thousands of files into a few folders). */
class Folders {
  readonly #made = new Map<string, Promise<unknown>>();
  ensure(dir: string): Promise<unknown> {
    let made = this.#made.get(dir);
    if (!made) {
      made = mkdir(dir, { recursive: true });
      made.catch(() => this.#made.delete(dir));
      this.#made.set(dir, made);
    }
    return made;
  }
}

/** Writes a file completely under a temporary name beside `path`; returns that name. Not synced. */
async function writeTemporary(folders: Folders, path: string, chunks: readonly Buffer[]): Promise<string> {
  const temp = temporary(path);
  await folders.ensure(dirname(path));
  try {
    await writeFile(temp, chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks as Buffer[]));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return temp;
}

const execFileAsync = promisify(execFile);

/**
 * Up to this many files written since the last sync are synced one by one with their folders (fsync(2)); more are
 * synced with their whole file system at once, which also flushes what other processes wrote there.
 */
export const FSYNC_FILES_UP_TO = 256;

/** Syncs a file or folder that exists; one that is gone (a write another replaced or deleted) has nothing to sync. */
async function fsyncPath(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes every write to the file system of `dir` durable: `sync -f` (syncfs(2)), else a plain `sync`. */
async function syncFileSystem(dir: string): Promise<void> {
  try {
    await execFileAsync('sync', ['-f', dir]);
  } catch {
    try {
      await execFileAsync('sync', []);
    } catch (error) {
      throw new StoreError(`cannot sync ${dir} to disk: ${(error as Error).message}`, { cause: error });
    }
  }
}

const isMissing = (error: unknown) =>
  ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(String((error as NodeJS.ErrnoException).code));

/** How old a compare-and-swap guard is before it is judged left by a replacer that crashed. */
const STALE_GUARD_MS = 30_000;

/**
 * Makes `guard` a second name of the file at `path` (false: no file), waiting while another replacer holds it;
 * a guard older than {@link STALE_GUARD_MS} is moved aside (only one can move it).
 */
async function takeGuard(path: string, guard: string): Promise<boolean> {
  for (;;) {
    try {
      await link(path, guard);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // `link` sets the file's change time: the guard's age.
    const held = await stat(guard).catch(() => null);
    if (held && Date.now() - held.ctimeMs > STALE_GUARD_MS) {
      const aside = `${guard}.stale-${randomBytes(4).toString('hex')}`;
      await rename(guard, aside).then(
        () => rm(aside, { force: true }),
        () => undefined,
      );
    } else if (held) await sleep(5);
  }
}

/** One directory. */
export class DirectoryOrigin implements OriginStore {
  readonly name: string;
  readonly #root: string;
  readonly #folders = new Folders();
  /** The files placed since the last {@link sync} (objects and their metadata); null: more than are synced one by one. */
  #unsynced: Set<string> | null = new Set();

  constructor(root: string) {
    this.#root = resolve(root);
    this.name = root;
  }

  async bindingFor(store: string): Promise<{ origin: string; store: string }> {
    const real = (path: string) => realpath(path).catch(() => resolve(path));
    const [folder, root] = await Promise.all([real(dirname(resolve(store))), real(this.#root)]);
    return { origin: relative(folder, root) || '.', store: relative(root, join(folder, basename(store))) };
  }

  /** The file of a key; refuses a key that leads outside the directory or into the metadata. */
  #path(key: string): string {
    const path = resolve(this.#root, key);
    if (!path.startsWith(this.#root + sep) || key.startsWith(`${META_DIR}/`) || key === META_DIR)
      throw new StoreError(`${this.name}: ${JSON.stringify(key)} is not an object key`);
    return path;
  }

  #metaPath(key: string): string {
    return join(this.#root, META_DIR, `${key}.json`);
  }

  async put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'> {
    const path = this.#path(object.key);
    const temp = await writeTemporary(this.#folders, path, object.chunks);
    const meta = writeTemporary(this.#folders, this.#metaPath(object.key), [
      Buffer.from(JSON.stringify(metadataOf(object))),
    ]);
    return this.#place(object.key, temp, meta, options.overwrite);
  }

  /** A second name for the file at `from` and its metadata: no byte is copied. */
  async copy(
    from: string,
    to: string,
    options: { readonly overwrite: boolean },
  ): Promise<'written' | 'exists'> {
    const [source, path] = [this.#path(from), this.#path(to)];
    const linked = async (file: string, target: string) => {
      await this.#folders.ensure(dirname(target));
      const temp = temporary(target);
      await link(file, temp);
      return temp;
    };
    const temp = await linked(source, path);
    return this.#place(to, temp, linked(this.#metaPath(from), this.#metaPath(to)), options.overwrite);
  }

  /** Renames (`overwrite`) or links the temporary files of an object and its metadata into place. */
  async #place(
    key: string,
    temp: string,
    meta: Promise<string>,
    overwrite: boolean,
  ): Promise<'written' | 'exists'> {
    const path = this.#path(key);
    let metaTemp: string | undefined;
    try {
      metaTemp = await meta;
      if (overwrite) {
        await rename(metaTemp, this.#metaPath(key));
        await rename(temp, path);
        this.#placed(path, this.#metaPath(key));
        return 'written';
      }
      try {
        await link(temp, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
        throw error;
      }
      await rename(metaTemp, this.#metaPath(key));
      this.#placed(path, this.#metaPath(key));
      return 'written';
    } finally {
      await Promise.all([rm(temp, { force: true }), metaTemp ? rm(metaTemp, { force: true }) : null]);
    }
  }

  /**
   * Replaces the object only if its MD5 is still `expectedMd5`. The key is never missing meanwhile (a racing
   * create-if-absent always finds it): one replacer at a time holds `<file>.cas`, a link to the stored file.
   */
  async replace(object: ObjectToWrite, expectedMd5: string): Promise<boolean> {
    const path = this.#path(object.key);
    const guard = `${path}.cas`;
    if (!(await takeGuard(path, guard))) return false;
    try {
      const current = await readFile(guard);
      if (createHash('md5').update(current).digest('hex') !== expectedMd5) return false;
      await this.put(object, { overwrite: true });
      return true;
    } finally {
      await rm(guard, { force: true });
    }
  }

  /** An object's metadata, read synchronously (see {@link list}). */
  #metadata(key: string): Metadata | undefined {
    try {
      return Metadata.safeParse(JSON.parse(readFileSync(this.#metaPath(key), 'utf8'))).data;
    } catch {
      return undefined;
    }
  }

  async get(key: string): Promise<FetchedObject | null> {
    const path = this.#path(key);
    const read = await Promise.all([stat(path), readFile(path)]).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (!read?.[0].isFile()) return null;
    const [info, body] = read;
    const metadata = this.#metadata(key);
    // Hashed when asked for: most reads (a build's 7.5 MB manifest, say) never look at it.
    let md5: string | undefined;
    return {
      key,
      body,
      size: body.length,
      get md5() {
        md5 ??= createHash('md5').update(body).digest('hex');
        return md5;
      },
      lastModified: info.mtime,
      contentType: metadata?.contentType,
      contentEncoding: metadata?.contentEncoding,
      cacheControl: metadata?.cacheControl,
    };
  }

  async getRange(key: string, offset: number, size: number): Promise<Buffer | null> {
    const file = await open(this.#path(key)).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (!file) return null;
    try {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await file.read(buffer, 0, size, offset);
      return buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  }

  /** Every object under `prefix`, with its MD5 as recorded when written ({@link md5} reads the bytes). */
  async list(prefix: string, options: { readonly md5?: boolean } = {}): Promise<StoredObject[]> {
    const withMd5 = options.md5 ?? true;
    const startKey = dirname(`${prefix}x`);
    // Stat'ed and read synchronously, yielding now and then: through the thread pool 30,000 pages cost several
    // times the CPU (docs/decisions.md#build-cost).
    let files: { key: string; path: string }[];
    try {
      files = this.#walk(join(this.#root, startKey), startKey === '.' ? '' : `${startKey}/`, prefix);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const found: StoredObject[] = [];
    for (let index = 0; index < files.length; index += 1) {
      if (index % 2000 === 1999) await yieldToLoop();
      const { key, path } = files[index] as { key: string; path: string };
      let info: Stats | undefined;
      try {
        info = statSync(path, { throwIfNoEntry: false });
      } catch {
        info = undefined;
      }
      if (!info?.isFile()) continue;
      found.push({
        key,
        size: info.size,
        md5: withMd5 ? (this.#metadata(key)?.md5 ?? '') : '',
        lastModified: info.mtime,
      });
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The files under `dir` (key `dirKey`) whose keys start with `prefix`, but metadata and temporaries. */
  #walk(dir: string, dirKey: string, prefix: string): { key: string; path: string }[] {
    const files: { key: string; path: string }[] = [];
    const visit = (folder: string, folderKey: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const key = folderKey + entry.name;
        const path = folder + sep + entry.name;
        const isFolder =
          entry.isDirectory() ||
          (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isDirectory() === true);
        if (isFolder) {
          const inside = `${key}/`;
          if (inside === `${META_DIR}/`) continue;
          if (inside.startsWith(prefix) || prefix.startsWith(inside)) {
            try {
              visit(path, inside);
            } catch (error) {
              if (!isMissing(error)) throw error;
            }
          }
          continue;
        }
        if (key.startsWith(prefix) && !TEMPORARY.test(key)) files.push({ key, path });
      }
    };
    visit(dir, dirKey);
    return files;
  }

  /** The folders directly under `prefix` (which ends with `/`), as prefixes: one readdir, nothing below. */
  async listPrefixes(prefix: string): Promise<string[]> {
    const dir = join(this.#root, prefix);
    try {
      const entries = await readdir(dir, { withFileTypes: true });
      return entries
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${prefix}${entry.name}/`)
        .sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  /** Hashes the file's bytes as they are now, streaming (a catalog of 30,000 plans is never held whole). */
  async md5(key: string): Promise<string | null> {
    const hash = createHash('md5');
    try {
      for await (const chunk of createReadStream(this.#path(key))) hash.update(chunk as Buffer);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    return hash.digest('hex');
  }

  async delete(keys: readonly string[]): Promise<void> {
    await pLimit(FILE_CONCURRENCY).map(keys, async (key) => {
      await rm(this.#path(key), { force: true });
      await rm(this.#metaPath(key), { force: true });
    });
  }

  /** Removes the folder of `prefix` (which ends with `/`) and its metadata, whole. */
  async deletePrefix(prefix: string): Promise<void> {
    const dir = this.#path(prefix.replace(/\/$/, ''));
    await rm(join(this.#root, META_DIR, prefix), { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  }

  /** Records files placed, until there are more than {@link FSYNC_FILES_UP_TO}. */
  #placed(...paths: string[]): void {
    if (!this.#unsynced) return;
    for (const path of paths) this.#unsynced.add(path);
    if (this.#unsynced.size > FSYNC_FILES_UP_TO) this.#unsynced = null;
  }

  /**
   * Makes every object written so far durable: each file placed since the last sync, then every folder from
   * theirs up to the directory (where their names were linked); or, after more than {@link FSYNC_FILES_UP_TO}
   * files, one sync of the directory's file system.
   */
  async sync(): Promise<void> {
    const files = this.#unsynced;
    this.#unsynced = new Set();
    try {
      if (!files) return await syncFileSystem(this.#root);
      const folders = new Set<string>();
      for (const file of files)
        for (let folder = dirname(file); folder.startsWith(this.#root); folder = dirname(folder)) {
          if (folders.has(folder)) break;
          folders.add(folder);
          if (folder === this.#root) break;
        }
      const limit = pLimit(FILE_CONCURRENCY);
      await limit.map([...files], fsyncPath);
      await limit.map([...folders], fsyncPath);
    } catch (error) {
      // Not synced: the next sync covers these files too, with the file system's.
      this.#unsynced = null;
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot sync ${this.name} to disk: ${(error as Error).message}`, { cause: error });
    }
  }
}

/** Files a flat write handles between two turns of the event loop. */
const FILES_PER_TURN = 128;

/** Calls `each` on every item synchronously, yielding to the event loop every {@link FILES_PER_TURN}. */
async function inTurns<T>(items: readonly T[], each: (item: T) => void): Promise<void> {
  for (let start = 0; start < items.length; start += FILES_PER_TURN) {
    for (const item of items.slice(start, start + FILES_PER_TURN)) each(item);
    await yieldToLoop();
  }
}

/**
 * Writes a flat build into a directory (`catalog build --out`): every file under a temporary name, one sync, then
 * renamed into place, the manifest last; a failure leaves the previous output. Synchronous calls a slice at a time
 * cost about half the CPU of libuv's pool for thousands of small files.
 */
export async function writeFlat(dir: string, objects: readonly ObjectToWrite[]): Promise<void> {
  const root = resolve(dir);
  const folders = new Set<string>();
  const staged: { temp: string; target: string }[] = [];
  const stage = (path: string, chunks: readonly Buffer[]) => {
    const folder = dirname(path);
    if (!folders.has(folder)) {
      mkdirSync(folder, { recursive: true });
      folders.add(folder);
    }
    const temp = temporary(path);
    staged.push({ temp, target: path });
    writeFileSync(temp, chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks as Buffer[]));
  };
  const fail = (error: unknown, message: (reason: string) => string) => {
    for (const { temp } of staged) rmSync(temp, { force: true });
    return new StoreError(message((error as Error).message), { cause: error });
  };
  try {
    await inTurns(objects, (object) => {
      stage(join(root, META_DIR, `${object.key}.json`), [Buffer.from(JSON.stringify(metadataOf(object)))]);
      stage(resolve(root, object.key), object.chunks);
    });
    await syncFileSystem(root);
  } catch (error) {
    throw fail(error, (reason) => `cannot write ${dir}: ${reason}; the previous output is untouched`);
  }
  // The manifest is renamed last (a stable sort): a reader that finds it finds every object it lists.
  const last = join(root, MANIFEST);
  staged.sort((a, b) => Number(a.target === last) - Number(b.target === last));
  try {
    await inTurns(staged, ({ temp, target }) => renameSync(temp, target));
  } catch (error) {
    throw fail(error, (reason) => `cannot replace files in ${dir}: ${reason}`);
  }
}
