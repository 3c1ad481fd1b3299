/**
 * The command line's bundle as `npm run build` wrote it (npm test builds first): what it leaves to node_modules.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../testing/cli.ts';

it('leaves every package to node_modules but zod, which it carries (docs/decisions.md#command-line)', async () => {
  const dir = join(ROOT, 'dist', 'cli');
  const files = (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.mjs'));
  const imported = new Set<string>();
  for (const file of files) {
    const code = await readFile(join(dir, file), 'utf8');
    for (const [, specifier] of code.matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g))
      if (specifier && !specifier.startsWith('node:')) imported.add(specifier.split('/')[0] ?? '');
  }
  expect([...imported]).not.toContain('zod');
  expect([...imported]).toEqual(expect.arrayContaining(['commander', '@aws-sdk', 'esbuild', 'pg', 'undici']));
});
