/**
 * Where `catalog build` writes (docs/decisions.md#command-line): never where a live build is served. With no
 * `--out`, a new scratch directory, whose path the command prints; a given one is refused when it is an origin
 * that holds builds, or the local stack's origin (`.catalog/origin`, or the origin its store records).
 */
import { mkdtemp, readFile, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, settingRef } from '../contract/errors.ts';
import { BUILDS_PREFIX, KVS_ORIGIN } from '../contract/index.ts';
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
