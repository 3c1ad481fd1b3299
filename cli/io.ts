/**
 * What a command reads and writes, handed in by whoever runs it: the real process (`bin/catalog.js` through
 * main.ts) or a test that runs the command in-process (testing/cli.ts). No command touches `process.stdout`,
 * `process.stderr`, `process.env` or `process.exitCode` itself.
 */
import type { Readable } from 'node:stream';

export interface CliIO {
  /** The environment the settings' variables are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
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

/** One line on stderr: what a command did (stdout is kept for machine output). */
export function noter(io: Pick<CliIO, 'stderr'>): (line: string) => void {
  return (line) => io.stderr(`${line}\n`);
}

/** The real process's streams, environment and signals. */
export function processIO(): CliIO {
  return {
    env: process.env,
    stdout: (text) => {
      process.stdout.write(text);
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
