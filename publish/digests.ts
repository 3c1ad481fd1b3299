/**
 * The MD5s a directory origin has computed, remembered so that a listing reads each version of a file once
 * (docs/decisions.md#build-cost). They are kept in `.digests` in the directory: one line per file version,
 * `<CRC-32> <stamp> <md5> <key>`, appended in bursts, a later line for a key replacing an earlier one. A stamp is
 * what the file system changes with every write: device, inode, size, and modification and change times to the
 * nanosecond. A remembered MD5 is used only while the file's stamp is the one it was computed with, and only
 * for bytes this process read or wrote itself; a line cut by a kill or a full disk fails its CRC-32 and is
 * skipped. So the journal can be wrong only by missing a line, and a missing line costs one read.
 */

import type { BigIntStats } from 'node:fs';
import { appendFile, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

/** A file's version: what any write to it, or its replacement, changes. */
export const stampOf = (stats: BigIntStats): string =>
  `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;

/** How long ago a file must have changed for its bytes, read now, to be the bytes of its stamp. */
const SETTLED_NS = 2_000_000_000n;

/**
 * Whether bytes read while a file had these stats are the bytes of its stamp: a write in the same tick of the
 * file system's clock after the read would leave the times as they are. A file whose modification time differs
 * from its change time (every file this origin writes: it sets the modification time a second back) cannot be
 * written again without both becoming that tick; any other must have changed at least two seconds ago.
 */
export function settled(stats: BigIntStats, nowMs: number): boolean {
  return stats.mtimeNs !== stats.ctimeNs || stats.ctimeNs < BigInt(nowMs) * 1_000_000n - SETTLED_NS;
}

const LINE = /^([0-9a-f]{8}) (\d+:\d+:\d+:\d+:\d+) ([0-9a-f]{32}) (.+)$/;
const checked = (rest: string) => `${crc32(rest).toString(16).padStart(8, '0')} ${rest}\n`;

/** The remembered MD5s of one directory origin. */
export class DigestMemory {
  readonly #file: string;
  readonly #temp: () => string;
  readonly #known = new Map<string, { readonly stamp: string; readonly md5: string }>();
  #pending: string[] = [];
  /** Lines in the file, as read and appended: a file mostly of replaced lines is written again, compact. */
  #lines = 0;
  #saving: Promise<void> = Promise.resolve();

  private constructor(file: string, temp: () => string) {
    this.#file = file;
    this.#temp = temp;
  }

  /** Reads the journal at `file` (none: nothing remembered); `temp` names a temporary file to rewrite it. */
  static async open(file: string, temp: () => string): Promise<DigestMemory> {
    const memory = new DigestMemory(file, temp);
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const [, crc, stamp, md5, key] = LINE.exec(line) ?? [];
      if (!crc || !stamp || !md5 || !key) continue;
      memory.#lines += 1;
      if (crc32(line.slice(9)).toString(16).padStart(8, '0') === crc) memory.#known.set(key, { stamp, md5 });
    }
    return memory;
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
    this.#pending.push(checked(`${stamp} ${md5} ${key}`));
  }

  /** Forgets the keys `gone` says are gone. */
  forget(gone: (key: string) => boolean): void {
    for (const key of this.#known.keys()) if (gone(key)) this.#known.delete(key);
  }

  /**
   * Appends what was remembered since the last save, or writes the journal again (through `temp`, renamed into
   * place) when most of its lines were replaced. A failure (a full disk) loses only what was not written.
   */
  save(): Promise<void> {
    this.#saving = this.#saving.then(async () => {
      const lines = this.#pending;
      if (lines.length === 0) return;
      this.#pending = [];
      const temp = this.#temp();
      try {
        if (this.#lines + lines.length > 2 * this.#known.size + 1024) {
          const all = [...this.#known].map(([key, { stamp, md5 }]) => checked(`${stamp} ${md5} ${key}`));
          await writeFile(temp, all.join(''));
          await rename(temp, this.#file);
          this.#lines = all.length;
        } else {
          await appendFile(this.#file, lines.join(''));
          this.#lines += lines.length;
        }
      } catch {
        // Not remembered: hashed again when next listed.
        await rm(temp, { force: true });
      }
    });
    return this.#saving;
  }
}
