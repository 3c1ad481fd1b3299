/**
 * Where and how `catalog build` writes (docs/decisions.md#command-line): never where a live build is served. With
 * no `--out`, a new scratch directory, whose path the command prints; a given one is refused when it is an origin
 * that holds builds, or the local stack's origin (`.catalog/origin`, or the origin its store records). The build
 * is written flat, every object at its key, replacing what was there.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { BuildResult } from '../builder/build.ts';
import { ConfigError, StoreError, settingRef } from '../contract/errors.ts';
import { BUILDS_PREFIX, KVS_ORIGIN, MANIFEST } from '../contract/index.ts';
import { LOCAL_STACK } from './paths.ts';

/** The directory a build is written to, and whether it was made for it (no `--out` given). */
export interface BuildOutput {
  readonly dir: string;
  readonly scratch: boolean;
}

/** A path with its symbolic links resolved as far as it exists (the rest as given), absolute. */
async function realPath(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(await realPath(parent), absolute.slice(parent.length + 1));
  }
}

/** The origin the local stack's store records (its first publish wrote it), resolved; null when none. */
async function localStoreOrigin(): Promise<string | null> {
  try {
    const parsed = JSON.parse(await readFile(LOCAL_STACK.store, 'utf8')) as {
      data?: { key?: unknown; value?: unknown }[];
    };
    const bound = parsed.data?.find((entry) => entry.key === KVS_ORIGIN)?.value;
    // A directory origin is recorded relative to the store's folder (publish/dir-origin.ts bindingFor).
    return typeof bound === 'string' && !bound.includes(':')
      ? resolve(dirname(LOCAL_STACK.store), bound)
      : null;
  } catch {
    return null;
  }
}

/**
 * The directory `catalog build` writes to: `out` when given and safe, else a new scratch directory. Throws a
 * {@link ConfigError} for an `out` that is an origin holding builds or the local stack's origin.
 */
export async function buildOutput(out: string | undefined): Promise<BuildOutput> {
  if (out === undefined) return { dir: await mkdtemp(join(tmpdir(), 'catalog-build-')), scratch: true };
  const refuse = (why: string) =>
    new ConfigError(
      `${settingRef('out')} ${out}: ${why}; a build written there would overwrite objects a live build serves. Give another directory (or none: a new scratch directory), and put a build live with catalog publish; nothing was written`,
    );
  const builds = await stat(join(out, BUILDS_PREFIX)).catch(() => null);
  if (builds?.isDirectory()) throw refuse(`is an origin that holds builds (${BUILDS_PREFIX})`);
  const target = await realPath(out);
  const local = [LOCAL_STACK.origin, await localStoreOrigin()].filter((path) => path !== null);
  for (const origin of local)
    if ((await realPath(origin)) === target) throw refuse(`is the local stack's origin (${origin})`);
  return { dir: out, scratch: false };
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
 * Writes objects flat into a directory, each at its key: every file under a temporary name, one sync of the file
 * system, then renamed into place, the manifest last; a failure leaves the previous output. Synchronous calls a
 * slice at a time cost about half the CPU of libuv's pool for thousands of small files.
 */
export async function writeFlat(
  dir: string,
  objects: readonly { readonly key: string; readonly chunks: readonly Buffer[] }[],
): Promise<void> {
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

/** Writes one build flat into a directory (`catalog build --out`); resolves its ms. */
export async function writeFlatBuild(dir: string, result: BuildResult): Promise<number> {
  const started = performance.now();
  await writeFlat(dir, [...result.objects, ...result.root]);
  return performance.now() - started;
}
