import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { z } from 'zod';
import type { BuildResult } from '../../builder/build.ts';
import { formatInvalidRow, InvalidRowsError } from '../../builder/errors.ts';
import { AppScheme, BaseUrl, DEFAULT_LINKS } from '../../builder/model.ts';
import { parseOptions } from '../options.ts';
import { repoRoot } from '../paths.ts';

export const DEFAULT_SOURCE = 'fixtures/plans.json';
export const DEFAULT_OUT = '.catalog/origin';

/** The options of every command that builds (build, publish). */
export const BuildFlags = z.object({
  source: z.string().trim().min(1, { error: 'must not be empty' }),
  baseUrl: BaseUrl,
  appScheme: AppScheme,
  skipInvalid: z.boolean(),
});
export type BuildFlags = z.output<typeof BuildFlags>;

/** Adds the build options (contract §5) with their environment variables. */
export function addBuildOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--source <source>', 'JSON file path, postgres://… or http(s)://… URL')
        .env('CATALOG_SOURCE')
        .default(DEFAULT_SOURCE),
    )
    .addOption(
      new Option('--base-url <url>', 'base of webUrl: http(s)://host[:port]')
        .env('CATALOG_BASE_URL')
        .default(DEFAULT_LINKS.baseUrl),
    )
    .addOption(
      new Option('--app-scheme <scheme>', 'scheme of appUrl deep links')
        .env('CATALOG_APP_SCHEME')
        .default(DEFAULT_LINKS.appScheme),
    )
    .addOption(
      new Option('--skip-invalid', 'publish the valid rows and print the invalid ones as warnings')
        .env('CATALOG_SKIP_INVALID')
        .default(false),
    );
}

/** Reads the source and builds in memory, printing invalid rows (as the failure list, or as warnings). */
export async function runBuild(flags: BuildFlags, now: Date = new Date()): Promise<BuildResult> {
  const [{ buildCatalog }, { openSource }] = await Promise.all([
    import('../../builder/build.ts'),
    import('../../builder/sources/index.ts'),
  ]);
  const source = await openSource(flags.source);
  const openapiTemplate = await readFile(join(repoRoot(), 'openapi.yaml'), 'utf8');
  try {
    const result = await buildCatalog(source, {
      links: { baseUrl: flags.baseUrl, appScheme: flags.appScheme },
      skipInvalid: flags.skipInvalid,
      now,
      openapiTemplate,
    });
    for (const problem of result.warnings)
      process.stderr.write(`warning: invalid ${formatInvalidRow(problem)}\n`);
    return result;
  } catch (error) {
    if (error instanceof InvalidRowsError)
      for (const line of error.lines()) process.stderr.write(`invalid ${line}\n`);
    throw error;
  }
}

/** The one human summary of a build, for stderr. */
export function describeBuild(result: BuildResult, where: string, ms: number): string {
  const plans = result.counts.running + result.counts.strength;
  const bytes = result.files.reduce((sum, file) => sum + file.body.length, 0);
  const { unpublished, unapproved } = result.skipped;
  const invalidRows = new Set(result.warnings.map((w) => w.row)).size;
  return [
    `built ${plans} plans (running ${result.counts.running}, strength ${result.counts.strength}) from ${result.total} rows into ${where}`,
    `  skipped: ${unpublished} not published, ${unapproved} published but not approved, ${invalidRows} invalid`,
    `  files: ${result.files.map((f) => `${f.key} ${f.body.length} B`).join(', ')}; ${bytes} B in all`,
    `  generatedAt ${result.generatedAt}, ${ms.toFixed(0)} ms`,
  ].join('\n');
}

export function registerBuild(program: Command): void {
  const command = program
    .command('build')
    .description('Build the three catalog files, openapi.yaml and errors/500.json into a directory.')
    .addOption(new Option('--out <dir>', 'output directory').env('CATALOG_OUT').default(DEFAULT_OUT));
  addBuildOptions(command).action(async () => {
    const started = performance.now();
    const flags = parseOptions(command, BuildFlags.extend({ out: z.string().trim().min(1) }));
    const result = await runBuild(flags);
    const { writeOriginDir } = await import('../../builder/output.ts');
    await writeOriginDir(flags.out, result.files);
    process.stderr.write(`${describeBuild(result, flags.out, performance.now() - started)}\n`);
  });
}
