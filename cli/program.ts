/**
 * The `catalog` program: every command registered on one commander program that writes through a
 * {@link CliIO}, and {@link runCli}, which runs it on an argument list and returns the exit code. main.ts runs
 * it for the real process; tests run it in-process (cli/vitest.setup.ts) with their own streams and environment.
 */
import { Command, CommanderError } from 'commander';
import { renderMessage } from '../app/settings/index.ts';
import { CatalogError, describeCause, NO_CREDENTIALS } from '../contract/errors.ts';
import { registerBuild } from './commands/build.ts';
import { registerCheck } from './commands/check.ts';
import { registerCors } from './commands/cors.ts';
import { registerKeys } from './commands/keys.ts';
import { registerProxy } from './commands/proxy.ts';
import { registerPublish } from './commands/publish.ts';
import { registerServe, registerStart } from './commands/serve.ts';
import { registerStatus } from './commands/status.ts';
import { registerUsage } from './commands/usage.ts';
import { registerVerifyFunction } from './commands/verify-function.ts';
import { addExitCodes } from './exit-codes.ts';
import { type CliIO, CommandExit } from './io.ts';

/**
 * A new program whose commands read and write through `io` (commander keeps state: one per run). Commander's
 * own usage errors (a missing argument, an unknown option) come out as every failure does: one line
 * `catalog: …`.
 */
export function createProgram(io: CliIO): Command {
  const program = new Command('catalog')
    .description('Build, serve and publish the training plan catalog.')
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) =>
        write(`catalog: ${text.trim().replace(/^error: /, '')} (add --help for usage)\n`),
    })
    .exitOverride();
  registerBuild(program, io);
  registerServe(program, io);
  registerKeys(program, io);
  registerCors(program, io);
  registerStart(program, io);
  registerPublish(program, io);
  registerVerifyFunction(program, io);
  registerProxy(program, io);
  registerStatus(program, io);
  registerCheck(program, io);
  registerUsage(program, io);
  addExitCodes(program);
  return program;
}

/**
 * Runs `catalog …argv` (the words after the program name) and resolves with its exit code: 0, the code a
 * command ended with, commander's for a usage error (its message already printed), or 1 with one line on
 * stderr saying why. A long-running command resolves once it is serving. Everything a command writes, on
 * either stream, names settings as the command line takes them (`--force`): a message's setting references
 * (contract/errors.ts `settingRef`) are rendered here, on the way out, whichever path wrote it.
 */
export async function runCli(argv: readonly string[], given: CliIO): Promise<number> {
  const io: CliIO = {
    ...given,
    stdout: (text) => given.stdout(renderMessage(text, 'cli')),
    stderr: (text) => given.stderr(renderMessage(text, 'cli')),
  };
  try {
    await createProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommandExit) return error.code;
    // Commander has printed its message (or the help) already.
    if (error instanceof CommanderError) return error.exitCode;
    let message = error instanceof CatalogError ? error.message : `unexpected error: ${describeCause(error)}`;
    // The SDK says only that it found no credentials: a profile that does not exist is named.
    if (message.includes(NO_CREDENTIALS)) {
      const { missingProfile } = await import('../app/aws-profile.ts');
      const why = await missingProfile(io.env);
      if (why !== undefined) message = message.replace(NO_CREDENTIALS, `${NO_CREDENTIALS}: ${why}`);
    }
    io.stderr(`catalog: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    if (!(error instanceof CatalogError) && io.env.CATALOG_DEBUG)
      io.stderr(`${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  }
}
