/**
 * The usage records (docs/decisions.md#usage): CloudFront standard logging (v2) of exactly the fields `catalog
 * usage` reads to a log group in us-east-1 (the stack, or its companion), and the dashboard widgets counting
 * them. The group outlives the stack; its name holds the id of the stack's creation, so a stack created again
 * never meets the group it kept.
 */

import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Aws, CfnOutput, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { EDGE_REGION, LOG_REASONS, LogValue } from '../contract/index.ts';
import type { Monitoring } from './monitoring.ts';
import { fitName } from './names.ts';
import type { StackSettings } from './props.ts';

/**
 * The fields of a record, exactly these in this order: when, the answer (status, bytes, time taken), the cache
 * result and the edge location, and what the viewer-request function recorded.
 */
/** The stack's output naming the usage log group (`catalog --deployment` reads it; the companion too). */
export const USAGE_LOG_GROUP_OUTPUT = 'UsageLogGroupName';

const RECORD_FIELDS =
  'date time sc-status sc-bytes time-taken x-edge-result-type x-edge-location viewer-request-log-data';

/**
 * Adds the usage records when `usageLogging` is on: the delivery of the distribution's records to their log
 * group in us-east-1, and the widgets on the stack's dashboard.
 */
export function addUsageLogs(
  stack: Stack,
  parts: { readonly distributionId: string; readonly monitoring: Monitoring },
  settings: Pick<StackSettings, 'usageLogging' | 'usageLogRetentionDays'>,
): void {
  if (!settings.usageLogging) return;
  // `/aws/vendedlogs/<stack>/usage/` and the id CloudFormation gave this creation of the stack.
  const logGroupName = Fn.join('', [
    `/aws/vendedlogs/${stack.stackName}/usage/`,
    Fn.select(2, Fn.split('/', stack.stackId)),
  ]);
  const output = new CfnOutput(stack, USAGE_LOG_GROUP_OUTPUT, {
    value: logGroupName,
    description: 'The usage records: catalog usage --log-group <this> (in us-east-1)',
  });
  // The delivery lives in us-east-1: the stack, or its companion when it has one, which reads the finished name
  // from the stack's output (one Fn::GetStackOutput, nothing nested in it), once the stack is deployed.
  const edge = parts.monitoring.edgeStack;
  const usage = new Construct(edge ?? stack, 'UsageLogs');
  const usageStack = Stack.of(usage);
  if (edge) edge.addDependency(stack, 'it reads the usage log group name from its output');
  const group = new logs.LogGroup(usage, 'Group', {
    logGroupName: edge ? Fn.getStackOutput(stack.stackName, output.node.id, stack.region) : logGroupName,
    retention: settings.usageLogRetentionDays as logs.RetentionDays,
    // The records answer who used a key; deleting the stack should not delete them before their retention.
    // A failed create's rollback deletes the group (it holds nothing yet).
    removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
  });
  // Names in this region's account-wide namespaces, from the stack's name (delivery names: at most 60).
  const name = (suffix: string, max: number) => fitName(usageStack.stackName, max, `-usage-${suffix}`);
  // The log delivery service writes the records, for deliveries of this account only.
  const policy = new logs.ResourcePolicy(usage, 'DeliveryPolicy', {
    resourcePolicyName: name('delivery', 255),
    policyStatements: [
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('delivery.logs.amazonaws.com')],
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [group.logGroupArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:*` },
        },
      }),
    ],
  });
  const source = new logs.CfnDeliverySource(usage, 'Source', {
    name: name('source', 60),
    logType: 'ACCESS_LOGS',
    resourceArn: usageStack.formatArn({
      service: 'cloudfront',
      region: '',
      resource: 'distribution',
      resourceName: parts.distributionId,
    }),
  });
  const destination = new logs.CfnDeliveryDestination(usage, 'Destination', {
    name: name('destination', 60),
    destinationResourceArn: group.logGroupArn,
    outputFormat: 'json',
  });
  // As CDK's own delivery constructs do: the first records find the policy in place, and a delete removes the
  // delivery before the policy (without it the service may write a policy of its own that outlives the stack).
  destination.node.addDependency(policy);
  const delivery = new logs.CfnDelivery(usage, 'Delivery', {
    deliverySourceName: source.name,
    deliveryDestinationArn: destination.attrArn,
    recordFields: RECORD_FIELDS.split(' '),
  });
  delivery.addResourceDependency(source);
  // Logs Insights, one line per command (the widget joins them with `|`), hourly.
  const widget = (title: string, queryLines: string[]) =>
    new cloudwatch.LogQueryWidget({
      title,
      logGroupNames: [logGroupName],
      region: EDGE_REGION,
      queryLines,
      view: cloudwatch.LogQueryVisualizationType.LINE,
      width: 12,
      height: 6,
    });
  const unnamed = [...LOG_REASONS, LogValue.Page].map((value) => `"${value}"`).join(', ');
  parts.monitoring.dashboard.addWidgets(
    // A refusal naming a partner counts for it.
    widget('Requests per partner (hourly)', [
      'fields `viewer-request-log-data` as data',
      'parse data /^(?<partner>[a-z0-9-]+)/',
      `filter ispresent(partner) and partner not in [${unnamed}]`,
      'stats count(*) as requests by bin(1h), partner',
    ]),
    // `acme.expired-key` counts as expired-key.
    widget('401s per reason (hourly)', [
      'fields `viewer-request-log-data` as data, `sc-status` as status',
      'filter status = 401',
      'parse data /(?<reason>[a-z-]+)$/',
      'stats count(*) as refusals by bin(1h), reason',
    ]),
  );
}
