import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CatalogError } from '../builder/errors.ts';
import { parseKvsFile, serializeKvsFile } from './kvs-file.ts';

/** A store that can be read and changed atomically: the local file, or CloudFront KeyValueStore. */
export interface KeyValueStore {
  /** A human name for messages (a path, or the KVS ARN). */
  readonly name: string;
  /** Every entry now. */
  read(): Promise<Map<string, string>>;
  /**
   * Reads the entries, lets `change` edit a copy, and writes the result as one atomic change. Concurrent
   * updates never lose each other's entries. Returns what `change` returned.
   */
  update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T>;
}

/** Thrown when the store cannot be read or written; nothing was changed. */
export class StoreError extends CatalogError {
  override name = 'StoreError';
}

/**
 * The local store: a file in the KeyValueStore import format. Writes go to a temporary file that is renamed
 * over the old one, under an exclusive lock file, so two commands at once never lose an entry and a failed
 * write leaves the old file whole. A lock older than `staleLockMs` (a crashed command) is taken over.
 */
export class FileKeyValueStore implements KeyValueStore {
  readonly name: string;
  readonly #path: string;
  readonly #staleLockMs: number;

  constructor(path: string, options: { staleLockMs?: number } = {}) {
    this.#path = path;
    this.name = path;
    this.#staleLockMs = options.staleLockMs ?? 10_000;
  }

  async read(): Promise<Map<string, string>> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw new StoreError(`cannot read ${this.#path}: ${(error as Error).message}`, { cause: error });
    }
    try {
      return parseKvsFile(text, this.#path);
    } catch (error) {
      throw new StoreError(`${(error as Error).message}; fix or restore the file, nothing was changed`, {
        cause: error,
      });
    }
  }

  async update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T> {
    const release = await this.#lock();
    try {
      const entries = await this.read();
      const result = await change(entries);
      const temp = `${this.#path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        await writeFile(temp, serializeKvsFile(entries), { mode: 0o600, flush: true });
        await rename(temp, this.#path);
      } catch (error) {
        await rm(temp, { force: true });
        throw new StoreError(
          `cannot write ${this.#path}: ${(error as Error).message}; the store is unchanged`,
          {
            cause: error,
          },
        );
      }
      return result;
    } finally {
      await release();
    }
  }

  async #lock(): Promise<() => Promise<void>> {
    const lockPath = `${this.#path}.lock`;
    await mkdir(dirname(this.#path), { recursive: true });
    const deadline = Date.now() + this.#staleLockMs + 5_000;
    for (let attempt = 0; ; attempt += 1) {
      try {
        const handle = await open(lockPath, 'wx');
        await handle.writeFile(String(process.pid));
        await handle.close();
        return () => rm(lockPath, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new StoreError(`cannot lock ${this.#path}: ${(error as Error).message}`, { cause: error });
        }
      }
      const age = await stat(lockPath).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (age > this.#staleLockMs) await rm(lockPath, { force: true });
      if (Date.now() > deadline)
        throw new StoreError(`${this.#path} is locked by another command (${lockPath})`);
      await sleep(Math.min(10 * 2 ** Math.min(attempt, 5), 200));
    }
  }
}
