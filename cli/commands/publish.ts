/**
 * `catalog publish`, `catalog builds`, `catalog rollback` and `catalog rebuild` (contract §5, issue 5). The AWS
 * clients are created here, once per command, and passed to the pipeline in publish/.
 */
import { type Command, Option } from 'commander';
import { z } from 'zod';
import {
  BucketName,
  DEFAULTS,
  DistributionId,
  Keep,
  MaxAttempts,
  MinRatio,
  Region,
} from '../../publish/config.ts';
import { BUILD_ID } from '../../publish/core.ts';
import { parseOptions } from '../options.ts';
import { addBuildOptions, BuildFlags, runBuild } from './build.ts';

const AwsFlags = z.object({
  s3PathStyle: z.boolean(),
  region: Region,
  maxAttempts: MaxAttempts,
});

const PublishFlags = BuildFlags.extend(AwsFlags.shape).extend({
  bucket: BucketName,
  distribution: DistributionId,
  force: z.boolean(),
  allowEmpty: z.boolean(),
  minRatio: MinRatio,
  keep: Keep,
});

const BuildsFlags = AwsFlags.extend({ bucket: BucketName });

const RollbackFlags = AwsFlags.extend({
  bucket: BucketName,
  distribution: DistributionId,
  to: z.string().regex(BUILD_ID, { error: 'must be a build id (see catalog builds)' }).optional(),
});

const RebuildFlags = z.object({
  function: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a function name') })
    .regex(/^[A-Za-z0-9_:.$-]{1,170}$/, { error: 'must be a Lambda function name or ARN' }),
  force: z.boolean(),
  region: Region,
  maxAttempts: MaxAttempts,
});

function addAwsOptions(command: Command, options: { s3: boolean }): Command {
  if (options.s3)
    command.addOption(
      new Option('--s3-path-style', 'path-style S3 addressing (S3-compatible stores, test servers)')
        .env('CATALOG_S3_PATH_STYLE')
        .default(false),
    );
  return command
    .addOption(new Option('--region <region>', 'AWS region').env('AWS_REGION').default(DEFAULTS.region))
    .addOption(
      new Option('--max-attempts <n>', 'attempts per AWS request (retries back off on throttling and 5xx)')
        .env('CATALOG_MAX_ATTEMPTS')
        .default(String(DEFAULTS.maxAttempts)),
    );
}

function addBucketOptions(command: Command, options: { distribution: boolean }): Command {
  command.addOption(new Option('--bucket <name>', 'the origin S3 bucket').env('CATALOG_BUCKET'));
  if (options.distribution)
    command.addOption(
      new Option('--distribution <id>', 'the CloudFront distribution id').env('CATALOG_DISTRIBUTION_ID'),
    );
  return command;
}

async function s3Clients(flags: z.output<typeof AwsFlags>) {
  const { createCloudFrontClient, createS3Client } = await import('../../publish/clients.ts');
  return { s3: createS3Client(flags), cloudfront: createCloudFrontClient(flags) };
}

/** Pads the columns of a table of strings. */
function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function registerPublish(program: Command): void {
  const publish = program
    .command('publish')
    .description(
      'Build in memory, check the guards, archive the live build, upload to S3 and invalidate CloudFront. Prints one JSON summary line.',
    );
  addBucketOptions(publish, { distribution: true });
  addBuildOptions(publish)
    .addOption(
      new Option('--force', 'publish even when the catalog shrank, or is identical to the live one')
        .env('CATALOG_FORCE')
        .default(false),
    )
    .addOption(
      new Option('--allow-empty', 'publish a catalog with no plans')
        .env('CATALOG_ALLOW_EMPTY')
        .default(false),
    )
    .addOption(
      new Option('--min-ratio <ratio>', 'refuse fewer plans than this share of the live count (0–1)')
        .env('CATALOG_MIN_RATIO')
        .default(String(DEFAULTS.minRatio)),
    )
    .addOption(
      new Option('--keep <n>', 'earlier builds kept under history/')
        .env('CATALOG_KEEP')
        .default(String(DEFAULTS.keep)),
    );
  addAwsOptions(publish, { s3: true }).action(async () => {
    const flags = parseOptions(publish, PublishFlags);
    const started = performance.now();
    const result = await runBuild(flags);
    const buildMs = performance.now() - started;
    const clients = await s3Clients(flags);
    const { publishBuild } = await import('../../publish/publish.ts');
    const summary = await publishBuild(result, clients, {
      bucket: flags.bucket,
      distributionId: flags.distribution,
      force: flags.force,
      allowEmpty: flags.allowEmpty,
      minRatio: flags.minRatio,
      keep: flags.keep,
      buildMs,
    });
    for (const warning of summary.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  });

  const builds = program
    .command('builds')
    .description('List the live build and the history of a bucket, newest first.');
  addBucketOptions(builds, { distribution: false });
  addAwsOptions(builds, { s3: true }).action(async () => {
    const flags = parseOptions(builds, BuildsFlags);
    const { s3 } = await s3Clients(flags);
    const { listBuilds } = await import('../../publish/publish.ts');
    const rows = await listBuilds(s3, flags.bucket);
    if (rows.length === 0) {
      process.stderr.write(`s3://${flags.bucket} holds no build\n`);
      return;
    }
    const notes = (row: (typeof rows)[number]) =>
      [row.live ? 'live' : '', row.inHistory ? '' : 'not archived yet', row.complete ? '' : 'incomplete']
        .filter(Boolean)
        .join(', ');
    const lines = [
      ['BUILD', 'GENERATED AT', 'RUNNING', 'STRENGTH', 'NOTE'],
      ...rows.map((row) => [
        row.id,
        row.generatedAt ?? '-',
        row.counts ? String(row.counts.running) : '-',
        row.counts ? String(row.counts.strength) : '-',
        notes(row),
      ]),
    ];
    process.stdout.write(`${table(lines)}\n`);
  });

  const rollback = program
    .command('rollback')
    .description(
      'Copy a build from the history back over the live objects and invalidate. Prints one JSON line.',
    )
    .addOption(
      new Option('--to <build>', 'the build to restore (default: the one before the live build)').env(
        'CATALOG_ROLLBACK_TO',
      ),
    );
  addBucketOptions(rollback, { distribution: true });
  addAwsOptions(rollback, { s3: true }).action(async () => {
    const flags = parseOptions(rollback, RollbackFlags);
    const clients = await s3Clients(flags);
    const { rollback: restore } = await import('../../publish/publish.ts');
    const summary = await restore(clients, {
      bucket: flags.bucket,
      distributionId: flags.distribution,
      ...(flags.to !== undefined ? { to: flags.to } : {}),
      now: new Date(),
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  });

  const rebuild = program
    .command('rebuild')
    .description('Invoke the deployed builder function now and print its summary (manual rebuild).')
    .addOption(
      new Option('--function <name>', 'the builder function name or ARN').env('CATALOG_FUNCTION_NAME'),
    )
    .addOption(
      new Option('--force', 'ask the function to skip the shrink and identical-content guards')
        .env('CATALOG_FORCE')
        .default(false),
    );
  addAwsOptions(rebuild, { s3: false }).action(async () => {
    const flags = parseOptions(rebuild, RebuildFlags);
    const [{ createLambdaClient }, { invokeBuilder }] = await Promise.all([
      import('../../publish/clients.ts'),
      import('../../publish/rebuild.ts'),
    ]);
    const client = createLambdaClient({ ...flags, s3PathStyle: false });
    const summary = await invokeBuilder(client, flags.function, flags.force ? { force: true } : {});
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  });
}
