/**
 * npm run build: the CloudFront Functions bundles (checked: size, syntax, modules) into dist/gateway, the
 * command line into dist/cli, and the openapi.yaml module every build embeds brought up to date. Prints the
 * function sizes. Fails with the reasons when a bundle is refused.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { repoRoot } from '../app/paths.ts';
import {
  bundleFunction,
  FUNCTION_SIZE_LIMIT,
  FUNCTION_SIZE_TARGET,
  GATEWAY_DIST,
  GATEWAY_FUNCTIONS,
} from '../gateway/functions/bundle.ts';
import { OPENAPI_MODULE, writeOpenApiModule } from './openapi-module.ts';

const root = repoRoot();
try {
  // Both functions are bundled and checked before either is written.
  const bundles = await Promise.all(
    Object.entries(GATEWAY_FUNCTIONS).map(async ([name, entry]) => ({
      name,
      code: await bundleFunction(join(root, entry)),
    })),
  );
  await mkdir(join(root, GATEWAY_DIST), { recursive: true });
  for (const { name, code } of bundles) await writeFile(join(root, GATEWAY_DIST, `${name}.js`), code);
  if (await writeOpenApiModule(root)) console.log(`${OPENAPI_MODULE} regenerated from openapi.yaml`);
  // Split at every dynamic import, so a command loads only its own packages (pg, undici, the AWS SDK…):
  // a single file would hoist every package import to the top and load them all on every start.
  await rm(join(root, 'dist/cli'), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: { catalog: 'cli/main.ts' },
    outdir: 'dist/cli',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Packages stay in node_modules, but zod: it is about 95 modules, each resolved and compiled on every start
    // (every command validates with it); bundled, a command starts sooner (docs/decisions.md#command-line).
    plugins: [
      {
        name: 'packages-external-but-zod',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, ({ path }) =>
            /^zod(\/|$)/.test(path) ? undefined : { path, external: true },
          );
        },
      },
    ],
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  for (const { name, code } of bundles) {
    const bytes = Buffer.byteLength(code);
    const note = bytes > FUNCTION_SIZE_TARGET ? ` (over the ${FUNCTION_SIZE_TARGET}-byte aim)` : '';
    console.log(`${GATEWAY_DIST}/${name}.js: ${bytes} bytes of ${FUNCTION_SIZE_LIMIT}${note}`);
  }
} catch (error) {
  console.error(`build failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
