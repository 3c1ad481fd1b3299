/**
 * The origin as a directory, for the local stack: each object is a file at its key, and what S3 keeps as the
 * object's metadata (Content-Type, Content-Encoding, Cache-Control, MD5) is kept beside it in
 * `.meta/<key>.json`. A write never exposes a half-written file (a temporary file, then a rename or a hard
 * link), and a write that must not overwrite links the new file into place, which fails when one is there.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { StoreError } from '../contract/errors.ts';
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

/** Writes a file completely (and to disk) under a temporary name; returns that name. */
async function writeTemporary(path: string, chunks: readonly Buffer[]): Promise<string> {
  const temp = temporary(path);
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(temp, 'w');
  try {
    await handle.writev([...chunks]);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  } finally {
    await handle.close().catch(() => undefined);
  }
  return temp;
}

const isMissing = (error: unknown) =>
  ['ENOENT', 'ENOTDIR'].includes(String((error as NodeJS.ErrnoException).code));

/** One directory. */
export class DirectoryOrigin implements OriginStore {
  readonly name: string;
  readonly #root: string;

  constructor(root: string) {
    this.#root = resolve(root);
    this.name = root;
  }

  /** The file of a key; refuses a key that leads outside the directory. */
  #path(key: string): string {
    const path = resolve(this.#root, key);
    if (!path.startsWith(this.#root + sep) || key.startsWith(`${META_DIR}/`))
      throw new StoreError(`${this.name}: ${JSON.stringify(key)} is not an object key`);
    return path;
  }

  #metaPath(key: string): string {
    return join(this.#root, META_DIR, `${key}.json`);
  }

  async put(object: ObjectToWrite, options: { readonly overwrite: boolean }): Promise<'written' | 'exists'> {
    const path = this.#path(object.key);
    const metadata: Metadata = {
      contentType: object.contentType,
      ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
      cacheControl: object.cacheControl,
      md5: object.md5,
    };
    const temp = await writeTemporary(path, object.chunks);
    const metaTemp = await writeTemporary(this.#metaPath(object.key), [
      Buffer.from(JSON.stringify(metadata)),
    ]);
    try {
      if (options.overwrite) {
        await rename(metaTemp, this.#metaPath(object.key));
        await rename(temp, path);
        return 'written';
      }
      try {
        await link(temp, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
        throw error;
      }
      await rename(metaTemp, this.#metaPath(object.key));
      return 'written';
    } finally {
      await Promise.all([rm(temp, { force: true }), rm(metaTemp, { force: true })]);
    }
  }

  async #metadata(key: string): Promise<Metadata | undefined> {
    try {
      const parsed = Metadata.safeParse(JSON.parse(await readFile(this.#metaPath(key), 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async get(key: string): Promise<FetchedObject | null> {
    const path = this.#path(key);
    let body: Buffer;
    let modified: Date;
    try {
      const [info, bytes] = await Promise.all([stat(path), readFile(path)]);
      if (!info.isFile()) return null;
      body = bytes;
      modified = info.mtime;
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EISDIR') return null;
      throw error;
    }
    const metadata = await this.#metadata(key);
    return {
      key,
      body,
      size: body.length,
      md5: createHash('md5').update(body).digest('hex'),
      lastModified: modified,
      contentType: metadata?.contentType,
      contentEncoding: metadata?.contentEncoding,
      cacheControl: metadata?.cacheControl,
    };
  }

  /**
   * Every object under `prefix`: size from the file, MD5 as recorded when it was written (a file changed since
   * keeps its recorded MD5: {@link sha256} reads the bytes).
   */
  async list(prefix: string): Promise<StoredObject[]> {
    const start = join(this.#root, dirname(`${prefix}x`));
    let names: string[];
    try {
      names = await readdir(start, { recursive: true });
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const objects: StoredObject[] = [];
    for (const name of names) {
      const key = relative(this.#root, join(start, name)).split(sep).join('/');
      if (!key.startsWith(prefix) || key.startsWith(`${META_DIR}/`) || /\.tmp-\d+-[0-9a-f]{8}$/.test(key))
        continue;
      const info = await stat(join(start, name)).catch(() => null);
      if (!info?.isFile()) continue;
      const metadata = await this.#metadata(key);
      objects.push({ key, size: info.size, md5: metadata?.md5 ?? '', lastModified: info.mtime });
    }
    return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Hashes the file's bytes as they are now, streaming (a catalog of 30,000 plans is never held whole). */
  async sha256(key: string): Promise<string | null> {
    const hash = createHash('sha256');
    try {
      for await (const chunk of createReadStream(this.#path(key))) hash.update(chunk as Buffer);
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EISDIR') return null;
      throw error;
    }
    return hash.digest('hex');
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      await rm(this.#path(key), { force: true });
      await rm(this.#metaPath(key), { force: true });
    }
  }
}

/**
 * Writes a whole flat build into a directory (`catalog build --out`) without ever exposing a half-written
 * set: every file and its metadata are first written completely under temporary names, and only when all are
 * written are they renamed into place. When a write fails, the temporary files are removed and the previous
 * output stays as it was.
 */
export async function writeFlat(dir: string, objects: readonly ObjectToWrite[]): Promise<void> {
  const origin = new DirectoryOrigin(dir);
  const staged: { temp: string; target: string }[] = [];
  try {
    for (const object of objects) {
      const target = resolve(dir, object.key);
      const metaTarget = join(resolve(dir), META_DIR, `${object.key}.json`);
      const metadata: Metadata = {
        contentType: object.contentType,
        ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
        cacheControl: object.cacheControl,
        md5: object.md5,
      };
      staged.push({
        temp: await writeTemporary(metaTarget, [Buffer.from(JSON.stringify(metadata))]),
        target: metaTarget,
      });
      staged.push({ temp: await writeTemporary(target, object.chunks), target });
    }
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    throw new StoreError(
      `cannot write ${origin.name}: ${(error as Error).message}; the previous output is untouched`,
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
      throw new StoreError(`cannot replace ${target}: ${(error as Error).message}`, { cause: error });
    }
  }
}
