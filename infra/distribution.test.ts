/**
 * The synthesized distribution against gateway/distribution.ts, the table the local edge behaves by: the
 * template may not drift from it, in its behaviours, their methods, cache keys and TTLs, compression, the error
 * mapping, the response headers policies, or the origins' access (which decides whether a missing object is a
 * 403, hence the 500 problem, or a 404, hence the not-found page).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Behaviour, DISTRIBUTION } from '../gateway/distribution.ts';
import { type Synthesized, synthStack } from '../testing/infra/stacks.ts';

let synthesized: Synthesized;
beforeAll(async () => {
  synthesized = await synthStack({ errorCachingMinTtlSeconds: 7 });
});

const one = (type: string) => {
  const resources = Object.values(synthesized.template.findResources(type));
  expect(resources, type).toHaveLength(1);
  return (resources[0] as { Properties: Record<string, unknown> }).Properties;
};
const sorted = (values: readonly unknown[]) => [...values].map(String).sort();

/** A nested property of a template value, by its path (a template is JSON: anything can be anything). */
const at = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((inner, key) => (inner as Record<string, unknown> | undefined)?.[key], value);

type Json = Record<string, unknown>;
const config = () => one('AWS::CloudFront::Distribution').DistributionConfig as Json;
/** The template's cache behaviour of a table behaviour (the default one for `*`). */
const behaviourOf = (behaviour: Behaviour): Json =>
  behaviour.pathPattern === '*'
    ? (config().DefaultCacheBehavior as Json)
    : (((config().CacheBehaviors as Json[]) ?? []).find((b) => b.PathPattern === behaviour.pathPattern) ??
      {});
/** The resource a behaviour refers to by `{ Ref }` (its cache policy, its response headers policy). */
const referenced = (ref: unknown): Json => {
  const id = (ref as { Ref?: string }).Ref ?? '';
  return ((synthesized.template.toJSON().Resources as Json)[id] as { Properties: Json }).Properties;
};
const BEHAVIOURS = Object.entries(DISTRIBUTION.behaviours) as [string, Behaviour][];

describe('the distribution in the template follows the table', () => {
  it('has exactly the behaviours of the table, each passing and caching its methods over HTTPS only, through both functions', () => {
    expect(((config().CacheBehaviors as Json[]) ?? []).map((b) => b.PathPattern)).toEqual(
      BEHAVIOURS.filter(([, b]) => b.pathPattern !== '*').map(([, b]) => b.pathPattern),
    );
    const functions = (behavior: Json) =>
      (behavior.FunctionAssociations as Json[]).map((association) => association.EventType);
    for (const [name, behaviour] of BEHAVIOURS) {
      const behavior = behaviourOf(behaviour);
      expect(sorted(behavior.AllowedMethods as string[]), name).toEqual(sorted(DISTRIBUTION.allowedMethods));
      expect(sorted(behavior.CachedMethods as string[]), name).toEqual(sorted(DISTRIBUTION.cachedMethods));
      expect(behavior.ViewerProtocolPolicy, name).toBe(DISTRIBUTION.viewerProtocol);
      expect(behavior.Compress, name).toBe(behaviour.compress);
      expect(functions(behavior), name).toEqual(['viewer-request', 'viewer-response']);
    }
  });

  it.each(BEHAVIOURS)(
    '%s: keys the cache on the path alone, within the table TTLs, with the encodings it compresses',
    (_, behaviour) => {
      const policy = at(referenced(behaviourOf(behaviour).CachePolicyId), 'CachePolicyConfig');
      const key = at(policy, 'ParametersInCacheKeyAndForwardedToOrigin');
      expect({
        queryStrings: at(key, 'QueryStringsConfig', 'QueryStringBehavior'),
        headers: at(key, 'HeadersConfig', 'HeaderBehavior'),
        cookies: at(key, 'CookiesConfig', 'CookieBehavior'),
      }).toEqual(DISTRIBUTION.cacheKey);
      // And no origin request policy adds one: no viewer header (a key, the canary's marker) reaches the origin.
      expect(behaviourOf(behaviour).OriginRequestPolicyId).toBeUndefined();
      expect({
        min: at(policy, 'MinTTL'),
        default: at(policy, 'DefaultTTL'),
        max: at(policy, 'MaxTTL'),
      }).toEqual({ ...DISTRIBUTION.ttlSeconds, max: behaviour.maxTtlSeconds ?? DISTRIBUTION.ttlSeconds.max });
      expect({
        br: at(key, 'EnableAcceptEncodingBrotli'),
        gzip: at(key, 'EnableAcceptEncodingGzip'),
      }).toEqual({
        br: behaviour.compress && DISTRIBUTION.compression.encodings.includes('br'),
        gzip: behaviour.compress && DISTRIBUTION.compression.encodings.includes('gzip'),
      });
    },
  );

  it('maps exactly the origin statuses of the table to its pages, cached as the setting says', () => {
    expect(config().CustomErrorResponses).toEqual(
      DISTRIBUTION.errorResponses.map((response) => ({
        ErrorCode: response.originStatus,
        ResponseCode: response.status,
        ResponsePagePath: response.page,
        ErrorCachingMinTTL: 7,
      })),
    );
  });

  it.each(BEHAVIOURS)(
    '%s: adds and removes the headers of the table on every answer from the cache or origin',
    (_, behaviour) => {
      const policy = at(
        referenced(behaviourOf(behaviour).ResponseHeadersPolicyId),
        'ResponseHeadersPolicyConfig',
      );
      const removed = at(policy, 'RemoveHeadersConfig', 'Items') as { Header: string }[];
      expect(sorted(removed.map((item) => item.Header))).toEqual(sorted(DISTRIBUTION.responseHeaders.remove));
      const security = at(policy, 'SecurityHeadersConfig') as Json;
      expect(security.ContentTypeOptions).toEqual({
        Override: DISTRIBUTION.responseHeaders.contentTypeOptions === 'nosniff',
      });
      // The other security headers, as the header each one sends.
      const sent: Record<string, string> = {};
      if (security.ContentSecurityPolicy)
        sent['content-security-policy'] = String(
          at(security, 'ContentSecurityPolicy', 'ContentSecurityPolicy'),
        );
      if (security.ReferrerPolicy)
        sent['referrer-policy'] = String(at(security, 'ReferrerPolicy', 'ReferrerPolicy'));
      if (security.FrameOptions)
        sent['x-frame-options'] = String(at(security, 'FrameOptions', 'FrameOption'));
      for (const name of ['ContentSecurityPolicy', 'ReferrerPolicy', 'FrameOptions'])
        if (security[name]) expect(at(security, name, 'Override'), name).toBe(true);
      expect(sent).toEqual(behaviour.securityHeaders);
      expect(Object.keys(security).sort()).toEqual(
        ['ContentTypeOptions', 'ContentSecurityPolicy', 'ReferrerPolicy', 'FrameOptions']
          .filter((name) => name === 'ContentTypeOptions' || security[name])
          .sort(),
      );
    },
  );

  it('reads the catalog through origin access control and the pages through an identity, as the table says', () => {
    const origins = config().Origins as Json[];
    const originOf = (behaviour: Behaviour) =>
      origins.find((o) => o.Id === behaviourOf(behaviour).TargetOriginId);
    const catalog = originOf(DISTRIBUTION.behaviours.api);
    const pages = originOf(DISTRIBUTION.behaviours.pages);
    expect(DISTRIBUTION.origins.catalog.access).toBe('origin access control');
    expect(catalog?.OriginAccessControlId).toBeDefined();
    expect(DISTRIBUTION.origins.pages.access).toBe('origin access identity');
    expect(pages?.OriginAccessControlId).toBeUndefined();
    expect(JSON.stringify(at(pages, 'S3OriginConfig', 'OriginAccessIdentity') ?? null)).toContain(
      'PagesReader',
    );
  });

  it('lets each reader list the bucket only if the table says its misses are 404s, and the pages reader read pages only', () => {
    const document = one('AWS::S3::BucketPolicy').PolicyDocument as { Statement: Json[] };
    const of = (principal: string, effect: string) =>
      document.Statement.filter(
        (statement) =>
          JSON.stringify(statement.Principal ?? '').includes(principal) && statement.Effect === effect,
      );
    const actions = (statements: Json[]) => statements.flatMap((statement) => [statement.Action].flat());
    // The catalog's reader: the distribution, through origin access control.
    const catalog = actions(of('cloudfront.amazonaws.com', 'Allow'));
    expect(catalog).toContain('s3:GetObject');
    expect(catalog.includes('s3:ListBucket')).toBe(
      (DISTRIBUTION.origins.catalog.missingObjectStatus as number) === 404,
    );
    // The pages' reader: the origin access identity.
    const pages = actions(of('PagesReader', 'Allow'));
    expect(pages).toContain('s3:GetObject');
    expect(pages.includes('s3:ListBucket')).toBe(DISTRIBUTION.origins.pages.missingObjectStatus === 404);
    const denied = of('PagesReader', 'Deny');
    expect(denied).toHaveLength(1);
    expect(denied[0]?.Action).toBe('s3:GetObject');
    // One key is written alone, not as a list.
    const readable = ([denied[0]?.NotResource ?? []].flat() as Json[]).map((resource) =>
      String(((at(resource, 'Fn::Join') as unknown[])[1] as unknown[])[1]),
    );
    expect(readable).toEqual((DISTRIBUTION.origins.pages.readableKeys ?? []).map((key) => `/${key}`));
  });
});
