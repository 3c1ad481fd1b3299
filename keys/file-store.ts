/**
 * The local backend of {@link KeyValueStore}: a file in the KeyValueStore import format, the file `catalog
 * serve` reads (and re-reads when it changes).
 */
import { access, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { lock } from 'proper-lockfile';
import { StoreError } from '../contract/errors.ts';
import { writeFileAtomic } from '../files/atomic-write.ts';
import { parseKvsFile, serializeKvsFile } from './kvs-file.ts';
import { type KeyValueStore, planWrite, type StoreOptions } from './store.ts';

export { type KeyValueStore, StoreError } from './store.ts';

interface FileStoreOptions extends StoreOptions {
  /**
   * A missing file is an empty store, created by the first write (`keys issue`, `cors set`, the local stack);
   * else an error: a typo in a path must not read as "no keys", nor start a second store.
   */
  readonly create?: boolean;
}

/** A lock its holder has not renewed for this long is taken over: the holder was killed, or hangs. */
export const STALE_LOCK_MS = 10_000;
/** How long a command waits for another's lock before giving up (a dead holder's lock turns stale meanwhile). */
const LOCK_WAIT_MS = STALE_LOCK_MS + 5_000;
/** How many times an update starts again on fresh entries when the file changed under it. */
const ATTEMPTS = 3;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The error for a store file that does not exist, where a command may not create one. */
function missingStore(path: string): StoreError {
  return new StoreError(
    `store ${path} does not exist; check the path (catalog keys issue or cors set creates a store, npm start creates .catalog/kvs.json)`,
  );
}

/** Throws a {@link StoreError} saying so when the store file `path` does not exist. */
export async function requireStoreFile(path: string): Promise<void> {
  await access(path).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') throw missingStore(path);
  });
}

/**
 * The local store. Each update holds the lock `<file>.lock` (proper-lockfile: a folder its holder keeps fresh,
 * taken over once it is {@link STALE_LOCK_MS} old), reads the file, and replaces it whole (files/atomic-write.ts)
 * only if it still holds the bytes the change was made on: a lock taken over from a holder that hung, or by two
 * commands at once, never loses an entry, the later update starting again instead.
 */
export class FileKeyValueStore implements KeyValueStore {
  readonly name: string;
  readonly #path: string;
  readonly #onWarning: (message: string) => void;
  readonly #create: boolean;

  constructor(path: string, options: FileStoreOptions = {}) {
    this.#path = path;
    this.#create = options.create ?? false;
    this.name = path;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  /** Every entry; a missing file is an error (empty with `create`), a corrupt one always. */
  async read(): Promise<Map<string, string>> {
    return this.#parse(await this.#text());
  }

  /** The entries of the file's text (null: no file). */
  #parse(text: string | null): Map<string, string> {
    if (text === null) {
      if (this.#create) return new Map();
      throw missingStore(this.#path);
    }
    try {
      return parseKvsFile(text, this.#path);
    } catch (error) {
      throw new StoreError(`${(error as Error).message}; fix or restore the file, nothing was changed`, {
        cause: error,
      });
    }
  }

  /** The file's text, or null when there is none. */
  async #text(): Promise<string | null> {
    try {
      return await readFile(this.#path, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return null;
      throw new StoreError(`cannot read ${this.#path}: ${(error as Error).message}`, { cause: error });
    }
  }

  async update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const release = await this.#lock();
      try {
        const before = await this.#text();
        const plan = await planWrite(this.name, this.#parse(before), change);
        if (plan.empty) return plan.result;
        if ((await this.#text()) === before) {
          await this.#write(plan.after);
          for (const warning of plan.warnings) this.#onWarning(`${this.name}: ${warning}`);
          return plan.result;
        }
        if (attempt >= ATTEMPTS)
          throw new StoreError(
            `${this.#path} was changed by another command during each of ${ATTEMPTS} attempts; nothing was changed`,
          );
      } finally {
        await release().catch(() => {});
      }
    }
  }

  async #write(entries: ReadonlyMap<string, string>): Promise<void> {
    try {
      await writeFileAtomic(this.#path, serializeKvsFile(entries));
    } catch (error) {
      const message = `cannot write ${this.#path}: ${(error as Error).message}; the store is unchanged`;
      throw new StoreError(message, { cause: error });
    }
  }

  /** Takes the lock, waiting up to {@link LOCK_WAIT_MS} for another command's; answers its release. */
  async #lock(): Promise<() => Promise<void>> {
    // Checked before the folder is made: a command that may not create the store creates nothing.
    if (!this.#create) await requireStoreFile(this.#path);
    try {
      await mkdir(dirname(this.#path), { recursive: true });
    } catch (error) {
      throw new StoreError(`cannot create the folder of ${this.#path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      try {
        return await lock(this.#path, {
          realpath: false,
          stale: STALE_LOCK_MS,
          // A lock lost while held (this process hung past the stale time) is caught by update's comparison.
          onCompromised: () => {},
        });
      } catch (error) {
        if (errorCode(error) !== 'ELOCKED')
          throw new StoreError(`cannot lock ${this.#path}: ${(error as Error).message}`, { cause: error });
      }
      if (Date.now() > deadline)
        throw new StoreError(
          `${this.#path} is locked by another command, which still holds it (${this.#path}.lock); nothing was changed`,
        );
      await sleep(pause);
    }
  }
}
