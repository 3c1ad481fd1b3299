/**
 * The props of {@link CatalogStack}: one per CDK setting of app/settings (its context key's name), checked by
 * the settings' own rules, then by the rules that tie settings together; every bad prop is named.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type StackProps, Token } from 'aws-cdk-lib/core';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { CANARY_RESERVE_MS } from '../app/canary.ts';
import { type NamesIn, readSettings, type SettingsIn } from '../app/settings/index.ts';
import { LAMBDA_MAX_TIMEOUT_SECONDS } from '../app/settings/registry.ts';
import { ConfigError } from '../contract/errors.ts';
import { EDGE_REGION } from '../contract/index.ts';
import { parseKvsFile } from '../keys/kvs-file.ts';
import { formatDuration } from '../keys/time.ts';
import type { SettingProps } from './config.ts';

/** CDK's stack props and one prop per CDK setting (see docs/settings.md and infra/README.md), each optional. */
export type CatalogStackProps = StackProps & SettingProps;

/** The validated settings of the stack, defaults applied. */
export type StackSettings = SettingsIn<'cdk'>;

/** The props are invalid; the message lists every problem, each naming the prop and its value. */
export class CatalogStackPropsError extends ConfigError {
  override name = 'CatalogStackPropsError';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid CatalogStack props: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

const shown = (value: unknown): string => JSON.stringify(value);

/** The source's problems in a stack: a URL the builder can open from Lambda, without credentials. */
function sourceProblems(source: string): string[] {
  if (Token.isUnresolved(source)) return [];
  if (!/^(postgres(ql)?|https?):\/\//i.test(source))
    return [
      `source ${shown(source)}: must be postgres://… or http(s)://… (the function has no files to read)`,
    ];
  const url = URL.canParse(source) ? new URL(source) : null;
  if (!url) return ['source: is not a URL'];
  if (url.username !== '' || url.password !== '' || /(^|&)(password|token)=/i.test(url.search.slice(1)))
    // The value is not shown: it holds a credential.
    return [
      'source: holds credentials, which would be stored in plain text; put it in a secret (sourceSecretArn)',
    ];
  return [];
}

/** The opt-in regions launched before 2023: an origin access identity reads buckets there (and in every older one). */
const OAI_OPT_IN_REGIONS =
  'af-south-1 ap-east-1 ap-south-2 ap-southeast-3 eu-central-2 eu-south-1 eu-south-2 me-central-1 me-south-1';

/** Whether an origin access identity can read a bucket in `region`: not in an opt-in region newer than 2022. */
function pagesReaderReaches(region: string): boolean {
  if (!RegionInfo.regions.some((known) => known.name === region)) return false;
  return !RegionInfo.get(region).isOptInRegion || OAI_OPT_IN_REGIONS.split(' ').includes(region);
}

/** Checks every prop and applies the defaults; throws {@link CatalogStackPropsError} listing every problem. */
export function resolveSettings(props: CatalogStackProps, stackName: string): StackSettings {
  // The stack's name is the deployment's, checked by its setting's rule too (the names of its resources derive
  // from it); its region and account are its environment's, when known.
  const region = Token.isUnresolved(props.env?.region) ? undefined : props.env?.region;
  const account = Token.isUnresolved(props.env?.account) ? undefined : props.env?.account;
  const environment: Record<string, string | undefined> = { deployment: stackName, region, account };
  const reading = readSettings(
    'cdk',
    (name) => {
      const value = name in environment ? environment[name] : props[name as NamesIn<'cdk'>];
      return value === undefined ? undefined : { value, from: 'prop' };
    },
    (name) => name,
  );
  const problems = [...reading.problems];
  const s = reading.values;

  if (/-edge-[a-z]+(-[a-z]+)*-\d+$/.test(stackName))
    problems.push(
      `deployment ${shown(stackName)}: must not end with -edge-<region>, the name of another stack's us-east-1 companion`,
    );
  if (s.kvsSeedFile !== undefined) {
    if (!existsSync(s.kvsSeedFile)) problems.push(`kvsSeedFile ${shown(s.kvsSeedFile)}: no such file`);
    else {
      try {
        parseKvsFile(readFileSync(s.kvsSeedFile, 'utf8'), s.kvsSeedFile);
      } catch (error) {
        problems.push(`kvsSeedFile: ${(error as Error).message}`);
      }
    }
  }
  if (props.domainName !== undefined && props.certificateArn === undefined)
    problems.push(
      `domainName ${shown(props.domainName)} needs certificateArn (an ACM certificate in us-east-1)`,
    );
  if (props.certificateArn !== undefined && props.domainName === undefined)
    problems.push(`certificateArn ${shown(props.certificateArn)} is set without domainName`);
  if (props.accessLogBucketName !== undefined) {
    if (!s.accessLogging)
      problems.push(
        `accessLogBucketName ${shown(props.accessLogBucketName)} is set but accessLogging is not true`,
      );
    if (props.accessLogRetentionDays !== undefined)
      problems.push(
        `accessLogRetentionDays ${props.accessLogRetentionDays}: applies only to the log bucket this stack creates, not to accessLogBucketName`,
      );
  }
  if (props.source !== undefined && props.sourceSecretArn !== undefined)
    problems.push('source and sourceSecretArn are both set: choose one');
  if (s.source !== undefined) problems.push(...sourceProblems(s.source));
  if (
    s.builderTimeoutSeconds !== undefined &&
    s.buildRateMinutes !== undefined &&
    s.builderTimeoutSeconds >= s.buildRateMinutes * 60
  )
    problems.push(
      `builderTimeoutSeconds ${s.builderTimeoutSeconds}: must be shorter than buildRateMinutes (${s.buildRateMinutes} minutes), or runs would queue up`,
    );
  if (
    s.checkDeadline !== undefined &&
    s.canaryRateMinutes !== undefined &&
    s.checkDeadline + CANARY_RESERVE_MS >= s.canaryRateMinutes * 60_000
  )
    problems.push(
      `checkDeadline ${formatDuration(s.checkDeadline)}: with the ${CANARY_RESERVE_MS / 1000}s the canary keeps to store its report, must be shorter than canaryRateMinutes (${s.canaryRateMinutes} minutes), or its runs would overlap`,
    );
  if (
    s.canaryRateMinutes !== undefined &&
    s.canaryFullRateMinutes !== undefined &&
    s.canaryFullRateMinutes < s.canaryRateMinutes
  )
    problems.push(
      `canaryFullRateMinutes ${s.canaryFullRateMinutes}: the full table runs no more often than the probe (canaryRateMinutes ${s.canaryRateMinutes})`,
    );
  if (
    s.checkDeadline !== undefined &&
    s.checkDeadline + CANARY_RESERVE_MS > LAMBDA_MAX_TIMEOUT_SECONDS * 1000
  )
    problems.push(
      `checkDeadline ${formatDuration(s.checkDeadline)}: with the ${CANARY_RESERVE_MS / 1000}s the canary keeps to store its report, must fit Lambda's longest timeout (${LAMBDA_MAX_TIMEOUT_SECONDS / 60} minutes)`,
    );
  if ((props.subnetIds !== undefined || props.securityGroupIds !== undefined) && props.vpcId === undefined)
    problems.push('subnetIds and securityGroupIds need vpcId');
  if (s.vpcId !== undefined && (s.subnetIds ?? []).length === 0)
    problems.push(`vpcId ${shown(s.vpcId)}: name at least one private subnet in subnetIds`);

  if (props.rateLimitWindowSeconds !== undefined && props.rateLimitPerKey === undefined)
    problems.push(
      `rateLimitWindowSeconds ${shown(props.rateLimitWindowSeconds)} is set without rateLimitPerKey (the limit it is the window of)`,
    );
  if (s.rateLimitPerKey !== undefined && region !== undefined && region !== EDGE_REGION)
    problems.push(
      `rateLimitPerKey needs the stack in us-east-1, not ${region}: AWS WAF creates web ACLs for CloudFront only there (deploy the stack in us-east-1, or leave the rate limit off)`,
    );

  // CloudFront delivers no standard logs to a bucket in an opt-in region: the one the stack would create is there.
  if (
    s.accessLogging &&
    props.accessLogBucketName === undefined &&
    region !== undefined &&
    RegionInfo.regions.some((known) => known.name === region) &&
    RegionInfo.get(region).isOptInRegion
  )
    problems.push(
      `accessLogging in ${region}: CloudFront delivers no standard logs to buckets in opt-in regions, where the stack would create its log bucket; name a bucket in another region with accessLogBucketName (ACLs enabled), or leave the access logs off (the usage records, usageLogging, need no bucket)`,
    );
  if (region !== undefined && !pagesReaderReaches(region))
    problems.push(
      `region ${region}: the plan pages' reader (an origin access identity) cannot read S3 buckets in regions launched after December 2022; deploy the stack in us-east-1 or an older region (infra/README.md, "Which region")`,
    );

  if (problems.length > 0) throw new CatalogStackPropsError(problems);
  return s as SettingsIn<'cdk'>;
}
