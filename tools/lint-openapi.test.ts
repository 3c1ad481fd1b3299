/**
 * npm test's lint of openapi.yaml (lint-openapi.ts): Redocly's verdict and exit code as they are, without the
 * Node 20 banner Redocly prints on every run and without its celebration of a valid description. The first case
 * is that lint: `npm test` fails when openapi.yaml does not pass it (it runs once, here, not also as a step).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runProcess } from '../testing/cli.ts';
import { useScratchDir } from '../testing/scratch.ts';

const lint = (file: string) =>
  // tsx as Node's loader (testing/infra/global-setup.ts says why), from the root where it is installed.
  runProcess(process.execPath, ['--import', 'tsx', join(ROOT, 'tools/lint-openapi.ts'), file], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '' },
  });

describe('the lint of openapi.yaml', () => {
  const scratch = useScratchDir({ prefix: 'catalog-lint-' });

  it('passes the repository’s openapi.yaml with Redocly’s verdict, no Node 20 banner and no celebration', async () => {
    const result = await lint('openapi.yaml');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('openapi.yaml: validated');
    expect(result.stdout + result.stderr).not.toMatch(/Node\.js 20|Deprecation warning|[╔║╚]|Woohoo|🎉/);
  });

  it('fails a broken document with Redocly’s exit code and its problems', async () => {
    const file = join(scratch.dir, 'broken.yaml');
    await writeFile(file, 'openapi: 3.1.0\ninfo: {title: x}\npaths: {}\n');
    const result = await lint(file);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('The field `version` must be present on this level.');
    expect(result.stderr).toMatch(/Validation failed with \d+ errors?/);
    expect(result.stdout + result.stderr).not.toMatch(/Node\.js 20|[╔║╚]/);
  });
});
