import { type Stats, statSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { KVS_CORS_ORIGIN } from '../../contract/index.ts';
import { KvsFileError, parseKvsFile, screenEntries } from '../../keys/kvs-file.ts';
import type { KeyValueReader } from './sandbox.ts';

/** A version of the file (inode, size, times; compared field by field: a look makes no string), or none. */
type Version =
  | readonly [dev: number, ino: number, size: number, mtimeMs: number, ctimeMs: number]
  | 'missing'
  | 'unread';

/** Whether a file's status is this version. */
function isVersion(info: Stats, version: Version): boolean {
  return (
    typeof version !== 'string' &&
    info.dev === version[0] &&
    info.ino === version[1] &&
    info.size === version[2] &&
    info.mtimeMs === version[3] &&
    info.ctimeMs === version[4]
  );
}

/**
 * The local KeyValueStore behind `cf.kvs()`: the store file as it is when each function run starts. {@link
 * refresh} `stat`s it synchronously (a few µs; an asynchronous one costs about 45 µs a run, an interval leaves a
 * window, `fs.watch` may come late), so a key issued or revoked counts from the next request. A missing file is
 * an empty store; a bad one keeps the last good contents, reported once per change, as are refused entries.
 */
export class WatchedKeyValueStore implements KeyValueReader {
  readonly #path: string;
  readonly #onError: (message: string) => void;
  #entries = new Map<string, string>();
  /** The version of the file `#entries` came from. */
  #version: Version = 'unread';
  /** The read in flight, if any: one at a time, so an older read never lands after a newer one. */
  #reading: Promise<void> | undefined;
  /** The last problem reported, so a file that stays unreadable is reported once, not on every request. */
  #reported = '';

  constructor(path: string, options: { onError?: (message: string) => void } = {}) {
    this.#path = path;
    this.#onError = options.onError ?? (() => {});
  }

  /** Brings the contents up to date with the file now. */
  load(): Promise<void> {
    return this.#settle();
  }

  /** Looks at the file once: `undefined` when memory holds the file as it is now, else the reload to await. */
  refresh(): Promise<void> | undefined {
    return this.#reading === undefined && this.#unchanged() ? undefined : this.#settle();
  }

  /** The value in memory (`undefined`: no such key), without looking at the file (after {@link refresh}). */
  peek(key: string): string | undefined {
    return this.#entries.get(key);
  }

  /** Waits for contents read after this call (a read in flight may predate a change): then looks again. */
  async #settle(): Promise<void> {
    if (this.#reading !== undefined) await this.#reading;
    if (this.#unchanged()) return;
    if (this.#reading === undefined) {
      const reading = this.#read().finally(() => {
        if (this.#reading === reading) this.#reading = undefined;
      });
      this.#reading = reading;
    }
    await this.#reading;
  }

  /** Whether the file is the version in memory, looking at it now; true (reported) when it cannot be looked at. */
  #unchanged(): boolean {
    try {
      const info = statSync(this.#path, { throwIfNoEntry: false });
      return info === undefined ? this.#version === 'missing' : isVersion(info, this.#version);
    } catch (error) {
      this.#cannotRead(error);
      return true;
    }
  }

  /** Reads the file into `#entries`. Never rejects: a problem is reported and the last good contents stay. */
  async #read(): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(this.#path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.#entries = new Map();
        this.#version = 'missing';
        this.#reported = '';
        return;
      }
      this.#cannotRead(error);
      return;
    }
    try {
      // The version of what is read, taken before reading: a change during the read is seen by the next look.
      const info = await handle.stat();
      const version: Version = [info.dev, info.ino, info.size, info.mtimeMs, info.ctimeMs];
      let parsed: Map<string, string>;
      try {
        parsed = parseKvsFile(await handle.readFile('utf8'), this.#path);
      } catch (error) {
        // Remember the bad version so the error is reported once per change, not on every lookup.
        this.#version = version;
        this.#reported = '';
        const reason =
          error instanceof KvsFileError
            ? error.message
            : `cannot read ${this.#path}: ${(error as Error).message}`;
        this.#onError(`${reason}; keeping the last good key store`);
        return;
      }
      const { entries, refused } = screenEntries(parsed);
      this.#entries = entries;
      this.#version = version;
      this.#reported = '';
      for (const { key, problem } of refused) {
        const effect =
          key === KVS_CORS_ORIGIN ? 'CORS stays off until it is fixed' : 'the key gets 401 until it is fixed';
        this.#onError(`${this.#path}: refusing ${problem}; ${effect}`);
      }
    } catch (error) {
      this.#cannotRead(error);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** Reports that the file cannot be read, once for as long as the reason stays the same. */
  #cannotRead(error: unknown): void {
    const message = `cannot read the key store ${this.#path}: ${(error as Error).message}; keeping the last good one`;
    if (message === this.#reported) return;
    this.#reported = message;
    this.#onError(message);
  }
}
