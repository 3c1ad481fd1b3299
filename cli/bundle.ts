/**
 * Bundles the command line into dist/cli/catalog.mjs (packages stay external), for a fast start. Run by
 * `npm run build`; bin/catalog.js falls back to the sources whenever the bundle is older than them.
 */
import { build } from 'esbuild';
import { repoRoot } from './paths.ts';

const root = repoRoot();
await build({
  absWorkingDir: root,
  entryPoints: ['cli/main.ts'],
  outfile: 'dist/cli/catalog.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
