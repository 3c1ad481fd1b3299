/**
 * `catalog verify-function --name NAME [--stage DEVELOPMENT|LIVE] [--key KEY …]`: runs the gateway's
 * request-case table through CloudFront's TestFunction API against a deployed viewer-request function and
 * prints one line per case and the compute utilization; exits 1 when a case fails. The CloudFront client is
 * created here; `AWS_ENDPOINT_URL_CLOUDFRONT` (read by the SDK) points it elsewhere.
 */
import type { Command } from 'commander';
import { CatalogError, ConfigError } from '../../contract/errors.ts';
import { KEY_PATTERN } from '../../keys/keys.ts';
import type { CliIO } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** Splits `--key` values (repeated) and the variable's list (commas or whitespace) into keys. */
function splitKeys(values: readonly string[]): string[] {
  return values.flatMap((value) => value.split(/[\s,]+/)).filter((key) => key !== '');
}

/** Refuses a value that is not a key, naming the flag and its position but never the value. */
function checkKey(label: string, key: string): string {
  if (!KEY_PATTERN.test(key))
    throw new ConfigError(
      `${label}: is not an API key (tpc_ and 43 base64url characters); the value is not shown`,
    );
  return key;
}

export function registerVerifyFunction(program: Command, io: CliIO): void {
  const description =
    'Run the request-case table through CloudFront TestFunction against the deployed viewer-request function; one line per case, exit 1 when one fails.';
  settingsCommand(program, 'verify-function', description, io, async (flags) => {
    const name = flags.viewerRequestFunction;
    const valid = splitKeys(flags.key).map((key, i) => checkKey(`--key #${i + 1}`, key));
    const expired = flags.expiredKey === undefined ? undefined : checkKey('--expired-key', flags.expiredKey);
    const revoked = flags.revokedKey === undefined ? undefined : checkKey('--revoked-key', flags.revokedKey);

    const [{ createCloudFrontClient }, { REQUEST_CASES }, verify] = await Promise.all([
      import('../../app/clients.ts'),
      import('../../gateway/cases.ts'),
      import('../../infra/verify-function.ts'),
    ]);
    const client = createCloudFrontClient(flags);
    try {
      const report = await verify.verifyFunction(client, {
        name,
        stage: flags.stage,
        cases: REQUEST_CASES,
        keys: {
          valid,
          ...(expired !== undefined ? { expired } : {}),
          ...(revoked !== undefined ? { revoked } : {}),
        },
      });
      io.stdout(verify.formatReport(report));
      const failed = report.cases.filter((c) => c.verdict === 'fail');
      if (failed.length > 0) {
        const names = failed.map((c) => `"${c.name}"`);
        const shown = names.length > 5 ? [...names.slice(0, 5), `and ${names.length - 5} more`] : names;
        throw new CatalogError(
          `${failed.length} of ${report.cases.length} cases failed against ${name} (${flags.stage}): ${shown.join(', ')}`,
        );
      }
    } finally {
      client.destroy();
    }
  });
}
