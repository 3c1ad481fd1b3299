/**
 * The exit codes of every command, said in its `--help` (the root README promises each command lists them).
 * One table: a command not named here has the ordinary two.
 */
import type { Command } from 'commander';

/** The ordinary codes: done, or a failure or refusal said in one line on stderr. */
const ORDINARY = '0 done; 1 failed or refused (one line on stderr says why)';
/** A command that serves until it is stopped. */
const SERVING = '0 stopped by Ctrl-C or SIGTERM; 1 could not start (one line on stderr says why)';

/** Each command's codes where they are not {@link ORDINARY}, by its words (`keys issue`). */
export const EXIT_CODES: Readonly<Record<string, string>> = {
  publish:
    '0 published, or identical to the live build; 1 failed, refused, or busy (another run holds the run lock; nothing done); 3 pinned by a rollback (nothing moved: catalog unpin, then publish again)',
  status: '0 healthy; 1 degraded, or the target cannot be read; 2 broken (one line on stderr says why)',
  check:
    '0 every row passes (warnings allowed); 1 a row fails or is not run (--deadline, a refused key); 2 the service cannot be reached',
  'verify-function': '0 every case passes; 1 a case fails, or a function cannot be tested',
  'publish-functions':
    "0 published, or LIVE already runs DEVELOPMENT's code; 1 a case failed or a call did (nothing published)",
  rebuild:
    '0 the builder published, found the catalog identical, or was held by a pin; 1 the function failed, did nothing (busy, no source yet), or could not be invoked',
  serve: SERVING,
  start: SERVING,
  proxy: SERVING,
};

/** The words of a command under the program (`keys issue`). */
function wordsOf(command: Command): string {
  const words: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) words.unshift(at.name());
  return words.join(' ');
}

/** Adds the exit codes to the help of every command under `program` that runs (a group's subcommands do). */
export function addExitCodes(program: Command): void {
  for (const command of program.commands) {
    if (command.commands.length > 0) {
      addExitCodes(command);
      continue;
    }
    command.addHelpText('after', `\nExit codes: ${EXIT_CODES[wordsOf(command)] ?? ORDINARY}.`);
  }
}
