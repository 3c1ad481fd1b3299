/**
 * The local backend of {@link KeyValueStore}: a file in the KeyValueStore import format, the file `catalog
 * serve` reads (and re-reads when it changes).
 */
import { randomBytes } from 'node:crypto';
import { access, link, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreError } from '../contract/errors.ts';
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

/** A lock older than this is taken over even if its holder seems alive (a dead holder's at once). */
const STALE_LOCK_MS = 10_000;
/** How long to wait for a live holder before giving up. */
const LOCK_TIMEOUT_MS = STALE_LOCK_MS + 5_000;

/** Our lock was taken over while we held it (we looked hung): the write is abandoned and retried. */
class LockLostError extends StoreError {
  override name = 'LockLostError';
}

interface HeldLock {
  /** Throws {@link LockLostError} when the lock file is no longer ours. */
  assertHeld(): Promise<void>;
  release(): Promise<void>;
}

/** True when process `pid` exists on this host (EPERM: it exists, owned by someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

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
 * The local store. Each update holds a lock file (`<file>.lock`, made with its content by `link`), reads the
 * file and renames a flushed temporary file over it. A stale lock is renamed aside and checked to be the one
 * judged stale, so two takeovers cannot both win; a holder checks its lock is its own before it renames.
 */
export class FileKeyValueStore implements KeyValueStore {
  readonly name: string;
  readonly #path: string;
  readonly #lockPath: string;
  readonly #onWarning: (message: string) => void;
  readonly #create: boolean;

  constructor(path: string, options: FileStoreOptions = {}) {
    this.#path = path;
    this.#create = options.create ?? false;
    this.#lockPath = `${path}.lock`;
    this.name = path;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  /** Every entry; a missing file is an error (empty with `create`), a corrupt one always. */
  async read(): Promise<Map<string, string>> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if (errorCode(error) !== 'ENOENT')
        throw new StoreError(`cannot read ${this.#path}: ${(error as Error).message}`, { cause: error });
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

  async update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const lock = await this.#lock();
      try {
        const plan = await planWrite(this.name, await this.read(), change);
        if (plan.empty) return plan.result;
        await this.#write(plan.after, lock);
        for (const warning of plan.warnings) this.#onWarning(`${this.name}: ${warning}`);
        return plan.result;
      } catch (error) {
        if (!(error instanceof LockLostError) || attempt >= 3) throw error;
      } finally {
        await lock.release();
      }
    }
  }

  async #write(entries: ReadonlyMap<string, string>, lock: HeldLock): Promise<void> {
    const temp = `${this.#path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const mode = await stat(this.#path).then(
      (info) => info.mode & 0o777,
      () => 0o600,
    );
    try {
      await writeFile(temp, serializeKvsFile(entries), { mode, flush: true });
      await lock.assertHeld();
      await rename(temp, this.#path);
    } catch (error) {
      await rm(temp, { force: true });
      if (error instanceof LockLostError) throw error;
      const message = `cannot write ${this.#path}: ${(error as Error).message}; the store is unchanged`;
      throw new StoreError(message, { cause: error });
    }
    // Make the rename itself durable; some file systems refuse to sync a directory, which is harmless.
    await open(dirname(this.#path), 'r')
      .then(async (dir) => {
        await dir.sync().catch(() => {});
        await dir.close();
      })
      .catch(() => {});
  }

  async #lock(): Promise<HeldLock> {
    const lockPath = this.#lockPath;
    // Checked before the folder is made: a command that may not create the store creates nothing.
    if (!this.#create) await requireStoreFile(this.#path);
    try {
      await mkdir(dirname(this.#path), { recursive: true });
    } catch (error) {
      throw new StoreError(`cannot create the folder of ${this.#path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const content = `${process.pid} ${hostname()} ${randomBytes(8).toString('hex')}\n`;
    const mine = `${lockPath}.${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await writeFile(mine, content, { mode: 0o600 });
    } catch (error) {
      // On a full disk the file is created, empty, before the write fails: it goes too.
      await rm(mine, { force: true });
      throw new StoreError(`cannot lock ${this.#path}: ${(error as Error).message}`, { cause: error });
    }
    const deadline = Date.now() + LOCK_TIMEOUT_MS;
    let holder = '';
    try {
      for (let attempt = 0; ; attempt += 1) {
        try {
          // link() creates the lock with its content in one step, and fails if any lock exists.
          await link(mine, lockPath);
          return {
            assertHeld: async () => {
              const now = await readFile(lockPath, 'utf8').catch(() => '');
              if (now !== content) throw new LockLostError(`${lockPath} was taken over`);
            },
            release: async () => {
              const now = await readFile(lockPath, 'utf8').catch(() => '');
              if (now === content) await rm(lockPath, { force: true });
            },
          };
        } catch (error) {
          if (errorCode(error) !== 'EEXIST')
            throw new StoreError(`cannot lock ${this.#path}: ${(error as Error).message}`, { cause: error });
        }
        const found = await this.#inspectLock();
        if (found === undefined) continue; // released meanwhile: try again at once
        holder = found.content.split(' ')[0] ?? '';
        if (found.stale) {
          await this.#takeOver(found.content);
          continue;
        }
        if (Date.now() > deadline)
          throw new StoreError(
            `${this.#path} is locked by another command (process ${holder || 'unknown'}, ${lockPath}); nothing was changed`,
          );
        await sleep(Math.min(5 * 2 ** Math.min(attempt, 6), 100));
      }
    } finally {
      await rm(mine, { force: true });
    }
  }

  /** The current lock's content and whether it is stale, or undefined when there is no lock. */
  async #inspectLock(): Promise<{ content: string; stale: boolean } | undefined> {
    let content: string;
    let mtimeMs: number;
    try {
      [content, { mtimeMs }] = await Promise.all([readFile(this.#lockPath, 'utf8'), stat(this.#lockPath)]);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw new StoreError(`cannot read the lock ${this.#lockPath}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const [pid, host] = content.split(' ');
    const holderGone = host === hostname() && /^\d+$/.test(pid ?? '') && !isAlive(Number(pid));
    return { content, stale: holderGone || Date.now() - mtimeMs > STALE_LOCK_MS };
  }

  /** Removes the stale lock `staleContent`: renamed aside, and put back if another command took it meanwhile. */
  async #takeOver(staleContent: string): Promise<void> {
    const aside = `${this.#lockPath}.stale-${randomBytes(4).toString('hex')}`;
    try {
      await rename(this.#lockPath, aside);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return;
      throw new StoreError(`cannot take over the stale lock ${this.#lockPath}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      const moved = await readFile(aside, 'utf8');
      if (moved !== staleContent) await link(aside, this.#lockPath).catch(() => {});
    } finally {
      await rm(aside, { force: true });
    }
  }
}
