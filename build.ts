/**
 * npm run build: the CloudFront Functions bundles (checked: size, syntax, modules) into dist/gateway, the
 * command line into dist/cli, and the openapi.yaml module the builder Lambda embeds (publish/openapi.generated.ts)
 * brought up to date. Prints the function sizes. Fails with the reasons when a bundle is refused.
 */
import { build } from 'esbuild';
import { repoRoot } from './cli/paths.ts';
import { buildGateway, describeSizes } from './gateway/build.ts';
import { writeOpenApiModule } from './publish/bundle.ts';

const root = repoRoot();
try {
  const sizes = await buildGateway(root);
  if (await writeOpenApiModule(root))
    console.log('publish/openapi.generated.ts regenerated from openapi.yaml');
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
