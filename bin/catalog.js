#!/usr/bin/env node
// The `catalog` command. `npm run build` bundles the command line into dist/cli/catalog.mjs, which starts in
// a fraction of the time the TypeScript sources take through tsx. The bundle is used only while it is newer
// than every source file it was built from; otherwise the sources run directly, so the command is never stale.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'cli', 'catalog.mjs');
const SOURCES = ['app', 'cli', 'builder', 'contract', 'gateway', 'keys', 'lambda', 'partner', 'publish'];

function bundleIsFresh() {
  let built;
  try {
    built = statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  for (const folder of SOURCES) {
    let names;
    try {
      names = readdirSync(join(root, folder), { recursive: true });
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
      if (statSync(join(root, folder, name)).mtimeMs > built) return false;
    }
  }
  return true;
}

if (bundleIsFresh()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
