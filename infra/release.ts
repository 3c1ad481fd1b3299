/**
 * The functions' release at deploy time (infra/README.md, "Verifying the function"): the stack's two CloudFront
 * Functions are not published by CloudFormation (`AutoPublish` off: a deploy changes their DEVELOPMENT stage only);
 * the custom resource `FunctionRelease`, backed by lambda/release.ts through CDK's provider framework, runs after
 * both and before the distribution (and so before anything that needs a LIVE function): it verifies each function
 * whose DEVELOPMENT differs from LIVE against the whole request-case table and publishes only when every case
 * passes. Its properties hold each function's code hash, so CloudFormation calls it when (and only when) the code
 * changes, and again with the old code on a rollback (LIVE then gets that code back, verified).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { CustomResource, Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib/core';
import * as cr from 'aws-cdk-lib/custom-resources';
import { RELEASE_DEADLINE_MS, RELEASE_RESERVE_MS } from '../app/release.ts';
import type { FunctionKind } from '../app/verify-function.ts';
import { RELEASE_BUNDLE } from '../lambda/bundling.ts';

/** A function the release verifies and publishes: the construct, which of the two it is, its code. */
export interface ReleasedFunction {
  readonly fn: cloudfront.Function;
  readonly kind: FunctionKind;
  readonly code: string;
}

/** What the release needs from the stack. */
export interface FunctionReleaseProps {
  readonly functions: readonly ReleasedFunction[];
  readonly keyValueStore: cloudfront.IKeyValueStore;
  /** `publishFunctions`: false leaves a changed function in DEVELOPMENT (a first create is published anyway). */
  readonly publish: boolean;
  /** The Lambda runtime and bundling the stack's other functions use (lambda/bundling.ts). */
  readonly runtime: lambda.Runtime;
  readonly bundling: BundlingOptions;
  readonly root: string;
}

/** The CloudFront API's actions the release takes on the two functions, and no other. */
export const RELEASE_FUNCTION_ACTIONS = [
  'cloudfront:DescribeFunction',
  'cloudfront:GetFunction',
  'cloudfront:TestFunction',
  'cloudfront:PublishFunction',
] as const;
/** What it does to the store: adds its own keys (one UpdateKeys, after reading the entries) and removes them. */
export const RELEASE_STORE_ACTIONS = [
  'cloudfront-keyvaluestore:DescribeKeyValueStore',
  'cloudfront-keyvaluestore:ListKeys',
  'cloudfront-keyvaluestore:UpdateKeys',
] as const;

/**
 * A function's log group `<id>Logs` (deleted with the stack) and role `<id>Role`, which may write to that group
 * only (statement `OwnLogs`; no AWS managed policy).
 */
function ownLogsAndRole(stack: Stack, id: string, description: string) {
  const logGroup = new logs.LogGroup(stack, `${id}Logs`, {
    retention: logs.RetentionDays.THREE_MONTHS,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(stack, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description,
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'OwnLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  return { logGroup, role };
}

/** The release's handler may run this long: its deadline, then the time it keeps to remove its keys and answer. */
export const RELEASE_TIMEOUT = Duration.seconds((RELEASE_DEADLINE_MS + RELEASE_RESERVE_MS) / 1000);

/**
 * Adds the release: its handler (role, log group), the provider framework's function (its own role and log
 * group), and the custom resource, which depends on both functions. The caller makes whatever needs a LIVE
 * function depend on the returned resource.
 */
export function addFunctionRelease(stack: Stack, props: FunctionReleaseProps): CustomResource {
  const functionArns = props.functions.map(({ fn }) => fn.functionArn);
  const { logGroup, role } = ownLogsAndRole(
    stack,
    'FunctionRelease',
    'Catalog release: test and publish the two gateway functions, its own keys in the store, its own log group',
  );
  const statements: [sid: string, actions: readonly string[], resources: string[]][] = [
    ['GatewayFunctions', RELEASE_FUNCTION_ACTIONS, functionArns],
    ['ReleaseKeys', RELEASE_STORE_ACTIONS, [props.keyValueStore.keyValueStoreArn]],
  ];
  for (const [sid, actions, resources] of statements)
    role.addToPolicy(new iam.PolicyStatement({ sid, actions: [...actions], resources }));

  const handler = new NodejsFunction(stack, 'FunctionReleaseHandler', {
    description: `Training plan catalog: verifies the gateway functions' DEVELOPMENT stage, then publishes it (${RELEASE_BUNDLE.entry})`,
    entry: join(props.root, RELEASE_BUNDLE.entry),
    handler: RELEASE_BUNDLE.handler,
    projectRoot: props.root,
    depsLockFilePath: join(props.root, 'package-lock.json'),
    runtime: props.runtime,
    architecture: lambda.Architecture.ARM_64,
    memorySize: 256,
    timeout: RELEASE_TIMEOUT,
    role,
    logGroup,
    bundling: props.bundling,
  });

  // The provider framework's function: its own role and log group (no AWS managed policy).
  const framework = ownLogsAndRole(
    stack,
    'FunctionReleaseProvider',
    'Catalog release: the provider framework calls the release handler and answers CloudFormation',
  );
  const provider = new cr.Provider(stack, 'FunctionReleaseProvider', {
    onEventHandler: handler,
    frameworkOnEventRole: framework.role,
    logGroup: framework.logGroup,
  });

  const release = new CustomResource(stack, 'FunctionRelease', {
    serviceToken: provider.serviceToken,
    resourceType: 'Custom::FunctionRelease',
    properties: {
      Functions: props.functions.map(({ fn, kind, code }) => ({
        Name: fn.functionName,
        Kind: kind,
        CodeSha256: createHash('sha256').update(code).digest('hex'),
      })),
      KeyValueStoreArn: props.keyValueStore.keyValueStoreArn,
      Publish: String(props.publish),
    },
  });
  for (const { fn } of props.functions) release.node.addDependency(fn);
  return release;
}
