/**
 * The settings of {@link CatalogStack} and their validation. Props are plain data (strings, numbers,
 * Durations), never constructs, so the app maps CDK context to them one to one, synth needs no lookups, and
 * every value is checked in the constructor with a message that names the prop and the bad value.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Duration, StackProps } from 'aws-cdk-lib';
import { Token } from 'aws-cdk-lib';
import { BaseUrl } from '../builder/model.ts';
import { parseKvsFile } from '../keys/kvs-file.ts';

/** Where a price class serves from: `100` North America and Europe, `200` adds most of Asia, `All` everywhere. */
export type PriceClassName = '100' | '200' | 'All';

/** A VPC to run the builder in, given by ids (no lookup at synth). */
export interface BuilderVpcProps {
  /** `vpc-…` */
  readonly vpcId: string;
  /** Private subnets (`subnet-…`) with a route to the internet through a NAT: CloudFront's API has no VPC endpoint. */
  readonly subnetIds: readonly string[];
  /**
   * Security groups (`sg-…`) for the builder.
   *
   * @default - a new group allowing all outbound traffic and no inbound
   */
  readonly securityGroupIds?: readonly string[];
}

/** Props of {@link CatalogStack}. */
export interface CatalogStackProps extends StackProps {
  /**
   * Directory holding the CloudFront Function bundles `viewer-request.js` and `viewer-response.js`.
   *
   * @default - `dist/gateway` in the repository, as written by `npm run build`
   */
  readonly gatewayBundleDir?: string;

  /**
   * A KeyValueStore import file (`{"data":[{"key","value"}]}`, the format of `catalog keys --store FILE`) to
   * seed the store with. Read only when the store is CREATED: CloudFormation cannot update an import source, so
   * never change or remove this setting after the first deploy — manage keys with `catalog keys --kvs-arn`.
   *
   * @default - the store starts empty
   */
  readonly keyValueStoreSeedFile?: string;

  /**
   * Custom domain name of the API (one host name, e.g. `catalog.example.com`). Requires `certificateArn`.
   *
   * @default - only the distribution's `*.cloudfront.net` name
   */
  readonly domainName?: string;

  /**
   * ARN of an ACM certificate in us-east-1 covering `domainName`. Requires `domainName`.
   *
   * @default - none
   */
  readonly certificateArn?: string;

  /**
   * Which edge locations serve the API.
   *
   * @default '100' (North America and Europe: the cheapest)
   */
  readonly priceClass?: PriceClassName;

  /**
   * Write CloudFront standard access logs.
   *
   * @default false
   */
  readonly accessLogging?: boolean;

  /**
   * Name of an existing bucket (ACLs enabled) for the access logs. Only with `accessLogging`.
   *
   * @default - a new private bucket whose logs expire after `accessLogRetentionDays`
   */
  readonly accessLogBucketName?: string;

  /**
   * Days the access logs are kept, in the bucket this stack creates for them.
   *
   * @default 90
   */
  readonly accessLogRetentionDays?: number;

  /**
   * How long an edge keeps the 500 error answer before asking the origin again (ErrorCachingMinTTL), 0–300 s.
   *
   * @default Duration.seconds(10)
   */
  readonly errorCachingMinTtl?: Duration;

  /**
   * Days an overwritten or deleted object version is kept in the origin bucket (older builds stay under
   * `history/` anyway; versions are the safety net below that).
   *
   * @default 30
   */
  readonly noncurrentVersionExpiryDays?: number;

  /**
   * The builder's source spec, `postgres://…` or `http(s)://…`, WITHOUT credentials: it is stored in plain text
   * in the template and the function's configuration. Exclusive with `sourceSecretArn`.
   *
   * @default - see `sourceSecretArn`
   */
  readonly source?: string;

  /**
   * Complete ARN of a Secrets Manager secret holding the source spec (or `{"source","token"}`). The builder may
   * read this secret and no other. Exclusive with `source`.
   *
   * @default - when `source` is not set either, the stack creates the secret `SourceSecret` (with a random
   * placeholder value) and the builder fails until you put the real source in it
   */
  readonly sourceSecretArn?: string;

  /**
   * The API's public base URL, used in every plan's `webUrl`.
   *
   * @default - `https://<domainName>`, or `https://<the distribution's domain>` without a custom domain
   */
  readonly baseUrl?: string;

  /**
   * The app deep-link scheme of every plan's `appUrl`.
   *
   * @default - the builder's default (`trainingplans`)
   */
  readonly appScheme?: string;

  /**
   * Publish the valid rows when some rows are invalid (the invalid ones are logged).
   *
   * @default false (an invalid row fails the build; the alarm fires)
   */
  readonly skipInvalid?: boolean;

  /**
   * The shrink guard: refuse to publish fewer plans than this share of the live count, 0–1.
   *
   * @default - the builder's default (0.5)
   */
  readonly minRatio?: number;

  /**
   * Earlier builds kept under `history/` for `catalog rollback`, at least 1.
   *
   * @default - the builder's default (20)
   */
  readonly keepBuilds?: number;

  /**
   * How often EventBridge Scheduler runs the builder: at least 5 minutes, whole minutes.
   *
   * @default Duration.hours(1)
   */
  readonly buildRate?: Duration;

  /**
   * The builder's timeout: 10 seconds to 15 minutes, and shorter than `buildRate`.
   *
   * @default Duration.minutes(5)
   */
  readonly builderTimeout?: Duration;

  /**
   * The builder's memory (and so CPU), 128–10240 MiB.
   *
   * @default 1024
   */
  readonly builderMemoryMiB?: number;

  /**
   * Run the builder in these private subnets (e.g. to reach a PostgreSQL source that is not public).
   *
   * @default - outside any VPC
   */
  readonly builderVpc?: BuilderVpcProps;

  /**
   * ARN of the SNS topic the builder-errors alarm notifies.
   *
   * @default - a new topic `AlarmTopic` (subscribe to it after the deploy)
   */
  readonly alarmTopicArn?: string;
}

/** Props after defaults. */
export interface ResolvedSettings {
  readonly gatewayBundleDir: string;
  readonly priceClass: PriceClassName;
  readonly accessLogRetentionDays: number;
  readonly errorCachingMinTtlSeconds: number;
  readonly noncurrentVersionExpiryDays: number;
  readonly buildRateMinutes: number;
  readonly builderTimeoutSeconds: number;
  readonly builderMemoryMiB: number;
}

/** The defaults, in one place (documented on each prop). */
export const DEFAULTS = {
  priceClass: '100',
  accessLogRetentionDays: 90,
  errorCachingMinTtlSeconds: 10,
  noncurrentVersionExpiryDays: 30,
  buildRateMinutes: 60,
  builderTimeoutSeconds: 300,
  builderMemoryMiB: 1024,
} as const;

/** The props are invalid; the message lists every problem, each naming the prop and its value. */
export class CatalogStackPropsError extends Error {
  override name = 'CatalogStackPropsError';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid CatalogStack props: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

const shown = (value: unknown): string => JSON.stringify(value);

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const ACM_ARN = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[0-9a-f-]{36}$/;
const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function wholeIn(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

/** Seconds of a Duration; NaN for a token, which the checks then refuse (synth must know every value). */
function seconds(duration: Duration): number {
  const value = duration.toSeconds({ integral: false });
  return Token.isUnresolved(value) ? Number.NaN : value;
}

/** The source spec's problems: a URL the builder can open from Lambda, without credentials. */
function sourceProblems(source: string): string[] {
  if (Token.isUnresolved(source)) return [];
  if (!/^(postgres(ql)?|https?):\/\//i.test(source))
    return [
      `source ${shown(source)}: must be postgres://… or http(s)://… (the function has no files to read)`,
    ];
  const url = URL.canParse(source) ? new URL(source) : null;
  if (!url) return [`source: is not a URL`];
  if (url.username !== '' || url.password !== '' || /(^|&)(password|token)=/i.test(url.search.slice(1)))
    // The value is not shown: it holds a credential.
    return [
      'source: holds credentials, which would be stored in plain text; put it in a secret (sourceSecretArn)',
    ];
  return [];
}

/**
 * Checks every prop and applies the defaults. Throws {@link CatalogStackPropsError} listing every problem;
 * `stackName` is needed because the function names derive from it.
 */
export function resolveSettings(
  props: CatalogStackProps,
  stackName: string,
  defaultGatewayDir: string,
): ResolvedSettings {
  const problems: string[] = [];

  const gatewayBundleDir = props.gatewayBundleDir ?? defaultGatewayDir;
  for (const name of ['viewer-request', 'viewer-response']) {
    const file = `${gatewayBundleDir}/${name}.js`;
    if (!existsSync(file)) problems.push(`gateway bundle ${file} is missing: run npm run build`);
  }

  if (`${stackName}-viewer-response`.length > 64)
    problems.push(
      `stack name ${shown(stackName)}: at most ${64 - '-viewer-response'.length} characters (it prefixes the CloudFront Function names)`,
    );

  if (props.keyValueStoreSeedFile !== undefined) {
    const file = props.keyValueStoreSeedFile;
    if (!existsSync(file)) problems.push(`keyValueStoreSeedFile ${shown(file)}: no such file`);
    else {
      try {
        parseKvsFile(readFileSync(file, 'utf8'), file);
      } catch (error) {
        problems.push(`keyValueStoreSeedFile: ${(error as Error).message}`);
      }
    }
  }

  const { domainName, certificateArn } = props;
  if (domainName !== undefined && !HOST_NAME.test(domainName))
    problems.push(
      `domainName ${shown(domainName)}: must be one lowercase host name such as catalog.example.com`,
    );
  if (domainName !== undefined && certificateArn === undefined)
    problems.push(`domainName ${shown(domainName)} needs certificateArn (an ACM certificate in us-east-1)`);
  if (certificateArn !== undefined) {
    const match = ACM_ARN.exec(certificateArn);
    if (!match) problems.push(`certificateArn ${shown(certificateArn)}: must be an ACM certificate ARN`);
    else if (match[1] !== 'us-east-1')
      problems.push(
        `certificateArn ${shown(certificateArn)}: is in ${match[1]}; CloudFront only uses certificates in us-east-1`,
      );
    if (domainName === undefined)
      problems.push(`certificateArn ${shown(certificateArn)} is set without domainName`);
  }

  const priceClass = props.priceClass ?? DEFAULTS.priceClass;
  if (!['100', '200', 'All'].includes(priceClass))
    problems.push(`priceClass ${shown(priceClass)}: must be 100, 200 or All`);

  if (props.accessLogBucketName !== undefined) {
    if (!props.accessLogging)
      problems.push(
        `accessLogBucketName ${shown(props.accessLogBucketName)} is set but accessLogging is not true`,
      );
    if (!BUCKET_NAME.test(props.accessLogBucketName))
      problems.push(`accessLogBucketName ${shown(props.accessLogBucketName)}: must be an S3 bucket name`);
    if (props.accessLogRetentionDays !== undefined)
      problems.push(
        `accessLogRetentionDays ${props.accessLogRetentionDays}: applies only to the log bucket this stack creates, not to accessLogBucketName`,
      );
  }
  const accessLogRetentionDays = props.accessLogRetentionDays ?? DEFAULTS.accessLogRetentionDays;
  if (!wholeIn(accessLogRetentionDays, 1, 3650))
    problems.push(`accessLogRetentionDays ${accessLogRetentionDays}: must be a whole number of days, 1–3650`);

  const errorTtl = props.errorCachingMinTtl
    ? seconds(props.errorCachingMinTtl)
    : DEFAULTS.errorCachingMinTtlSeconds;
  if (!wholeIn(errorTtl, 0, 300))
    problems.push(
      `errorCachingMinTtl ${props.errorCachingMinTtl?.toHumanString()}: must be whole seconds, 0–300 (a long TTL hides a recovered origin)`,
    );

  const noncurrentVersionExpiryDays =
    props.noncurrentVersionExpiryDays ?? DEFAULTS.noncurrentVersionExpiryDays;
  if (!wholeIn(noncurrentVersionExpiryDays, 1, 3650))
    problems.push(
      `noncurrentVersionExpiryDays ${noncurrentVersionExpiryDays}: must be a whole number of days, 1–3650`,
    );

  if (props.source !== undefined && props.sourceSecretArn !== undefined)
    problems.push('source and sourceSecretArn are both set: choose one');
  if (props.source !== undefined) problems.push(...sourceProblems(props.source));
  if (props.sourceSecretArn !== undefined && !SECRET_ARN.test(props.sourceSecretArn))
    problems.push(
      `sourceSecretArn ${shown(props.sourceSecretArn)}: must be the complete ARN of a Secrets Manager secret (ending in -XXXXXX)`,
    );

  if (props.baseUrl !== undefined && !Token.isUnresolved(props.baseUrl)) {
    const parsed = BaseUrl.safeParse(props.baseUrl);
    if (!parsed.success) problems.push(`baseUrl ${shown(props.baseUrl)}: ${parsed.error.issues[0]?.message}`);
    else if (!props.baseUrl.startsWith('https://'))
      problems.push(`baseUrl ${shown(props.baseUrl)}: must be https:// (the distribution serves HTTPS only)`);
  }
  if (props.appScheme !== undefined && !/^[A-Za-z][A-Za-z0-9+.-]*$/.test(props.appScheme))
    problems.push(
      `appScheme ${shown(props.appScheme)}: must be a URL scheme name (a letter, then letters, digits, + . -)`,
    );
  if (props.minRatio !== undefined && !(props.minRatio >= 0 && props.minRatio <= 1))
    problems.push(`minRatio ${props.minRatio}: must be a number from 0 to 1`);
  if (props.keepBuilds !== undefined && !wholeIn(props.keepBuilds, 1, 1000))
    problems.push(`keepBuilds ${props.keepBuilds}: must be a whole number, 1–1000`);

  const rateSeconds = props.buildRate ? seconds(props.buildRate) : DEFAULTS.buildRateMinutes * 60;
  const rateValid = rateSeconds >= 300 && rateSeconds % 60 === 0;
  if (!rateValid)
    problems.push(
      `buildRate ${props.buildRate?.toHumanString()}: must be whole minutes, at least 5 minutes (each run reads the whole source)`,
    );
  const timeoutSeconds = props.builderTimeout
    ? seconds(props.builderTimeout)
    : DEFAULTS.builderTimeoutSeconds;
  if (!wholeIn(timeoutSeconds, 10, 900))
    problems.push(
      `builderTimeout ${props.builderTimeout?.toHumanString()}: must be whole seconds, 10 seconds–15 minutes`,
    );
  else if (rateValid && timeoutSeconds >= rateSeconds)
    problems.push(
      `builderTimeout ${props.builderTimeout?.toHumanString() ?? `${timeoutSeconds} seconds`}: must be shorter than buildRate (${props.buildRate?.toHumanString() ?? '1 hour'}), or runs would queue up`,
    );
  const builderMemoryMiB = props.builderMemoryMiB ?? DEFAULTS.builderMemoryMiB;
  if (!wholeIn(builderMemoryMiB, 128, 10240))
    problems.push(`builderMemoryMiB ${builderMemoryMiB}: must be a whole number, 128–10240`);

  if (props.builderVpc) {
    const { vpcId, subnetIds, securityGroupIds } = props.builderVpc;
    if (!/^vpc-[0-9a-f]{8,17}$/.test(vpcId)) problems.push(`builderVpc.vpcId ${shown(vpcId)}: must be vpc-…`);
    if (subnetIds.length === 0) problems.push('builderVpc.subnetIds: name at least one private subnet');
    for (const id of subnetIds)
      if (!/^subnet-[0-9a-f]{8,17}$/.test(id))
        problems.push(`builderVpc.subnetIds ${shown(id)}: must be subnet-…`);
    for (const id of securityGroupIds ?? [])
      if (!/^sg-[0-9a-f]{8,17}$/.test(id))
        problems.push(`builderVpc.securityGroupIds ${shown(id)}: must be sg-…`);
  }

  if (props.alarmTopicArn !== undefined && !TOPIC_ARN.test(props.alarmTopicArn))
    problems.push(`alarmTopicArn ${shown(props.alarmTopicArn)}: must be an SNS topic ARN`);

  if (problems.length > 0) throw new CatalogStackPropsError(problems);
  return {
    gatewayBundleDir,
    priceClass,
    accessLogRetentionDays,
    errorCachingMinTtlSeconds: errorTtl,
    noncurrentVersionExpiryDays,
    buildRateMinutes: rateSeconds / 60,
    builderTimeoutSeconds: timeoutSeconds,
    builderMemoryMiB,
  };
}
