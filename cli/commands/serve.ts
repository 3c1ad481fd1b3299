/** `catalog serve` and `catalog start`: the local stack (app/local.ts) on 127.0.0.1. */
import { appendFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, describeCause } from '../../contract/errors.ts';
import { catalogTarget, DISCIPLINES } from '../../contract/index.ts';
import { type CliIO, noter } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** Writes one JSON log line per entry; {@link JsonLines.flush} writes the waiting ones at once. */
export interface JsonLines {
  (entry: object): void;
  flush(): void;
  /** Writes one JSON log line to the copy file only (to the terminal when there is no file to write). */
  toFile(entry: object): void;
}

/**
 * JSON log lines on stderr (the access log, and what the edge or the proxy says about itself), written once
 * per turn of the event loop: a busy edge answers several requests a turn, and one write for all their lines
 * costs about what one line did. A stop calls `flush` last, so the process exits with every line written.
 * With `copyTo`, each line is also appended to that file (until a write fails, which is said once). A line
 * `fileOnly` holds for, and a `toFile` line, goes to the file alone: to stderr too once there is no file to
 * write, so that no line is lost.
 */
export function jsonLines(io: CliIO, copyTo?: string, fileOnly?: (entry: object) => boolean): JsonLines {
  /** The lines waiting, in order; `terminal` false: the copy file's only. */
  let waiting: { readonly text: string; readonly terminal: boolean }[] = [];
  let file = copyTo;
  const flush = () => {
    if (waiting.length === 0) return;
    const lines = waiting;
    waiting = [];
    let failure = '';
    if (file !== undefined)
      try {
        appendFileSync(file, lines.map((line) => line.text).join(''));
      } catch (error) {
        failure = `catalog: the log is no longer copied to ${file}: ${describeCause(error)}\n`;
        file = undefined;
      }
    const screen = lines.flatMap((line) => (line.terminal || file === undefined ? [line.text] : [])).join('');
    if (screen !== '' || failure !== '') io.stderr(screen + failure);
  };
  const add = (entry: object, terminal: boolean) => {
    if (waiting.length === 0) setImmediate(flush);
    waiting.push({ text: `${JSON.stringify(entry)}\n`, terminal: terminal && !fileOnly?.(entry) });
  };
  return Object.assign((entry: object) => add(entry, true), {
    flush,
    toFile: (entry: object) => add(entry, false),
  });
}

/** A stop (SIGINT or SIGTERM in a process) shuts the server down gracefully, then writes the last log lines. */
export function stopOnSignals(io: CliIO, server: { close(): Promise<void> }, log: JsonLines): void {
  io.onStop((signal) => {
    log({ time: new Date().toISOString(), message: `${signal}: shutting down` });
    return server.close().finally(log.flush);
  });
}

/** What each command here does, as its --help says. */
const HELP = {
  serve: 'Run the local edge: the built CloudFront Functions in front of an origin directory or bucket.',
  start:
    'The local stack (npm start): build from the fixtures, make sure a dev key exists, serve on 127.0.0.1:8787.',
} as const;

export function registerServe(program: Command, io: CliIO): void {
  const note = noter(io);
  settingsCommand(program, 'serve', HELP.serve, io, async (settings) => {
    const { checkServable, serveLocal } = await import('../../app/local.ts');
    // Refused before it listens: an origin or a store it could not serve (a typo, most likely).
    for (const warning of await checkServable(settings)) note(`catalog: warning: ${warning}`);
    const log = jsonLines(io);
    const edge = await serveLocal(settings, log).finally(log.flush);
    note(`catalog serve: listening on ${edge.url}`);
    stopOnSignals(io, edge, log);
  });
}

export function registerStart(program: Command, io: CliIO): void {
  const note = noter(io);
  const start = settingsCommand(
    program,
    'start',
    HELP.start,
    io,
    async ({ port, host, canaryRateMinutes, canaryFullRateMinutes }, command) => {
      if (command.args.length > 0) throw unexpectedArguments(command.args, io.env);
      const started = performance.now();
      const local = await import('../../app/local.ts');
      // The canary's requests go to the file alone: the terminal keeps the banner and the developer's own.
      const log = jsonLines(io, local.LOCAL_STACK.accessLog, local.isOwnCheckEntry);
      const { edge, key, summary, samplePage } = await local
        .startLocalStack({
          host,
          port,
          now: new Date(),
          report: note,
          log,
          canaryLog: log.toFile,
          canaryPeriodsMs: { probe: canaryRateMinutes * 60_000, full: canaryFullRateMinutes * 60_000 },
        })
        .finally(log.flush);
      note(
        summary.result === 'published'
          ? `published build ${summary.buildId} (${summary.plans} plans) to ${local.LOCAL_STACK.origin} in ${Math.round(performance.now() - started)} ms`
          : summary.result === 'skipped-identical'
            ? `build ${summary.buildId} stays live: it was built from the same fixtures and settings`
            : `build ${summary.previousBuildId} stays live (${summary.reason ?? summary.result})`,
      );
      note(
        [
          '',
          `Local stack ready on ${edge.url} (Ctrl-C stops it). Access log lines follow on stderr and in ${local.LOCAL_STACK.accessLog} (the canary's in the file only; catalog usage counts them).`,
          `  dev key (partner "${local.DEV_PARTNER}", local only, saved in ${local.LOCAL_STACK.devKey}): ${key}`,
          `  curl -i -H 'X-Api-Key: ${key}' '${edge.url}${catalogTarget(DISCIPLINES[0])}'`,
          `  curl -i '${edge.url}/openapi.yaml'`,
          ...(samplePage ? [`  a plan's page, for people (no key): ${edge.url}${samplePage}`] : []),
          '',
        ].join('\n'),
      );
      stopOnSignals(io, edge, log);
    },
  );
  // Words after `start` are said to be a slip of npm's (below), not commander's bare "too many arguments".
  start.allowExcessArguments();
}

/**
 * The refusal of words after `catalog start`. `npm start --port 8790` keeps `--port` for npm itself and passes
 * only `8790` on: the fix is to put the command's options after `--`.
 */
export function unexpectedArguments(
  words: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
) {
  const port = words.find((word) => /^\d+$/.test(word)) ?? env.npm_config_port ?? '8790';
  return new ConfigError(
    `start takes options only, not ${words.map((word) => JSON.stringify(word)).join(' ')}: npm keeps the options before -- for itself, so write npm start -- --port ${port} (or catalog start --port ${port})`,
  );
}
