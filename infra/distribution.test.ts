/**
 * The synthesized distribution against gateway/distribution.ts, the table the local edge behaves by: the
 * template may not drift from it, in the methods, the cache key and TTLs, compression, the error mapping, the
 * response headers policy, or the origin's access (which decides whether a missing object is a 403 or 404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISTRIBUTION } from '../gateway/distribution.ts';
import { type Synthesized, synthStack } from './testing.ts';

let synthesized: Synthesized;
beforeAll(async () => {
  synthesized = await synthStack({ errorCachingMinTtlSeconds: 7 }, { bundle: false });
});
afterAll(() => synthesized.remove());

const one = (type: string) => {
  const resources = Object.values(synthesized.template.findResources(type));
  expect(resources, type).toHaveLength(1);
  return (resources[0] as { Properties: Record<string, unknown> }).Properties;
};
const sorted = (values: readonly unknown[]) => [...values].map(String).sort();

/** A nested property of a template value, by its path (a template is JSON: anything can be anything). */
const at = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((inner, key) => (inner as Record<string, unknown> | undefined)?.[key], value);

describe('the distribution in the template follows the table', () => {
  it('passes the methods the table allows and caches the ones it caches, over HTTPS only', () => {
    const config = one('AWS::CloudFront::Distribution').DistributionConfig as Record<string, unknown>;
    const behavior = config.DefaultCacheBehavior as Record<string, unknown>;
    expect(sorted(behavior.AllowedMethods as string[])).toEqual(sorted(DISTRIBUTION.allowedMethods));
    expect(sorted(behavior.CachedMethods as string[])).toEqual(sorted(DISTRIBUTION.cachedMethods));
    expect(behavior.ViewerProtocolPolicy).toBe(DISTRIBUTION.viewerProtocol);
    expect(behavior.Compress).toBe(DISTRIBUTION.compression.enabled);
  });

  it('keys the cache on the path alone, within the table TTLs, with the encodings it compresses (none: builds hold their variants)', () => {
    const policy = at(one('AWS::CloudFront::CachePolicy'), 'CachePolicyConfig');
    const key = at(policy, 'ParametersInCacheKeyAndForwardedToOrigin');
    expect({
      queryStrings: at(key, 'QueryStringsConfig', 'QueryStringBehavior'),
      headers: at(key, 'HeadersConfig', 'HeaderBehavior'),
      cookies: at(key, 'CookiesConfig', 'CookieBehavior'),
    }).toEqual(DISTRIBUTION.cacheKey);
    expect({
      min: at(policy, 'MinTTL'),
      default: at(policy, 'DefaultTTL'),
      max: at(policy, 'MaxTTL'),
    }).toEqual(DISTRIBUTION.ttlSeconds);
    expect({ br: at(key, 'EnableAcceptEncodingBrotli'), gzip: at(key, 'EnableAcceptEncodingGzip') }).toEqual({
      br: DISTRIBUTION.compression.enabled && DISTRIBUTION.compression.encodings.includes('br'),
      gzip: DISTRIBUTION.compression.enabled && DISTRIBUTION.compression.encodings.includes('gzip'),
    });
  });

  it('maps exactly the origin statuses of the table to its pages, cached as the setting says', () => {
    const config = one('AWS::CloudFront::Distribution').DistributionConfig as Record<string, unknown>;
    expect(config.CustomErrorResponses).toEqual(
      DISTRIBUTION.errorResponses.map((response) => ({
        ErrorCode: response.originStatus,
        ResponseCode: response.status,
        ResponsePagePath: response.page,
        ErrorCachingMinTTL: 7,
      })),
    );
  });

  it('adds and removes the headers of the table on every answer from the cache or origin', () => {
    const policy = at(one('AWS::CloudFront::ResponseHeadersPolicy'), 'ResponseHeadersPolicyConfig');
    const removed = at(policy, 'RemoveHeadersConfig', 'Items') as { Header: string }[];
    expect(sorted(removed.map((item) => item.Header))).toEqual(sorted(DISTRIBUTION.responseHeaders.remove));
    expect(at(policy, 'SecurityHeadersConfig', 'ContentTypeOptions')).toEqual({
      Override: DISTRIBUTION.responseHeaders.contentTypeOptions === 'nosniff',
    });
  });

  it('lets CloudFront read the bucket and list it only if the table says a missing object is a 404', () => {
    const document = one('AWS::S3::BucketPolicy').PolicyDocument as { Statement: Record<string, unknown>[] };
    const forCloudFront = document.Statement.filter((statement) =>
      JSON.stringify(statement.Principal ?? '').includes('cloudfront.amazonaws.com'),
    );
    const actions = forCloudFront.flatMap((statement) => [statement.Action].flat());
    expect(actions).toContain('s3:GetObject');
    expect(actions.includes('s3:ListBucket')).toBe(
      (DISTRIBUTION.origin.missingObjectStatus as number) === 404,
    );
  });
});
