/**
 * The usage records (docs/decisions.md#usage): CloudFront standard logging (v2) from the distribution to a
 * CloudWatch Logs group — a delivery source for the distribution, a delivery destination for the group and a
 * delivery naming exactly the record fields `catalog usage` reads — and the dashboard widgets that count them.
 * Kept in us-east-1 with CloudFront's other regional parts: in the stack when it is there (or has no region),
 * else in its us-east-1 companion (infra/monitoring.ts). The group is kept when the stack goes; its name holds
 * the id of the stack's creation, so a stack created again (after a failed first deploy's rollback, or a
 * delete) never meets the group it kept. The stack computes the name, so its dashboard and its output
 * `UsageLogGroupName` name the group wherever the group is.
 */

import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Aws, CfnOutput, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { LOG_REASONS, LogValue } from '../contract/index.ts';
import type { Monitoring } from './monitoring.ts';
import { EDGE_REGION, fitName } from './names.ts';
import type { StackSettings } from './props.ts';

/**
 * The record fields delivered, in this order, and nothing else: when (date, time), the answer (status, bytes
 * sent, time taken), the cache result and the edge location, and what the viewer-request function recorded.
 */
export const USAGE_LOG_FIELDS = [
  'date',
  'time',
  'sc-status',
  'sc-bytes',
  'time-taken',
  'x-edge-result-type',
  'x-edge-location',
  'viewer-request-log-data',
] as const;

/**
 * The log group of a stack's usage records (stack output UsageLogGroupName): `/aws/vendedlogs/<stack>/usage/`
 * and the id CloudFormation gave this creation of the stack (the last part of its stack id).
 */
export function usageLogGroupName(stack: Stack): string {
  return Fn.join('', [
    `/aws/vendedlogs/${stack.stackName}/usage/`,
    Fn.select(2, Fn.split('/', stack.stackId)),
  ]);
}

/** Logs Insights, one line per command (the widget joins them with `|`): requests per partner over time (a refusal naming a partner counts for it). */
export const PARTNER_REQUESTS_QUERY = [
  'fields `viewer-request-log-data` as data',
  'parse data /^(?<partner>[a-z0-9-]+)/',
  `filter ispresent(partner) and partner not in [${[...LOG_REASONS, LogValue.Page].map((v) => `"${v}"`).join(', ')}]`,
  'stats count(*) as requests by bin(1h), partner',
];

/** Logs Insights: 401s per reason over time (`acme.expired-key` counts as expired-key). */
export const UNAUTHORIZED_REASONS_QUERY = [
  'fields `viewer-request-log-data` as data, `sc-status` as status',
  'filter status = 401',
  'parse data /(?<reason>[a-z-]+)$/',
  'stats count(*) as refusals by bin(1h), reason',
];

export interface UsageLogsProps {
  /** The distribution's id (its ARN is built from it, in this stack's account). */
  readonly distributionId: string;
  /** The log group's name ({@link usageLogGroupName} of the stack the distribution is in). */
  readonly logGroupName: string;
  /** Days the group keeps its records. */
  readonly retentionDays: number;
}

/** The delivery of the distribution's usage records to their log group. */
export class UsageLogs extends Construct {
  readonly logGroup: logs.LogGroup;
  readonly delivery: logs.CfnDelivery;

  constructor(scope: Construct, id: string, props: UsageLogsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.logGroup = new logs.LogGroup(this, 'Group', {
      logGroupName: props.logGroupName,
      retention: props.retentionDays as logs.RetentionDays,
      // The records answer who used a key; deleting the stack should not delete them before their retention.
      // A failed create's rollback deletes the group (it holds nothing yet).
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
    // Names in this region's account-wide namespaces, from the stack's name (delivery names: at most 60).
    const name = (suffix: string, max: number) => fitName(stack.stackName, max, `-usage-${suffix}`);
    // The log delivery service writes the records, for deliveries of this account only.
    new logs.ResourcePolicy(this, 'DeliveryPolicy', {
      resourcePolicyName: name('delivery', 255),
      policyStatements: [
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('delivery.logs.amazonaws.com')],
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [this.logGroup.logGroupArn],
          conditions: {
            StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
            ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:*` },
          },
        }),
      ],
    });
    const source = new logs.CfnDeliverySource(this, 'Source', {
      name: name('source', 60),
      logType: 'ACCESS_LOGS',
      resourceArn: stack.formatArn({
        service: 'cloudfront',
        region: '',
        resource: 'distribution',
        resourceName: props.distributionId,
      }),
    });
    const destination = new logs.CfnDeliveryDestination(this, 'Destination', {
      name: name('destination', 60),
      destinationResourceArn: this.logGroup.logGroupArn,
      outputFormat: 'json',
    });
    this.delivery = new logs.CfnDelivery(this, 'Delivery', {
      deliverySourceName: source.name,
      deliveryDestinationArn: destination.attrArn,
      recordFields: [...USAGE_LOG_FIELDS],
    });
    this.delivery.addResourceDependency(source);
  }
}

/** The dashboard row of the usage records: requests per partner, 401s per reason, over time. */
export function usageWidgets(logGroupName: string, region: string): cloudwatch.IWidget[] {
  const widget = (title: string, queryLines: string[]) =>
    new cloudwatch.LogQueryWidget({
      title,
      logGroupNames: [logGroupName],
      region,
      queryLines,
      view: cloudwatch.LogQueryVisualizationType.LINE,
      width: 12,
      height: 6,
    });
  return [
    widget('Requests per partner (hourly)', PARTNER_REQUESTS_QUERY),
    widget('401s per reason (hourly)', UNAUTHORIZED_REASONS_QUERY),
  ];
}

/**
 * Adds the usage records when `usageLogging` is on: the delivery in us-east-1 (the stack, or its companion
 * when it has one) and the widgets on the stack's dashboard.
 */
export function addUsageLogs(
  stack: Stack,
  parts: { readonly distributionId: string; readonly monitoring: Monitoring },
  settings: Pick<StackSettings, 'usageLogging' | 'usageLogRetentionDays'>,
): UsageLogs | undefined {
  if (!settings.usageLogging) return undefined;
  const logGroupName = usageLogGroupName(stack);
  const usage = new UsageLogs(parts.monitoring.edgeStack ?? stack, 'UsageLogs', {
    distributionId: parts.distributionId,
    logGroupName,
    retentionDays: settings.usageLogRetentionDays,
  });
  parts.monitoring.dashboard.addWidgets(...usageWidgets(logGroupName, EDGE_REGION));
  new CfnOutput(stack, 'UsageLogGroupName', {
    value: logGroupName,
    description: 'The usage records: catalog usage --log-group <this> (in us-east-1)',
  });
  return usage;
}
