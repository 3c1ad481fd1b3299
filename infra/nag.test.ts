/**
 * The templates checked as infra/app.ts checks every synth: cdk-nag's AwsSolutions pack and CDK's own
 * CloudFormation validation (the feature flag `@aws-cdk/core:validateAgainstDefaultRules` makes its findings
 * errors). No finding is left unaccepted in any configuration — `npm run synth`'s, the longest stack name in
 * every placement, and every option — every accepted finding carries a one-line reason, and none is accepted
 * without need. The syntheses are shared (testing/infra/stacks.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  type Assembly,
  LONGEST_STACK_NAME,
  SHARED,
  type SharedName,
  sharedAssembly,
} from '../testing/infra/stacks.ts';
import { edgeStackName } from './monitoring.ts';

const CHECKED: SharedName[] = [
  'readme',
  ...(Object.keys(SHARED) as (keyof typeof SHARED)[]).filter(
    (name) => !('bare' in SHARED[name] || 'overlong' in SHARED[name]),
  ),
];

describe('cdk-nag (AwsSolutions) and CDK’s CloudFormation validation', () => {
  const results: Partial<Record<SharedName, Assembly>> = {};

  for (const name of CHECKED)
    it(`find nothing unaccepted in ${name === 'readme' ? 'the template npm run synth writes' : name}`, async () => {
      const result = await sharedAssembly(name);
      results[name] = result;
      expect(result.violations).toEqual([]);
      expect(result.acknowledged.length).toBeGreaterThan(0);
    });

  it('check the edge stack too', () => {
    const west = results['longest name, eu-west-1 with its us-east-1 edge stack'];
    expect(Object.keys(west?.templates ?? {}).sort()).toEqual([
      LONGEST_STACK_NAME,
      edgeStackName(LONGEST_STACK_NAME, 'eu-west-1'),
    ]);
  });

  it('give every accepted finding a one-line reason a reviewer can read', () => {
    const all = Object.values(results).flatMap((result) => result.acknowledged);
    expect(all.length).toBeGreaterThan(8);
    for (const { rule, reason } of all) {
      expect(reason, rule).not.toMatch(/\n/);
      expect(reason.length, rule).toBeGreaterThanOrEqual(40);
      expect(reason.length, rule).toBeLessThanOrEqual(200);
      expect(reason, rule).toMatch(/[.]$/);
    }
  });

  it('accept no finding that the stack does not have (without the acknowledgements, exactly those are found)', async () => {
    const accepted = await sharedAssembly('longest name, no region');
    const bare = await sharedAssembly('longest name, no region, without the acknowledgements');
    expect(bare.acknowledged).toEqual([]);
    // A finding on a resource is acknowledged on its construct (the `Resource` child, or the construct itself).
    const key = (rule: string, path: string) => `${rule} @ ${path.replace(/\/Resource$/, '')}`;
    expect(bare.violations.map((v) => key(v.rule, v.path)).sort()).toEqual(
      accepted.acknowledged.map((a) => key(a.rule, a.path)).sort(),
    );
  });
});
