/**
 * What every command prints when it fails or warns: a failure is one line `catalog: …`, commander's own
 * usage errors included, and a message names a setting the way the command line takes it (`--force`), never
 * with the marker the message carries inside (`‹setting:force›`). Each command's failure and warning paths
 * run here, in-process, and `catalog start`'s through a real process; a command added to the program without
 * a case here fails the last test.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CATALOG_BIN, localTargetEnv, ROOT, runCatalog, startCatalog } from '../testing/cli.ts';
import { freePort } from '../testing/postgres.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { createProgram } from './program.ts';

const scratch = useScratchDir({ prefix: 'catalog-messages-', each: false });
const MARKER = /\u2039|\u203a|setting:/;

/** Runs a command and checks what it printed: no marker anywhere, a failure as one `catalog:` line. */
async function printed(args: string[], env: Record<string, string> = {}, input?: string) {
  const result = await runCatalog(args, { env, ...(input !== undefined ? { input } : {}) });
  const all = `${result.stdout}${result.stderr}`;
  expect(all, args.join(' ')).not.toMatch(MARKER);
  // A cause said once: not `ENOENT: ENOENT: no such file…`.
  expect(all, args.join(' ')).not.toMatch(/\b(E[A-Z]{3,}): \1\b/);
  if (result.code !== 0) {
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.at(-1), `${args.join(' ')}\n${result.stderr}`).toMatch(/^catalog: \S/);
    expect(result.stderr, args.join(' ')).not.toMatch(/^error: /m);
  }
  return result;
}

/** The command paths a case names (`keys issue`), from its arguments. */
const GROUPS = new Set(['keys', 'cors']);
const pathOf = (args: readonly string[]) =>
  GROUPS.has(args[0] ?? '') ? `${args[0]} ${args[1]}` : (args[0] ?? '');

/** Every runnable command of the program: `build`, `keys issue`, … */
function commandsOf(command: Command, prefix = ''): string[] {
  return command.commands.flatMap((sub) =>
    sub.commands.length > 0 ? commandsOf(sub, `${prefix}${sub.name()} `) : [`${prefix}${sub.name()}`],
  );
}

describe("every command's failure and warning output", () => {
  const dir = () => scratch.dir;
  const target = () => localTargetEnv(dir());
  const missingStore = () => join(dir(), 'no-such-dir', 'kvs.json');

  /** Each case: arguments (and environment) that make the command fail or warn. */
  const cases: [string, () => { args: string[]; env?: Record<string, string>; input?: string }][] = [
    [
      'build: invalid rows',
      () => ({ args: ['build', '--source', 'fixtures/invalid/title-empty.json', '--out', join(dir(), 'b')] }),
    ],
    [
      'build: invalid rows skipped, with warnings',
      () => ({
        args: [
          'build',
          '--source',
          'fixtures/invalid/title-empty.json',
          '--skip-invalid',
          '--out',
          join(dir(), 'b'),
        ],
      }),
    ],
    ['serve: a bad port', () => ({ args: ['serve', '--port', '70000'] })],
    [
      'keys issue: a bad label',
      () => ({ args: ['keys', 'issue', '--partner', '-acme', '--store', missingStore()] }),
    ],
    [
      'keys rotate: no grace',
      () => ({ args: ['keys', 'rotate', '--partner', 'acme', '--store', missingStore()] }),
    ],
    [
      'keys revoke: neither partner nor key id',
      () => ({ args: ['keys', 'revoke', '--store', missingStore()] }),
    ],
    ['keys list: a missing store', () => ({ args: ['keys', 'list', '--store', missingStore()] })],
    ['cors set: no origin', () => ({ args: ['cors', 'set', '--store', missingStore()] })],
    ['cors clear: a missing store', () => ({ args: ['cors', 'clear', '--store', missingStore()] })],
    ['cors show: an unknown option', () => ({ args: ['cors', 'show', '--bogus'] })],
    [
      'publish: no base URL',
      () => ({ args: ['publish', '--origin', join(dir(), 'o'), '--store', join(dir(), 's.json')] }),
    ],
    ['publish: refused by the shrink guard', () => ({ args: ['publish'], env: target() })],
    ['builds: no target', () => ({ args: ['builds', '--origin', join(dir(), 'o')] })],
    ['history: a bad limit', () => ({ args: ['history', '--limit', 'x'], env: target() })],
    [
      'rollback: no build before',
      () => ({ args: ['rollback', '--to', '20990101T000000Z-00000000'], env: target() }),
    ],
    ['unpin: no target', () => ({ args: ['unpin', '--store', join(dir(), 's.json')] })],
    ['rebuild: no function', () => ({ args: ['rebuild'] })],
    ['status: older than --max-age', () => ({ args: ['status', '--max-age', '1s'], env: target() })],
    ['check: no base URL', () => ({ args: ['check'] })],
    ['usage: no readable access log', () => ({ args: ['usage', '--access-log', join(dir(), 'none.log')] })],
    ['proxy: no upstream', () => ({ args: ['proxy'] })],
    ['verify-function: no function', () => ({ args: ['verify-function'] })],
    ['publish-functions: no functions, no store', () => ({ args: ['publish-functions'] })],
  ];

  it('a published catalog and a smaller source to refuse', async () => {
    expect((await runCatalog(['keys', 'issue', '--partner', 'acme'], { env: target() })).code).toBe(0);
    expect((await runCatalog(['publish'], { env: target() })).code).toBe(0);
    const rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as unknown[];
    await writeFile(join(dir(), 'few.json'), JSON.stringify(rows.slice(0, 5)));
  });

  it.each(cases)('%s', async (_name, make) => {
    const { args, env, input } = make();
    const few = args[0] === 'publish' && env ? { CATALOG_SOURCE: join(dir(), 'few.json') } : {};
    const result = await printed(args, { ...env, ...few }, input);
    if (!_name.includes('warnings')) expect(result.code, result.stderr).not.toBe(0);
  });

  it('start: a second npm start, which finds its build identical, says so with the flag', async () => {
    const port = await freePort();
    for (const round of [1, 2]) {
      const started = await startCatalog(['start', '--port', String(port)], {
        ready: /Local stack ready on (http:\/\/\S+)/,
        cwd: dir(),
      });
      const said = started.lines.filter((line) => !line.startsWith('{')).join('\n');
      await started.stop();
      expect(said).not.toMatch(MARKER);
      if (round === 2)
        expect(said).toMatch(/^build \S+ stays live: it was built from the same fixtures and settings$/m);
    }
  });

  it('covers every command of the program', () => {
    const program = createProgram({
      env: {},
      stdout: () => {},
      stderr: () => {},
      stdin: process.stdin,
      onStop: () => {},
    });
    const covered = new Set([...cases.map(([, make]) => pathOf(make().args)), 'start']);
    expect([...covered].sort()).toEqual(commandsOf(program).sort());
  });
});

describe('AWS credentials that cannot be found', () => {
  const files = useScratchDir({ prefix: 'catalog-aws-profile-' });

  it('names a profile AWS_PROFILE asks for that no shared file holds; an existing one keeps the SDK reason', async () => {
    const config = join(files.dir, 'config');
    const credentials = join(files.dir, 'credentials');
    await writeFile(
      config,
      '[default]\nregion = eu-west-1\n[profile staging]\nregion = eu-west-1\n[sso-session corp]\n',
    );
    await writeFile(credentials, '[other]\n');
    const env = (profile: string) => ({
      AWS_PROFILE: profile,
      AWS_CONFIG_FILE: config,
      AWS_SHARED_CREDENTIALS_FILE: credentials,
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const missing = await printed(['status', '--deployment', 'TrainingPlanCatalog'], env('prodd'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `catalog: reading the outputs of stack TrainingPlanCatalog failed (no AWS credentials: AWS_PROFILE names the profile "prodd", which neither ${config} nor ${credentials} holds (aws configure list-profiles lists those that exist) (Could not load credentials from any providers)); nothing was done\n`,
    );
    // A profile that exists (here without keys, or an SSO session's name, which is no profile) is not called missing.
    for (const profile of ['staging', 'other']) {
      const found = await printed(['status', '--deployment', 'TrainingPlanCatalog'], env(profile));
      expect(found.code).toBe(1);
      expect(found.stderr, profile).not.toContain('names the profile');
    }
    const session = await printed(['status', '--deployment', 'TrainingPlanCatalog'], env('corp'));
    expect(session.stderr).toContain('names the profile "corp"');
  });
});

describe('a reader that stops early (`catalog build --json | head`)', () => {
  const out = useScratchDir({ prefix: 'catalog-epipe-' });

  it('drops the rest of stdout without a stack trace, and the command runs to its end and exit code', async () => {
    const child = spawn(process.execPath, [CATALOG_BIN, 'build', '--json', '--out', out.dir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Closed before the process has written a byte: its every write to stdout fails with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(await readFile(join(out.dir, 'manifest.json'), 'utf8'))).toMatchObject({ plans: 44 });
  });
});
