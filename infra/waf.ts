/**
 * The optional per-key rate limit (infra/README.md): a WAF web ACL (CLOUDFRONT scope: us-east-1 only) whose one
 * rate-based rule answers a key over `rateLimitPerKey` requests per window with 429, the problem and `Retry-After`.
 */

import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import type { Stack } from 'aws-cdk-lib/core';
import { SETTINGS } from '../app/settings/index.ts';
import { NOSNIFF, PROBLEM_RATE_LIMITED, problemDocument } from '../contract/index.ts';
import type { StackSettings } from './props.ts';

/** The rule's name, also its metric name (the dashboard graphs its blocked requests). */
const RATE_LIMIT_RULE = 'PerKeyRateLimit';

/** The key of the 429 body among the web ACL's custom response bodies. */
const BODY_KEY = 'rate-limited';

/** The web ACL of the per-key rate limit, attached to the distribution; undefined when the limit is off. */
export function addRateLimit(
  stack: Stack,
  distribution: cloudfront.Distribution,
  settings: StackSettings,
): wafv2.CfnWebACL | undefined {
  if (settings.rateLimitPerKey === undefined) return undefined;
  const window = settings.rateLimitWindowSeconds ?? (SETTINGS.rateLimitWindowSeconds.default as number);
  const name = `${stack.stackName}-rate-limit`;
  const webAcl = new wafv2.CfnWebACL(stack, 'RateLimit', {
    name,
    description: `Training plan catalog: at most ${settings.rateLimitPerKey} requests per API key per ${window} s`,
    scope: 'CLOUDFRONT',
    defaultAction: { allow: {} },
    // No sampled requests: a sample shows the request headers, the API key among them, in the WAF console.
    visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: name, sampledRequestsEnabled: false },
    customResponseBodies: {
      // WAF sets the Content-Type from this type and refuses a Content-Type header of our own.
      [BODY_KEY]: { contentType: 'APPLICATION_JSON', content: problemDocument(PROBLEM_RATE_LIMITED) },
    },
    rules: [
      {
        name: RATE_LIMIT_RULE,
        priority: 0,
        statement: {
          rateBasedStatement: {
            limit: settings.rateLimitPerKey,
            evaluationWindowSec: window,
            // One counter per key value; a request without the header is not counted (the function answers
            // it 401).
            aggregateKeyType: 'CUSTOM_KEYS',
            customKeys: [
              { header: { name: 'x-api-key', textTransformations: [{ priority: 0, type: 'NONE' }] } },
            ],
          },
        },
        action: {
          block: {
            customResponse: {
              responseCode: PROBLEM_RATE_LIMITED.status,
              customResponseBodyKey: BODY_KEY,
              responseHeaders: [
                // WAF looks back one window: after that long without requests the key is under its limit.
                { name: 'Retry-After', value: String(window) },
                { name: 'Cache-Control', value: 'no-store' },
                { name: 'X-Content-Type-Options', value: NOSNIFF },
              ],
            },
          },
        },
        visibilityConfig: {
          cloudWatchMetricsEnabled: true,
          metricName: RATE_LIMIT_RULE,
          sampledRequestsEnabled: false,
        },
      },
    ],
  });
  distribution.attachWebAclId(webAcl.attrArn);
  return webAcl;
}
