/**
 * What a command reads and writes, handed in by whoever runs it: the real process (`bin/catalog.js` through
 * main.ts) or a test that runs the command in-process (testing/cli.ts). No command touches `process.stdout`,
 * `process.stderr`, `process.env` or `process.exitCode` itself.
 */
import type { Readable } from 'node:stream';
import type { Progress } from '../app/run.ts';

export interface CliIO {
  /** The environment the settings' variables are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout and stderr are a terminal (a person watching): long commands then show their progress. */
  readonly terminal?: boolean;
  /** Machine output: a JSON line, a table, an issued key. */
  stdout(text: string): void;
  /** What a command did, warnings, and the one-line reason of a failure. */
  stderr(text: string): void;
  /** Standard input, for a command given `-` as a file. */
  readonly stdin: Readable;
  /**
   * A long-running command (serve, start, proxy) hands over how it stops. A process calls it on SIGINT or
   * SIGTERM and then exits 0; a test calls it when it is done.
   */
  onStop(stop: (signal: string) => Promise<void>): void;
}

/**
 * Ends a command with an exit code and nothing more to say: it has printed its own report (`catalog status`
 * exits 1 or 2, `catalog check` 1 or 2, `catalog publish` while pinned 3).
 */
export class CommandExit extends Error {
  override name = 'CommandExit';
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

/**
 * Says first, on stderr, what a command that changes state acts on (app/target.ts `describeTarget`), and the
 * warning that comes with it.
 */
export function sayTarget(
  io: Pick<CliIO, 'stderr'>,
  said: { readonly line: string; readonly warning?: string },
) {
  io.stderr(`${said.line}\n`);
  if (said.warning !== undefined) io.stderr(`catalog: warning: ${said.warning}\n`);
}

/** One line on stderr: what a command did (stdout is kept for machine output). */
export function noter(io: Pick<CliIO, 'stderr'>): (line: string) => void {
  return (line) => io.stderr(`${line}\n`);
}

/**
 * What a long command is doing, on one line of stderr redrawn in place: `publish: uploading 1200/30012, 14 s`,
 * the time since it started redrawn every second, so it is never silent. Only when a person watches (stdout
 * and stderr are a terminal) and `quiet` is false (`--json`); otherwise only its notes are written. `progress`
 * redraws at once for a new stage, else at most five times a second; `note` writes a line above the progress
 * line; `stop` removes it, before the command's own output.
 */
export function progressLine(io: CliIO, command: string, quiet: boolean) {
  const show = io.terminal === true && !quiet;
  const started = performance.now();
  let current: Progress | undefined;
  let drawnAt = 0;
  let shown = false;
  const draw = () => {
    if (!current) return;
    const count = current.total === undefined ? '' : ` ${current.done ?? 0}/${current.total}`;
    const seconds = Math.round((performance.now() - started) / 1000);
    io.stderr(`\r\x1b[K${command}: ${current.stage}${count}, ${seconds} s`);
    drawnAt = performance.now();
    shown = true;
  };
  const timer = show ? setInterval(draw, 1000) : undefined;
  timer?.unref();
  const clear = () => {
    if (shown) io.stderr('\r\x1b[K');
    shown = false;
  };
  return {
    progress(progress: Progress) {
      if (!show) return;
      const changed = progress.stage !== current?.stage;
      current = progress;
      if (changed || performance.now() - drawnAt >= 200) draw();
    },
    note(line: string) {
      clear();
      io.stderr(`${line}\n`);
      if (show) draw();
    },
    stop() {
      clearInterval(timer);
      clear();
    },
  };
}

/**
 * The real process's streams, environment and signals. A reader that stops early (`catalog builds | head`)
 * closes the pipe: what follows for stdout is dropped, and the command runs to its end and exit code.
 */
export function processIO(): CliIO {
  let readerGone = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    readerGone = true;
  });
  return {
    env: process.env,
    terminal: Boolean(process.stdout.isTTY && process.stderr.isTTY),
    stdout: (text) => {
      if (!readerGone) process.stdout.write(text);
    },
    stderr: (text) => {
      process.stderr.write(text);
    },
    stdin: process.stdin,
    onStop: (stop) => {
      const once = (signal: NodeJS.Signals) => {
        stop(signal).then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', once);
      process.once('SIGTERM', once);
    },
  };
}

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

/** `2026-11-21T13:25:56.123Z` → `2026-11-21T13:25:56Z`: a table's readable form of a stored time (null: `-`). */
export function shortTime(iso: string | null): string {
  return iso === null ? '-' : iso.replace(/\.\d+Z$/, 'Z');
}
