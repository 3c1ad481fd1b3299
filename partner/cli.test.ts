/**
 * The kit's commands in-process (cli.ts): `--help`, `--version` and usage errors as the `catalog` command line
 * answers them, and `catalog-check` with a partner's key against a real `catalog serve` — the operator's rows but
 * those that need what only the operator knows. partner/package.system.test.ts runs the same commands from the
 * installed package.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../app/check.ts';
import { blackBoxCases, checkSteps } from '../app/check-rows.ts';
import { SETTINGS } from '../app/settings/registry.ts';
import { ROOT, type ServeProcess, startServe } from '../testing/cli.ts';
import { freePort, refusedPort } from '../testing/postgres.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { CHECK_DEFAULTS, catalogCheck, catalogProxy, KEY_VARIABLE, KIT_VERSION, type KitIO } from './cli.ts';

/** Runs a kit command in this process with `env`: its exit code and what it wrote. */
async function runKit(
  command: 'catalog-proxy' | 'catalog-check',
  argv: readonly string[],
  env: Record<string, string> = {},
) {
  let stdout = '';
  let stderr = '';
  const io: KitIO = {
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  };
  const code =
    command === 'catalog-proxy'
      ? await catalogProxy(argv, io, () => {
          throw new Error('no test here starts a proxy');
        })
      : await catalogCheck(argv, io);
  return { code, stdout, stderr };
}

const OPTIONS = {
  'catalog-proxy': [
    '--upstream <url>',
    '--port <n>',
    '--host <host>',
    '--cache-file <file>',
    '--refresh-seconds <n>',
    '--changes-kept <n>',
    '--notify <url>',
  ],
  'catalog-check': ['--upstream <url>', '--json', '--timeout <duration>', '--deadline <duration>'],
} as const;

describe('the kit’s commands', () => {
  it.each(Object.entries(OPTIONS))(
    '%s --help describes every option, the key’s variable and the exit codes, and exits 0',
    async (command, options) => {
      for (const help of ['--help', '-h']) {
        const result = await runKit(command as keyof typeof OPTIONS, [help]);
        expect([result.code, result.stderr]).toEqual([0, '']);
        expect(result.stdout).toMatch(new RegExp(`^Usage: ${command} \\[options\\]\n`));
        for (const option of [...options, '--version', '-h, --help'])
          expect(result.stdout, option).toContain(option);
        expect(result.stdout).toContain(`Environment:\n  ${KEY_VARIABLE}  your API key (never a flag`);
        expect(result.stdout).toMatch(/\nExit codes: 0 [^\n]+; 1 /);
      }
    },
  );

  it.each(Object.keys(OPTIONS))(
    '%s --version prints the kit’s version, that of its package',
    async (command) => {
      const manifest = JSON.parse(await readFile(join(ROOT, 'partner', 'package.json'), 'utf8')) as {
        version: string;
      };
      expect(KIT_VERSION).toBe(manifest.version);
      expect(await runKit(command as keyof typeof OPTIONS, ['--version'])).toEqual({
        code: 0,
        stdout: `${manifest.version}\n`,
        stderr: '',
      });
    },
  );

  it.each(Object.keys(OPTIONS))(
    '%s refuses an unknown option, a missing key and a bad --upstream, each in one line, exit 1',
    async (command) => {
      const name = command as keyof typeof OPTIONS;
      expect(await runKit(name, ['--bogus'])).toEqual({
        code: 1,
        stdout: '',
        stderr: `${command}: unknown option '--bogus' (add --help for usage)\n`,
      });
      expect(await runKit(name, ['--upstream', 'http://127.0.0.1:9'])).toEqual({
        code: 1,
        stdout: '',
        stderr: `${command}: set ${KEY_VARIABLE} to your API key (it is never read from a flag)\n`,
      });
      const key = `tpc_${'a'.repeat(43)}`;
      expect(
        await runKit(name, ['--upstream', 'https://user:pw@catalog.example.com'], { [KEY_VARIABLE]: key }),
      ).toEqual({
        code: 1,
        stdout: '',
        stderr: `${command}: --upstream must be the service base URL, http(s)://host[:port] (no user:password@)\n`,
      });
    },
  );

  it('catalog-check waits as long as catalog check unless told', () => {
    expect(CHECK_DEFAULTS).toEqual({
      timeoutMs: SETTINGS.checkTimeout.default,
      deadlineMs: SETTINGS.checkDeadline.default,
    });
  });
});

describe('catalog-check with a partner’s key against a real catalog serve', () => {
  let world: TestWorld;
  let serve: ServeProcess;

  beforeAll(async () => {
    const port = await freePort();
    world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
    serve = await startServe([
      ...['--origin', world.originDir, '--store', world.stores.plain],
      ...['--port', String(port)],
    ]);
  });
  afterAll(async () => {
    await serve?.stop();
    await world?.remove();
  });

  it('passes every row a partner can judge, and runs none that needs what only the operator knows', async () => {
    const key = world.keys.valid;
    const json = await runKit('catalog-check', ['--upstream', serve.url, '--json'], { [KEY_VARIABLE]: key });
    expect([json.code, json.stderr]).toEqual([0, '']);
    const report = JSON.parse(json.stdout) as CheckReport;
    expect(report.rows.filter((row) => row.verdict !== 'pass')).toEqual([]);
    // The operator's rows, less the CORS cases (the origin the operator set), the catalog's age (the
    // operator's schedule) and the case that sends the key in a URL (into the service's access logs).
    const all = checkSteps().map((step) => (step.kind === 'catalog' ? step.row.name : step.testCase.name));
    const corsCases = blackBoxCases().filter((testCase) => testCase.cors !== undefined);
    expect(all.filter((name) => !report.rows.some((row) => row.name === name)).sort()).toEqual(
      [
        'the whole catalog: generatedAt within ‹setting:maxAge› (else a warning)',
        'the key in the query string',
        ...corsCases.map((testCase) => testCase.name),
      ].sort(),
    );
    expect(corsCases.length).toBeGreaterThan(5);
    expect(report.rows.length).toBeGreaterThan(100);

    const text = await runKit('catalog-check', ['--upstream', serve.url], { [KEY_VARIABLE]: key });
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n').filter((line) => line.startsWith('PASS'))).toHaveLength(
      report.rows.length,
    );
    expect(text.stdout).toContain("CORS: not checked (give --cors-origin to the operator's catalog check)");
    expect(text.stdout + text.stderr + json.stdout).not.toContain(key);
  });

  it('says the key was refused, in its own variable’s name, exit 1; exit 2 when the service cannot be reached', async () => {
    const refused = await runKit('catalog-check', ['--upstream', serve.url], {
      [KEY_VARIABLE]: `tpc_${'b'.repeat(43)}`,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`${KEY_VARIABLE} was refused (401): it is not a current key`);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^catalog-check: 1 of \\d+ rows failed against ${serve.url} \\(${KEY_VARIABLE} was refused\\), \\d+ not run\n$`,
      ),
    );
    const down = `http://127.0.0.1:${await refusedPort()}`;
    const unreachable = await runKit('catalog-check', ['--upstream', down, '--timeout', '2s'], {
      [KEY_VARIABLE]: world.keys.valid,
    });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(
      new RegExp(`^catalog-check: ${down} cannot be reached: no answer: .*ECONNREFUSED`),
    );
  });
});
