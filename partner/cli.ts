/**
 * The kit's two commands (README.md), as commander programs that write through a {@link KitIO}: `catalog-proxy`
 * runs the proxy, `catalog-check` checks the service from the partner's side with the partner's own key. The
 * bins (main.ts, check-main.ts) run them for the real process; tests run them in-process. As the `catalog`
 * command line does: `--help` describes every option, the environment and the exit codes, a usage error is one
 * line on stderr (exit 1); and `--version` prints the kit's version. The key comes only from the environment: a
 * flag would show in `ps` and in shell history.
 */
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { type CheckReport, checkDeployment } from '../app/check.ts';
import { formatCheckReport, partnerSteps } from '../app/check-rows.ts';
import { renderSettingRefs } from '../contract/errors.ts';
import { KEY_PATTERN } from '../keys/keys.ts';
import { duration, formatDuration } from '../keys/time.ts';
import { DEFAULT_CHANGES_KEPT, MIN_REFRESH_SECONDS, type RunningProxy, startProxy } from './proxy.ts';

/** Where a command reads its environment and writes its output. */
export interface KitIO {
  readonly env: Readonly<Record<string, string | undefined>>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The environment variable holding the partner's API key, for both commands. */
export const KEY_VARIABLE = 'CATALOG_PARTNER_KEY';
/** The environment variable that may give the service's base URL instead of `--upstream`. */
const UPSTREAM_VARIABLE = 'CATALOG_UPSTREAM';

/** The kit's version: its package's (`npm ls @training-plan-catalog/partner` says the same). */
export const KIT_VERSION = (
  createRequire(import.meta.url)('@training-plan-catalog/partner/package.json') as { version: string }
).version;

/** What `catalog-check` waits for each answer and for the whole run unless told: as `catalog check` does. */
export const CHECK_DEFAULTS = { timeoutMs: 10_000, deadlineMs: 120_000 } as const;

/** A command's end with its exit code, its reason already written. */
class KitExit extends Error {
  override name = 'KitExit';
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

/** A program named `name` writing through `io`, with `--version`, its usage errors as one line. */
function kitProgram(name: string, description: string, io: KitIO): Command {
  return new Command(name)
    .description(description)
    .version(KIT_VERSION, '--version', "print the kit's version")
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) =>
        write(`${name}: ${text.trim().replace(/^error: /, '')} (add --help for usage)\n`),
    })
    .exitOverride();
}

/** An option whose default the help shows as it is typed (`8788`, `10s`), as the `catalog` command line's. */
const withDefault = (flags: string, description: string, value: string) =>
  new Option(flags, description).default(value, value);

/** Runs `program` on `argv`: 0 when it ended (or showed its help or version), else its exit code. */
async function run(program: Command, argv: readonly string[], io: KitIO): Promise<number> {
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof KitExit) return error.code;
    // Commander has written its message (or the help, or the version) already.
    if (error instanceof CommanderError) return error.exitCode;
    io.stderr(`${program.name()}: ${(error as Error).message}\n`);
    return 1;
  }
}

/** Writes `message` as the command's one line on stderr and ends it with exit 1. */
function fail(io: KitIO, name: string, message: string): never {
  io.stderr(`${name}: ${message}\n`);
  throw new KitExit(1);
}

/** The partner's key from the environment, or the command's failure naming the variable. */
function keyOf(io: KitIO, name: string): string {
  const key = io.env[KEY_VARIABLE] ?? '';
  if (key === '') fail(io, name, `set ${KEY_VARIABLE} to your API key (it is never read from a flag)`);
  return key;
}

/** The service's base URL (`--upstream`, else the environment), without a trailing slash; or the failure. */
function upstreamOf(io: KitIO, name: string, given: string | undefined): string {
  const upstream = given ?? io.env[UPSTREAM_VARIABLE] ?? '';
  if (!/^https?:\/\/[^/?#@]+\/?$/.test(upstream))
    fail(io, name, '--upstream must be the service base URL, http(s)://host[:port] (no user:password@)');
  return upstream.replace(/\/$/, '');
}

/** A flag holding a whole number from `min` to `max`, or the failure naming it. */
function whole(io: KitIO, name: string, flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    fail(io, name, `--${flag} "${text}": must be a whole number from ${min} to ${max}`);
  return Number(text);
}

const UPSTREAM_HELP = `the catalog service's base URL, http(s)://host[:port] (env: ${UPSTREAM_VARIABLE})`;

/** Ends the help: the environment the command reads, and its exit codes. */
function helpTail(environment: string, exitCodes: string): string {
  return `\nEnvironment:\n  ${KEY_VARIABLE}  ${environment}\n\nExit codes: ${exitCodes}\n`;
}

/**
 * `catalog-proxy [--upstream URL] [--port N] [--host H] [--cache-file FILE] [--refresh-seconds N]
 * [--changes-kept N] [--notify URL]`: starts the proxy and resolves with 0 once it listens (`started` gets it:
 * the bin stops it on a signal), or with the exit code of a usage error.
 */
export function catalogProxy(
  argv: readonly string[],
  io: KitIO,
  started: (proxy: RunningProxy) => void,
): Promise<number> {
  const name = 'catalog-proxy';
  const program = kitProgram(
    name,
    `Run the partner proxy: serves GET /plans.json to your frontend from a copy of the catalog it refreshes with your key (${KEY_VARIABLE}), GET /changes?since=N to your application (and POSTs each change set to --notify), and GET /healthz.`,
    io,
  )
    .option('--upstream <url>', UPSTREAM_HELP)
    .addOption(withDefault('--port <n>', 'port to listen on (0 picks a free one)', '8788'))
    .addOption(withDefault('--host <host>', 'interface to listen on', '127.0.0.1'))
    .addOption(
      withDefault(
        '--cache-file <file>',
        'where the last good copy and its change history are saved',
        'catalog-cache.json',
      ),
    )
    .option(
      '--refresh-seconds <n>',
      `seconds between refreshes, at least ${MIN_REFRESH_SECONDS} (default: as long as the service's Cache-Control max-age says)`,
    )
    .addOption(
      withDefault(
        '--changes-kept <n>',
        'how many change sets GET /changes keeps (older ones answer 410: resync from /plans.json)',
        String(DEFAULT_CHANGES_KEPT),
      ),
    )
    .option('--notify <url>', "your application's URL the proxy POSTs each new change set to")
    .addHelpText(
      'after',
      helpTail(
        'your API key (never a flag, never logged)',
        '0 stopped by SIGTERM or SIGINT; 1 a bad option, no key, or an address it cannot listen on.',
      ),
    )
    .action(async (options: Record<string, string | undefined>) => {
      const key = keyOf(io, name);
      const upstream = upstreamOf(io, name, options.upstream);
      const port = whole(io, name, 'port', options.port ?? '', 0, 65_535);
      const refresh = options.refreshSeconds;
      const refreshSeconds =
        refresh === undefined
          ? undefined
          : whole(io, name, 'refresh-seconds', refresh, MIN_REFRESH_SECONDS, 86_400);
      const changesKept = whole(io, name, 'changes-kept', options.changesKept ?? '', 1, 10_000);
      const notify = options.notify;
      // The proxy refuses a bad notify URL (or upstream), said in one line.
      const proxy = await startProxy({
        upstream,
        key,
        port,
        host: options.host ?? '127.0.0.1',
        cacheFile: options.cacheFile ?? 'catalog-cache.json',
        changesKept,
        ...(refreshSeconds === undefined ? {} : { refreshSeconds }),
        ...(notify === undefined ? {} : { notify: { url: notify } }),
      }).catch((error: Error) => fail(io, name, error.message));
      io.stderr(`${name}: listening on ${proxy.url}\n`);
      started(proxy);
    });
  return run(program, argv, io);
}

/** How the kit names the settings a report mentions (contract/errors.ts `settingRef`). */
const CHECK_LABELS: Readonly<Record<string, string>> = {
  checkKey: KEY_VARIABLE,
  checkTimeout: '--timeout',
  checkDeadline: '--deadline',
  corsOrigin: "--cors-origin to the operator's catalog check",
};
const rendered = (text: string) => renderSettingRefs(text, (setting) => CHECK_LABELS[setting] ?? setting);

/** A duration flag (`10s`, `2m`) in milliseconds, at most a day, or the failure naming it. */
function durationOf(io: KitIO, name: string, flag: string, text: string): number {
  const parsed = duration(86_400_000).safeParse(text);
  if (!parsed.success)
    fail(io, name, `--${flag} "${text}": ${parsed.error.issues[0]?.message ?? 'is not a duration'}`);
  return parsed.data;
}

/**
 * `catalog-check [--upstream URL] [--json] [--timeout D] [--deadline D]`: the rows of the service's own check
 * that need nothing but its address and the partner's key (app/check-rows.ts `partnerSteps`), one line each,
 * or the whole report as JSON; resolves with 0 when every row passes, 1 when one fails or is not run, 2 when
 * the service cannot be reached.
 */
export function catalogCheck(argv: readonly string[], io: KitIO): Promise<number> {
  const name = 'catalog-check';
  const program = kitProgram(
    name,
    `Check the catalog service from your side with your key (${KEY_VARIABLE}), row by row, against the specification this kit was made for: each request and what its answer must be. Exit 0 every row passes, 1 a row fails or is not run, 2 the service cannot be reached.`,
    io,
  )
    .option('--upstream <url>', UPSTREAM_HELP)
    .option('--json', 'print the whole report as JSON instead of a line per row')
    .addOption(
      withDefault(
        '--timeout <duration>',
        'the deadline of each answer, from connecting to its last byte',
        formatDuration(CHECK_DEFAULTS.timeoutMs),
      ),
    )
    .addOption(
      withDefault(
        '--deadline <duration>',
        'the deadline of the whole run: rows not run by then are reported as not run, never as passed',
        formatDuration(CHECK_DEFAULTS.deadlineMs),
      ),
    )
    .addHelpText(
      'after',
      `${helpTail(
        'your API key (never a flag, never printed)',
        '0 every row passes; 1 a row fails or is not run (--deadline, a refused key); 2 the service cannot be reached.',
      )}\nOne line per row: PASS; FAIL with what was expected and what came; SKIP with why; NOT RUN (--deadline\npassed first, or the key was refused by the first answer). Send the operator the output (--json for the\nwhole report) when you report a problem: it never holds your key.\n`,
    )
    .action(async (options: Record<string, string | boolean | undefined>) => {
      const key = keyOf(io, name);
      if (!KEY_PATTERN.test(key))
        fail(
          io,
          name,
          `${KEY_VARIABLE} is not an API key (tpc_ and 43 base64url characters); the value is not shown`,
        );
      const baseUrl = upstreamOf(io, name, options.upstream as string | undefined);
      const report = await checkDeployment({
        baseUrl,
        key,
        // What a partner cannot know: the CORS origin (not checked), the builder's schedule (no row of theirs).
        cors: undefined,
        maxAgeMs: Number.POSITIVE_INFINITY,
        keyInUrl: false,
        timeoutMs: durationOf(io, name, 'timeout', String(options.timeout)),
        deadlineMs: durationOf(io, name, 'deadline', String(options.deadline)),
        steps: partnerSteps(),
      });
      const shown = JSON.parse(rendered(JSON.stringify(report))) as CheckReport;
      io.stdout(options.json ? `${JSON.stringify(shown)}\n` : rendered(formatCheckReport(shown)));
      if (shown.exitCode === 0) return;
      const failed = shown.rows.filter((row) => row.verdict === 'fail').length;
      io.stderr(
        shown.reachable
          ? `${name}: ${failed} of ${shown.rows.length} rows failed against ${baseUrl}${shown.keyRefused ? ` (${KEY_VARIABLE} was refused)` : ''}${shown.counts['not-run'] > 0 ? `, ${shown.counts['not-run']} not run` : ''}\n`
          : `${name}: ${baseUrl} cannot be reached: ${shown.rows[0]?.lines[0] ?? 'no answer'}\n`,
      );
      throw new KitExit(shown.exitCode);
    });
  return run(program, argv, io);
}
