/**
 * The stack's alarms and its dashboard (infra/README.md, "Alarms and dashboard"). CloudFront publishes its
 * metrics ONLY in us-east-1 and an alarm watches its own region, so a stack in another region keeps the builder
 * alarms and the dashboard, and a companion stack `<stack>-edge-<region>` in us-east-1 holds the edge alarms.
 */

import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Aws, CfnOutput, CfnRule, Duration, Fn, Stack, type StackProps, Token } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';
import { CANARY_BEATS, type CanaryBeat, DISCIPLINES, EDGE_REGION } from '../contract/index.ts';
import {
  CANARY_METRICS,
  METRICS,
  METRICS_BEAT_DIMENSION,
  METRICS_FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  plansMetric,
} from '../contract/metrics.ts';
import { accountWideName, inEdgeRegion } from './names.ts';
import type { StackSettings } from './props.ts';
import { partnerClientErrorRate } from './usage-logs.ts';

const { SUM, MAXIMUM, AVERAGE } = cloudwatch.Stats;
const FIVE_MINUTES = Duration.minutes(5);

/**
 * The thresholds of the alarms that are not settings (infra/README.md explains each): the percent of requests
 * answered 5xx each minute for five minutes; the 4xx band's width in standard deviations, three 5-minute
 * periods above it; a function's average compute utilization, three 5-minute periods above it.
 */
const ALARM_THRESHOLDS = {
  edge5xx: { percent: 1, minutes: 5 },
  edge4xx: { stdDevs: 3, periods: 3 },
  functionCompute: { percent: 70, periods: 3 },
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

/** What the alarms and the dashboard watch (a function's alarms are named after its construct id). */
interface MonitoredParts {
  readonly distribution: cloudfront.IDistribution;
  readonly functions: readonly cloudfront.IFunction[];
  readonly builder: lambda.IFunction;
  readonly builderFailures: sqs.IQueue;
  /** The canary, when the stack has one (its alarms and its dashboard row). */
  readonly canary?: lambda.IFunction | undefined;
  /** The per-key rate limit's web ACL name, when there is one (its blocked requests go on the dashboard). */
  readonly webAclName?: string | undefined;
}

/** The alarms of the stack, their topic, the dashboard, and the us-east-1 companion when there is one. */
export interface Monitoring {
  readonly topic: sns.ITopic;
  readonly alarms: readonly cloudwatch.Alarm[];
  readonly dashboard: cloudwatch.Dashboard;
  /** The us-east-1 companion of a stack elsewhere: the edge alarms and their topic, deployed after the stack. */
  readonly edgeStack?: Stack;
}

/**
 * The metrics one of this deployment's functions writes (contract/metrics.ts: `table` is the builder's METRICS or
 * the canary's CANARY_METRICS), in the stack's region, per `period`; labelled with their names and the text
 * `labelled` when it is given; `dimensions` beyond the service and the function (the canary's beat).
 */
function functionMetrics<T extends Record<string, { readonly name: string }>>(
  fn: lambda.IFunction,
  table: T,
  period: Duration,
  statistic: string = MAXIMUM,
  labelled: string | false = false,
  dimensions: Readonly<Record<string, string>> = {},
) {
  return (name: keyof T) => {
    const metricName = (table[name] as T[keyof T]).name;
    return new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: {
        service: METRICS_SERVICE,
        [METRICS_FUNCTION_DIMENSION]: fn.functionName,
        ...dimensions,
      },
      statistic,
      period,
      ...(labelled !== false ? { label: `${metricName}${labelled}` } : {}),
    });
  };
}

/** The builder's metrics, per `period`. */
const builderMetrics = (builder: lambda.IFunction, period: Duration, statistic: string = MAXIMUM) =>
  functionMetrics(builder, METRICS, period, statistic);

/** CloudFront's metrics of a distribution or a function (`Region=Global`), read from `region` when given. */
function cloudFrontMetrics(dimension: 'DistributionId' | 'FunctionName', value: string, region?: string) {
  return (metricName: string, statistic: string = AVERAGE, period = FIVE_MINUTES) =>
    new cloudwatch.Metric({
      namespace: 'AWS/CloudFront',
      metricName,
      dimensionsMap: { [dimension]: value, Region: 'Global' },
      statistic,
      period,
      ...(region ? { region } : {}),
    });
}

/** An alarm's props: the metric, and whatever differs from {@link alarm}'s defaults. */
type AlarmOptions = Partial<cloudwatch.AlarmProps> & Pick<cloudwatch.AlarmProps, 'metric'>;

/**
 * An alarm that notifies the topic on ALARM and on OK; unless told otherwise it fires on one period at 1 or
 * more (over several periods: when each of them breaches, unless `datapointsToAlarm` says fewer), and no data
 * (nothing happened) is not breaching.
 */
function alarm(scope: Construct, id: string, topic: sns.ITopic, props: AlarmOptions): cloudwatch.Alarm {
  return notify(
    new cloudwatch.Alarm(scope, id, {
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      ...props,
      ...(props.evaluationPeriods
        ? { datapointsToAlarm: props.datapointsToAlarm ?? props.evaluationPeriods }
        : {}),
    }),
    topic,
  );
}

/** Notifies the topic on ALARM and on OK. */
function notify(created: cloudwatch.Alarm, topic: sns.ITopic): cloudwatch.Alarm {
  const action = new cloudwatchActions.SnsAction(topic);
  created.addAlarmAction(action);
  created.addOkAction(action);
  return created;
}

/** The topic the alarms of `stack` notify: the given one, or a new `AlarmTopic` (`what`: `alarms`, `edge alarms`). */
function alarmTopic(stack: Stack, arn: string | undefined, what: string, where = ''): sns.ITopic {
  if (arn) return sns.Topic.fromTopicArn(stack, 'AlarmTopicImport', arn);
  const topic = new sns.Topic(stack, 'AlarmTopic', {
    displayName: `Training plan catalog ${what}`,
    enforceSSL: true,
  });
  new CfnOutput(stack, 'AlarmTopicArn', {
    value: topic.topicArn,
    description: `Subscribe to the ${what}${where}: aws sns subscribe --topic-arn … --protocol email`,
  });
  return topic;
}

/** The builder's alarms: a failed invocation, a message in the failure queue, no good run, an old catalog. */
function builderAlarms(stack: Stack, parts: MonitoredParts, settings: StackSettings, topic: sns.ITopic) {
  const rate = Duration.minutes(settings.buildRateMinutes);
  return [
    alarm(stack, 'BuilderErrors', topic, {
      alarmDescription:
        'A catalog build failed (source, invalid rows, a guard, upload or pointer move): the live catalog is unchanged. See the builder log; runbook "the builder keeps failing" in infra/README.md.',
      metric: parts.builder.metricErrors({ period: FIVE_MINUTES, statistic: SUM }),
    }),
    alarm(stack, 'BuilderFailedInvocations', topic, {
      alarmDescription:
        'A builder invocation failed and went to the failure queue (an error, a timeout, throttling, or too old to run): read its message for the request and the error. Runbook "the builder keeps failing" in infra/README.md.',
      metric: parts.builderFailures.metricApproximateNumberOfMessagesVisible({
        period: FIVE_MINUTES,
        statistic: MAXIMUM,
      }),
    }),
    alarm(stack, 'NoSuccessfulRun', topic, {
      alarmDescription: `No good builder run in two schedule periods (2 × ${rate.toHumanString()}): runs failed without one succeeding, or the builder did not run at all. The catalog is not being refreshed. Runbook "the catalog is stale" in infra/README.md.`,
      metric: goodRuns(parts.builder, rate, settings.scheduleEnabled),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 2,
      // A schedule that stops firing leaves no data at all: that must alarm, unless the schedule is off on purpose.
      treatMissingData: settings.scheduleEnabled
        ? cloudwatch.TreatMissingData.BREACHING
        : cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    alarm(stack, 'CatalogAgeHigh', topic, {
      alarmDescription: `The live catalog is older than ${Duration.seconds(settings.catalogAgeAlarmSeconds).toHumanString()} (pinned, or nothing published). Runbook "the catalog is stale" in infra/README.md.`,
      metric: builderMetrics(parts.builder, rate)('catalogAge'),
      threshold: settings.catalogAgeAlarmSeconds,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      // Runs that stop are the no-successful-run alarm's business; this one keeps its state meanwhile.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    }),
  ];
}

/**
 * Per schedule period, 0 when the builder's runs failed without one succeeding, or when it did not run at all
 * while the schedule is on; else at least 1. A run that neither succeeds nor fails (another run held the lock,
 * or the source is not configured yet) is a good one: a fresh deployment whose source secret still holds its
 * placeholder raises no alarm, while a schedule that stopped does. A run's success may land in the period
 * after its invocation, so either counts.
 */
function goodRuns(builder: lambda.IFunction, rate: Duration, scheduleEnabled: boolean): cloudwatch.IMetric {
  const counted = builderMetrics(builder, rate, SUM);
  return new cloudwatch.MathExpression({
    expression: `IF(FILL(failed, 0) > 0 AND FILL(succeeded, 0) == 0, 0, IF(FILL(runs, 0) + FILL(succeeded, 0) > 0, 1, ${scheduleEnabled ? 0 : 1}))`,
    usingMetrics: {
      runs: builder.metricInvocations({ statistic: SUM, period: rate }),
      succeeded: counted('runSucceeded'),
      failed: counted('runFailed'),
    },
    period: rate,
    label: 'good runs',
  });
}

/** The canary's metrics (contract/metrics.ts) of one beat, per `period`, labelled with their names and the beat. */
const canaryMetrics = (
  canary: lambda.IFunction,
  beat: CanaryBeat,
  period: Duration,
  statistic: string = MAXIMUM,
) =>
  functionMetrics(canary, CANARY_METRICS, period, statistic, ` (${beat})`, {
    [METRICS_BEAT_DIMENSION]: beat,
  });

/** Each beat's period: the probe's `canaryRateMinutes`, the full table's `canaryFullRateMinutes`. */
export function canaryPeriods(settings: StackSettings): Record<CanaryBeat, Duration> {
  return {
    probe: Duration.minutes(settings.canaryRateMinutes),
    full: Duration.minutes(settings.canaryFullRateMinutes),
  };
}

/** Per period of a beat: the rows that failed or were not run, and 1 when the run did not reach the deployment. */
function nonConforming(canary: lambda.IFunction, beat: CanaryBeat, rate: Duration): cloudwatch.IMetric {
  const metric = canaryMetrics(canary, beat, rate);
  return new cloudwatch.MathExpression({
    expression: 'failed + notrun + unreachable',
    usingMetrics: {
      failed: metric('failedRows'),
      notrun: metric('rowsNotRun'),
      unreachable: metric('unreachable'),
    },
    period: rate,
    label: `rows failed or not run (${beat})`,
  });
}

/** An alarm's construct id for a beat: `ConformanceFailedProbe`, `ConformanceSilentFull`. */
export const conformanceAlarmId = (kind: 'Failed' | 'Silent', beat: CanaryBeat) =>
  `Conformance${kind}${beat === 'probe' ? 'Probe' : 'Full'}`;

/**
 * The canary's alarms, two per beat, each over that beat's period: `ConformanceFailed…` when a row failed (or was
 * not run, or nothing answered) in two consecutive periods, so a publish moving through the edges pages no one
 * (the full table also runs outside its schedule, after a deploy or a pointer move: its worst run of the period
 * counts); `ConformanceSilent…` when no report of that beat was stored for two periods (the duration is emitted
 * only with a stored report).
 */
function canaryAlarms(stack: Stack, canary: lambda.IFunction, settings: StackSettings, topic: sns.ITopic) {
  const periods = canaryPeriods(settings);
  const what = { probe: 'probe', full: 'full table' } as const;
  return CANARY_BEATS.flatMap((beat) => {
    const rate = periods[beat];
    return [
      alarm(stack, conformanceAlarmId('Failed', beat), topic, {
        alarmDescription: `A row of the canary's ${what[beat]} failed in two consecutive periods (2 × ${rate.toHumanString()}): the deployment no longer answers as specified. The canary's log names the row (beat ${beat}), what it expected and what came. Runbook "the canary reports a failing row" in infra/README.md.`,
        metric: nonConforming(canary, beat, rate),
        evaluationPeriods: 2,
        // A canary that stops reporting is the silence alarm's to say: periods without a report are not counted,
        // so two of them leave this alarm in INSUFFICIENT_DATA (neither ALARM nor OK: no "OK" while nothing is known).
        treatMissingData: cloudwatch.TreatMissingData.MISSING,
      }),
      alarm(stack, conformanceAlarmId('Silent', beat), topic, {
        alarmDescription: `The canary stored no report of its ${what[beat]} for two periods (2 × ${rate.toHumanString()}): it did not run, failed before its report, or could not write it; the deployment is not being checked against its specification. Runbook "the canary is silent" in infra/README.md.`,
        metric: canaryMetrics(canary, beat, rate, cloudwatch.Stats.SAMPLE_COUNT)('runDuration'),
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      }),
    ];
  });
}

/**
 * What the 4xx anomaly alarm judges: with the usage records, the partners' 4xx rate (the deployment's own checks
 * left out: infra/usage-logs.ts); without them, CloudFront's 4xx rate of every request, the canary's included.
 */
function clientErrorRate(
  stack: Stack,
  parts: MonitoredParts,
  settings: StackSettings,
  region?: string,
): cloudwatch.IMetric {
  if (settings.usageLogging) return partnerClientErrorRate(stack, region);
  return cloudFrontMetrics('DistributionId', parts.distribution.distributionId, region)('4xxErrorRate');
}

/** The edge alarms (us-east-1): 5xx rate, 4xx rate above its band, each function's errors, throttles, compute. */
function edgeAlarms(
  scope: Stack,
  parts: MonitoredParts,
  topic: sns.ITopic,
  rate4xx: cloudwatch.IMetric,
  partnersOnly: boolean,
): cloudwatch.Alarm[] {
  const { edge5xx, edge4xx, functionCompute } = ALARM_THRESHOLDS;
  const edge = cloudFrontMetrics('DistributionId', parts.distribution.distributionId);
  const alarms = [
    alarm(scope, 'Edge5xxRate', topic, {
      alarmDescription: `More than ${edge5xx.percent}% of requests answered 5xx for ${edge5xx.minutes} minutes (origin objects missing, origin failing, or a function error). Check catalog status and the function alarms.`,
      metric: edge('5xxErrorRate', AVERAGE, Duration.minutes(1)),
      threshold: edge5xx.percent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: edge5xx.minutes,
    }),
    notify(
      new cloudwatch.AnomalyDetectionAlarm(scope, 'Edge4xxAnomaly', {
        alarmDescription: `${partnersOnly ? "The partners' 4xx rate (from the usage records; the deployment's own checks left out)" : "The 4xx rate (CloudFront's, of every request: the canary's deliberate 4xx included, as usageLogging is off)"} is far above its usual band: a broken or emptied key store answers 401 to everyone, a partner lost its key, or the rate limit blocks. Check catalog status, catalog usage and keys list.`,
        metric: rate4xx,
        stdDevs: edge4xx.stdDevs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_UPPER_THRESHOLD,
        evaluationPeriods: edge4xx.periods,
        datapointsToAlarm: edge4xx.periods,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      topic,
    ),
  ];
  for (const { node, functionName } of parts.functions) {
    const metric = cloudFrontMetrics('FunctionName', functionName);
    alarms.push(
      alarm(scope, `${node.id}ExecutionErrors`, topic, {
        alarmDescription: `The CloudFront Function ${functionName} failed to run (an exception): those requests got CloudFront's 5xx. Test it with catalog verify-function; roll back the deploy.`,
        metric: metric('FunctionExecutionErrors', SUM),
      }),
      alarm(scope, `${node.id}Throttles`, topic, {
        alarmDescription: `CloudFront throttled the function ${functionName} (compute budget exceeded): those requests failed.`,
        metric: metric('FunctionThrottles', SUM),
      }),
      alarm(scope, `${node.id}ComputeUtilization`, topic, {
        alarmDescription: `The function ${functionName} uses more than ${functionCompute.percent}% of its compute budget on average: CloudFront throttles functions that stay there.`,
        metric: metric('FunctionComputeUtilization', AVERAGE),
        threshold: functionCompute.percent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: functionCompute.periods,
      }),
    );
  }
  return alarms;
}

/**
 * The template rules refusing, before any resource is made, a deploy outside the region the template was made for
 * (its names follow it), and, when the stack's account is known (the deployment file's `account`, else the
 * synthesizing credentials'), into another account: a wrong profile would make a second deployment of the name.
 */
function addEnvironmentRules(stack: Stack): void {
  if (!Token.isUnresolved(stack.account))
    new CfnRule(stack, 'DeployAccount', {
      assertions: [
        {
          assert: Fn.conditionEquals(Aws.ACCOUNT_ID, stack.account),
          assertDescription: `Deploy this template in account ${stack.account}, the deployment's (its file's account, or the credentials it was synthesized with): the credentials in use are another account's. Use that account's profile.`,
        },
      ],
    });
  addRegionRule(stack);
}

/** A template rule refusing a deploy outside the region the template was made for (its names follow it). */
function addRegionRule(stack: Stack): void {
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

/** Adds the alarms (in the companion for a stack outside us-east-1), the additional metrics and the dashboard. */
export function addMonitoring(stack: Stack, parts: MonitoredParts, settings: StackSettings): Monitoring {
  const topic = alarmTopic(stack, settings.alarmTopicArn, 'alarms');
  const alarms = builderAlarms(stack, parts, settings, topic);
  if (parts.canary) alarms.push(...canaryAlarms(stack, parts.canary, settings, topic));
  let edgeStack: Stack | undefined;

  addEnvironmentRules(stack);
  const rate4xx = clientErrorRate(stack, parts, settings);
  if (inEdgeRegion(stack)) alarms.push(...edgeAlarms(stack, parts, topic, rate4xx, settings.usageLogging));
  else {
    // Named after the stack and its region: two deployments of one name in two regions each have their own.
    edgeStack = new Stack(stack.node.scope as Construct, `${stack.node.id}-edge-${stack.region}`, {
      stackName: edgeStackName(stack.stackName, stack.region),
      description: `Training plan catalog: CloudFront alarms of ${stack.stackName} (CloudFront metrics exist only in ${EDGE_REGION})`,
      env: { ...(Token.isUnresolved(stack.account) ? {} : { account: stack.account }), region: EDGE_REGION },
      crossRegionReferences: true,
    });
    // The stack's own topic when it is in us-east-1 (`arn:aws:sns:REGION:…`); else the companion creates its own.
    const arn = settings.alarmTopicArn?.split(':')[3] === EDGE_REGION ? settings.alarmTopicArn : undefined;
    edgeAlarms(
      edgeStack,
      parts,
      alarmTopic(edgeStack, arn, 'edge alarms', ' (us-east-1)'),
      rate4xx,
      settings.usageLogging,
    );
    addEnvironmentRules(edgeStack);
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
  edgeStack: Stack | undefined,
): cloudwatch.Dashboard {
  const rate = Duration.minutes(settings.buildRateMinutes);
  const built = builderMetrics(parts.builder, rate);
  const counted = builderMetrics(parts.builder, rate, SUM);
  const edge = cloudFrontMetrics('DistributionId', parts.distribution.distributionId, EDGE_REGION);
  const perFunction = (names: string[], statistic: string) =>
    parts.functions.flatMap((fn) => {
      const metric = cloudFrontMetrics('FunctionName', fn.functionName, EDGE_REGION);
      return names.map((name) => metric(name, statistic));
    });
  const graph = (title: string, left: cloudwatch.IMetric[], alarmAt?: number) =>
    new cloudwatch.GraphWidget({
      title,
      left,
      leftAnnotations: alarmAt === undefined ? [] : [{ value: alarmAt, label: 'alarm' }],
      width: 8,
      height: 6,
    });
  const { edge5xx, edge4xx, functionCompute } = ALARM_THRESHOLDS;
  const rate4xx = clientErrorRate(stack, parts, settings, EDGE_REGION);

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
      graph('Builder runs', [counted('runSucceeded'), counted('runFailed')]),
      graph('Catalog age (s)', [built('catalogAge')], settings.catalogAgeAlarmSeconds),
      graph('Build duration and propagation', [built('buildDuration'), built('propagation')]),
    ],
    [
      graph('Plans per discipline', DISCIPLINES.map(plansMetric).map(built)),
      graph('Invalid rows', [built('invalidRows')]),
      graph('Requests', [edge('Requests', SUM)]),
    ],
    [
      graph('5xx rate (%)', [edge('5xxErrorRate', AVERAGE, Duration.minutes(1))], edge5xx.percent),
      graph(
        settings.usageLogging
          ? "Partners' 4xx rate (%) and its expected band"
          : '4xx rate (%) and its expected band',
        [
          rate4xx,
          cloudwatch.Metric.anomalyDetectionFor({
            metric: rate4xx,
            stdDevs: edge4xx.stdDevs,
            label: 'expected band',
          }),
        ],
      ),
      graph(
        'Function compute utilization (%)',
        perFunction(['FunctionComputeUtilization'], AVERAGE),
        functionCompute.percent,
      ),
    ],
    [
      graph('Function invocations', perFunction(['FunctionInvocations'], SUM)),
      graph(
        'Function execution and validation errors',
        perFunction(['FunctionExecutionErrors', 'FunctionValidationErrors'], SUM),
      ),
      graph('Function throttles', perFunction(['FunctionThrottles'], SUM)),
    ],
  ];
  if (parts.canary) {
    const fn = parts.canary;
    const periods = canaryPeriods(settings);
    const each = (metric: (beat: CanaryBeat) => cloudwatch.IMetric[]) => CANARY_BEATS.flatMap(metric);
    rows.push([
      graph(
        'Conformance: rows failed or not run per canary run, probe and full table (last 24 h)',
        each((beat) => {
          const canary = canaryMetrics(fn, beat, periods[beat]);
          return [canary('failedRows'), canary('rowsNotRun'), canary('unreachable')];
        }),
        1,
      ),
      graph(
        'Conformance: canary runs reported and their duration (ms), probe and full table',
        each((beat) => [
          canaryMetrics(fn, beat, periods[beat], cloudwatch.Stats.SAMPLE_COUNT)('runDuration'),
          canaryMetrics(fn, beat, periods[beat])('runDuration'),
        ]),
      ),
    ]);
  }
  if (settings.additionalCloudFrontMetrics)
    rows.push([
      graph(
        'Error rates by status (%)',
        ['401', '403', '404', '502', '503', '504'].map((code) => edge(`${code}ErrorRate`)),
      ),
      graph('Cache hit rate (%)', [edge('CacheHitRate')]),
      graph('Origin latency (ms)', [edge('OriginLatency')]),
    ]);
  if (parts.webAclName)
    rows.push([
      graph('Requests refused by the per-key rate limit (429)', [
        new cloudwatch.MathExpression({
          expression: `SEARCH('{AWS/WAFV2,Rule,WebACL} MetricName="BlockedRequests" WebACL="${parts.webAclName}"', 'Sum', 300)`,
          label: 'blocked',
          searchRegion: EDGE_REGION,
          period: FIVE_MINUTES,
        }),
      ]),
    ]);

  return new cloudwatch.Dashboard(stack, 'Dashboard', {
    dashboardName: accountWideName(stack, '', 255),
    defaultInterval: Duration.days(1),
    widgets: rows,
  });
}
