/**
 * The optional per-key rate limit (an AWS WAF web ACL on the distribution) and the checks of the operations
 * settings: each bad value fails in the constructor, naming the setting and the value.
 */
import { describe, expect, it } from 'vitest';
import { PROBLEM_RATE_LIMITED } from '../contract/index.ts';
import { constructStack, logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import { type CatalogStackProps, CatalogStackPropsError } from './stack.ts';

async function synth(props: CatalogStackProps = {}): Promise<Synthesized> {
  return synthStack(props);
}

type Resource = { Properties: Record<string, unknown> };
const webAclOf = (s: Synthesized) =>
  Object.values(s.template.findResources('AWS::WAFv2::WebACL'))[0] as Resource | undefined;
const distributionConfig = (s: Synthesized) =>
  (Object.values(s.template.findResources('AWS::CloudFront::Distribution'))[0] as Resource).Properties
    .DistributionConfig as Record<string, unknown>;

describe('per-key rate limit', () => {
  it('is off by default: no web ACL on the distribution', async () => {
    const s = await synth();
    s.template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expect(distributionConfig(s).WebACLId).toBeUndefined();
  });

  it('counts requests per X-Api-Key value and answers a key over its limit 429 with the problem body and Retry-After', async () => {
    const s = await synth({ rateLimitPerKey: 600, env: { account: '123456789012', region: 'us-east-1' } });
    const acl = webAclOf(s)?.Properties;
    expect(acl).toMatchObject({
      Name: 'TrainingPlanCatalog-rate-limit',
      Scope: 'CLOUDFRONT',
      DefaultAction: { Allow: {} },
      VisibilityConfig: { CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
    });
    const rules = acl?.Rules as Record<string, unknown>[];
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({
      Name: 'PerKeyRateLimit',
      Priority: 0,
      Statement: {
        RateBasedStatement: {
          Limit: 600,
          EvaluationWindowSec: 300,
          AggregateKeyType: 'CUSTOM_KEYS',
          CustomKeys: [
            { Header: { Name: 'x-api-key', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } },
          ],
        },
      },
      Action: {
        Block: {
          CustomResponse: {
            ResponseCode: 429,
            CustomResponseBodyKey: 'rate-limited',
            ResponseHeaders: [
              { Name: 'Retry-After', Value: '300' },
              { Name: 'Cache-Control', Value: 'no-store' },
              { Name: 'X-Content-Type-Options', Value: 'nosniff' },
            ],
          },
        },
      },
      // A sampled request would show its X-Api-Key in the console.
      VisibilityConfig: { SampledRequestsEnabled: false },
    });
    const bodies = acl?.CustomResponseBodies as Record<string, { ContentType: string; Content: string }>;
    expect(bodies['rate-limited']?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(bodies['rate-limited']?.Content ?? '')).toEqual({
      type: 'tag:training-plan-catalog,2026:problem:rate-limited',
      title: PROBLEM_RATE_LIMITED.title,
      status: 429,
      detail: PROBLEM_RATE_LIMITED.detail,
    });
    expect(distributionConfig(s).WebACLId).toEqual({
      'Fn::GetAtt': [logicalId(s.template, 'AWS::WAFv2::WebACL', 'RateLimit'), 'Arn'],
    });
  });

  it('uses the window it is given, and says so in Retry-After', async () => {
    const s = await synth({ rateLimitPerKey: 100, rateLimitWindowSeconds: 60 });
    const rules = webAclOf(s)?.Properties.Rules as Record<string, Record<string, Record<string, unknown>>>[];
    const rule = rules[0];
    expect(rule?.Statement?.RateBasedStatement).toMatchObject({ Limit: 100, EvaluationWindowSec: 60 });
    expect(JSON.stringify(rule?.Action)).toContain('{"Name":"Retry-After","Value":"60"}');
  });
});

describe('invalid operations settings', () => {
  function failure(props: CatalogStackProps): string {
    try {
      constructStack(props);
    } catch (error) {
      expect(error).toBeInstanceOf(CatalogStackPropsError);
      return (error as Error).message;
    }
    throw new Error('the stack accepted the props');
  }

  it('fails a window AWS WAF does not offer', () => {
    expect(failure({ rateLimitPerKey: 100, rateLimitWindowSeconds: 90 })).toContain(
      'rateLimitWindowSeconds 90: must be 60, 120, 300 or 600',
    );
    expect(failure({ rateLimitPerKey: 100, rateLimitWindowSeconds: 900 })).toContain(
      'rateLimitWindowSeconds 900: must be a whole number from 60 to 600',
    );
  });

  it('fails a limit under 10 requests', () => {
    expect(failure({ rateLimitPerKey: 9 })).toContain('rateLimitPerKey 9: must be a whole number from 10 to');
  });

  it('fails a window without a limit', () => {
    expect(failure({ rateLimitWindowSeconds: 60 })).toContain(
      'rateLimitWindowSeconds 60 is set without rateLimitPerKey',
    );
  });

  it('fails a rate limit in a stack outside us-east-1, where WAF cannot create it', () => {
    expect(
      failure({ rateLimitPerKey: 100, env: { account: '123456789012', region: 'eu-west-1' } }),
    ).toContain('rateLimitPerKey needs the stack in us-east-1, not eu-west-1');
  });

  it('fails a catalog age threshold under an hour', () => {
    expect(failure({ catalogAgeAlarmSeconds: 600 })).toContain(
      'catalogAgeAlarmSeconds 600: must be a whole number from 3600 to 31536000',
    );
  });

  it('fails switches that are not switches', () => {
    const message = failure({ scheduleEnabled: 'maybe', additionalCloudFrontMetrics: 'lots' });
    expect(message).toContain('scheduleEnabled "maybe": must be 1/true/yes/on or 0/false/no/off');
    expect(message).toContain('additionalCloudFrontMetrics "lots": must be 1/true/yes/on or 0/false/no/off');
  });
});
