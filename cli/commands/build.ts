import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { z } from 'zod';
import type { BuildResult } from '../../builder/build.ts';
import { formatInvalidRow, InvalidRowsError } from '../../builder/errors.ts';
import { AppScheme, BaseUrl, DEFAULT_LINKS } from '../../builder/model.ts';
import {
  ByteSize,
  formatBytes,
  formatMs,
  RelationNameText,
  Retries,
  SOURCE_DEFAULTS,
  type SourceOptions,
  TimeoutMs,
} from '../../builder/sources/options.ts';
import { parseOptions } from '../options.ts';
import { repoRoot } from '../paths.ts';

export const DEFAULT_SOURCE = 'fixtures/plans.json';
export const DEFAULT_OUT = '.catalog/origin';

/** The environment variable holding the bearer token of an HTTP source (never a flag: flags show in `ps`). */
export const SOURCE_TOKEN_ENV = 'CATALOG_SOURCE_TOKEN';

/**
 * The options of every command that builds (build, publish). The source settings are optional: absent, they
 * take their defaults ({@link SOURCE_DEFAULTS}); timeouts are in ms and sizes in bytes once parsed.
 */
export const BuildFlags = z.object({
  source: z.string().trim().min(1, { error: 'must not be empty' }),
  baseUrl: BaseUrl,
  appScheme: AppScheme,
  skipInvalid: z.boolean(),
  /** PostgreSQL: the relation read. */
  sourceRelation: RelationNameText.optional(),
  /** PostgreSQL: statement_timeout, ms. */
  sourceStatementTimeout: TimeoutMs.optional(),
  /** PostgreSQL and HTTP: connect timeout, ms. */
  sourceConnectTimeout: TimeoutMs.optional(),
  /** HTTP: headers timeout, ms. */
  sourceHeadersTimeout: TimeoutMs.optional(),
  /** HTTP: body timeout (longest pause), ms. */
  sourceBodyTimeout: TimeoutMs.optional(),
  /** HTTP: largest body accepted, bytes. */
  sourceMaxBytes: ByteSize.optional(),
  /** HTTP: retries after the first attempt. */
  sourceRetries: Retries.optional(),
  /** HTTP: bearer token, from {@link SOURCE_TOKEN_ENV} only. Never validated here, so never echoed. */
  sourceToken: z.string().optional(),
});
export type BuildFlags = z.output<typeof BuildFlags>;

/** The source settings of parsed build flags, as `openSource` takes them. */
export function sourceOptionsOf(flags: BuildFlags): SourceOptions {
  return {
    relation: flags.sourceRelation,
    statementTimeoutMs: flags.sourceStatementTimeout,
    connectTimeoutMs: flags.sourceConnectTimeout,
    headersTimeoutMs: flags.sourceHeadersTimeout,
    bodyTimeoutMs: flags.sourceBodyTimeout,
    maxBodyBytes: flags.sourceMaxBytes,
    retries: flags.sourceRetries,
    token: flags.sourceToken,
  };
}

/**
 * A source setting with its environment variable; its default is {@link SOURCE_DEFAULTS}' value written as a
 * flag would give it (`1m`, `128MiB`), so the help shows it and the parsed value equals the source's default.
 */
function sourceOption(flag: string, env: string, description: string, defaultText: string): Option {
  return new Option(flag, description).env(env).default(defaultText);
}

/**
 * Adds the build options (contract §5) with their environment variables, and the settings of PostgreSQL and
 * HTTP sources. The bearer token of an HTTP source is read from CATALOG_SOURCE_TOKEN only, just before the
 * command runs, into the `sourceToken` option value.
 */
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
    )
    .addOption(
      sourceOption(
        '--source-relation <name>',
        'CATALOG_SOURCE_RELATION',
        'postgres: table or view to read, optionally schema-qualified',
        SOURCE_DEFAULTS.relation,
      ),
    )
    .addOption(
      sourceOption(
        '--source-statement-timeout <duration>',
        'CATALOG_SOURCE_STATEMENT_TIMEOUT',
        'postgres: statement_timeout of each statement of the read, e.g. 30s',
        formatMs(SOURCE_DEFAULTS.statementTimeoutMs),
      ),
    )
    .addOption(
      sourceOption(
        '--source-connect-timeout <duration>',
        'CATALOG_SOURCE_CONNECT_TIMEOUT',
        'postgres and http(s): time to connect',
        formatMs(SOURCE_DEFAULTS.connectTimeoutMs),
      ),
    )
    .addOption(
      sourceOption(
        '--source-headers-timeout <duration>',
        'CATALOG_SOURCE_HEADERS_TIMEOUT',
        'http(s): time to the response headers',
        formatMs(SOURCE_DEFAULTS.headersTimeoutMs),
      ),
    )
    .addOption(
      sourceOption(
        '--source-body-timeout <duration>',
        'CATALOG_SOURCE_BODY_TIMEOUT',
        'http(s): longest pause while the body arrives',
        formatMs(SOURCE_DEFAULTS.bodyTimeoutMs),
      ),
    )
    .addOption(
      sourceOption(
        '--source-max-bytes <size>',
        'CATALOG_SOURCE_MAX_BYTES',
        'http(s): largest body accepted, e.g. 64MiB',
        formatBytes(SOURCE_DEFAULTS.maxBodyBytes),
      ),
    )
    .addOption(
      sourceOption(
        '--source-retries <n>',
        'CATALOG_SOURCE_RETRIES',
        'http(s): retries on 5xx, 429 and network errors, with backoff',
        String(SOURCE_DEFAULTS.retries),
      ),
    )
    .addHelpText(
      'after',
      `\nEnvironment:\n  ${SOURCE_TOKEN_ENV}  bearer token sent to an http(s) source (never shown or logged)`,
    )
    .hook('preAction', (self) => {
      const token = process.env[SOURCE_TOKEN_ENV];
      if (token !== undefined && token !== '') self.setOptionValueWithSource('sourceToken', token, 'env');
    });
}

/** Reads the source and builds in memory, printing invalid rows (as the failure list, or as warnings). */
export async function runBuild(flags: BuildFlags, now: Date = new Date()): Promise<BuildResult> {
  const [{ buildCatalog }, { openSource }] = await Promise.all([
    import('../../builder/build.ts'),
    import('../../builder/sources/index.ts'),
  ]);
  const source = await openSource(flags.source, sourceOptionsOf(flags));
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
  const bytes = result.files.reduce((sum, file) => sum + file.size, 0);
  const { unpublished, unapproved } = result.skipped;
  const invalidRows = new Set(result.warnings.map((w) => w.row)).size;
  return [
    `built ${plans} plans (running ${result.counts.running}, strength ${result.counts.strength}) from ${result.total} rows into ${where}`,
    `  skipped: ${unpublished} not published, ${unapproved} published but not approved, ${invalidRows} invalid`,
    `  files: ${result.files.map((f) => `${f.key} ${f.size} B`).join(', ')}; ${bytes} B in all`,
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
