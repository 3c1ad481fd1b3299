/**
 * The origin as a directory, for the local stack: each object a file at its key, its headers following from its
 * key (contract/objects.ts), its MD5 from its bytes, which a listing gives as S3's does (hashed once per version of
 * the file: digests.ts). Every object is placed whole from a temporary file in `.tmp/`: renamed (overwrite), or
 * linked where the key is absent; a copy writes the bytes it read. A killed writer leaves only temporary files,
 * which the next writer sweeps.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, type Dirent, fstatSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { link, lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import pLimit from 'p-limit';
import { lock } from 'proper-lockfile';
import { StoreError } from '../contract/errors.ts';
import { isAlive } from '../files/alive.ts';
import { DigestMemory, settled, stampOf } from './digests.ts';
import {
  type CopyOptions,
  type FetchedObject,
  type ObjectToWrite,
  type OriginStore,
  type StoredObject,
  storedHeaders,
} from './origin.ts';

/** The origin's own files, never objects: temporary files (swept of dead writers'), the MD5s remembered. */
const TEMP_DIR = '.tmp';
const DIGESTS = '.digests';

/** File operations at once: enough to keep the disk busy, few enough not to crowd libuv's pool. */
const FILE_CONCURRENCY = 16;

const isMissing = (error: unknown) =>
  ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(String((error as NodeJS.ErrnoException).code));
const isTaken = (error: unknown) => (error as NodeJS.ErrnoException).code === 'EEXIST';
const md5Of = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

/** One directory. */
export class DirectoryOrigin implements OriginStore {
  readonly name: string;
  readonly #root: string;
  readonly #made = new Map<string, Promise<unknown>>();
  #swept: Promise<void> | undefined;
  /** Writes under way through a temporary file. */
  #writing = 0;
  #digests: Promise<DigestMemory> | undefined;
  #hashed = 0;

  constructor(root: string) {
    this.#root = resolve(root);
    this.name = root;
  }

  /** The files this origin has read to hash them since it was opened: a listing of what it knows reads none. */
  get hashed(): number {
    return this.#hashed;
  }

  /** The file of a key; refuses a key that leads outside the directory or into a file of its own (`.tmp/`). */
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

  #temporary(): string {
    return join(this.#root, TEMP_DIR, `${process.pid}-${randomBytes(6).toString('hex')}`);
  }

  #memory(): Promise<DigestMemory> {
    this.#digests ??= DigestMemory.open(join(this.#root, DIGESTS), () => this.#temporary());
    return this.#digests;
  }

  /**
   * Places `body` (of MD5 `md5`) at `key` from a whole temporary file, its modification time set a second back
   * (digests.ts `settled`) and its MD5 remembered. The first of a burst of writes sweeps the temporary files of
   * writers that are gone (an origin kept open sweeps at each run); the last saves the MD5s remembered.
   */
  async #write(key: string, body: Buffer, md5: string, overwrite: boolean): Promise<'written' | 'exists'> {
    const path = this.#path(key);
    const dir = join(this.#root, TEMP_DIR);
    if (this.#writing === 0) this.#swept = this.#sweep(dir);
    this.#writing += 1;
    const temp = this.#temporary();
    try {
      await this.#swept;
      await writeFile(temp, body);
      const back = new Date(Date.now() - 1000);
      await utimes(temp, back, back);
      const written = await stat(temp, { bigint: true });
      await this.#folder(dirname(path));
      if (overwrite) await rename(temp, path);
      else {
        try {
          await link(temp, path);
        } catch (error) {
          if (isTaken(error)) return 'exists';
          throw error;
        }
        await rm(temp);
      }
      const placed = await lstat(path, { bigint: true });
      if (placed.ino === written.ino && placed.mtimeNs === written.mtimeNs && placed.size === written.size)
        (await this.#memory()).remember(key, stampOf(placed), md5);
      return 'written';
    } finally {
      await rm(temp, { force: true });
      this.#writing -= 1;
      if (this.#writing === 0) await (await this.#memory()).save();
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

  /** Writes the object; refuses bytes whose MD5 is not the one it names, as S3 refuses them (`Content-MD5`). */
  async put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'> {
    const { chunks } = object;
    const body = chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks as Buffer[]);
    const md5 = md5Of(body);
    if (md5 !== object.md5)
      throw new StoreError(`${this.name}: the bytes of ${object.key} have MD5 ${md5}, not ${object.md5}`);
    return this.#write(object.key, body, md5, options.overwrite);
  }

  /** Writes the bytes of `from` at `to`, while they are those of `sourceMd5`. */
  async copy(from: string, to: string, options: CopyOptions): Promise<'written' | 'exists'> {
    const source = await this.get(from);
    if (!source) throw new StoreError(`${this.name}: ${from} is not an object`);
    if (source.md5 !== options.sourceMd5)
      throw new StoreError(`${this.name}: ${from} no longer holds the bytes of MD5 ${options.sourceMd5}`);
    return this.#write(to, source.body, source.md5, options.overwrite);
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
      if (current === null || md5Of(current) !== expectedMd5) return false;
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
    return {
      key,
      body,
      size: body.length,
      md5: md5Of(body),
      lastModified: info.mtime,
      ...storedHeaders(key),
    };
  }

  /**
   * Every object under `prefix`, with its size and MD5 (remembered for the file's stamp, else read and hashed).
   * Synchronous calls, yielding now and then: through the thread pool 30,000 pages cost several times the CPU.
   */
  async list(prefix: string): Promise<StoredObject[]> {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(this.#root, dirname(`${prefix}x`)), {
        recursive: true,
        withFileTypes: true,
      });
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const memory = await this.#memory();
    const found: StoredObject[] = [];
    for (const [index, entry] of entries.entries()) {
      if (index % 2000 === 1999) await yieldToLoop();
      const path = join(entry.parentPath, entry.name);
      const key = relative(this.#root, path).split(sep).join('/');
      // The origin's own files (`.tmp/`, `.digests`) are no objects.
      if (entry.isDirectory() || !key.startsWith(prefix) || key.startsWith('.') || key.includes('/.'))
        continue;
      const object = this.#listed(memory, key, path);
      if (object) found.push(object);
    }
    await memory.save();
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** A file as a listing gives it, or null when it is none (gone while listed, a folder, a broken link). */
  #listed(memory: DigestMemory, key: string, path: string): StoredObject | null {
    try {
      const before = statSync(path, { bigint: true, throwIfNoEntry: false });
      if (!before?.isFile()) return null;
      const stamp = stampOf(before);
      const known = memory.md5(key, stamp);
      if (known !== undefined) return { key, size: Number(before.size), md5: known };
      const fd = openSync(path, 'r');
      try {
        const body = readFileSync(fd);
        const after = fstatSync(fd, { bigint: true });
        const md5 = md5Of(body);
        this.#hashed += 1;
        if (stampOf(after) === stamp && settled(after, Date.now())) memory.remember(key, stamp, md5);
        return { key, size: body.length, md5 };
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
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
    const gone = new Set(keys);
    (await this.#digests)?.forget((key) => gone.has(key));
  }

  /** Removes the folder of `prefix` (which ends with `/`), whole. */
  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.#path(prefix.replace(/\/$/, '')), { recursive: true, force: true });
    (await this.#digests)?.forget((key) => key.startsWith(prefix));
  }
}
