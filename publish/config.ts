/**
 * Settings of publishing, validated once with zod: the value schemas shared by the command line and the
 * Lambda, and the Lambda's environment. Errors name the variable and the rule (and the value, unless it may
 * hold a secret).
 */
import { z } from 'zod';
import { ConfigError } from '../builder/errors.ts';
import { AppScheme, BaseUrl, DEFAULT_LINKS } from '../builder/model.ts';

const required =
  (rule: string) =>
  (issue: { input: unknown }): string =>
    issue.input === undefined ? 'is required' : rule;

/** An S3 bucket name (3–63 of a-z, 0-9, `.` and `-`). */
export const BucketName = z
  .string({ error: required('must be a bucket name') })
  .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    error: 'must be an S3 bucket name (3–63 of a-z, 0-9, . and -)',
  });

/** A CloudFront distribution id (uppercase letters and digits). */
export const DistributionId = z
  .string({ error: required('must be a distribution id') })
  .regex(/^[A-Z0-9]{1,64}$/, { error: 'must be a CloudFront distribution id (A-Z and 0-9)' });

/** The shrink guard's ratio, 0–1. */
export const MinRatio = z.coerce
  .number({ error: 'must be a number from 0 to 1' })
  .min(0, { error: 'must be a number from 0 to 1' })
  .max(1, { error: 'must be a number from 0 to 1' });

/** How many history builds to keep, at least 1. */
export const Keep = z.coerce
  .number({ error: 'must be a whole number ≥ 1' })
  .int({ error: 'must be a whole number ≥ 1' })
  .min(1, { error: 'must be a whole number ≥ 1' });

/** Attempts per AWS request, 1–10. */
export const MaxAttempts = z.coerce
  .number({ error: 'must be a whole number from 1 to 10' })
  .int({ error: 'must be a whole number from 1 to 10' })
  .min(1, { error: 'must be a whole number from 1 to 10' })
  .max(10, { error: 'must be a whole number from 1 to 10' });

/** An AWS region name. */
export const Region = z
  .string()
  .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, { error: 'must be an AWS region such as eu-west-1' });

/** Defaults shared by the command line and the Lambda. */
export const DEFAULTS = { minRatio: 0.5, keep: 20, maxAttempts: 5, region: 'us-east-1' } as const;

const flag = z
  .stringbool({ truthy: ['1', 'true', 'yes', 'on'], falsy: ['0', 'false', 'no', 'off', ''] })
  .optional()
  .transform((value) => value ?? false);

/** The environment the Lambda handler reads (see publish/README.md). */
const LambdaEnvSchema = z.object({
  CATALOG_BUCKET: BucketName,
  CATALOG_DISTRIBUTION_ID: DistributionId,
  CATALOG_SOURCE: z.string().trim().min(1, { error: 'must not be empty' }).optional(),
  CATALOG_SOURCE_SECRET_ARN: z
    .string()
    .regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/, {
      error: 'must be a Secrets Manager secret ARN',
    })
    .optional(),
  CATALOG_BASE_URL: z.string({ error: required('must be a string') }).pipe(BaseUrl),
  CATALOG_APP_SCHEME: AppScheme.default(DEFAULT_LINKS.appScheme),
  CATALOG_SKIP_INVALID: flag,
  CATALOG_ALLOW_EMPTY: flag,
  CATALOG_MIN_RATIO: MinRatio.default(DEFAULTS.minRatio),
  CATALOG_KEEP: Keep.default(DEFAULTS.keep),
  CATALOG_S3_PATH_STYLE: flag,
  CATALOG_MAX_ATTEMPTS: MaxAttempts.default(DEFAULTS.maxAttempts),
  AWS_REGION: Region.default(DEFAULTS.region),
});

/** Variables whose value is never echoed in an error (a source URL may hold a password). */
const SECRET_VARIABLES = new Set(['CATALOG_SOURCE']);

/** Where the Lambda reads its plans: a source spec, or the ARN of a secret holding one. */
export type SourceSetting = { readonly spec: string } | { readonly secretArn: string };

/** The Lambda's configuration. */
export interface LambdaConfig {
  readonly bucket: string;
  readonly distributionId: string;
  readonly source: SourceSetting;
  readonly baseUrl: string;
  readonly appScheme: string;
  readonly skipInvalid: boolean;
  readonly allowEmpty: boolean;
  readonly minRatio: number;
  readonly keep: number;
  readonly s3PathStyle: boolean;
  readonly maxAttempts: number;
  readonly region: string;
}

/** Parses the Lambda's environment; throws a {@link ConfigError} listing every bad variable. */
export function parseLambdaEnv(env: Readonly<Record<string, string | undefined>>): LambdaConfig {
  const result = LambdaEnvSchema.safeParse(env);
  const reasons: string[] = [];
  if (!result.success) {
    for (const issue of result.error.issues) {
      const name = String(issue.path[0] ?? '');
      const value = env[name];
      const shown = value === undefined || SECRET_VARIABLES.has(name) ? '' : ` ${JSON.stringify(value)}`;
      reasons.push(`${name}${shown}: ${issue.message}`);
    }
  }
  if ((env.CATALOG_SOURCE === undefined) === (env.CATALOG_SOURCE_SECRET_ARN === undefined))
    reasons.push('set exactly one of CATALOG_SOURCE and CATALOG_SOURCE_SECRET_ARN');
  if (!result.success || reasons.length > 0) throw new ConfigError(reasons.join('; '));
  const e = result.data;
  const spec = e.CATALOG_SOURCE;
  const secretArn = e.CATALOG_SOURCE_SECRET_ARN;
  return {
    bucket: e.CATALOG_BUCKET,
    distributionId: e.CATALOG_DISTRIBUTION_ID,
    source: spec !== undefined ? { spec } : { secretArn: secretArn as string },
    baseUrl: e.CATALOG_BASE_URL,
    appScheme: e.CATALOG_APP_SCHEME,
    skipInvalid: e.CATALOG_SKIP_INVALID,
    allowEmpty: e.CATALOG_ALLOW_EMPTY,
    minRatio: e.CATALOG_MIN_RATIO,
    keep: e.CATALOG_KEEP,
    s3PathStyle: e.CATALOG_S3_PATH_STYLE,
    maxAttempts: e.CATALOG_MAX_ATTEMPTS,
    region: e.AWS_REGION,
  };
}

/** What a source secret holds: the source spec, and the bearer token of an HTTP source. */
export interface SecretSource {
  readonly spec: string;
  readonly token?: string;
}

/**
 * Reads a source secret: either the secret string itself is the source spec (e.g.
 * `postgres://user:pass@host/db`), or it is a JSON object `{"source": "…", "token": "…"}` (`token`, optional,
 * is sent to an HTTP source as a bearer token). No part of the value ever enters an error message.
 */
export function sourceFromSecret(secretArn: string, secret: string | undefined): SecretSource {
  const text = secret?.trim() ?? '';
  if (text === '') throw new ConfigError(`secret ${secretArn}: has no SecretString`);
  if (!text.startsWith('{')) return { spec: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`secret ${secretArn}: starts with { but is not valid JSON`);
  }
  const { source, token } = parsed as { source?: unknown; token?: unknown };
  if (typeof source !== 'string' || source.trim() === '')
    throw new ConfigError(`secret ${secretArn}: the JSON object has no "source" string`);
  if (token !== undefined && typeof token !== 'string')
    throw new ConfigError(`secret ${secretArn}: "token" must be a string`);
  return { spec: source.trim(), ...(token ? { token } : {}) };
}

/** The options of a Lambda invocation's event: `{ "force": true }` skips the shrink and identical guards. */
export const LambdaEvent = z.preprocess(
  (event) => (event !== null && typeof event === 'object' && !Array.isArray(event) ? event : {}),
  z.object({ force: z.boolean({ error: 'must be true or false' }).optional() }),
);
