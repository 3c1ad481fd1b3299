/**
 * A few lines of TypeScript run in a Node process of their own (from the repository's root): a second writer of
 * a file, one to kill with `kill -9`, one in a mount namespace. The code is an ES module that imports what it
 * needs by URL (`await import(new URL(…).href)`); its arguments are `process.argv.slice(1)`. Each module it
 * imports by a `file:` URL of a `.ts` file runs as JavaScript bundled from it (by esbuild, as `npm run build`
 * bundles the command line, once per module and process), so the process starts as plain Node: without a
 * TypeScript loader, which costs about three quarters of a CPU second per process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { outputOf, ROOT } from './cli.ts';

/**
 * Where the bundles go: inside the repository's node_modules, so that a bundle imports the packages it leaves
 * out from there, and finds the repository above it as its sources do.
 */
const BUNDLES = join(ROOT, 'node_modules', '.cache', 'catalog-test-scripts');

/** The bundle of each module this process bundled, by its URL. */
const bundles = new Map<string, string>();

/** The URL of a bundle of the TypeScript module at `url` (its imports included, the packages left out). */
function bundleOf(url: string): string {
  const known = bundles.get(url);
  if (known) return known;
  const built = buildSync({
    entryPoints: [fileURLToPath(url)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const text = built.outputFiles[0]?.contents ?? new Uint8Array();
  // Named by its content: every process and run that bundles the same code writes (at most) the same file.
  const file = join(BUNDLES, `${createHash('sha256').update(text).digest('hex').slice(0, 32)}.mjs`);
  mkdirSync(BUNDLES, { recursive: true });
  const part = `${file}.${process.pid}.tmp`;
  writeFileSync(part, text);
  renameSync(part, file);
  const bundled = pathToFileURL(file).href;
  bundles.set(url, bundled);
  return bundled;
}

/** `code` with each `file:` URL of a `.ts` module replaced by its bundle's. */
function bundled(code: string): string {
  return code.replace(/file:\/\/[^"'`\s]+?\.ts(?=["'`])/g, bundleOf);
}

/** The command line that runs `code` with `args`: `node --input-type=module -e code args…`. */
export function scriptCommand(code: string, args: readonly string[] = []): [string, ...string[]] {
  return [process.execPath, '--input-type=module', '-e', bundled(code), ...args];
}

/** A script running: what it printed so far, its end, and `kill -9`. */
export interface ScriptProcess {
  stdout(): string;
  stderr(): string;
  /** Its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  kill(): void;
}

/** Starts `code` with `args` in a process of its own. */
export function spawnScript(code: string, args: readonly string[] = []): ScriptProcess {
  const [node, ...rest] = scriptCommand(code, args);
  const child = spawn(node, rest, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { ...outputOf(child), exited, kill: () => child.kill('SIGKILL') };
}

/**
 * Whether this machine lets a process mount a small tmpfs in a mount namespace of its own (`unshare -rm`): a real
 * full disk for a test, without root.
 */
export const TMPFS_IN_NAMESPACE =
  spawnSync('unshare', [
    '-rm',
    'sh',
    '-c',
    'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"',
  ]).status === 0;
