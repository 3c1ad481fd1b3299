/**
 * The test environment (vitest.config.ts): the AWS SDK's notice that its later releases need Node 22 stays out
 * of the test log (the README's Node paragraph says it once); without the setting the SDK prints it on Node 20.
 */
import { describe, expect, it } from 'vitest';
import { ROOT, runProcess } from './cli.ts';

const MAKE_CLIENT =
  "const { S3Client } = await import('@aws-sdk/client-s3'); new S3Client({ region: 'eu-west-1' });";
const nodeMajor = Number(process.versions.node.split('.')[0]);

const makeClient = (env: NodeJS.ProcessEnv) =>
  runProcess(process.execPath, ['--input-type=module', '-e', MAKE_CLIENT], { cwd: ROOT, env });

describe('the test environment', () => {
  it('turns the AWS SDK’s Node version notice off for the tests and every process that inherits it', async () => {
    expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
    const result = await makeClient(process.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('NodeVersionSupportWarning');
  });

  it.runIf(nodeMajor < 22)('leaves the notice to the SDK outside the tests (Node 20 prints it)', async () => {
    const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _off, ...env } = process.env;
    const result = await makeClient(env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('NodeVersionSupportWarning');
  });
});
