/**
 * `catalog verify-function --name NAME [--stage DEVELOPMENT|LIVE] [--key KEY …]`: runs the gateway's
 * request-case table through CloudFront's TestFunction API against a deployed viewer-request function and
 * prints one line per case and the compute utilization; exits 1 when a case fails. The CloudFront client is
 * created here; `AWS_ENDPOINT_URL_CLOUDFRONT` (read by the SDK) points it elsewhere.
 */
import { type Command, Option } from 'commander';
import { z } from 'zod';
import { CatalogError, ConfigError } from '../../builder/errors.ts';
import { parseOptions } from '../options.ts';

const KEY_PATTERN = /^tpc_[A-Za-z0-9_-]{43}$/;

const VerifyFlags = z.object({
  name: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a function name') })
    .regex(/^[A-Za-z0-9_-]{1,64}$/, {
      error: 'must be a CloudFront function name (1–64 of A-Z, a-z, 0-9, - and _)',
    }),
  stage: z
    .string()
    .transform((value) => value.toUpperCase())
    .pipe(z.enum(['DEVELOPMENT', 'LIVE'], { error: 'must be DEVELOPMENT or LIVE' })),
  // Keys are checked below, without echoing them.
  key: z.array(z.string()),
  expiredKey: z.string().optional(),
  revokedKey: z.string().optional(),
  maxAttempts: z.coerce
    .number({ error: 'must be a whole number from 1 to 10' })
    .int({ error: 'must be a whole number from 1 to 10' })
    .min(1, { error: 'must be a whole number from 1 to 10' })
    .max(10, { error: 'must be a whole number from 1 to 10' }),
});

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

export function registerVerifyFunction(program: Command): void {
  const command = program
    .command('verify-function')
    .description(
      'Run the request-case table through CloudFront TestFunction against the deployed viewer-request function; one line per case, exit 1 when one fails.',
    )
    .addOption(
      new Option('--name <name>', 'the viewer-request function (stack output ViewerRequestFunctionName)').env(
        'CATALOG_VIEWER_REQUEST_FUNCTION',
      ),
    )
    .addOption(
      new Option('--stage <stage>', 'DEVELOPMENT or LIVE (the stage serving traffic)')
        .env('CATALOG_FUNCTION_STAGE')
        .default('LIVE'),
    )
    .addOption(
      new Option(
        '--key <key>',
        'a valid key of the deployed store; repeat for a second partner. Prefer the variable: arguments show in ps and shell history',
      )
        .env('CATALOG_VERIFY_KEYS')
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])
        .default([], 'none: the cases needing a valid key are skipped'),
    )
    .addOption(
      new Option('--expired-key <key>', 'a key whose expiry has passed (else its cases are skipped)').env(
        'CATALOG_VERIFY_EXPIRED_KEY',
      ),
    )
    .addOption(
      new Option('--revoked-key <key>', 'a key that was revoked (else its cases are skipped)').env(
        'CATALOG_VERIFY_REVOKED_KEY',
      ),
    )
    .addOption(
      new Option('--max-attempts <n>', 'attempts per AWS request (retries back off on throttling)')
        .env('CATALOG_MAX_ATTEMPTS')
        .default('5'),
    );

  command.action(async () => {
    const flags = parseOptions(command, VerifyFlags);
    const valid = splitKeys(flags.key).map((key, i) => checkKey(`--key #${i + 1}`, key));
    const expired = flags.expiredKey === undefined ? undefined : checkKey('--expired-key', flags.expiredKey);
    const revoked = flags.revokedKey === undefined ? undefined : checkKey('--revoked-key', flags.revokedKey);

    const [{ CloudFrontClient }, { REQUEST_CASES }, verify] = await Promise.all([
      import('@aws-sdk/client-cloudfront'),
      import('../../gateway/cases.ts'),
      import('../../gateway/verify-function.ts'),
    ]);
    // CloudFront is global: its API is signed for us-east-1.
    const client = new CloudFrontClient({
      region: 'us-east-1',
      maxAttempts: flags.maxAttempts,
      retryMode: 'standard',
    });
    try {
      const report = await verify.verifyFunction(client, {
        name: flags.name,
        stage: flags.stage,
        cases: REQUEST_CASES,
        keys: {
          valid,
          ...(expired !== undefined ? { expired } : {}),
          ...(revoked !== undefined ? { revoked } : {}),
        },
      });
      process.stdout.write(verify.formatReport(report));
      const failed = report.cases.filter((c) => c.verdict === 'fail');
      if (failed.length > 0) {
        const names = failed.map((c) => `"${c.name}"`);
        const shown = names.length > 5 ? [...names.slice(0, 5), `and ${names.length - 5} more`] : names;
        throw new CatalogError(
          `${failed.length} of ${report.cases.length} cases failed against ${flags.name} (${flags.stage}): ${shown.join(', ')}`,
        );
      }
    } finally {
      client.destroy();
    }
  });
}
