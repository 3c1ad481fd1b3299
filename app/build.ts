/**
 * A build from its source (builder/build.ts): its first, cheap step (`prepareBuild`: the rows read and validated,
 * enough for a publish to decide) and the costly one (`completeBuild`). The application layer owns the build:
 * `catalog build` writes it flat (build-output.ts), a publish (run.ts) hands its values to publish/.
 */
import { type BuildResult, completeBuild, type PreparedBuild, prepareBuild } from '../builder/build.ts';
import { formatInvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { openSource } from '../builder/sources/index.ts';
import type { ProgressSink } from '../publish/steps.ts';
import type { SettingsIn } from './settings/index.ts';

/** What an operation tells its caller as it goes: warnings and the rows a failed build refused. */
export type Report = (line: string) => void;

/** The settings a build reads (the same names on the command line, in the Lambda and in CDK), but where it writes. */
export type BuildSettings = Omit<SettingsIn<'build'>, 'out' | 'json' | 'source' | 'sourceToken'> & {
  /** The source spec (a path, `postgres://…`, `http(s)://…`). */
  readonly source: string;
  /** The bearer token of an HTTP source. */
  readonly sourceToken?: string | undefined;
};

/** The source of a run when it is read at run time (the Lambda's secret) rather than taken from the settings. */
export type RunSource = Pick<BuildSettings, 'source' | 'sourceToken'>;

/** Reads the source and builds in memory, stamped `now`; invalid rows are reported one line each. */
export async function build(
  settings: BuildSettings,
  now: Date,
  report: Report,
  progress: ProgressSink,
): Promise<BuildResult> {
  const prepared = await prepare(settings, now, report, progress);
  progress({ stage: 'compressing and rendering pages' });
  return completeBuild(prepared);
}

/** Reads the source and takes a build's first step (builder/build.ts `prepareBuild`), reporting invalid rows. */
export async function prepare(
  settings: BuildSettings,
  now: Date,
  report: Report,
  progress: ProgressSink,
): Promise<PreparedBuild> {
  progress({ stage: 'reading the source' });
  try {
    const prepared = await prepareBuild(await openSource(settings.source, settings), {
      links: { baseUrl: settings.baseUrl, appScheme: settings.appScheme, webBaseUrl: settings.webBaseUrl },
      skipInvalid: settings.skipInvalid,
      now,
      openapiTemplate: OPENAPI_TEMPLATE,
      contactAddress: settings.contactAddress,
    });
    for (const problem of prepared.warnings) report(`warning: invalid ${formatInvalidRow(problem)}`);
    return prepared;
  } catch (error) {
    if (error instanceof InvalidRowsError) for (const line of error.lines()) report(`invalid ${line}`);
    throw error;
  }
}
