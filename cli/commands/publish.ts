/**
 * `catalog publish`, `catalog builds`, `catalog rollback` and `catalog rebuild`: production publishing. The
 * AWS clients are built here, once per command (app/clients.ts), and the operation runs in app/run.ts.
 */
import type { Command } from 'commander';
import { addSettings, parseCommand } from '../options.ts';
import { note } from './build.ts';

/** Pads the columns of a table of strings. */
export function table(rows: readonly (readonly string[])[]): string {
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
      'Build from the source, check the guards, archive the live build, upload to S3 and invalidate CloudFront. Prints one JSON summary line.',
    );
  addSettings(publish, 'publish').action(async () => {
    const settings = parseCommand(publish, 'publish');
    const [run, aws] = await Promise.all([import('../../app/run.ts'), import('../../app/clients.ts')]);
    const clients = { s3: aws.createS3Client(settings), cloudfront: aws.createCloudFrontClient(settings) };
    const { summary } = await run.publish(settings, clients, {
      now: new Date(),
      force: settings.force,
      report: note,
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  });

  const builds = program
    .command('builds')
    .description('List the live build and the history of a bucket, newest first.');
  addSettings(builds, 'builds').action(async () => {
    const settings = parseCommand(builds, 'builds');
    const [run, aws] = await Promise.all([import('../../app/run.ts'), import('../../app/clients.ts')]);
    const rows = await run.builds(settings, { s3: aws.createS3Client(settings) });
    if (rows.length === 0) {
      note(`s3://${settings.bucket} holds no build`);
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
    );
  addSettings(rollback, 'rollback').action(async () => {
    const settings = parseCommand(rollback, 'rollback');
    const [run, aws] = await Promise.all([import('../../app/run.ts'), import('../../app/clients.ts')]);
    const clients = { s3: aws.createS3Client(settings), cloudfront: aws.createCloudFrontClient(settings) };
    const summary = await run.rollback(settings, clients, new Date());
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  });

  const rebuild = program
    .command('rebuild')
    .description('Invoke the deployed builder function now and print its summary (manual rebuild).');
  addSettings(rebuild, 'rebuild').action(async () => {
    const settings = parseCommand(rebuild, 'rebuild');
    const [{ createLambdaClient }, { invokeBuilder }] = await Promise.all([
      import('../../app/clients.ts'),
      import('../../lambda/invoke.ts'),
    ]);
    const summary = await invokeBuilder(
      createLambdaClient(settings),
      settings.function,
      settings.force ? { force: true } : {},
    );
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  });
}
