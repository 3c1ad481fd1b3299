/**
 * A few lines of TypeScript run in a Node process of their own (through tsx, from the repository's root): a
 * second writer of a file, one to kill with `kill -9`, one in a mount namespace. The code is an ES module that
 * imports what it needs by URL (`await import(new URL(…).href)`); its arguments are `process.argv.slice(1)`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { outputOf, ROOT } from './cli.ts';

/** The command line that runs `code` with `args`: `node --import tsx … -e code args…`. */
export function scriptCommand(code: string, args: readonly string[] = []): [string, ...string[]] {
  return [process.execPath, '--import', 'tsx', '--input-type=module', '-e', code, ...args];
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
