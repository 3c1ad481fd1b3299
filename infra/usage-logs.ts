/**
 * The usage records (docs/decisions.md#usage): CloudFront standard logging (v2) of exactly the fields `catalog
 * usage` reads to a log group in us-east-1 (the stack, or its companion), and the dashboard widgets counting
 * them. The group outlives the stack; its name holds the id of the stack's creation, so a stack created again
 * never meets the group it kept.
 */

import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { EDGE_REGION, LOG_REASONS, LogValue, MONITORING_PARTNER } from '../contract/index.ts';
import { METRICS_NAMESPACE } from '../contract/metrics.ts';
import type { Monitoring } from './monitoring.ts';
import { accountWideName, fitName } from './names.ts';
import type { StackSettings } from './props.ts';

/** The stack's output naming the usage log group (`catalog --deployment` reads it; the companion too). */
export const USAGE_LOG_GROUP_OUTPUT = 'UsageLogGroupName';
/** The stack's output holding the distribution's ARN, whole: the companion's delivery source reads it. */
export const DISTRIBUTION_ARN_OUTPUT = 'DistributionArn';

/**
 * The fields of a record, exactly these in this order: when, the answer (status, bytes, time taken), the cache
 * result and the edge location, and what the viewer-request function recorded.
 */
export const RECORD_FIELDS = [
  'date',
  'time',
  'sc-status',
  'sc-bytes',
  'time-taken',
  'x-edge-result-type',
  'x-edge-location',
  'viewer-request-log-data',
] as const;

// Partner traffic, as two metric filters on the usage log group count it (CloudWatch Logs filter pattern syntax
// for JSON records: a property whose name holds a hyphen is selected as `$.['name']`; a quoted value may end in
// the wildcard `*`). A record is a partner's unless the function recorded it under the monitoring partner (its
// key, or the canary's marker holding it: `monitoring`, `monitoring.<reason>`); a record with nothing recorded
// (`-`: openapi.yaml, a preflight, CloudFront's or the rate limit's own answers) is traffic too. A 4xx is told by
// its status, written as text ("401") or, should a record carry it as a number, as a number.
const DATA = "$.['viewer-request-log-data']";
const STATUS = "$.['sc-status']";
const PARTNERS = `${DATA} != "${MONITORING_PARTNER}" && ${DATA} != "${MONITORING_PARTNER}${LogValue.Separator}*"`;
const CLIENT_ERROR = `(${STATUS} = "4*" || (${STATUS} >= 400 && ${STATUS} <= 499))`;

/** The metric filters of the partner traffic: each metric's name and the records it counts (1 each). */
export const PARTNER_TRAFFIC = {
  requests: { metricName: 'PartnerRequests', filterPattern: `{ ${PARTNERS} }` },
  clientErrors: { metricName: 'PartnerClientErrors', filterPattern: `{ ${PARTNERS} && ${CLIENT_ERROR} }` },
} as const;

/**
 * The namespace of a deployment's partner traffic metrics (a metric filter cannot add a fixed dimension, so
 * the deployment is in the namespace: `TrainingPlanCatalog/<stack>`, with the region outside us-east-1).
 */
export function partnerTrafficNamespace(stack: Stack): string {
  return `${METRICS_NAMESPACE}/${accountWideName(stack, '', 200)}`;
}

/**
 * The percent of the partners' requests answered 4xx, per 5 minutes, from the usage records of `stack`'s
 * distribution (the deployment's own checks left out): the `Edge4xxAnomaly` alarm's input with `usageLogging`
 * (read from `region` when given: the dashboard's). No partner request in a period: no value.
 */
export function partnerClientErrorRate(stack: Stack, region?: string): cloudwatch.MathExpression {
  const period = Duration.minutes(5);
  const metric = (name: keyof typeof PARTNER_TRAFFIC) =>
    new cloudwatch.Metric({
      namespace: partnerTrafficNamespace(stack),
      metricName: PARTNER_TRAFFIC[name].metricName,
      statistic: cloudwatch.Stats.SUM,
      period,
      ...(region ? { region } : {}),
    });
  return new cloudwatch.MathExpression({
    expression: '100 * FILL(errors, 0) / requests',
    usingMetrics: { errors: metric('clientErrors'), requests: metric('requests') },
    period,
    label: "partners' 4xx rate (%)",
  });
}

/**
 * Adds the usage records when `usageLogging` is on: the delivery of the distribution's records to their log
 * group in us-east-1, and the widgets on the stack's dashboard.
 */
export function addUsageLogs(
  stack: Stack,
  parts: { readonly distributionArn: string; readonly monitoring: Monitoring },
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
  // and the distribution's ARN from the stack's outputs (each one Fn::GetStackOutput, nothing nested in it), once
  // the stack is deployed.
  const edge = parts.monitoring.edgeStack;
  const usage = new Construct(edge ?? stack, 'UsageLogs');
  const usageStack = Stack.of(usage);
  const fromStack = (outputName: string) => Fn.getStackOutput(stack.stackName, outputName, stack.region);
  if (edge)
    edge.addStackDependency(
      stack,
      "it reads the usage log group name and the distribution's ARN from its outputs",
    );
  const group = new logs.LogGroup(usage, 'Group', {
    logGroupName: edge ? fromStack(output.node.id) : logGroupName,
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
    resourceArn: edge ? fromStack(DISTRIBUTION_ARN_OUTPUT) : parts.distributionArn,
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
    recordFields: [...RECORD_FIELDS],
  });
  delivery.addResourceDependency(source);
  // The partner traffic the 4xx alarm reads (infra/monitoring.ts): its metrics are in the group's region.
  for (const [name, { metricName, filterPattern }] of Object.entries(PARTNER_TRAFFIC))
    new logs.MetricFilter(usage, `Partner${name.charAt(0).toUpperCase()}${name.slice(1)}`, {
      logGroup: group,
      filterPattern: logs.FilterPattern.literal(filterPattern),
      metricNamespace: partnerTrafficNamespace(stack),
      metricName,
      metricValue: '1',
      unit: cloudwatch.Unit.COUNT,
    });
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
    // `acme.expired-key` counts as expired-key; the deployment's own checks' refusals are theirs, not shown.
    widget("Partners' 401s per reason (hourly)", [
      'fields `viewer-request-log-data` as data, `sc-status` as status',
      `filter status = 401 and data not like /^${MONITORING_PARTNER}([.]|$)/`,
      'parse data /(?<reason>[a-z-]+)$/',
      'stats count(*) as refusals by bin(1h), reason',
    ]),
  );
}
