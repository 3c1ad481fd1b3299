/**
 * The stack's alarms and its dashboard: the builder's metrics (named in contract/metrics.ts, written by the
 * builder as embedded-metric-format log lines in the stack's region, with its function's name as a dimension,
 * so two deployments in one region each watch their own) and CloudFront's (distribution and function
 * metrics, published ONLY in us-east-1 with the dimension `Region=Global`).
 *
 * A CloudWatch alarm watches metrics of its own region only, so the edge alarms must live in us-east-1:
 * - a stack deployed in us-east-1 holds every alarm;
 * - a stack with an explicit other region (the CLI's, or `env`) keeps the builder alarms and the dashboard,
 *   and a companion stack `<stack>-edge-<region>` in us-east-1 holds the edge alarms, with its own topic
 *   unless `alarmTopicArn` is in us-east-1 (it reads the distribution id from the stack's outputs);
 * - a stack without a region (synthesized without credentials) holds every alarm.
 * Every template carries a rule refusing a deploy outside the region it was made for (us-east-1 for a stack
 * without a region), before anything is created. The dashboard reads CloudFront's metrics from us-east-1
 * wherever it is.
 */

import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Aws, CfnOutput, CfnRule, Duration, Fn, Stack, type StackProps, Token } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';
import { DISCIPLINES } from '../contract/index.ts';
import {
  METRICS,
  METRICS_FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  plansMetric,
} from '../contract/metrics.ts';
import { accountWideName, EDGE_REGION, inEdgeRegion } from './names.ts';
import type { StackSettings } from './props.ts';

/** The thresholds of the alarms that are not settings (infra/README.md explains each). */
export const ALARM_THRESHOLDS = {
  /** Percent of viewer requests answered 5xx, every minute for five minutes. */
  edge5xxPercent: 1,
  edge5xxMinutes: 5,
  /** Width of the 4xx rate's expected band, in standard deviations; three 5-minute periods above it. */
  edge4xxStdDevs: 3,
  edge4xxPeriods: 3,
  /** Average compute utilization of a function, three 5-minute periods above it (CloudFront throttles above). */
  functionComputePercent: 70,
  functionComputePeriods: 3,
} as const;

/** The name of the us-east-1 companion of the stack `stackName` in `region`. */
export function edgeStackName(stackName: string, region: string): string {
  return `${stackName}-edge-${region}`;
}

/**
 * The stack's own props, adjusted: a stack with an explicit region other than us-east-1 shares the distribution
 * id with its edge companion through CDK's cross-region references.
 */
export function withEdgeReferences<P extends StackProps>(props: P): P {
  const region = props.env?.region;
  const companion = region !== undefined && !Token.isUnresolved(region) && region !== EDGE_REGION;
  return companion ? { ...props, crossRegionReferences: true } : props;
}

/** What the alarms and the dashboard watch. */
export interface MonitoredParts {
  readonly distribution: cloudfront.IDistribution;
  /** The CloudFront Functions, each with the construct id its alarms are named after (`ViewerRequest`). */
  readonly functions: readonly { readonly id: string; readonly fn: cloudfront.IFunction }[];
  readonly builder: lambda.IFunction;
  /** The queue of the builder's failed asynchronous invocations. */
  readonly builderFailures: sqs.IQueue;
  /** The per-key rate limit's web ACL name, when there is one (its blocked requests go on the dashboard). */
  readonly webAclName?: string;
}

/** The alarms, the topic they notify and the dashboard, as built. */
export interface Monitoring {
  readonly topic: sns.ITopic;
  /** Every alarm of the stack (the edge alarms too unless they are in the companion stack). */
  readonly alarms: readonly cloudwatch.Alarm[];
  readonly dashboard: cloudwatch.Dashboard;
  /** The us-east-1 companion holding the edge alarms, for a stack in another region. */
  readonly edgeStack?: CatalogEdgeStack;
}

/** A metric of this deployment's builder (contract/metrics.ts), in the stack's region. */
export function builderMetric(
  builder: lambda.IFunction,
  name: keyof typeof METRICS,
  statistic: string,
  period: Duration,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: METRICS[name].name,
    dimensionsMap: { service: METRICS_SERVICE, [METRICS_FUNCTION_DIMENSION]: builder.functionName },
    statistic,
    period,
  });
}

/** A CloudFront metric of one dimension (`DistributionId` or `FunctionName`) and `Region=Global`. */
function cloudFrontMetric(
  dimension: 'DistributionId' | 'FunctionName',
  value: string,
  metricName: string,
  statistic: string,
  period: Duration,
  region?: string,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/CloudFront',
    metricName,
    dimensionsMap: { [dimension]: value, Region: 'Global' },
    statistic,
    period,
    ...(region ? { region } : {}),
  });
}

/** A distribution metric (`AWS/CloudFront`, `DistributionId` and `Region=Global`). */
export function distributionMetric(
  distributionId: string,
  metricName: string,
  statistic: string,
  period: Duration,
  region?: string,
): cloudwatch.Metric {
  return cloudFrontMetric('DistributionId', distributionId, metricName, statistic, period, region);
}

/** A CloudFront Functions metric (`AWS/CloudFront`, `FunctionName` and `Region=Global`). */
export function functionMetric(
  functionName: string,
  metricName: string,
  statistic: string,
  period: Duration,
  region?: string,
): cloudwatch.Metric {
  return cloudFrontMetric('FunctionName', functionName, metricName, statistic, period, region);
}

/** Notifies the topic on ALARM and on OK. */
function notify(alarm: cloudwatch.Alarm, topic: sns.ITopic): cloudwatch.Alarm {
  const action = new cloudwatchActions.SnsAction(topic);
  alarm.addAlarmAction(action);
  alarm.addOkAction(action);
  return alarm;
}

/** The topic every alarm of this stack notifies: the given one, or a new `AlarmTopic`. */
function alarmTopic(stack: Stack, settings: StackSettings): sns.ITopic {
  if (settings.alarmTopicArn)
    return sns.Topic.fromTopicArn(stack, 'AlarmTopicImport', settings.alarmTopicArn);
  const topic = new sns.Topic(stack, 'AlarmTopic', {
    displayName: 'Training plan catalog alarms',
    enforceSSL: true,
  });
  new CfnOutput(stack, 'AlarmTopicArn', {
    value: topic.topicArn,
    description: 'Subscribe to the alarms: aws sns subscribe --topic-arn … --protocol email',
  });
  return topic;
}

/**
 * The builder's alarms: any failed invocation; any message in the failure queue (an asynchronous run that
 * failed, timed out, was throttled or waited too long, or a scheduled delivery the scheduler gave up on); no
 * good run within two schedule periods; the live catalog older than `catalogAgeAlarmSeconds`.
 */
function builderAlarms(stack: Stack, parts: MonitoredParts, settings: StackSettings, topic: sns.ITopic) {
  const rate = Duration.minutes(settings.buildRateMinutes);
  const errors = new cloudwatch.Alarm(stack, 'BuilderErrors', {
    alarmDescription:
      'A catalog build failed (source, invalid rows, a guard, upload or pointer move): the live catalog is unchanged. See the builder log; runbook "the builder keeps failing" in infra/README.md.',
    metric: parts.builder.metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const failedInvocations = new cloudwatch.Alarm(stack, 'BuilderFailedInvocations', {
    alarmDescription:
      'A builder invocation failed and went to the failure queue (an error, a timeout, throttling, or too old to run): read its message for the request and the error. Runbook "the builder keeps failing" in infra/README.md.',
    metric: parts.builderFailures.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(5),
      statistic: cloudwatch.Stats.MAXIMUM,
    }),
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const noRun = new cloudwatch.Alarm(stack, 'NoSuccessfulRun', {
    alarmDescription: `No good builder run in two schedule periods (2 × ${rate.toHumanString()}): runs failed without one succeeding, or the builder did not run at all. The catalog is not being refreshed. Runbook "the catalog is stale" in infra/README.md.`,
    metric: goodRuns(parts.builder, rate, settings.scheduleEnabled),
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    // A schedule that stops firing leaves no data at all: that must alarm, unless the schedule is off on purpose.
    treatMissingData: settings.scheduleEnabled
      ? cloudwatch.TreatMissingData.BREACHING
      : cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const age = new cloudwatch.Alarm(stack, 'CatalogAgeHigh', {
    alarmDescription: `The live catalog is older than ${Duration.seconds(settings.catalogAgeAlarmSeconds).toHumanString()} (pinned, or nothing published). Runbook "the catalog is stale" in infra/README.md.`,
    metric: builderMetric(parts.builder, 'catalogAge', cloudwatch.Stats.MAXIMUM, rate),
    threshold: settings.catalogAgeAlarmSeconds,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    // Runs that stop are the no-successful-run alarm's business; this one keeps its state meanwhile.
    treatMissingData: cloudwatch.TreatMissingData.IGNORE,
  });
  return [errors, failedInvocations, noRun, age].map((alarm) => notify(alarm, topic));
}

/**
 * Per schedule period, 0 when the builder's runs failed without one succeeding, or when it did not run at all
 * while the schedule is on; else at least 1. A run that neither succeeds nor fails (another run held the lock,
 * or the source is not configured yet) is a good one: a fresh deployment whose source secret still holds its
 * placeholder raises no alarm, while a schedule that stopped does. A run's success may land in the period
 * after its invocation, so either counts.
 */
function goodRuns(builder: lambda.IFunction, rate: Duration, scheduleEnabled: boolean): cloudwatch.IMetric {
  const sum = cloudwatch.Stats.SUM;
  return new cloudwatch.MathExpression({
    expression: `IF(FILL(failed, 0) > 0 AND FILL(succeeded, 0) == 0, 0, IF(FILL(runs, 0) + FILL(succeeded, 0) > 0, 1, ${scheduleEnabled ? 0 : 1}))`,
    usingMetrics: {
      runs: builder.metricInvocations({ statistic: sum, period: rate }),
      succeeded: builderMetric(builder, 'runSucceeded', sum, rate),
      failed: builderMetric(builder, 'runFailed', sum, rate),
    },
    period: rate,
    label: 'good runs',
  });
}

/**
 * The edge alarms, in a stack of us-east-1 (or of no region, refused elsewhere): 5xx rate, 4xx rate far above
 * its usual band, and per function execution errors, throttles and compute utilization.
 */
function edgeAlarms(
  scope: Stack,
  distributionId: string,
  functions: readonly { readonly id: string; readonly functionName: string }[],
  topic: sns.ITopic,
): cloudwatch.Alarm[] {
  const t = ALARM_THRESHOLDS;
  const alarms: cloudwatch.Alarm[] = [
    new cloudwatch.Alarm(scope, 'Edge5xxRate', {
      alarmDescription: `More than ${t.edge5xxPercent}% of requests answered 5xx for ${t.edge5xxMinutes} minutes (origin objects missing, origin failing, or a function error). Check catalog status and the function alarms.`,
      metric: distributionMetric(
        distributionId,
        '5xxErrorRate',
        cloudwatch.Stats.AVERAGE,
        Duration.minutes(1),
      ),
      threshold: t.edge5xxPercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: t.edge5xxMinutes,
      datapointsToAlarm: t.edge5xxMinutes,
      // No requests, no data: nothing is failing.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    new cloudwatch.AnomalyDetectionAlarm(scope, 'Edge4xxAnomaly', {
      alarmDescription:
        'The 4xx rate is far above its usual band: a broken or emptied key store answers 401 to everyone, a partner lost its key, or the rate limit blocks. Check catalog status and keys list.',
      metric: distributionMetric(
        distributionId,
        '4xxErrorRate',
        cloudwatch.Stats.AVERAGE,
        Duration.minutes(5),
      ),
      stdDevs: t.edge4xxStdDevs,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_UPPER_THRESHOLD,
      evaluationPeriods: t.edge4xxPeriods,
      datapointsToAlarm: t.edge4xxPeriods,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
  ];
  for (const { id, functionName } of functions) {
    alarms.push(
      new cloudwatch.Alarm(scope, `${id}ExecutionErrors`, {
        alarmDescription: `The CloudFront Function ${functionName} failed to run (an exception): those requests got CloudFront's 5xx. Test it with catalog verify-function; roll back the deploy.`,
        metric: functionMetric(
          functionName,
          'FunctionExecutionErrors',
          cloudwatch.Stats.SUM,
          Duration.minutes(5),
        ),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(scope, `${id}Throttles`, {
        alarmDescription: `CloudFront throttled the function ${functionName} (compute budget exceeded): those requests failed.`,
        metric: functionMetric(functionName, 'FunctionThrottles', cloudwatch.Stats.SUM, Duration.minutes(5)),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(scope, `${id}ComputeUtilization`, {
        alarmDescription: `The function ${functionName} uses more than ${t.functionComputePercent}% of its compute budget on average: CloudFront throttles functions that stay there.`,
        metric: functionMetric(
          functionName,
          'FunctionComputeUtilization',
          cloudwatch.Stats.AVERAGE,
          Duration.minutes(5),
        ),
        threshold: t.functionComputePercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: t.functionComputePeriods,
        datapointsToAlarm: t.functionComputePeriods,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  return alarms.map((alarm) => notify(alarm, topic));
}

/** Props of {@link CatalogEdgeStack}. */
export interface CatalogEdgeStackProps extends StackProps {
  readonly distributionId: string;
  readonly functions: readonly { readonly id: string; readonly functionName: string }[];
  /** The main stack's topic when it is in us-east-1; else this stack creates its own. */
  readonly alarmTopicArn?: string;
}

/**
 * The companion of a catalog stack deployed outside us-east-1: the edge alarms, next to CloudFront's metrics,
 * and their topic. Deployed after the main stack (it reads the distribution id from it).
 */
export class CatalogEdgeStack extends Stack {
  readonly topic: sns.ITopic;
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: CatalogEdgeStackProps) {
    super(scope, id, props);
    if (props.alarmTopicArn) {
      this.topic = sns.Topic.fromTopicArn(this, 'AlarmTopicImport', props.alarmTopicArn);
    } else {
      this.topic = new sns.Topic(this, 'AlarmTopic', {
        displayName: 'Training plan catalog edge alarms',
        enforceSSL: true,
      });
      new CfnOutput(this, 'AlarmTopicArn', {
        value: this.topic.topicArn,
        description:
          'Subscribe to the edge alarms (us-east-1): aws sns subscribe --topic-arn … --protocol email',
      });
    }
    this.alarms = edgeAlarms(this, props.distributionId, props.functions, this.topic);
    addRegionRule(this);
  }
}

/**
 * A template rule that refuses, before anything is created, a deploy outside the region the template was made
 * for: the stack's, or us-east-1 for a stack synthesized without a region (it holds the edge alarms, which
 * watch CloudFront's metrics, published only there). A template made for one region is wrong in another (its
 * names and the placement of its alarms follow the region).
 */
export function addRegionRule(stack: Stack): void {
  const region = Token.isUnresolved(stack.region) ? EDGE_REGION : stack.region;
  new CfnRule(stack, 'DeployRegion', {
    assertions: [
      {
        assert: Fn.conditionEquals(Aws.REGION, region),
        assertDescription: `Deploy this template in ${region}, the region it was synthesized for${region === stack.region ? '' : ' (without a region, the template holds the CloudFront alarms, which work only there)'}. For another region, synthesize with that region (CDK_DEFAULT_REGION or the CLI's).`,
      },
    ],
  });
}

/** The region part of an ARN (`arn:aws:sns:REGION:…`). */
const arnRegion = (arn: string) => arn.split(':')[3];

/**
 * Adds the alarms (each notifying the topic on ALARM and OK), CloudFront's additional metrics when asked, and
 * the dashboard; for a stack outside us-east-1, the edge alarms go into the companion stack.
 */
export function addMonitoring(stack: Stack, parts: MonitoredParts, settings: StackSettings): Monitoring {
  const topic = alarmTopic(stack, settings);
  const alarms = builderAlarms(stack, parts, settings, topic);
  const functions = parts.functions.map(({ id, fn }) => ({ id, functionName: fn.functionName }));
  let edgeStack: CatalogEdgeStack | undefined;

  addRegionRule(stack);
  if (!inEdgeRegion(stack)) {
    // Named after the stack and its region: two deployments of one name in two regions each have their own.
    const app = stack.node.scope as Construct;
    edgeStack = new CatalogEdgeStack(app, `${stack.node.id}-edge-${stack.region}`, {
      stackName: edgeStackName(stack.stackName, stack.region),
      description: `Training plan catalog: CloudFront alarms of ${stack.stackName} (CloudFront metrics exist only in ${EDGE_REGION})`,
      env: { ...(Token.isUnresolved(stack.account) ? {} : { account: stack.account }), region: EDGE_REGION },
      crossRegionReferences: true,
      distributionId: parts.distribution.distributionId,
      functions,
      ...(settings.alarmTopicArn && arnRegion(settings.alarmTopicArn) === EDGE_REGION
        ? { alarmTopicArn: settings.alarmTopicArn }
        : {}),
    });
  } else {
    alarms.push(...edgeAlarms(stack, parts.distribution.distributionId, functions, topic));
  }

  if (settings.additionalCloudFrontMetrics)
    new cloudfront.CfnMonitoringSubscription(stack, 'AdditionalMetrics', {
      distributionId: parts.distribution.distributionId,
      monitoringSubscription: {
        realtimeMetricsSubscriptionConfig: { realtimeMetricsSubscriptionStatus: 'Enabled' },
      },
    });

  const dashboard = catalogDashboard(stack, parts, settings, alarms, edgeStack);
  return { topic, alarms, dashboard, ...(edgeStack ? { edgeStack } : {}) };
}

/** One dashboard: alarm states, the builder's runs and catalog, the edge's traffic and errors, the functions. */
function catalogDashboard(
  stack: Stack,
  parts: MonitoredParts,
  settings: StackSettings,
  alarms: readonly cloudwatch.Alarm[],
  edgeStack: CatalogEdgeStack | undefined,
): cloudwatch.Dashboard {
  const rate = Duration.minutes(settings.buildRateMinutes);
  const five = Duration.minutes(5);
  const id = parts.distribution.distributionId;
  const edge = (name: string, statistic: string, period = five) =>
    distributionMetric(id, name, statistic, period, EDGE_REGION);
  const fn = (name: string, metricName: string, statistic: string) =>
    functionMetric(name, metricName, statistic, five, EDGE_REGION);
  const graph = (
    title: string,
    left: cloudwatch.IMetric[],
    annotations: cloudwatch.HorizontalAnnotation[] = [],
  ) => new cloudwatch.GraphWidget({ title, left, leftAnnotations: annotations, width: 8, height: 6 });

  const rows: cloudwatch.IWidget[][] = [
    [
      new cloudwatch.TextWidget({
        markdown: `# Training plan catalog (${stack.stackName})\nRunbooks: infra/README.md. CloudFront metrics are read from ${EDGE_REGION}.${edgeStack ? ` The edge alarms are in the stack ${edgeStack.stackName} (${EDGE_REGION}).` : ''}`,
        width: 24,
        height: 2,
      }),
    ],
    [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...alarms], width: 24, height: 4 })],
    [
      graph('Builder runs', [
        builderMetric(parts.builder, 'runSucceeded', cloudwatch.Stats.SUM, rate),
        builderMetric(parts.builder, 'runFailed', cloudwatch.Stats.SUM, rate),
      ]),
      graph(
        'Catalog age (s)',
        [builderMetric(parts.builder, 'catalogAge', cloudwatch.Stats.MAXIMUM, rate)],
        [{ value: settings.catalogAgeAlarmSeconds, label: 'alarm' }],
      ),
      graph('Build duration and propagation', [
        builderMetric(parts.builder, 'buildDuration', cloudwatch.Stats.MAXIMUM, rate),
        builderMetric(parts.builder, 'propagation', cloudwatch.Stats.MAXIMUM, rate),
      ]),
    ],
    [
      graph(
        'Plans per discipline',
        DISCIPLINES.map((d) => builderMetric(parts.builder, plansMetric(d), cloudwatch.Stats.MAXIMUM, rate)),
      ),
      graph('Invalid rows', [builderMetric(parts.builder, 'invalidRows', cloudwatch.Stats.MAXIMUM, rate)]),
      graph('Requests', [edge('Requests', cloudwatch.Stats.SUM)]),
    ],
    [
      graph(
        '5xx rate (%)',
        [edge('5xxErrorRate', cloudwatch.Stats.AVERAGE, Duration.minutes(1))],
        [{ value: ALARM_THRESHOLDS.edge5xxPercent, label: 'alarm' }],
      ),
      graph('4xx rate (%) and its expected band', [
        edge('4xxErrorRate', cloudwatch.Stats.AVERAGE),
        cloudwatch.Metric.anomalyDetectionFor({
          metric: edge('4xxErrorRate', cloudwatch.Stats.AVERAGE),
          stdDevs: ALARM_THRESHOLDS.edge4xxStdDevs,
          label: 'expected band',
        }),
      ]),
      graph(
        'Function compute utilization (%)',
        parts.functions.map(({ fn: f }) =>
          fn(f.functionName, 'FunctionComputeUtilization', cloudwatch.Stats.AVERAGE),
        ),
        [{ value: ALARM_THRESHOLDS.functionComputePercent, label: 'alarm' }],
      ),
    ],
    [
      graph(
        'Function invocations',
        parts.functions.map(({ fn: f }) => fn(f.functionName, 'FunctionInvocations', cloudwatch.Stats.SUM)),
      ),
      graph(
        'Function execution and validation errors',
        parts.functions.flatMap(({ fn: f }) => [
          fn(f.functionName, 'FunctionExecutionErrors', cloudwatch.Stats.SUM),
          fn(f.functionName, 'FunctionValidationErrors', cloudwatch.Stats.SUM),
        ]),
      ),
      graph(
        'Function throttles',
        parts.functions.map(({ fn: f }) => fn(f.functionName, 'FunctionThrottles', cloudwatch.Stats.SUM)),
      ),
    ],
  ];
  if (settings.additionalCloudFrontMetrics)
    rows.push([
      graph(
        'Error rates by status (%)',
        ['401', '403', '404', '502', '503', '504'].map((code) =>
          edge(`${code}ErrorRate`, cloudwatch.Stats.AVERAGE),
        ),
      ),
      graph('Cache hit rate (%)', [edge('CacheHitRate', cloudwatch.Stats.AVERAGE)]),
      graph('Origin latency (ms)', [edge('OriginLatency', cloudwatch.Stats.AVERAGE)]),
    ]);
  if (parts.webAclName !== undefined)
    rows.push([
      graph('Requests refused by the per-key rate limit (429)', [
        new cloudwatch.MathExpression({
          expression: `SEARCH('{AWS/WAFV2,Rule,WebACL} MetricName="BlockedRequests" WebACL="${parts.webAclName}"', 'Sum', 300)`,
          label: 'blocked',
          searchRegion: EDGE_REGION,
          period: five,
        }),
      ]),
    ]);

  return new cloudwatch.Dashboard(stack, 'Dashboard', {
    dashboardName: accountWideName(stack, '', 255),
    defaultInterval: Duration.days(1),
    widgets: rows,
  });
}
