/**
 * Runs the `catalog` program in the calling process with captured streams: what the tests use for most
 * command-line checks (the same program, exit codes and output as the `catalog` process, without a process
 * start per call). Registered with the test harness by `cli/vitest.setup.ts`.
 */
import { Readable } from 'node:stream';
import type { CliIO } from './io.ts';
import { type ProgramOptions, runCli } from './program.ts';

/** What a finished command printed, and its exit code. */
export interface InProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `catalog …argv` to completion with `env` as its environment and `input` on its standard input. A
 * long-running command (serve, start, proxy) is stopped as soon as it is serving: run those as processes.
 */
export async function runInProcess(
  argv: readonly string[],
  options: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly input?: string;
  } & ProgramOptions,
): Promise<InProcessResult> {
  let stdout = '';
  let stderr = '';
  const stops: ((signal: string) => Promise<void>)[] = [];
  const io: CliIO = {
    env: options.env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    stdin: Readable.from(options.input !== undefined ? [options.input] : []),
    onStop: (stop) => {
      stops.push(stop);
    },
  };
  const code = await runCli(argv, io, options.checkOnly ? { checkOnly: true } : {});
  for (const stop of stops) await stop('SIGTERM');
  return { code, stdout, stderr };
}
