/**
 * Test setup (vitest.config.ts): lets the test harness run `catalog` in-process (testing/cli.ts runCatalog) —
 * the same program, exit codes and output as the `catalog` process, without a process start per call. The
 * harness cannot import the command line (nothing below it may), so the command line registers itself here.
 * A long-running command (serve, start, proxy) is stopped as soon as it is serving, unless the harness keeps
 * it running (testing/cli.ts startServe).
 */
import { Readable } from 'node:stream';
import type { Command } from 'commander';
import { useInProcessCatalog } from '../testing/cli.ts';
import type { CliIO } from './io.ts';

/**
 * Checks the arguments of `catalog …argv` without running the command: the real program parses them with
 * its actions replaced by the command's settings (flags, variables, their rules). For the docs' commands that
 * cannot run in a test (testing/doc-world.ts `CHECK_ONLY`).
 */
async function checkArguments(argv: readonly string[], io: CliIO): Promise<number> {
  // Loaded on the first run, not by every test file's setup.
  const [
    { CommanderError },
    { COMMANDS, renderMessage },
    { CommandExit },
    { parseCommand },
    { createProgram },
  ] = await Promise.all([
    import('commander'),
    import('../app/settings/index.ts'),
    import('./io.ts'),
    import('./options.ts'),
    import('./program.ts'),
  ]);
  const program = createProgram(io);
  program.hook('preAction', async (_program, command: Command) => {
    const path: string[] = [];
    for (let at: Command | null = command; at?.parent; at = at.parent) path.unshift(at.name());
    const context = path.join('-');
    if ((COMMANDS as readonly string[]).includes(context))
      await parseCommand(command, context as (typeof COMMANDS)[number], io.env);
    throw new CommandExit(0);
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommandExit) return error.code;
    if (error instanceof CommanderError) return error.exitCode;
    io.stderr(`catalog: ${renderMessage(error instanceof Error ? error.message : String(error), 'cli')}\n`);
    return 1;
  }
}

useInProcessCatalog(async (argv, options) => {
  let stdout = '';
  let stderr = '';
  const stops: ((signal: string) => Promise<void>)[] = [];
  const io: CliIO = {
    env: options.env,
    ...(options.terminal ? { terminal: true } : {}),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      if (options.serving) options.serving.stderr(text);
      else stderr += text;
    },
    stdin: Readable.from(options.input !== undefined ? [options.input] : []),
    onStop: (stop) => {
      stops.push(stop);
    },
  };
  const { runCli } = await import('./program.ts');
  const code = options.checkOnly ? await checkArguments(argv, io) : await runCli(argv, io);
  // As the process does on SIGTERM: each stop, then exit 0, or 1 when one fails (cli/io.ts).
  const stop = async () => {
    try {
      for (const each of stops.splice(0)) await each('SIGTERM');
      return code;
    } catch {
      return 1;
    }
  };
  if (options.serving) return { code, stdout, stderr, stop };
  await stop();
  return { code, stdout, stderr };
});
