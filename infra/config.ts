/**
 * The app's settings from CDK context (`cdk.json` "context", or `-c name=value` on the command line, which
 * wins): converted to {@link CatalogStackProps} here, validated by the stack. Values from `-c` are strings,
 * so numbers and booleans are parsed; a value that does not parse names the context key.
 */
import { isAbsolute, resolve } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { z } from 'zod';
import type { CatalogStackProps } from './props.ts';

/** The stack name when the `stackName` context is not set. */
export const DEFAULT_STACK_NAME = 'TrainingPlanCatalog';

const text = z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' });
/** `-c` gives strings; cdk.json may give JSON numbers, booleans and arrays. */
const number = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z.number({ error: 'must be a number' }),
);
const flag = z.preprocess(
  (v) => (v === 'true' ? true : v === 'false' ? false : v),
  z.boolean({ error: 'must be true or false' }),
);
const list = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '')
      : v,
  z.array(text, { error: 'must be a comma-separated list' }),
);

/** Every context key the app reads (see infra/README.md). */
const Context = z.object({
  stackName: text.optional(),
  domainName: text.optional(),
  certificateArn: text.optional(),
  priceClass: z.enum(['100', '200', 'All'], { error: 'must be 100, 200 or All' }).optional(),
  accessLogging: flag.optional(),
  accessLogBucketName: text.optional(),
  accessLogRetentionDays: number.optional(),
  errorCachingMinTtlSeconds: number.optional(),
  noncurrentVersionExpiryDays: number.optional(),
  kvsSeedFile: text.optional(),
  source: text.optional(),
  sourceSecretArn: text.optional(),
  baseUrl: text.optional(),
  appScheme: text.optional(),
  skipInvalid: flag.optional(),
  minRatio: number.optional(),
  keepBuilds: number.optional(),
  buildRateMinutes: number.optional(),
  builderTimeoutSeconds: number.optional(),
  builderMemoryMiB: number.optional(),
  vpcId: text.optional(),
  subnetIds: list.optional(),
  securityGroupIds: list.optional(),
  alarmTopicArn: text.optional(),
});

/** The context keys, for `tryGetContext`. */
export const CONTEXT_KEYS = Object.keys(Context.shape) as (keyof typeof Context.shape)[];

/** What the app passes to the stack: its name and props. */
export interface AppConfig {
  readonly stackName: string;
  readonly props: CatalogStackProps;
}

/**
 * Reads the context through `get` (e.g. `key => app.node.tryGetContext(key)`). Relative file paths are
 * resolved against `cwd` (where `cdk` runs: `infra/`). Throws one error naming every bad key and value.
 */
export function configFromContext(get: (key: string) => unknown, cwd: string = process.cwd()): AppConfig {
  const raw: Record<string, unknown> = {};
  for (const key of CONTEXT_KEYS) {
    const value = get(key);
    if (value !== undefined && value !== null && value !== '') raw[key] = value;
  }
  const parsed = Context.safeParse(raw);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      const secret = key === 'source';
      return `context ${key}${secret ? '' : ` ${JSON.stringify(raw[key])}`}: ${issue.message}`;
    });
    throw new Error(reasons.join('; '));
  }
  const c = parsed.data;
  if ((c.subnetIds || c.securityGroupIds) && !c.vpcId)
    throw new Error('context subnetIds/securityGroupIds need vpcId');
  const props: CatalogStackProps = {
    ...(c.domainName !== undefined ? { domainName: c.domainName } : {}),
    ...(c.certificateArn !== undefined ? { certificateArn: c.certificateArn } : {}),
    ...(c.priceClass !== undefined ? { priceClass: c.priceClass } : {}),
    ...(c.accessLogging !== undefined ? { accessLogging: c.accessLogging } : {}),
    ...(c.accessLogBucketName !== undefined ? { accessLogBucketName: c.accessLogBucketName } : {}),
    ...(c.accessLogRetentionDays !== undefined ? { accessLogRetentionDays: c.accessLogRetentionDays } : {}),
    ...(c.errorCachingMinTtlSeconds !== undefined
      ? { errorCachingMinTtl: Duration.seconds(c.errorCachingMinTtlSeconds) }
      : {}),
    ...(c.noncurrentVersionExpiryDays !== undefined
      ? { noncurrentVersionExpiryDays: c.noncurrentVersionExpiryDays }
      : {}),
    ...(c.kvsSeedFile !== undefined
      ? { keyValueStoreSeedFile: isAbsolute(c.kvsSeedFile) ? c.kvsSeedFile : resolve(cwd, c.kvsSeedFile) }
      : {}),
    ...(c.source !== undefined ? { source: c.source } : {}),
    ...(c.sourceSecretArn !== undefined ? { sourceSecretArn: c.sourceSecretArn } : {}),
    ...(c.baseUrl !== undefined ? { baseUrl: c.baseUrl } : {}),
    ...(c.appScheme !== undefined ? { appScheme: c.appScheme } : {}),
    ...(c.skipInvalid !== undefined ? { skipInvalid: c.skipInvalid } : {}),
    ...(c.minRatio !== undefined ? { minRatio: c.minRatio } : {}),
    ...(c.keepBuilds !== undefined ? { keepBuilds: c.keepBuilds } : {}),
    ...(c.buildRateMinutes !== undefined ? { buildRate: Duration.minutes(c.buildRateMinutes) } : {}),
    ...(c.builderTimeoutSeconds !== undefined
      ? { builderTimeout: Duration.seconds(c.builderTimeoutSeconds) }
      : {}),
    ...(c.builderMemoryMiB !== undefined ? { builderMemoryMiB: c.builderMemoryMiB } : {}),
    ...(c.vpcId !== undefined
      ? {
          builderVpc: {
            vpcId: c.vpcId,
            subnetIds: c.subnetIds ?? [],
            ...(c.securityGroupIds ? { securityGroupIds: c.securityGroupIds } : {}),
          },
        }
      : {}),
    ...(c.alarmTopicArn !== undefined ? { alarmTopicArn: c.alarmTopicArn } : {}),
  };
  return { stackName: c.stackName ?? DEFAULT_STACK_NAME, props };
}
