/**
 * How the Lambda functions are bundled, declared once for `npm run build:lambda` (whose bundles the tests run)
 * and the CDK stack's NodejsFunctions: one ES module each with the SDK bundled, so each runs the SDK version the
 * tests ran. The builder, the canary and the deploy's release step run on the same runtime, declared here once.
 */
import type { BuildOptions } from 'esbuild';

/** The bundle's settings, in the terms both esbuild and CDK's NodejsFunction take. */
export const LAMBDA_BUNDLE = {
  /** The handler module, relative to the repository root; its export `handler` is the entry point. */
  entry: 'lambda/handler.ts',
  handler: 'handler',
  /** The Lambda runtime the stack deploys, and the esbuild target that matches it. */
  runtime: 'nodejs24.x',
  target: 'node24',
  format: 'esm',
  platform: 'node',
  mainFields: ['module', 'main'],
  // Bundled CommonJS packages (the AWS SDK's dependencies) call require() for Node built-ins.
  banner:
    "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  // pg's optional native binding is never used.
  external: ['pg-native'],
  minify: true,
} as const;

/** The canary's bundle: the builder's in every setting (its runtime above all) but its entry. */
export const CANARY_BUNDLE = { ...LAMBDA_BUNDLE, entry: 'lambda/canary.ts' } as const;

/** The deploy's release step's bundle (lambda/release.ts): the builder's in every setting but its entry. */
export const RELEASE_BUNDLE = { ...LAMBDA_BUNDLE, entry: 'lambda/release.ts' } as const;

/** Where `npm run build:lambda` writes the bundle, relative to the repository root (handler `index.handler`). */
export const LAMBDA_OUTFILE = 'dist/lambda/index.mjs';
/** Where it writes the canary's (handler `canary.handler`). */
export const CANARY_OUTFILE = 'dist/lambda/canary.mjs';
/** Where it writes the release step's (handler `release.handler`). */
export const RELEASE_OUTFILE = 'dist/lambda/release.mjs';

/** The esbuild options of a bundle (the builder's unless told), for `absWorkingDir` = the repository root. */
export function lambdaBuildOptions(
  root: string,
  bundle: { readonly entry: string; readonly outfile: string } = {
    entry: LAMBDA_BUNDLE.entry,
    outfile: LAMBDA_OUTFILE,
  },
): BuildOptions {
  return {
    absWorkingDir: root,
    entryPoints: [bundle.entry],
    outfile: bundle.outfile,
    bundle: true,
    platform: LAMBDA_BUNDLE.platform,
    format: LAMBDA_BUNDLE.format,
    target: LAMBDA_BUNDLE.target,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    external: [...LAMBDA_BUNDLE.external],
    banner: { js: LAMBDA_BUNDLE.banner },
    minify: LAMBDA_BUNDLE.minify,
    legalComments: 'none',
    logLevel: 'warning',
  };
}
