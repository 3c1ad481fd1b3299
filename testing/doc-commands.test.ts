import { describe, expect, it } from 'vitest';
import { type DocStep, DocSyntaxError, docSteps, type Word } from './doc-commands.ts';

/** A word as a reader would write it back (variables as `$NAME`). */
const shown = (word: Word) =>
  word.parts
    .map((part) =>
      part.kind === 'text' ? part.text : part.kind === 'var' ? `$${part.name}` : `$(${part.command})`,
    )
    .join('');

/** Each command's ways to run, as text; each assignment as `NAME=value`. */
function summary(steps: DocStep[]): string[] {
  return steps.flatMap((step) =>
    step.kind === 'cdk'
      ? [`${step.command.line}: npm run ${step.command.script} -- ${step.command.args.map(shown).join(' ')}`]
      : step.kind === 'assign'
        ? [
            `${step.assignment.exported ? 'export ' : ''}${step.assignment.name}=${shown(step.assignment.value)}`,
          ]
        : step.command.variants.map(
            (words) =>
              `${step.command.line}: ${step.command.env.map((a) => `${a.name}=${shown(a.value)} `).join('')}catalog ${words
                .map(shown)
                .join(' ')}${step.command.stdoutTo ? ` > ${step.command.stdoutTo}` : ''}`,
          ),
  );
}

const FENCE = '```';
const fenced = (language: string, ...lines: string[]) => [`${FENCE}${language}`, ...lines, FENCE].join('\n');

describe('reading the commands of a document', () => {
  it('picks up every catalog command of a shell block, a new command included, with no list to update', () => {
    const markdown = [
      '# A folder',
      'Prose that mentions `catalog build` inline is not a command to run.',
      fenced('sh', 'npx catalog history --origin DIR    # the moves of the live pointer', 'aws s3 ls'),
      fenced('', 'catalog usage --since 7d'),
      fenced('sql', "CREATE ROLE catalog LOGIN PASSWORD '…';"),
      fenced('json', '{"catalog build": 1}'),
    ].join('\n');
    expect(summary(docSteps(markdown, 'x.md'))).toEqual([
      '4: catalog history --origin DIR',
      '8: catalog usage --since 7d',
    ]);
  });

  it('reads a line as a shell does: continuations, comments, quotes, prefixes, redirections, && and ;', () => {
    const markdown = fenced(
      'sh',
      'export CATALOG_BUCKET=…      # BucketName',
      'LIVE="--bucket $CATALOG_BUCKET --kvs-arn $CATALOG_KVS_ARN"',
      'npm ci && npm start',
      'npm start -- --port 8790',
      "CATALOG_SOURCE='postgres://a:b@h/db?x=1&y=2' \\",
      '  npx catalog build --source-relation "My View" > out.txt 2>&1; echo done',
      'CATALOG_VERIFY_KEYS="$(cat key.txt)" npx catalog verify-function --name "$VIEWER_REQUEST"',
      'node bin/catalog.js status $LIVE | head -1',
    );
    expect(summary(docSteps(markdown, 'x.md'))).toEqual([
      'export CATALOG_BUCKET=…',
      'LIVE=--bucket $CATALOG_BUCKET --kvs-arn $CATALOG_KVS_ARN',
      '4: catalog start',
      '5: catalog start --port 8790',
      '6: CATALOG_SOURCE=postgres://a:b@h/db?x=1&y=2 catalog build --source-relation My View > out.txt',
      '8: CATALOG_VERIFY_KEYS=$(cat key.txt) catalog verify-function --name $VIEWER_REQUEST',
      '9: catalog status $LIVE',
    ]);
    const [, live] = docSteps(markdown, 'x.md');
    expect(live?.kind === 'assign' && live.assignment.value.parts.every((part) => part.quoted)).toBe(true);
  });

  it('runs a synopsis every way: no optional part, each choice alone, and every part', () => {
    const markdown = fenced(
      'sh',
      'npx catalog keys issue --partner P [--expires WHEN]',
      'npx catalog serve [--origin DIR | --origin s3://BUCKET --endpoint URL] [--port 8787]',
    );
    expect(summary(docSteps(markdown, 'x.md'))).toEqual([
      '2: catalog keys issue --partner P',
      '2: catalog keys issue --partner P --expires WHEN',
      '3: catalog serve',
      '3: catalog serve --origin DIR',
      '3: catalog serve --origin s3://BUCKET --endpoint URL',
      '3: catalog serve --port 8787',
      '3: catalog serve --origin DIR --port 8787',
    ]);
  });

  it('refuses a synopsis whose choice is written as a pipe, and npm start arguments without --', () => {
    expect(() =>
      docSteps(
        fenced('sh', 'npx catalog keys revoke --partner P | --key-id ID [--after DURATION]'),
        'keys.md',
      ),
    ).toThrow(
      new DocSyntaxError(
        'keys.md:2: a pipe into --key-id: write choices inside [ ] (catalog x [--a A | --b B]) or as lines of their own',
      ),
    );
    expect(() => docSteps(fenced('sh', 'npm start --port 8790'), 'r.md')).toThrow(/npm start -- …/);
    expect(() => docSteps(fenced('sh', 'npx catalog build [--out DIR'), 'r.md')).toThrow(/unbalanced/);
  });

  it('leaves a drawing in an unlabelled block alone, unless a line of it names the command line', () => {
    expect(docSteps(fenced('', "│  the builder's run (by hand: catalog publish)"), 'r.md')).toEqual([]);
    expect(() => docSteps(fenced('', "npx catalog keys issue --partner 'acme"), 'r.md')).toThrow(
      /unterminated/,
    );
  });
});
