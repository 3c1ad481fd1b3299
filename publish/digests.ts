/**
 * The MD5s a directory origin computed, remembered so that a listing reads each version of a file once
 * (docs/decisions.md#build-cost): `.digests`, a line per file version (`<stamp> <md5> <key>`, the later line for a
 * key winning). A stamp is what any write to a file or its replacement changes: device, inode, size, modification
 * and change times (ns). An MD5 is used only while its file has that stamp, and kept only for bytes this process
 * read or wrote; a line cut by a kill or a full disk names no file of its stamp. So the memory can be wrong only
 * by missing a line, which costs one read.
 */
import type { BigIntStats } from 'node:fs';
import { appendFile, readFile, rename, rm, writeFile } from 'node:fs/promises';

/** A file's version: what any write to it, or its replacement, changes. */
export const stampOf = (stats: BigIntStats): string =>
  `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;

/**
 * Whether bytes read while a file had these stats are the bytes of its stamp: a write in the same tick of the file
 * system's clock would leave the stamp as it is. A file whose modification time is not its change time (each file
 * the origin writes: it sets the modification time a second back) cannot be written again without both becoming
 * that tick; any other must have changed two seconds ago or more.
 */
export const settled = (stats: BigIntStats, nowMs: number): boolean =>
  stats.mtimeNs !== stats.ctimeNs || stats.ctimeNs < BigInt(nowMs - 2_000) * 1_000_000n;

const LINE = /^(\d+:\d+:\d+:\d+:\d+) ([0-9a-f]{32}) (.+)$/;

/** The remembered MD5s of one directory origin. */
export class DigestMemory {
  readonly #file: string;
  readonly #temporary: () => string;
  readonly #known = new Map<string, { readonly stamp: string; readonly md5: string }>();
  #pending: string[] = [];
  /** Lines in the file: one of mostly replaced lines is written again, compact. */
  #lines = 0;
  #saving: Promise<void> = Promise.resolve();

  /** Reads the memory at `file` (none there: nothing remembered); `temporary` names a file to rewrite it through. */
  static async open(file: string, temporary: () => string): Promise<DigestMemory> {
    const memory = new DigestMemory(file, temporary);
    for (const line of (await readFile(file, 'utf8').catch(() => '')).split('\n')) {
      const [, stamp, md5, key] = LINE.exec(line) ?? [];
      if (stamp && md5 && key) memory.#known.set(key, { stamp, md5 });
      if (line) memory.#lines += 1;
    }
    return memory;
  }

  private constructor(file: string, temporary: () => string) {
    this.#file = file;
    this.#temporary = temporary;
  }

  /** The MD5 of the file at `key` while it has this stamp, if remembered. */
  md5(key: string, stamp: string): string | undefined {
    const known = this.#known.get(key);
    return known?.stamp === stamp ? known.md5 : undefined;
  }

  /** Remembers the MD5 of the bytes this process read or wrote at `key`, the file then of `stamp`. */
  remember(key: string, stamp: string, md5: string): void {
    if (this.md5(key, stamp) === md5) return;
    this.#known.set(key, { stamp, md5 });
    this.#pending.push(`${stamp} ${md5} ${key}\n`);
  }

  /** Forgets the keys `gone` says are gone. */
  forget(gone: (key: string) => boolean): void {
    for (const key of this.#known.keys()) if (gone(key)) this.#known.delete(key);
  }

  /** Appends what was remembered since, or writes it all again (renamed into place) when most lines are stale. */
  save(): Promise<void> {
    this.#saving = this.#saving.then(async () => {
      const lines = this.#pending;
      if (lines.length === 0) return;
      this.#pending = [];
      const temp = this.#temporary();
      try {
        if (this.#lines + lines.length <= 2 * this.#known.size + 1024) {
          await appendFile(this.#file, lines.join(''));
          this.#lines += lines.length;
          return;
        }
        const all = [...this.#known].map(([key, { stamp, md5 }]) => `${stamp} ${md5} ${key}\n`);
        await writeFile(temp, all.join(''));
        await rename(temp, this.#file);
        this.#lines = all.length;
      } catch {
        await rm(temp, { force: true });
      }
    });
    return this.#saving;
  }
}
