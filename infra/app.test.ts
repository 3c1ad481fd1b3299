/**
 * The app's configuration: CDK context (strings from `-c`, or JSON values from cdk.json) to stack props; what
 * `npm run synth` writes and says (a shared synthesis, testing/infra/stacks.ts); and the app entry itself run as the
 * CDK CLI runs it (CDK_OUTDIR, CDK_CONTEXT_JSON), with bundling skipped.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../testing/cli.ts';
import { CDK_APP, CDK_CONTEXT, sharedAssembly } from '../testing/infra/stacks.ts';
import { configFromContext, DEFAULT_STACK_NAME } from './config.ts';

const run = promisify(execFile);

describe('configFromContext', () => {
  const from = (context: Record<string, unknown>) => configFromContext((key) => context[key], '/work/infra');

  it('gives the default stack name and no props for an empty context', () => {
    expect(from({})).toEqual({ stackName: DEFAULT_STACK_NAME, props: {} });
  });

  it('parses the strings of -c into numbers, booleans, durations, lists and absolute paths', () => {
    const { stackName, props } = from({
      stackName: 'CatalogStaging',
      buildRateMinutes: '15',
      builderTimeoutSeconds: '120',
      builderMemoryMiB: '512',
      errorCachingMinTtlSeconds: '5',
      accessLogging: 'true',
      skipInvalid: 'false',
      minRatio: '0.8',
      priceClass: 'All',
      vpcId: 'vpc-0abc1234',
      subnetIds: 'subnet-0aaa1111, subnet-0bbb2222',
      kvsSeedFile: 'seed.json',
    });
    expect(stackName).toBe('CatalogStaging');
    expect(props).toEqual({
      buildRateMinutes: 15,
      builderTimeoutSeconds: 120,
      errorCachingMinTtlSeconds: 5,
      builderMemoryMiB: 512,
      accessLogging: true,
      skipInvalid: false,
      minRatio: 0.8,
      priceClass: 'All',
      vpcId: 'vpc-0abc1234',
      subnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
      kvsSeedFile: '/work/infra/seed.json',
    });
  });

  it('takes JSON values from cdk.json as they are', () => {
    const { props } = from({
      buildRateMinutes: 30,
      accessLogging: true,
      subnetIds: ['subnet-0aaa1111'],
      vpcId: 'vpc-0abc1234',
    });
    expect(props).toEqual({
      buildRateMinutes: 30,
      accessLogging: true,
      subnetIds: ['subnet-0aaa1111'],
      vpcId: 'vpc-0abc1234',
    });
  });

  it('fails naming every bad key and value, but never a source value', () => {
    expect(() => from({ buildRateMinutes: 'hourly', accessLogging: 'maybe', priceClass: '300' })).toThrow(
      'context priceClass "300": must be 100, 200 or All; context accessLogging "maybe": must be 1/true/yes/on or 0/false/no/off; context buildRateMinutes "hourly": must be a whole number from 5 to 1440',
    );
    expect(() => from({ source: 3 })).toThrow(/^context source: /);
    expect(() => from({ source: 'postgres://catalog:hunter2@db', minRatio: 'x' })).not.toThrow(/hunter2/);
  });
});

describe('npm run synth (the README’s command, on a machine without AWS credentials)', () => {
  it('writes the default stack for us-east-1, the region the CLI gives an app without credentials, with a rule refusing any other region', async () => {
    const { templates } = await sharedAssembly('readme');
    expect(Object.keys(templates)).toEqual([DEFAULT_STACK_NAME]);
    const rules = templates[DEFAULT_STACK_NAME as string]?.toJSON().Rules as Record<
      string,
      { Assertions: unknown[] }
    >;
    expect(rules.DeployRegion?.Assertions).toEqual([
      {
        Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
        AssertDescription: expect.stringContaining('Deploy this template in us-east-1'),
      },
    ]);
  });

  it('says nothing but what it does: no deprecated CDK call, every feature flag set, no cdk-nag finding', async () => {
    const { output } = await sharedAssembly('readme');
    expect(output).not.toMatch(/deprecated/i);
    expect(output).not.toMatch(/feature flags? (is|are) not configured/);
    expect(output).not.toMatch(/AwsSolutions|validation/i);
  });
});

describe('the app entry (as the CDK CLI runs it)', () => {
  let outdir: string;
  beforeAll(async () => {
    outdir = await mkdtemp(join(tmpdir(), 'catalog-app-'));
  });
  afterAll(() => rm(outdir, { recursive: true, force: true }));

  /**
   * Runs cdk.json's app command through a shell, as the CDK CLI runs it, into an output directory of its own,
   * with cdk.json's context as the CLI gives it.
   */
  const app = async (context: Record<string, unknown>, extraEnv: Record<string, string> = {}) => {
    const dir = await mkdtemp(join(outdir, 'out-'));
    await run('sh', ['-c', CDK_APP], {
      cwd: join(ROOT, 'infra'),
      env: {
        ...extraEnv,
        PATH: process.env.PATH ?? '',
        CDK_OUTDIR: dir,
        CDK_CONTEXT_JSON: JSON.stringify({ ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context }),
      },
    });
    return dir;
  };

  // Each case runs the whole app in a child process, each into its own directory, so the cases run side by side.
  it.concurrent('adds the us-east-1 edge stack, named after the stack and its region, when the CLI deploys elsewhere, and checks both stacks with cdk-nag', async ({
    expect,
  }) => {
    // CDK's CloudFormation validation of that placement is nag.test.ts's (a shared synthesis).
    const dir = await app(
      { stackName: 'CatalogWest' },
      { CDK_DEFAULT_ACCOUNT: '123456789012', CDK_DEFAULT_REGION: 'eu-west-1', CDK_VALIDATION: 'false' },
    );
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; environment?: string }>;
    };
    expect(manifest.artifacts.CatalogWest?.environment).toBe('aws://123456789012/eu-west-1');
    expect(manifest.artifacts['CatalogWest-edge-eu-west-1']?.environment).toBe(
      'aws://123456789012/us-east-1',
    );
    // The AwsSolutions pack ran on the app (its report is written) and found nothing unaccepted.
    const report = JSON.parse(await readFile(join(dir, 'validation-report.json'), 'utf8'));
    expect(report).toMatchObject({ title: 'Validation Report', pluginReports: [] });
  });

  it.concurrent('fails with one line naming the bad setting', async ({ expect }) => {
    const failure = await app({ buildRateMinutes: '2' }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toBe(
      'infra: context buildRateMinutes "2": must be a whole number from 5 to 1440\n',
    );
  });
});
