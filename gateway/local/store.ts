import { readFile, stat } from 'node:fs/promises';
import { KvsFileError, parseKvsFile } from '../../keys/kvs-file.ts';
import type { KeyValueReader } from './sandbox.ts';

/**
 * The local KeyValueStore behind `cf.kvs()`: the store file, re-read when it changes (checked at most every
 * `checkIntervalMs`, so a key issued while the edge runs works within a second). An unreadable or corrupt file
 * keeps the last good contents and reports the error; it never makes a key valid that cannot be verified.
 * A missing file is an empty store.
 */
export class WatchedKeyValueStore implements KeyValueReader {
  readonly #path: string;
  readonly #checkIntervalMs: number;
  readonly #onError: (message: string) => void;
  #entries = new Map<string, string>();
  #version = '';
  #checkedAt = 0;
  #loading: Promise<void> | undefined;

  constructor(path: string, options: { checkIntervalMs?: number; onError?: (message: string) => void } = {}) {
    this.#path = path;
    this.#checkIntervalMs = options.checkIntervalMs ?? 250;
    this.#onError = options.onError ?? (() => {});
  }

  /** Reads the file now (at start, and in tests). */
  async load(): Promise<void> {
    this.#checkedAt = Date.now();
    let version: string;
    try {
      const info = await stat(this.#path);
      version = `${info.mtimeMs}:${info.size}:${info.ino}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        if (this.#version !== 'missing') this.#entries = new Map();
        this.#version = 'missing';
        return;
      }
      this.#onError(
        `cannot read the key store ${this.#path}: ${(error as Error).message}; keeping the last good one`,
      );
      return;
    }
    if (version === this.#version) return;
    try {
      this.#entries = parseKvsFile(await readFile(this.#path, 'utf8'), this.#path);
      this.#version = version;
    } catch (error) {
      // Remember the bad version so the error is reported once per change, not on every check.
      this.#version = version;
      const reason =
        error instanceof KvsFileError
          ? error.message
          : `cannot read ${this.#path}: ${(error as Error).message}`;
      this.#onError(`${reason}; keeping the last good key store`);
    }
  }

  #refresh(): Promise<void> {
    if (Date.now() - this.#checkedAt < this.#checkIntervalMs) return Promise.resolve();
    this.#loading ??= this.load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  get(key: string): Promise<string> {
    const lookup = () => {
      const value = this.#entries.get(key);
      return value === undefined
        ? Promise.reject(new Error(`key not found: ${key}`))
        : Promise.resolve(value);
    };
    // Most calls need no check of the file: answer from memory without an extra await.
    if (Date.now() - this.#checkedAt < this.#checkIntervalMs) return lookup();
    return this.#refresh().then(lookup);
  }

  async exists(key: string): Promise<boolean> {
    await this.#refresh();
    return this.#entries.has(key);
  }
}
