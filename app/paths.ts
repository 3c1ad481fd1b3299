import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SettingName } from './settings/index.ts';

/** The nearest folder above this module holding package.json and openapi.yaml (from sources or dist/ alike). */
export function repoRoot(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'openapi.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the repository root above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

/** Where the local stack keeps its state, relative to the working directory (the repository root). */
export const LOCAL_STACK = {
  /** The origin directory `catalog build` writes and `catalog serve` reads by default. */
  origin: '.catalog/origin',
  /** The key-value store file (keys, CORS origin). */
  store: '.catalog/kvs.json',
  /** The dev key `npm start` prints, in clear: local only. */
  devKey: '.catalog/dev-key',
  /** The key of the partner `monitoring` the local canary sends, in clear: local only. */
  monitoringKey: '.catalog/monitoring-key',
  /** The access log `npm start` appends to (the JSON lines it writes on stderr), for `catalog usage`. */
  accessLog: '.catalog/access.log',
  /** Which `catalog start` serves the local stack now, and at which base URL (removed when it stops). */
  running: '.catalog/stack.json',
} as const;

/**
 * The settings the local stack gives a command that names no target ({@link LOCAL_STACK}'s origin and store,
 * and the address its `catalog start` serves): app/deployment.ts fills them, `--help` says so.
 */
export const LOCAL_FILLS: readonly SettingName[] = ['baseUrl', 'origin', 'store'];

/**
 * The checkout a command runs in: the nearest folder at or above `cwd` holding package.json and openapi.yaml (a
 * command typed in a subfolder acts on the checkout's one local stack), or undefined outside any.
 */
export function checkoutRoot(cwd: string = process.cwd()): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'openapi.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * A path of the local stack ({@link LOCAL_STACK}) as seen from `cwd`: under the checkout's root (`.catalog/kvs.json`
 * there, `../.catalog/kvs.json` from `infra/`), or as it is outside a checkout.
 */
export function localStackPath(path: string, cwd: string = process.cwd()): string {
  const root = checkoutRoot(cwd);
  return root === undefined ? path : relative(cwd, join(root, path)) || '.';
}
