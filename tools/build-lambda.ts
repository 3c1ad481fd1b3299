/**
 * `npm run build:lambda`: regenerates the openapi.yaml module the builder embeds, then bundles the builder
 * Lambda (lambda/bundling.ts) into `dist/lambda/index.mjs`, the canary into `dist/lambda/canary.mjs` and the
 * deploy's release step into `dist/lambda/release.mjs`, and prints their sizes.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { repoRoot } from '../app/paths.ts';
import {
  CANARY_BUNDLE,
  CANARY_OUTFILE,
  LAMBDA_OUTFILE,
  lambdaBuildOptions,
  RELEASE_BUNDLE,
  RELEASE_OUTFILE,
} from '../lambda/bundling.ts';
import { OPENAPI_MODULE, writeOpenApiModule } from './openapi-module.ts';

/** Bundles the handler into {@link LAMBDA_OUTFILE} under `root` and returns its size in bytes. */
export async function bundleLambda(root: string): Promise<number> {
  await build(lambdaBuildOptions(root));
  return (await stat(resolve(root, LAMBDA_OUTFILE))).size;
}

/** Bundles the canary into {@link CANARY_OUTFILE} under `root` and returns its size in bytes. */
export async function bundleCanary(root: string): Promise<number> {
  await build(lambdaBuildOptions(root, { entry: CANARY_BUNDLE.entry, outfile: CANARY_OUTFILE }));
  return (await stat(resolve(root, CANARY_OUTFILE))).size;
}

/** Bundles the deploy's release step into {@link RELEASE_OUTFILE} under `root` and returns its size in bytes. */
export async function bundleRelease(root: string): Promise<number> {
  await build(lambdaBuildOptions(root, { entry: RELEASE_BUNDLE.entry, outfile: RELEASE_OUTFILE }));
  return (await stat(resolve(root, RELEASE_OUTFILE))).size;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const root = repoRoot();
  try {
    if (await writeOpenApiModule(root)) console.log(`regenerated ${OPENAPI_MODULE} from openapi.yaml`);
    const bytes = await bundleLambda(root);
    console.log(`${LAMBDA_OUTFILE}: ${bytes} bytes (handler index.handler)`);
    const canary = await bundleCanary(root);
    console.log(`${CANARY_OUTFILE}: ${canary} bytes (handler canary.handler)`);
    const release = await bundleRelease(root);
    console.log(`${RELEASE_OUTFILE}: ${release} bytes (handler release.handler)`);
  } catch (error) {
    console.error(`build:lambda failed: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
