/**
 * npm run build: the CloudFront Functions bundles (checked: size, syntax, modules) into dist/gateway, and the
 * command line into dist/cli. Prints the function sizes. Fails with the reasons when a bundle is refused.
 */
import { build } from 'esbuild';
import { repoRoot } from './cli/paths.ts';
import { buildGateway, describeSizes } from './gateway/build.ts';

const root = repoRoot();
try {
  const sizes = await buildGateway(root);
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
  console.log(describeSizes(sizes));
} catch (error) {
  console.error(`build failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
