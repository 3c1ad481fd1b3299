/**
 * The template checked by cdk-nag's AwsSolutions pack, as infra/app.ts runs it on every synth: no finding is
 * left unaccepted in any configuration, every accepted finding carries a one-line reason, and none is
 * accepted without need.
 */
import { Validations } from 'aws-cdk-lib/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CatalogStackProps } from './stack.ts';
import { type NagResult, synthWithNag } from './testing.ts';

const ACCOUNT = '123456789012';
const CONFIGURATIONS: Record<string, CatalogStackProps> = {
  'the default stack (no region)': {},
  'us-east-1 with the rate limit and additional metrics': {
    env: { account: ACCOUNT, region: 'us-east-1' },
    rateLimitPerKey: 1000,
    additionalCloudFrontMetrics: true,
  },
  'eu-west-1, with its us-east-1 edge stack': { env: { account: ACCOUNT, region: 'eu-west-1' } },
  'every option: domain, access logs, VPC, given secret, rate limit': {
    domainName: 'catalog.example.com',
    certificateArn: `arn:aws:acm:us-east-1:${ACCOUNT}:certificate/0f2b1c3d-1111-2222-3333-444455556666`,
    accessLogging: true,
    vpcId: 'vpc-0123456789abcdef0',
    subnetIds: ['subnet-0123456789abcdef0'],
    sourceSecretArn: `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:catalog/source-AbCdEf`,
    rateLimitPerKey: 500,
  },
  'access logs to a named bucket': { accessLogging: true, accessLogBucketName: 'ops-logs-bucket' },
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe('cdk-nag (AwsSolutions)', () => {
  const results: Record<string, NagResult> = {};

  for (const [name, props] of Object.entries(CONFIGURATIONS))
    it(`finds nothing unaccepted in ${name}`, async () => {
      const result = await synthWithNag(props);
      results[name] = result;
      expect(result.violations).toEqual([]);
      expect(result.acknowledged.length).toBeGreaterThan(0);
    });

  it('checks the edge stack too', () => {
    expect(results['eu-west-1, with its us-east-1 edge stack']?.stacks.sort()).toEqual([
      'TrainingPlanCatalog',
      'TrainingPlanCatalog-edge',
    ]);
  });

  it('gives every accepted finding a one-line reason a reviewer can read', () => {
    const all = Object.values(results).flatMap((result) => result.acknowledged);
    expect(all.length).toBeGreaterThan(8);
    for (const { rule, reason } of all) {
      expect(reason, rule).not.toMatch(/\n/);
      expect(reason.length, rule).toBeGreaterThanOrEqual(40);
      expect(reason.length, rule).toBeLessThanOrEqual(200);
      expect(reason, rule).toMatch(/[.]$/);
    }
  });

  it('accepts no finding that the stack does not have (without the acknowledgements, exactly those are found)', async () => {
    const accepted = await synthWithNag({});
    vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => undefined);
    const bare = await synthWithNag({});
    expect(bare.acknowledged).toEqual([]);
    // A finding on a resource is acknowledged on its construct (the `Resource` child, or the construct itself).
    const key = (rule: string, path: string) => `${rule} @ ${path.replace(/\/Resource$/, '')}`;
    expect(bare.violations.map((v) => key(v.rule, v.path)).sort()).toEqual(
      accepted.acknowledged.map((a) => key(a.rule, a.path)).sort(),
    );
  });
});
