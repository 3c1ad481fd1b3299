/**
 * Every `catalog` and CDK command the READMEs and docs/ tell a reader to type, run as the reader would run it
 * (testing/doc-commands.ts reads them; testing/doc-world.ts is where they run and what their placeholders
 * stand for): so a doc cannot drift from the command line or the CDK app. A new fenced command is picked up by
 * itself; see testing/README.md for the convention. No documented step leaves a key in the repository, nor a
 * file git would commit.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, repositoryFiles, runCatalog } from '../testing/cli.ts';
import { type DocStep, docSteps, fileWrites, literalOf } from '../testing/doc-commands.ts';
import { CHECK_ONLY, contextOf, DocShell, type DocWorld, startDocWorld } from '../testing/doc-world.ts';

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
        .filter((doc) => doc.error !== undefined || doc.steps.some((step) => step.kind !== 'assign'))
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

describe('the files the docs’ commands write', () => {
  const writes = documents.flatMap((doc) =>
    doc.error ? [] : fileWrites(readFileSync(join(ROOT, doc.file), 'utf8'), doc.file),
  );
  /** Where a written path lands, relative to the repository root; undefined outside it (`~/…`, `$HOME/…`). */
  const inRepository = (path: string, cwd: string) =>
    /^(~|\$HOME\b|\/)/.test(path) ? undefined : relative(ROOT, join(ROOT, cwd, path));

  it('are found (a redirection the reader would type is read)', () => {
    expect(writes.some((write) => write.key)).toBe(true);
  });

  it('never put a key in a file inside the repository', () => {
    const inside = writes.filter((write) => write.key && inRepository(write.path, write.cwd) !== undefined);
    expect(inside.map((write) => `${write.file}:${write.line} > ${write.path}`)).toEqual([]);
  });

  it('inside the repository, are all ignored by git', async () => {
    const paths = [
      ...new Set(writes.flatMap((write) => inRepository(write.path, write.cwd) ?? [])),
      'infra/outputs.json',
      'shared-key.txt',
      'monitoring-key.txt',
      'keys-export.json',
    ];
    const { stdout } = await promisify(execFile)('git', ['check-ignore', '--no-index', ...paths], {
      cwd: ROOT,
    }).catch((error: { stdout: string }) => error);
    expect(paths.filter((path) => !stdout.split('\n').includes(path))).toEqual([]);
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
      else if (step.kind === 'command')
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
    if (!steps.some((step) => step.kind !== 'assign')) continue;
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
        const assignBefore = () => {
          for (const assign of before)
            if (assign.kind === 'assign') shell.assign(assign.assignment, `${assign.file}:${assign.line}`);
        };
        if (step.kind === 'cdk') {
          const { command } = step;
          it(`${command.file}:${command.line} ${command.text}`, async () => {
            assignBefore();
            const { args, env } = shell.resolveCdk(command);
            const run = await world.cdk(args, env);
            const shown = `cdk ${args.join(' ')}`;
            expect(run.code, `${shown}\n${run.stdout}${run.stderr}`).toBe(0);
            expect(`${run.stdout}${run.stderr}`, shown).not.toMatch(/Unknown option|Unknown command/i);
            // Whatever it asked AWS, it asked about its deployment's stacks only (or the bootstrap stack).
            const deployment = contextOf(args)
              .find((pair) => pair.startsWith('deployment='))
              ?.slice('deployment='.length);
            const stacks = new Set(run.requests.flatMap((request) => (request.stack ? [request.stack] : [])));
            for (const stack of stacks)
              expect(
                stack === 'CDKToolkit' || stack === deployment || stack.startsWith(`${deployment}-edge-`),
                `${shown} acted on ${stack}`,
              ).toBe(true);
            const verb = args.find((arg) => !arg.startsWith('-'));
            if (verb === 'deploy')
              expect(
                run.requests.some((r) => r.action === 'ExecuteChangeSet' && r.stack === deployment),
                `${shown} deployed ${deployment}`,
              ).toBe(true);
          });
          continue;
        }
        const { command } = step;
        it(`${command.file}:${command.line} ${command.text}`, async () => {
          assignBefore();
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
            shell.wrote(command, result.stdout);
          }
        });
      }
    });
  }
});
