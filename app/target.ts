/**
 * The target of a command: what its settings name (an S3 bucket and a KeyValueStore, or a directory and a store
 * file), opened for the operations of run.ts; and what a command that changes state acts on, said before it acts
 * (docs/decisions.md#command-line): a deployment by its name and where it lives, an AWS bucket and store, a local
 * origin and store, or the local stack in `.catalog/`; and, when it is the local stack while AWS settings or
 * credentials are in the environment, that it is not AWS it acts on (the entry point prints it).
 */
import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import type { S3Client } from '@aws-sdk/client-s3';
import { ConfigError, settingRef } from '../contract/errors.ts';
import { bucketOf } from '../publish/origin.ts';
import type { PublishTarget } from '../publish/steps.ts';
import { LOCAL_STACK } from './paths.ts';
import { envOf, flagOf, type SettingName } from './settings/index.ts';

/** Where a command acts, as its settings name it once read (a deployment's outputs filled in). */
export interface TargetNames {
  readonly deployment?: string | undefined;
  readonly region?: string | undefined;
  readonly bucket?: string | undefined;
  readonly kvsArn?: string | undefined;
  readonly origin?: string | undefined;
  readonly store?: string | undefined;
  /** The builder function (`catalog rebuild`). */
  readonly function?: string | undefined;
}

/** What to say: the line naming the target, and a warning when the local stack is acted on beside AWS settings. */
export interface TargetDescription {
  readonly line: string;
  readonly warning?: string;
}

/** The AWS SDK's variables that choose an account, credentials or a region (their values are never shown). */
const AWS_VARIABLES = [
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_ROLE_ARN',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
];

/** The settings that name a part of a deployment on AWS: the deployment, and every one a stack output gives. */
const AWS_SETTINGS: readonly SettingName[] = [
  'deployment',
  'bucket',
  'kvsArn',
  'endpoint',
  'function',
  'usageLogGroup',
  'viewerRequestFunction',
];

/** The variables of `env` that point at AWS (set and not empty), by name. */
export function awsVariablesIn(env: Readonly<Record<string, string | undefined>>): string[] {
  const catalog = AWS_SETTINGS.map((name) => envOf(name)).filter((name) => name !== undefined);
  return [...AWS_VARIABLES, ...catalog].filter((name) => (env[name] ?? '') !== '');
}

/** Whether the settings name the local stack `npm start` serves (its origin and store, or either alone). */
function isLocalStack(target: TargetNames): boolean {
  const { origin, store } = target;
  if (origin === undefined && store === undefined) return false;
  return (
    (origin === undefined || origin === LOCAL_STACK.origin) &&
    (store === undefined || store === LOCAL_STACK.store)
  );
}

/** `in eu-west-1`, or where the SDK's chain will find the region. */
const regionText = (region: string | undefined) => region ?? "the AWS SDK's region";

/**
 * What `command` acts on, from its settings: `publish acts on deployment Prod (bucket …, store …, in
 * eu-west-1)`, or `… acts on the local stack in .catalog/ (…)`; with a warning naming the AWS variables of `env` when
 * that local stack is acted on while they are set.
 */
export function describeTarget(
  command: string,
  target: TargetNames,
  env: Readonly<Record<string, string | undefined>>,
): TargetDescription {
  const parts: string[] = [];
  if (target.bucket !== undefined) parts.push(`bucket ${target.bucket}`);
  if (target.function !== undefined) parts.push(`builder function ${target.function}`);
  if (target.kvsArn !== undefined) parts.push(`store ${target.kvsArn}`);
  const aws = parts.length > 0;
  if (aws) {
    const where = `${parts.join(', ')}, in ${regionText(target.region)}`;
    const what =
      target.deployment !== undefined ? `deployment ${target.deployment} (${where})` : `AWS: ${where}`;
    return { line: `${command} acts on ${what}` };
  }
  const local: string[] = [];
  if (target.origin !== undefined) local.push(`origin ${target.origin}`);
  if (target.store !== undefined) local.push(`store ${target.store}`);
  if (!isLocalStack(target)) return { line: `${command} acts on the local ${local.join(' and ')}` };
  const line = `${command} acts on the local stack in .catalog/ (${local.join(', ')})`;
  const variables = awsVariablesIn(env);
  if (variables.length === 0) return { line };
  const deployment = `${flagOf('deployment')} NAME`;
  return {
    line,
    warning: `AWS settings are in the environment (${variables.join(', ')}), but this acts on the local stack in .catalog/, not on AWS; to act on a deployment, give ${deployment} (or ${envOf('deployment')})`,
  };
}

/** Where a publish, rollback or listing acts: an S3 bucket and a KeyValueStore, or a directory and a store file. */
export type TargetSettings = {
  readonly bucket?: string | undefined;
  readonly kvsArn?: string | undefined;
  readonly origin?: string | undefined;
  readonly store?: string | undefined;
};

/** Which kind of target the settings name; throws a {@link ConfigError} saying what is missing. */
export function targetKind(settings: TargetSettings): 'aws' | 'local' {
  const aws = settings.bucket !== undefined || settings.kvsArn !== undefined;
  const local = settings.origin !== undefined || settings.store !== undefined;
  const forms = `${settingRef('bucket')} with ${settingRef('kvsArn')} (AWS), or ${settingRef('origin')} with ${settingRef('store')} (a local origin)`;
  if (aws && local) throw new ConfigError(`give one target, not both: ${forms}`);
  if (!aws && !local) throw new ConfigError(`no target: give ${forms}`);
  // Each setting of the pair the settings name requires the other.
  const pair = aws ? (['bucket', 'kvsArn'] as const) : (['origin', 'store'] as const);
  for (const [name, other] of [pair, [pair[1], pair[0]]] as const)
    if (settings[name] === undefined)
      throw new ConfigError(`${settingRef(name)}: is required with ${settingRef(other)}`);
  if (local && bucketOf(settings.origin as string))
    throw new ConfigError(
      `${settingRef('origin')}: publishing to a bucket takes ${settingRef('bucket')} and ${settingRef('kvsArn')}`,
    );
  return aws ? 'aws' : 'local';
}

/** The AWS clients a target on AWS needs, built by the entry point. */
export interface TargetClients {
  readonly s3: S3Client;
  readonly kvs: CloudFrontKeyValueStoreClient;
}

/** Opens the target the settings name; `clients` is called only for an AWS target (a local one loads no SDK). */
export async function openTarget(
  settings: TargetSettings,
  clients: () => Promise<TargetClients> | TargetClients,
): Promise<PublishTarget> {
  if (targetKind(settings) === 'aws') {
    const [{ S3Origin }, { CloudFrontKeyValueStore }, aws] = await Promise.all([
      import('../publish/s3-origin.ts'),
      import('../keys/kvs-store.ts'),
      clients(),
    ]);
    return {
      origin: new S3Origin(aws.s3, settings.bucket as string),
      kvs: new CloudFrontKeyValueStore(aws.kvs, settings.kvsArn as string),
    };
  }
  const [{ DirectoryOrigin }, { FileKeyValueStore }] = await Promise.all([
    import('../publish/dir-origin.ts'),
    import('../keys/file-store.ts'),
  ]);
  return {
    origin: new DirectoryOrigin(settings.origin as string),
    kvs: new FileKeyValueStore(settings.store as string),
  };
}
