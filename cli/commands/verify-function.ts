/**
 * The gateway's functions in CloudFront's two stages (infra/README.md, "Verifying the function"):
 *
 * - `catalog verify-function [--stage DEVELOPMENT|LIVE]`: runs the request-case table through TestFunction against
 *   the deployed viewer-request function (`--name`) and, when given (a deployment gives it), the viewer-response
 *   function (`--response-name`); one line per case, exit 1 when one fails. Keys come from the environment only.
 * - `catalog publish-functions`: what a deploy does unless `publishFunctions` is false: verifies each function whose
 *   DEVELOPMENT differs from LIVE, with keys it adds to the store and removes, and publishes them when every case
 *   passes (app/release.ts).
 *
 * The clients are created here; `AWS_ENDPOINT_URL_CLOUDFRONT` (read by the SDK) points them elsewhere.
 */
import type { Command } from 'commander';
import type { FunctionRelease, ReleaseFunction } from '../../app/release.ts';
import type { VerifyReport } from '../../app/verify-function.ts';
import { CatalogError } from '../../contract/errors.ts';
import type { CliIO } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** The functions the settings name: the viewer-request one, and the viewer-response one when given. */
function functionsOf(settings: {
  readonly viewerRequestFunction: string;
  readonly viewerResponseFunction?: string | undefined;
}): ReleaseFunction[] {
  return [
    { name: settings.viewerRequestFunction, kind: 'viewer-request' },
    ...(settings.viewerResponseFunction === undefined
      ? []
      : [{ name: settings.viewerResponseFunction, kind: 'viewer-response' } as const]),
  ];
}

/** One line per function of a release: what became of it. */
function releaseLine(fn: FunctionRelease): string {
  const cases = fn.cases
    ? `: ${fn.cases.passed} passed, ${fn.cases.skipped} skipped, ${fn.cases.failed} failed`
    : '';
  const what = {
    published: `published (ETag ${fn.etag})${cases}`,
    unchanged: "unchanged: LIVE already runs DEVELOPMENT's code",
    held: 'held in DEVELOPMENT',
  }[fn.result];
  return `${fn.name} (${fn.kind}) ${what}`;
}

export function registerVerifyFunction(program: Command, io: CliIO): void {
  const description =
    'Run the request-case table through CloudFront TestFunction against the deployed functions in a stage (the viewer-response one too when given); one line per case, exit 1 when one fails.';
  settingsCommand(program, 'verify-function', description, io, async (settings) => {
    const [{ createCloudFrontClient }, { REQUEST_CASES }, verify] = await Promise.all([
      import('../../app/clients.ts'),
      import('../../gateway/cases.ts'),
      import('../../app/verify-function.ts'),
    ]);
    const client = createCloudFrontClient(settings);
    try {
      const reports: VerifyReport[] = [];
      for (const fn of functionsOf(settings)) {
        const report = await verify.verifyFunction(client, {
          ...fn,
          stage: settings.stage,
          cases: REQUEST_CASES,
          keys: { valid: settings.key, expired: settings.expiredKey, revoked: settings.revokedKey },
          cors: settings.corsOrigin,
        });
        io.stdout(verify.formatReport(report));
        reports.push(report);
      }
      const failed = reports.filter((report) => verify.summarize(report).failed > 0);
      if (failed.length > 0)
        throw new CatalogError(failed.map((report) => verify.failedCases(report)).join('; '));
    } finally {
      client.destroy();
    }
  });

  settingsCommand(
    program,
    'publish-functions',
    "Publish the functions' DEVELOPMENT stage to LIVE once the whole request-case table passes against it (with keys added to the store for the run and removed after it); a function whose LIVE already runs its DEVELOPMENT code is left alone. Exit 1, nothing published, when a case fails.",
    io,
    async (settings) => {
      const [clients, { CloudFrontKeyValueStore }, release, verify] = await Promise.all([
        import('../../app/clients.ts'),
        import('../../keys/kvs-store.ts'),
        import('../../app/release.ts'),
        import('../../app/verify-function.ts'),
      ]);
      const cloudfront = clients.createCloudFrontClient(settings);
      const kvs = clients.createKvsClient(settings);
      const store = new CloudFrontKeyValueStore(kvs, settings.kvsArn);
      const where = settings.deployment === undefined ? '' : `deployment ${settings.deployment}: `;
      io.stderr(
        `publish-functions acts on ${where}${settings.viewerRequestFunction} and ${settings.viewerResponseFunction} (keys added to and removed from ${settings.kvsArn})\n`,
      );
      try {
        const outcome = await release.releaseFunctions(
          { cloudfront, store },
          { functions: functionsOf(settings), publish: true },
        );
        if (settings.json) io.stdout(`${JSON.stringify({ command: 'publish-functions', ...outcome })}\n`);
        else {
          for (const report of outcome.reports) io.stdout(verify.formatReport(report));
          io.stdout(`${outcome.functions.map(releaseLine).join('\n')}\n`);
        }
        if (outcome.keys !== 'removed' && outcome.keys !== 'none')
          io.stderr(`catalog: the release's keys were ${outcome.keys}\n`);
      } catch (error) {
        // Every case's line, then the error (the failed cases in one line).
        if (error instanceof release.ReleaseError && !settings.json)
          for (const report of error.reports) io.stdout(verify.formatReport(report));
        throw error;
      } finally {
        cloudfront.destroy();
        kvs.destroy();
      }
    },
  );
}
