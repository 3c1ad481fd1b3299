/**
 * The origin as a directory, for the local stack: each object is a file at its key, and nothing else is kept
 * about it — its headers follow from its key (contract/objects.ts), its digests from its bytes. Every object is
 * placed by one atomic step from a temporary file written whole in `.tmp/`: a rename (overwrite), or a link
 * that fails when the key exists (create-if-absent); a copy is a symbolic link, so a listing names what it is a
 * copy of. A process killed mid-write leaves only its temporary files, which the next writer sweeps.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import {
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { lock } from 'proper-lockfile';
import { StoreError } from '../contract/errors.ts';
import { MANIFEST, PAGE_OBJECT_PREFIX, pageContentKey } from '../contract/index.ts';
import { isAlive } from '../files/alive.ts';
import {
  type CopyOptions,
  type FetchedObject,
  type ObjectToWrite,
  type OriginStore,
  type StoredObject,
  storedHeaders,
} from './origin.ts';

/** The folder of temporary files, inside the origin directory: never an object, swept of dead writers' files. */
const TEMP_DIR = '.tmp';

/** File operations at once: enough to keep the disk busy, few enough not to crowd libuv's pool. */
const FILE_CONCURRENCY = 16;

const isMissing = (error: unknown) =>
  ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(String((error as NodeJS.ErrnoException).code));
const isTaken = (error: unknown) => (error as NodeJS.ErrnoException).code === 'EEXIST';

/** One directory. */
export class DirectoryOrigin implements OriginStore {
  readonly name: string;
  readonly #root: string;
  readonly #made = new Map<string, Promise<unknown>>();
  #swept: Promise<void> | undefined;
  /** Writes under way through a temporary file. */
  #writing = 0;

  constructor(root: string) {
    this.#root = resolve(root);
    this.name = root;
  }

  /** The file of a key; refuses a key that leads outside the directory or into a folder of its own (`.tmp/`). */
  #path(key: string): string {
    const path = resolve(this.#root, key);
    if (!path.startsWith(this.#root + sep) || key.startsWith('.') || key.includes('/.'))
      throw new StoreError(`${this.name}: ${JSON.stringify(key)} is not an object key`);
    return path;
  }

  /** Creates a folder once per origin (a build writes thousands of files into a few folders). */
  #folder(dir: string): Promise<unknown> {
    let made = this.#made.get(dir);
    if (!made) {
      made = mkdir(dir, { recursive: true });
      made.catch(() => this.#made.delete(dir));
      this.#made.set(dir, made);
    }
    return made;
  }

  /**
   * Places at `key` a temporary file in `.tmp/` that `write` makes whole: renamed over it, or linked only where it
   * is absent. The first of a burst of writes (none under way) sweeps the temporary files of writers that are gone
   * first, so an origin kept open across runs sweeps at each of them.
   */
  async #viaTemporary(
    key: string,
    overwrite: boolean,
    write: (temp: string) => Promise<void>,
  ): Promise<'written' | 'exists'> {
    const dir = join(this.#root, TEMP_DIR);
    if (this.#writing === 0) this.#swept = this.#sweep(dir);
    this.#writing += 1;
    const temp = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await this.#swept;
      await write(temp);
      return await this.#place(temp, key, overwrite);
    } finally {
      this.#writing -= 1;
      await rm(temp, { force: true });
    }
  }

  /** Removes the temporary files of writers that are gone (their process ended: killed mid-write). */
  async #sweep(dir: string): Promise<void> {
    await this.#folder(dir);
    const names = await readdir(dir);
    const gone = names.filter((name) => {
      const pid = /^(\d+)-/.exec(name)?.[1];
      return pid !== undefined && !isAlive(Number(pid));
    });
    await Promise.all(gone.map((name) => rm(join(dir, name), { recursive: true, force: true })));
  }

  /** Places the whole temporary file `temp` at `key`: renamed over it, or linked only where it is absent. */
  async #place(temp: string, key: string, overwrite: boolean): Promise<'written' | 'exists'> {
    const path = this.#path(key);
    await this.#folder(dirname(path));
    if (overwrite) {
      await rename(temp, path);
      return 'written';
    }
    try {
      await link(temp, path);
    } catch (error) {
      if (isTaken(error)) return 'exists';
      throw error;
    }
    return 'written';
  }

  async put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'> {
    // A live page is stored under its digest and linked there, so a listing names what it holds (S3 lists its MD5).
    if (object.key.startsWith(PAGE_OBJECT_PREFIX)) {
      const stored = pageContentKey(object.md5);
      await this.put({ ...object, key: stored }, { overwrite: true });
      return this.copy(stored, object.key, options);
    }
    const { chunks } = object;
    return this.#viaTemporary(object.key, options.overwrite, (temp) =>
      writeFile(temp, chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks as Buffer[])),
    );
  }

  /**
   * A symbolic link to the file at `from` (to the file it links to, when it is a copy), relative, so the directory
   * can move or be copied whole.
   */
  async copy(from: string, to: string, options: CopyOptions): Promise<'written' | 'exists'> {
    let source = this.#path(from);
    if ((await lstat(source)).isSymbolicLink()) source = resolve(dirname(source), await readlink(source));
    const target = this.#path(to);
    const info = await stat(source);
    if (!info.isFile() || !source.startsWith(this.#root + sep))
      throw new StoreError(`${this.name}: ${from} is not an object`);
    // A link to the file it is (a live page kept under its name): that file is the copy already, and its bytes are
    // what `catalog status` checks.
    if (source === target) return 'exists';
    if (
      options.sourceMd5 !== undefined &&
      createHash('md5')
        .update(await readFile(source))
        .digest('hex') !== options.sourceMd5
    )
      throw new StoreError(`${this.name}: ${from} no longer holds the bytes of MD5 ${options.sourceMd5}`);
    const pointing = relative(dirname(target), source);
    if (options.overwrite || options.sourceMd5 !== undefined) {
      return this.#viaTemporary(to, true, (temp) => symlink(pointing, temp));
    }
    // Made at the key itself, which fails where one exists.
    await this.#folder(dirname(target));
    try {
      await symlink(pointing, target);
    } catch (error) {
      if (isTaken(error)) return 'exists';
      throw error;
    }
    return 'written';
  }

  /**
   * Replaces the object only if its MD5 is still `expectedMd5`. The key is never missing meanwhile (the new bytes
   * are renamed over the old), and replacers of one key take turns under a lock file (proper-lockfile).
   */
  async replace(object: ObjectToWrite, expectedMd5: string): Promise<boolean> {
    const path = this.#path(object.key);
    const release = await lock(path, {
      realpath: false,
      stale: 10_000,
      retries: { retries: 100, minTimeout: 5, maxTimeout: 250 },
      lockfilePath: join(
        this.#root,
        TEMP_DIR,
        `cas-${createHash('sha1').update(object.key).digest('hex')}.lock`,
      ),
      // A turn that outlived `stale` was taken over (its replacer hung): what it did, it did in its turn.
      onCompromised: () => {},
    });
    try {
      const current = await readFile(path).catch((error: unknown) => {
        if (isMissing(error)) return null;
        throw error;
      });
      if (current === null || createHash('md5').update(current).digest('hex') !== expectedMd5) return false;
      await this.put(object, { overwrite: true });
      return true;
    } finally {
      await release().catch(() => {});
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
    // Hashed when asked for: most reads (a build's manifest, say) never look at it.
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
      ...storedHeaders(key),
    };
  }

  /**
   * Every object under `prefix`: its size, or for a copy the key it links to (a copy is not stat'ed: its source
   * is looked up in one listing of the source's folder). Read synchronously, yielding now and then: through the
   * thread pool 30,000 pages cost several times the CPU (docs/decisions.md#build-cost). A link whose object is
   * gone is no object.
   */
  async list(prefix: string): Promise<StoredObject[]> {
    const startKey = dirname(`${prefix}x`);
    let files: { key: string; path: string; link: boolean }[];
    try {
      files = this.#walk(join(this.#root, startKey), startKey === '.' ? '' : `${startKey}/`, prefix);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const folders = new Map<string, ReadonlySet<string>>();
    const filesIn = (folder: string) => {
      let names = folders.get(folder);
      if (!names) {
        try {
          names = new Set(
            readdirSync(folder, { withFileTypes: true })
              .filter((entry) => entry.isFile())
              .map((entry) => entry.name),
          );
        } catch {
          names = new Set();
        }
        folders.set(folder, names);
      }
      return names;
    };
    const found: StoredObject[] = [];
    for (let index = 0; index < files.length; index += 1) {
      if (index % 2000 === 1999) await yieldToLoop();
      const { key, path, link: isLink } = files[index] as (typeof files)[number];
      try {
        if (isLink) {
          const copyOf = posix.join(posix.dirname(key), readlinkSync(path).split(sep).join('/'));
          const slash = copyOf.lastIndexOf('/');
          if (!filesIn(join(this.#root, copyOf.slice(0, slash + 1))).has(copyOf.slice(slash + 1))) continue;
          found.push({ key, copyOf });
        } else {
          const info = statSync(path, { throwIfNoEntry: false });
          if (info?.isFile()) found.push({ key, size: info.size });
        }
      } catch {
        // Gone while listed: no object.
      }
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The files under `dir` (key `dirKey`) whose keys start with `prefix`, but the origin's own folders. */
  #walk(dir: string, dirKey: string, prefix: string): { key: string; path: string; link: boolean }[] {
    const files: { key: string; path: string; link: boolean }[] = [];
    const visit = (folder: string, folderKey: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        if (entry.name.startsWith('.')) continue;
        const key = folderKey + entry.name;
        const path = folder + sep + entry.name;
        if (entry.isDirectory()) {
          const inside = `${key}/`;
          if (inside.startsWith(prefix) || prefix.startsWith(inside))
            try {
              visit(path, inside);
            } catch (error) {
              if (!isMissing(error)) throw error;
            }
        } else if (key.startsWith(prefix)) files.push({ key, path, link: entry.isSymbolicLink() });
      }
    };
    visit(dir, dirKey);
    return files;
  }

  /** The folders directly under `prefix` (which ends with `/`), as prefixes: one readdir, nothing below. */
  async listPrefixes(prefix: string): Promise<string[]> {
    try {
      const entries = await readdir(join(this.#root, prefix), { withFileTypes: true });
      return entries
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
        .map((entry) => `${prefix}${entry.name}/`)
        .sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    await pLimit(FILE_CONCURRENCY).map(keys, (key) => rm(this.#path(key), { force: true }));
  }

  /** Removes the folder of `prefix` (which ends with `/`), whole. */
  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.#path(prefix.replace(/\/$/, '')), { recursive: true, force: true });
  }
}

const execFileAsync = promisify(execFile);

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
 * Writes a flat build into a directory (`catalog build --out`): every file under a temporary name, one sync of
 * the file system, then renamed into place, the manifest last; a failure leaves the previous output. Synchronous
 * calls a slice at a time cost about half the CPU of libuv's pool for thousands of small files.
 */
export async function writeFlat(dir: string, objects: readonly ObjectToWrite[]): Promise<void> {
  const root = resolve(dir);
  const folders = new Set<string>();
  const staged: { temp: string; target: string }[] = [];
  const suffix = `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fail = (error: unknown, message: (reason: string) => string) => {
    for (const { temp } of staged) rmSync(temp, { force: true });
    return new StoreError(message((error as Error).message), { cause: error });
  };
  try {
    await inTurns(objects, (object) => {
      const target = resolve(root, object.key);
      const folder = dirname(target);
      if (!folders.has(folder)) {
        mkdirSync(folder, { recursive: true });
        folders.add(folder);
      }
      const temp = target + suffix;
      staged.push({ temp, target });
      const { chunks } = object;
      writeFileSync(temp, chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks as Buffer[]));
    });
    await execFileAsync('sync', ['-f', root]).catch(() => execFileAsync('sync', []));
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
