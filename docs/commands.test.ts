/**
 * Every `catalog` command the READMEs and docs/ tell a reader to type, run as the reader would run it
 * (testing/doc-commands.ts reads them; testing/doc-world.ts is where they run and what their placeholders
 * stand for): so a doc cannot drift from the command line. A new fenced command is picked up by itself; see
 * testing/README.md for the convention.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, repositoryFiles, runCatalog } from '../testing/cli.ts';
import { type DocStep, docSteps, literalOf } from '../testing/doc-commands.ts';
import { CHECK_ONLY, DocShell, type DocWorld, startDocWorld } from '../testing/doc-world.ts';

/** Each document's steps, or why a reader could not follow it. */
const documents: { file: string; steps: DocStep[]; error?: Error }[] = [];
for (const file of (await repositoryFiles()).filter((name) => name.endsWith('.md'))) {
  try {
    documents.push({ file, steps: docSteps(await readFile(join(ROOT, file), 'utf8'), file) });
  } catch (error) {
    documents.push({ file, steps: [], error: error as Error });
  }
}

describe('the commands of the docs', () => {
  it.each(documents.map((doc) => [doc.file, doc] as const))('%s reads as shell', (_file, doc) => {
    expect(doc.error?.message).toBeUndefined();
  });

  it('include, in the README, how to run npm start on another port', () => {
    const readme = documents.find((doc) => doc.file === 'README.md');
    const onAPort = readme?.steps.some(
      (step) =>
        step.kind === 'command' &&
        step.command.variants.some((words) => {
          const texts = words.map(literalOf);
          return texts[0] === 'start' && texts.includes('--port');
        }),
    );
    expect(onAPort).toBe(true);
  });

  it('are found in the READMEs and docs/ (a doc with commands that stops being read would go unnoticed)', () => {
    const files = new Set(
      documents
        .filter((doc) => doc.error !== undefined || doc.steps.some((step) => step.kind === 'command'))
        .map((doc) => doc.file),
    );
    for (const file of [
      'README.md',
      'gateway/README.md',
      'infra/README.md',
      'keys/README.md',
      'publish/README.md',
    ])
      expect(files, file).toContain(file);
  });
});

describe('every catalog command of the docs runs as written', () => {
  let world: DocWorld;
  let cwd: string;
  beforeAll(async () => {
    world = await startDocWorld();
    // The reader runs the commands from the repository's root: here, its stand-in.
    cwd = process.cwd();
    process.chdir(world.dir);
  }, 120_000);
  afterAll(async () => {
    process.chdir(cwd);
    await world?.close();
  });

  /** Runs the commands of a Markdown snippet as the docs' are run; returns each run's exit code and reason. */
  async function runSnippet(markdown: string) {
    const shell = new DocShell(world);
    const outcomes: { code: number; stderr: string; checkedOnly: boolean }[] = [];
    for (const step of docSteps(markdown, 'snippet.md')) {
      if (step.kind === 'assign') shell.assign(step.assignment, 'snippet.md');
      else
        for await (const run of shell.resolve(step.command)) {
          const skip = CHECK_ONLY.find((rule) => rule.applies(run));
          const result = await runCatalog(run.args, { env: run.env, ...(skip ? { checkOnly: true } : {}) });
          outcomes.push({ code: result.code ?? -1, stderr: result.stderr, checkedOnly: skip !== undefined });
        }
    }
    return outcomes;
  }

  it('fails a documented command that the command line refuses (this test can fail)', async () => {
    const [refused] = await runSnippet('```sh\nnpx catalog keys revoke --partner P --key-id ID\n```\n');
    expect(refused).toMatchObject({ code: 1, checkedOnly: false });
    expect(refused?.stderr).toMatch(/cannot be used with/);
  });

  it('fails a command it only checks when a flag is unknown or a value breaks its rule', async () => {
    const outcomes = await runSnippet(
      [
        '```sh',
        "CATALOG_SOURCE='postgres://reader@db.internal/plans' npx catalog build --source-relation a.b",
        "CATALOG_SOURCE='postgres://reader@db.internal/plans' npx catalog build --no-such-flag",
        "CATALOG_SOURCE='postgres://reader@db.internal/plans' npx catalog build --source-relation 'a b c'",
        '```',
      ].join('\n'),
    );
    expect(outcomes.map((o) => [o.code === 0, o.checkedOnly])).toEqual([
      [true, true],
      [false, true],
      [false, true],
    ]);
  });

  for (const { file, steps } of documents) {
    if (!steps.some((step) => step.kind === 'command')) continue;
    describe(file, () => {
      let shell: DocShell;
      beforeAll(() => {
        shell = new DocShell(world);
      });
      let pending: DocStep[] = [];
      for (const step of steps) {
        if (step.kind === 'assign') {
          pending.push(step);
          continue;
        }
        const before = pending;
        pending = [];
        const { command } = step;
        it(`${command.file}:${command.line} ${command.text}`, async () => {
          for (const assign of before)
            if (assign.kind === 'assign') shell.assign(assign.assignment, `${assign.file}:${assign.line}`);
          for await (const run of shell.resolve(command)) {
            const skip = CHECK_ONLY.find((rule) => rule.applies(run));
            const result = await runCatalog(run.args, { env: run.env, ...(skip ? { checkOnly: true } : {}) });
            const shown = `catalog ${run.args.join(' ')}${skip ? ` (arguments checked only: ${skip.why})` : ''}`;
            expect(result.code, `${shown}\n${result.stderr}`).toBe(0);
            if (run.port !== undefined)
              expect(
                `${result.stdout}${result.stderr}`,
                `${shown}: serves on the port it was given`,
              ).toContain(`127.0.0.1:${run.port}`);
            if (command.stdoutTo !== undefined) shell.wrote(command.stdoutTo, result.stdout);
          }
        });
      }
    });
  }
});
