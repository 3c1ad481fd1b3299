/**
 * Progress on long work: `publish`, `build` and `rollback` show their stage, the objects uploaded of the total
 * and the time since they started on one line of stderr when a person watches (stdout and stderr a terminal:
 * once the real command under `script`, which gives it a pseudo-terminal, then in this process as on a terminal),
 * and nothing but their output otherwise or with `--json`. The line's clock (cli/io.ts `progressLine`) is run on vitest's fake timers.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeRows } from '../../fixtures/generate.ts';
import { CATALOG_BIN, type CliResult, makeStore, ROOT, runCatalog, runProcess } from '../../testing/cli.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { type CliIO, progressLine } from '../io.ts';

const scratch = useScratchDir({ prefix: 'catalog-progress-' });
/** What starts each redraw of the line: back to its start, then erase it (as a regular expression). */
const REDRAW = '\\r\\u001b\\[K';

/** Runs `catalog …args` with stdout and stderr on a pseudo-terminal; its output is what the terminal shows. */
function onTerminal(args: readonly string[]): Promise<CliResult> {
  const quoted = [process.execPath, CATALOG_BIN, ...args].map((word) => `'${word}'`).join(' ');
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('CATALOG_') && !name.startsWith('AWS_')) env[name] = value;
  return runProcess('script', ['-qefc', quoted, '/dev/null'], { env, cwd: ROOT });
}

describe('progress on a terminal', () => {
  /**
   * A source of twelve generated rows (each stage is drawn when it starts, so a small catalog shows every one)
   * and a local target in the scratch folder: the publish arguments of both.
   */
  const smallPublish = async () => {
    const source = join(scratch.dir, 'plans.json');
    await writeRows(source, 12, 7);
    const target = [
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      makeStore(join(scratch.dir, 'kvs.json')),
    ];
    return {
      source,
      target,
      base: ['--source', source, '--base-url', 'https://plans.example.com', ...target],
    };
  };

  it('publish, as a process on a terminal, shows its stages and the objects uploaded of the total', async () => {
    const { base } = await smallPublish();
    const published = await onTerminal(['publish', ...base]);
    expect(published.code, published.stdout).toBe(0);
    expect(published.stdout).toContain('\r\x1b[Kpublish: reading the source, ');
    expect(published.stdout).toMatch(new RegExp(`${REDRAW}publish: uploading \\d+/\\d+, \\d+ s`));
    expect(published.stdout).toContain('\r\x1b[Kpublish: moving the live pointer, ');
    expect(published.stdout).toMatch(/"result":"published"/);
  });

  // The process above proves that a terminal is seen as one (cli/io.ts processIO); these run in this process
  // as on a terminal (testing/cli.ts runCatalog `terminal`), stderr being what the terminal shows of progress.
  it('publish --json shows no progress on a terminal; rollback and build show their stages', async () => {
    const { source, target, base } = await smallPublish();
    expect((await runCatalog(['publish', ...base], { terminal: true })).code).toBe(0);

    // With --json: the line naming the target (stderr, shown on the terminal too), then the JSON; no progress.
    const quiet = await runCatalog(['publish', ...base, '--force', '--json'], { terminal: true });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe(`publish acts on the local origin ${target[1]} and store ${target[3]}\n`);
    const [json, ...more] = quiet.stdout.trim().split('\n');
    expect(more).toEqual([]);
    expect(JSON.parse(json ?? '')).toMatchObject({ command: 'publish', result: 'published' });

    const rolled = await runCatalog(['rollback', ...target], { terminal: true });
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(rolled.stderr).toContain('\r\x1b[Krollback: moving the live pointer, ');

    const built = await runCatalog(['build', '--source', source, '--out', join(scratch.dir, 'flat')], {
      terminal: true,
    });
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).toContain('\r\x1b[Kbuild: compressing and rendering pages, ');
    expect(built.stderr).toMatch(new RegExp(`${REDRAW}build: writing \\d+ objects, `));
  });

  it('is not shown when stdout is not a terminal: only the summary', async () => {
    const result = await runCatalog(['publish', '--source', join(ROOT, 'fixtures', 'plans.json')], {
      env: {
        CATALOG_ORIGIN: join(scratch.dir, 'plain', 'origin'),
        CATALOG_STORE: makeStore(join(scratch.dir, 'plain', 'kvs.json')),
        CATALOG_BASE_URL: 'https://plans.example.com',
      },
    });
    expect(result.code, result.stderr).toBe(0);
    // Only the line that names the target, said first (no progress).
    expect(result.stderr).toBe(
      `publish acts on the local origin ${join(scratch.dir, 'plain', 'origin')} and store ${join(scratch.dir, 'plain', 'kvs.json')}\n`,
    );
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });
});

describe('the progress line', () => {
  afterEach(() => vi.useRealTimers());
  const terminal = () => {
    let written = '';
    const io = { terminal: true, stderr: (text: string) => (written += text) } as unknown as CliIO;
    return { io, written: () => written };
  };

  it('redraws the time every second while a stage says nothing, so a long stage is never silent', () => {
    vi.useFakeTimers();
    const { io, written } = terminal();
    const line = progressLine(io, 'publish', false);
    line.progress({ stage: 'compressing and rendering pages' });
    vi.advanceTimersByTime(30_000);
    const draws = written().split('\r\x1b[K').filter(Boolean);
    expect(draws).toHaveLength(31);
    expect(draws.at(-1)).toBe('publish: compressing and rendering pages, 30 s');
    line.note('warning: something');
    line.stop();
    expect(
      written().endsWith(
        '\r\x1b[Kwarning: something\n\r\x1b[Kpublish: compressing and rendering pages, 30 s\r\x1b[K',
      ),
    ).toBe(true);
    vi.advanceTimersByTime(5_000);
    expect(written().endsWith('\r\x1b[K')).toBe(true);
  });

  it('writes only the notes when quiet (--json) or not on a terminal', () => {
    vi.useFakeTimers();
    for (const [quiet, isTerminal] of [
      [true, true],
      [false, false],
    ] as const) {
      let written = '';
      const io = { terminal: isTerminal, stderr: (text: string) => (written += text) } as unknown as CliIO;
      const line = progressLine(io, 'publish', quiet);
      line.progress({ stage: 'uploading', done: 1, total: 10 });
      vi.advanceTimersByTime(5_000);
      line.note('a note');
      line.stop();
      expect(written).toBe('a note\n');
    }
  });
});
