/**
 * `npm run build:lambda`: regenerates `publish/openapi.generated.ts` from openapi.yaml, then bundles
 * `publish/lambda.ts` with esbuild into one self-contained ES module, `dist/lambda/index.mjs` (handler
 * `index.handler`, Node.js 20 or 22 runtime). The AWS SDK is bundled rather than taken from the runtime, so
 * the function runs the SDK version the tests ran.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { repoRoot } from '../cli/paths.ts';
import { OPENAPI_MODULE, openapiModuleSource } from './openapi-module.ts';

/** Where the bundle goes, relative to the repository root. */
export const LAMBDA_OUTFILE = 'dist/lambda/index.mjs';

/** Rewrites the generated openapi module when openapi.yaml changed; returns whether it did. */
export async function writeOpenApiModule(root: string): Promise<boolean> {
  const source = openapiModuleSource(await readFile(join(root, 'openapi.yaml'), 'utf8'));
  const path = join(root, OPENAPI_MODULE);
  const current = await readFile(path, 'utf8').catch(() => null);
  if (current === source) return false;
  await writeFile(path, source);
  return true;
}

/** Bundles the handler into `outfile` (absolute, or relative to `root`) and returns its size in bytes. */
export async function bundleLambda(root: string, outfile: string = LAMBDA_OUTFILE): Promise<number> {
  await build({
    absWorkingDir: root,
    entryPoints: ['publish/lambda.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // pg's optional native binding is never used.
    external: ['pg-native'],
    // Bundled CommonJS packages (the AWS SDK's dependencies) call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
    },
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return (await stat(resolve(root, outfile))).size;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = repoRoot();
  try {
    if (await writeOpenApiModule(root)) console.log(`regenerated ${OPENAPI_MODULE} from openapi.yaml`);
    const bytes = await bundleLambda(root);
    console.log(`${LAMBDA_OUTFILE}: ${bytes} bytes (handler index.handler)`);
  } catch (error) {
    console.error(`build:lambda failed: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
