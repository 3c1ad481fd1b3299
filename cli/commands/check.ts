/**
 * `catalog check --base-url URL [--cors-origin ORIGIN|off] [--max-age D] [--timeout D] [--deadline D] [--json]`,
 * the key from `CATALOG_CHECK_KEY` (with `--deployment NAME` and no `--cors-origin`, CORS judged against the
 * origin the deployment's store holds): checks a deployment from outside, row by row (app/check.ts), within the
 * deadline. Prints one line per row (or the whole report as JSON); exit 0 when every row passes (warnings
 * allowed), 1 when one fails or is not run, 2 when the service cannot be reached at all. Never prints the key.
 */
import type { Command } from 'commander';
import type { CheckReport } from '../../app/check.ts';
import { CANARY_HEADER } from '../../contract/index.ts';
import { type CliIO, CommandExit } from '../io.ts';
import { settingsCommand } from '../options.ts';

export function registerCheck(program: Command, io: CliIO): void {
  const description =
    'Check a deployment from outside, row by row, against the specification (key from CATALOG_CHECK_KEY), within --deadline. Exit 0 every row passes, 1 a row fails or is not run, 2 the service cannot be reached.';
  settingsCommand(program, 'check', description, io, async (settings) => {
    const [check, rows, { renderMessage }, { formatAge }] = await Promise.all([
      import('../../app/check.ts'),
      import('../../app/check-rows.ts'),
      import('../../app/settings/index.ts'),
      import('../../app/status.ts'),
    ]);
    // Not told, and a deployment named: CORS is judged against the origin its store holds now, as its canary does.
    let cors = settings.corsOrigin;
    if (cors === undefined && settings.kvsArn !== undefined) {
      const [{ CloudFrontKeyValueStore }, { createKvsClient }, { showCorsOrigin }] = await Promise.all([
        import('../../keys/kvs-store.ts'),
        import('../../app/clients.ts'),
        import('../../keys/cors.ts'),
      ]);
      cors =
        (await showCorsOrigin(new CloudFrontKeyValueStore(createKvsClient(settings), settings.kvsArn))) ??
        null;
    }
    const report = await check.checkDeployment({
      baseUrl: settings.baseUrl,
      key: settings.checkKey,
      // Its requests marked as the deployment's own: with the monitoring key, reported apart from partners'.
      alwaysHeaders: [[CANARY_HEADER, settings.checkKey]],
      cors,
      maxAgeMs: settings.maxAge,
      timeoutMs: settings.checkTimeout,
      deadlineMs: settings.checkDeadline,
    });
    // Setting names in the rows (`--cors-origin`, `--max-age`) as this command line spells them.
    const rendered = JSON.parse(renderMessage(JSON.stringify(report), 'cli')) as CheckReport;
    io.stdout(settings.json ? `${JSON.stringify(rendered)}\n` : rows.formatCheckReport(rendered));
    if (rendered.exitCode === 0) return;
    if (!rendered.reachable)
      io.stderr(
        `catalog: ${rendered.baseUrl} cannot be reached: ${rendered.rows[0]?.lines[0] ?? 'no answer'}\n`,
      );
    else {
      const failed = rendered.rows.filter((row) => row.verdict === 'fail').map((row) => `"${row.name}"`);
      const shown = failed.length > 5 ? [...failed.slice(0, 5), `and ${failed.length - 5} more`] : failed;
      const notRun = rendered.counts['not-run'];
      const unrun =
        notRun === 0
          ? ''
          : `; ${notRun} not run (${rendered.deadline.reached ? `--deadline ${formatAge(rendered.deadline.ms / 1000)} passed` : 'the key was refused'})`;
      io.stderr(
        `catalog: ${failed.length} of ${rendered.rows.length} rows failed against ${rendered.baseUrl}${rendered.keyRefused ? ' (CATALOG_CHECK_KEY was refused)' : ''}${rendered.corsCause ? ` (likely cause: ${rendered.corsCause})` : ''}${failed.length > 0 ? `: ${shown.join(', ')}` : ''}${unrun}\n`,
      );
    }
    throw new CommandExit(rendered.exitCode);
  }).addHelpText(
    'after',
    '\nOne line per row: PASS; FAIL with what was expected and what came; SKIP with why; WARN (the catalog is\nolder than --max-age); NOT RUN (--deadline passed first, or the key was refused by the first answer).\nWhat a failing row means and what to do: docs/decisions.md#checking-a-deployment.',
  );
}
