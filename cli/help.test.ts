/** What `--help` says of every command: its exit codes, and where a setting it needs comes from. */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../app/settings/index.ts';
import { runCatalog } from '../testing/cli.ts';
import { EXIT_CODES } from './exit-codes.ts';

/** The words of a command as typed (`keys-issue` is `keys issue`). */
const words = (command: string) =>
  command.startsWith('keys-') || command.startsWith('cors-') ? command.split('-') : [command];
/** Help text as one line (commander wraps it to the terminal's width). */
const help = async (command: string) => {
  const result = await runCatalog([...words(command), '--help']);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.replace(/\s+/g, ' ');
};

describe('catalog <command> --help', () => {
  it.each(COMMANDS.map((command) => [command]))('%s lists its exit codes', async (command) => {
    const text = await help(command);
    expect(text).toMatch(/ Exit codes: 0 [^.]+\./);
    const special = EXIT_CODES[words(command).join(' ')];
    if (special !== undefined) expect(text).toContain(`Exit codes: ${special}.`);
  });

  it('says where a required setting comes from when the deployment or the local stack gives it', async () => {
    expect(await help('publish')).toContain(
      "--base-url <url> the service's base URL, http(s)://host[:port]: the base of webUrl and of the served openapi.yaml (catalog check: the deployment to check) (given by --deployment NAME: stack output ApiUrl; with no target, by the local stack; else required)",
    );
    expect(await help('check')).toContain(
      '(given by --deployment NAME: stack output ApiUrl; with no target, by the local stack; else required)',
    );
    expect(await help('rebuild')).toContain(
      '--function <name> the builder function name or ARN (given by --deployment NAME: stack output BuilderFunctionName; else required)',
    );
    expect(await help('verify-function')).toContain(
      '(given by --deployment NAME: stack output ViewerRequestFunctionName; else required)',
    );
    // A setting nothing else gives is plainly required.
    expect(await help('publish')).toContain(
      '--source <source> plans source: a JSON file path, postgres://… or http(s)://… (required)',
    );
    for (const command of ['publish', 'check', 'rebuild', 'verify-function']) {
      const text = await help(command);
      for (const flag of ['--base-url', '--function', '--name'])
        expect(text, `${command} ${flag}`).not.toMatch(
          new RegExp(
            `${flag} <[a-z]+> [^(]*\\([^)]*\\) \\(required\\)|${flag} <[a-z]+> [^(]* \\(required\\)`,
          ),
        );
    }
  });

  it('says what a rollback does: it puts the plan pages of the build live (no "no copying")', async () => {
    const text = await help('rollback');
    expect(text).not.toContain('no copying');
    expect(text).toContain(
      'put its plan pages live, move the live pointer to it and pin it there until catalog unpin',
    );
  });
});
