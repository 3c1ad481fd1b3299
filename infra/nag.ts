/**
 * The cdk-nag (AwsSolutions pack) findings this stack accepts, each on the one construct it is about, with the
 * reason a reviewer needs: any other finding fails every synth. Add one only with such a reason; else fix it.
 */
import { type CfnElement, type Stack, Validations } from 'aws-cdk-lib/core';
import { AwsCustomResource } from 'aws-cdk-lib/custom-resources';
import type { IConstruct } from 'constructs';
import type { StackSettings } from './props.ts';

/** The stack's parts that findings are about (the stack's own fields). */
interface NaggedParts extends Stack {
  readonly bucket: IConstruct;
  readonly distribution: IConstruct;
  readonly builder: IConstruct;
  readonly builderFailures: IConstruct;
  readonly canary: IConstruct | undefined;
}

/** The construct id of CDK's SDK-call function (infra/stack.ts puts the error pages and starts the canary with it). */
const ERROR_PAGES_FUNCTION = `AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replaceAll('-', '')}`;

const logicalIdOf = (stack: Stack, construct: IConstruct) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** The child of `scope` with this id (the error names it when CDK renamed it). */
function child(scope: IConstruct, id: string): IConstruct {
  const found = scope.node.tryFindChild(id);
  if (!found)
    throw new Error(`infra/nag.ts: no construct ${scope.node.path}/${id} to acknowledge a finding on`);
  return found;
}

/**
 * Acknowledges the findings this configuration of the stack accepts, each on its construct: the rule (with its
 * finding id where the rule has several), and why.
 */
export function acknowledgeFindings(of: Stack, settings: StackSettings): void {
  const stack = of as NaggedParts;
  const accept = (construct: IConstruct, id: string, reason: string) =>
    Validations.of(construct).acknowledge({ id, reason });
  accept(
    stack.distribution,
    'AwsSolutions-CFR1',
    'Partners call from servers anywhere; access is by API key, so there is no country to refuse.',
  );
  accept(
    stack.distribution,
    'AwsSolutions-CFR7',
    'The catalog uses OAC; plan pages use an identity on purpose: it may list, so a missing page is a 404 (the not-found page), not the 500.',
  );
  accept(
    stack.bucket,
    'AwsSolutions-S1',
    'Only CloudFront (through OAC) and the builder touch the origin; CloudFront access logs (accessLogging) and CloudTrail record those reads and writes.',
  );
  accept(
    child(stack.builderFailures, 'Resource'),
    'AwsSolutions-SQS3',
    "This queue is itself the dead end: the builder's failed invocations land here to be read (and alarmed on); a queue behind it would only move them.",
  );
  accept(
    child(child(stack, 'BuilderRole'), 'DefaultPolicy'),
    `AwsSolutions-IAM5[Resource::<${logicalIdOf(stack, stack.bucket)}.Arn>/*]`,
    'The builder writes each build under a new generated key prefix in this one bucket; the wildcard is limited to the objects of the origin bucket.',
  );
  accept(
    child(child(stack, ERROR_PAGES_FUNCTION), 'ServiceRole'),
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    "CDK's SDK-call function runs only at deploy, to put the two error pages (and start the canary's full run); AWS's basic policy lets it write its logs.",
  );
  accept(
    child(child(stack, 'FunctionReleaseProviderRole'), 'DefaultPolicy'),
    `AwsSolutions-IAM5[Resource::<${logicalIdOf(stack, child(stack, 'FunctionReleaseHandler'))}.Arn>:*]`,
    "CDK's provider framework may invoke the release handler's versions and aliases (ARN:*); it is still the one function, which runs only at deploy.",
  );
  // CDK makes one scheduler role per target function (the builder's, the canary's).
  const invoked = [stack.builder, ...(stack.canary ? [stack.canary] : [])];
  for (const schedulerRole of stack.node.children.filter((c) =>
    c.node.id.startsWith('SchedulerRoleForTarget-'),
  ))
    for (const fn of invoked)
      accept(
        child(schedulerRole, 'DefaultPolicy'),
        `AwsSolutions-IAM5[Resource::<${logicalIdOf(stack, fn)}.Arn>:*]`,
        "CDK's scheduler target may invoke its function's versions and aliases (ARN:*); it is still the one function (the builder, or the canary).",
      );
  if (settings.rateLimitPerKey === undefined)
    accept(
      stack.distribution,
      'AwsSolutions-CFR2',
      'WAF is optional (rateLimitPerKey): the viewer-request function refuses requests without a valid key before the origin, and WAF costs a fixed monthly fee.',
    );
  if (!settings.accessLogging)
    accept(
      stack.distribution,
      'AwsSolutions-CFR3',
      'Access logs are opt-in (accessLogging) to keep viewer IP addresses out of storage by default; the alarms watch CloudFront metrics instead.',
    );
  else if (!settings.accessLogBucketName)
    accept(
      child(stack, 'AccessLogs'),
      'AwsSolutions-S1',
      'This bucket receives the access logs; logging its own access would log the logging.',
    );
  if (!settings.domainName)
    accept(
      stack.distribution,
      'AwsSolutions-CFR4',
      'Without a custom domain the *.cloudfront.net certificate decides the TLS floor; with domainName the stack sets TLSv1.2_2021.',
    );
  const secret = stack.node.tryFindChild('SourceSecret');
  if (secret)
    accept(
      secret,
      'AwsSolutions-SMG4',
      "The secret holds a credential issued by the source's owner, rotated there; the builder reads the secret afresh on every run.",
    );
  if (settings.vpcId !== undefined)
    accept(
      child(stack, 'BuilderRole'),
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      "AWS's managed policy for the network interfaces Lambda creates in a VPC; it grants nothing on the catalog's data.",
    );
}
