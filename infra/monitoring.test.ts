/**
 * The alarms and the dashboard: every alarm by its metric, statistic, period, threshold, comparison, missing
 * data and actions (ALARM and OK to the topic); where the edge alarms go for each region; the dashboard's
 * widgets; CloudFront's additional metrics. The builder is not bundled here (stack.test.ts does that).
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import type { App } from 'aws-cdk-lib/core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  METRICS,
  METRICS_FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
} from '../contract/metrics.ts';
import { ROOT } from '../testing/cli.ts';
import { logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import type { CatalogStack, CatalogStackProps } from './stack.ts';

const ACCOUNT = '123456789012';
async function synth(props: CatalogStackProps = {}): Promise<Synthesized> {
  return synthStack(props);
}

type Resource = { Type: string; Properties: Record<string, unknown> };
const alarmsOf = (template: Template) =>
  template.findResources('AWS::CloudWatch::Alarm') as Record<string, Resource>;
/** The one alarm whose logical id starts with the construct id. */
const alarm = (template: Template, id: string) =>
  alarmsOf(template)[logicalId(template, 'AWS::CloudWatch::Alarm', id)] as Resource;

/** The template of a stack of the same app (the edge companion). */
const templateOf = (stack: CatalogStack, name: string) => {
  const other = (stack.node.scope as App).node.tryFindChild(name);
  if (!other) throw new Error(`no stack ${name}`);
  return Template.fromStack(other as CatalogStack);
};

let main: Synthesized;
let ids: Record<string, string>;
beforeAll(async () => {
  main = await synth({ env: { account: ACCOUNT, region: 'us-east-1' } });
  const t = main.template;
  ids = {
    topic: logicalId(t, 'AWS::SNS::Topic', 'AlarmTopic'),
    distribution: logicalId(t, 'AWS::CloudFront::Distribution', 'Distribution'),
    builder: logicalId(t, 'AWS::Lambda::Function', 'Builder'),
  };
});

/** The builder's metrics: the service, and this deployment's builder (another deployment's are not these). */
const builderDimensions = () => [
  { Name: METRICS_FUNCTION_DIMENSION, Value: { Ref: ids.builder } },
  { Name: 'service', Value: METRICS_SERVICE },
];
const toTopic = () => ({ AlarmActions: [{ Ref: ids.topic }], OKActions: [{ Ref: ids.topic }] });
const distributionDimensions = () => [
  { Name: 'DistributionId', Value: { Ref: ids.distribution } },
  { Name: 'Region', Value: 'Global' },
];
const functionDimensions = (name: string) => [
  { Name: 'FunctionName', Value: name },
  { Name: 'Region', Value: 'Global' },
];

describe('builder alarms', () => {
  it('alarms when no run was good in two schedule periods, from the builder’s invocations and its run metrics', () => {
    const props = alarm(main.template, 'NoSuccessfulRun').Properties;
    expect(props).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      TreatMissingData: 'breaching',
      ...toTopic(),
    });
    const byName = Object.fromEntries(
      (
        props.Metrics as {
          MetricStat?: {
            Metric: { MetricName: string } & Record<string, unknown>;
            Period: number;
            Stat: string;
          };
        }[]
      )
        .filter((m) => m.MetricStat)
        .map((m) => [m.MetricStat?.Metric.MetricName, m.MetricStat]),
    );
    expect(byName).toEqual({
      Invocations: {
        Metric: {
          Namespace: 'AWS/Lambda',
          MetricName: 'Invocations',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.builder } }],
        },
        Period: 3600,
        Stat: 'Sum',
      },
      [METRICS.runSucceeded.name]: {
        Metric: {
          Namespace: METRICS_NAMESPACE,
          MetricName: METRICS.runSucceeded.name,
          Dimensions: builderDimensions(),
        },
        Period: 3600,
        Stat: 'Sum',
      },
      [METRICS.runFailed.name]: {
        Metric: {
          Namespace: METRICS_NAMESPACE,
          MetricName: METRICS.runFailed.name,
          Dimensions: builderDimensions(),
        },
        Period: 3600,
        Stat: 'Sum',
      },
    });
  });

  describe('a deployment whose source is not configured yet, and the other ways runs go', () => {
    // Each period: what the builder's runs put in each metric (a missing one has no datapoint). A run whose
    // source is still the placeholder records "not configured": no RunSucceeded, no RunFailed, no error.
    const never = { Invocations: 1 };
    const success = { Invocations: 1, RunSucceeded: 1 };
    const failure = { Invocations: 1, RunFailed: 1 };
    const busy = { Invocations: 2, RunSucceeded: 1 };
    const none = {};
    const SCENARIOS: [string, Period[], 'OK' | 'ALARM'][] = [
      ['never configured, the schedule running', [never, never, never], 'OK'],
      ['running well', [success, success, success], 'OK'],
      ['two runs at once (one busy)', [busy, success, busy], 'OK'],
      ['configured and failing', [success, failure, failure], 'ALARM'],
      ['failing once, then well', [failure, success, failure], 'OK'],
      [
        'a success counted in the period after its invocation',
        [{ Invocations: 1 }, { RunSucceeded: 1 }, success],
        'OK',
      ],
      ['the schedule stopped', [success, none, none], 'ALARM'],
      // A first deploy: the alarm is made with no data (infra/README.md, step 5), then the schedule's first run.
      ['a first deploy, before its first run’s metrics land', [none, none], 'ALARM'],
      ['a first deploy, once its first run (source not set yet) is counted', [none, never], 'OK'],
      ['never configured, then the schedule stopped', [never, none, none], 'ALARM'],
    ];
    for (const [name, periods, state] of SCENARIOS)
      it(`${name}: ${state}`, () => {
        // CloudWatch's FILL either gives every period of the range a value, or only those another metric has
        // data in: the alarm's state is the same either way.
        for (const fillsEveryPeriod of [false, true])
          expect(
            alarmState(alarm(main.template, 'NoSuccessfulRun').Properties, periods, fillsEveryPeriod),
          ).toBe(state);
      });

    it('with the schedule off, a run by hand now and then raises nothing', async () => {
      const s = await synth({ scheduleEnabled: false });
      const props = alarm(s.template, 'NoSuccessfulRun').Properties;
      for (const fillsEveryPeriod of [false, true])
        expect(alarmState(props, [success, none, none], fillsEveryPeriod)).toBe('OK');
    });
  });

  it('alarms when the live catalog is older than the threshold after a run (7 days by default)', () => {
    expect(alarm(main.template, 'CatalogAgeHigh').Properties).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: METRICS.catalogAge.name,
      Dimensions: builderDimensions(),
      Statistic: 'Maximum',
      Period: 3600,
      Threshold: 7 * 24 * 3600,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'ignore',
      ...toTopic(),
    });
  });

  it('alarms on any failed builder invocation, and says when it is OK again', () => {
    expect(alarm(main.template, 'BuilderErrors').Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.builder } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      ...toTopic(),
    });
  });

  it('alarms on any invocation in the failure queue (failed, timed out, throttled or too old to run)', () => {
    const queue = logicalId(main.template, 'AWS::SQS::Queue', 'BuilderFailures');
    expect(alarm(main.template, 'BuilderFailedInvocations').Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      ...toTopic(),
    });
  });

  it('follows the schedule rate and the age threshold it is given', async () => {
    const s = await synth({ buildRateMinutes: 15, catalogAgeAlarmSeconds: 7200 });
    const noRun = alarm(s.template, 'NoSuccessfulRun').Properties;
    expect(noRun).toMatchObject({ EvaluationPeriods: 2 });
    for (const metric of noRun.Metrics as { MetricStat?: { Period: number } }[])
      if (metric.MetricStat) expect(metric.MetricStat.Period).toBe(900);
    expect(alarm(s.template, 'CatalogAgeHigh').Properties).toMatchObject({ Period: 900, Threshold: 7200 });
  });

  it('with the schedule off, keeps it disabled and stops expecting runs', async () => {
    const s = await synth({ scheduleEnabled: false });
    s.template.hasResourceProperties('AWS::Scheduler::Schedule', { State: 'DISABLED' });
    expect(alarm(s.template, 'NoSuccessfulRun').Properties.TreatMissingData).toBe('notBreaching');
    main.template.hasResourceProperties('AWS::Scheduler::Schedule', { State: 'ENABLED' });
  });
});

describe('edge alarms (CloudFront metrics, us-east-1)', () => {
  it('alarms when more than 1% of requests get a 5xx, every minute for 5 minutes', () => {
    expect(alarm(main.template, 'Edge5xxRate').Properties).toMatchObject({
      Namespace: 'AWS/CloudFront',
      MetricName: '5xxErrorRate',
      Dimensions: distributionDimensions(),
      Statistic: 'Average',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      TreatMissingData: 'notBreaching',
      ...toTopic(),
    });
  });

  it("alarms when the partners' 4xx rate, from the usage records, is far above its usual band (3 standard deviations)", () => {
    const props = alarm(main.template, 'Edge4xxAnomaly').Properties;
    expect(props).toMatchObject({
      ComparisonOperator: 'GreaterThanUpperThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
      ...toTopic(),
    });
    expect(String(props.AlarmDescription)).toMatch(
      /^The partners' 4xx rate \(from the usage records; the deployment's own checks left out\)/,
    );
    const metrics = props.Metrics as Record<string, unknown>[];
    const band = metrics.find((m) => String(m.Expression).startsWith('ANOMALY_DETECTION_BAND'));
    expect(band).toMatchObject({ Expression: expect.stringMatching(/^ANOMALY_DETECTION_BAND\(\w+,\s*3\)$/) });
    expect(props.ThresholdMetricId).toBe(band?.Id);
    // The band is on the rate: 100 × the partners' 4xx / their requests, per 5 minutes.
    const judged = String(band?.Expression);
    const rate = metrics.find((m) => judged.includes(`(${m.Id as string},`));
    expect(rate).toMatchObject({ Expression: '100 * FILL(errors, 0) / requests', ReturnData: true });
    const counted = (id: string) => metrics.find((m) => m.Id === id);
    for (const [id, name] of [
      ['errors', 'PartnerClientErrors'],
      ['requests', 'PartnerRequests'],
    ] as const)
      expect(counted(id)).toEqual({
        Id: id,
        MetricStat: {
          Metric: { Namespace: `${METRICS_NAMESPACE}/TrainingPlanCatalog`, MetricName: name },
          Period: 300,
          Stat: 'Sum',
        },
        ReturnData: false,
      });
    // The two metrics are the usage log group's metric filters (their patterns: client-error-alarm.test.ts).
    const filters = Object.values(
      main.template.findResources('AWS::Logs::MetricFilter') as Record<string, Resource>,
    ).map((r) => r.Properties.MetricTransformations);
    expect(filters).toEqual(
      expect.arrayContaining(
        ['PartnerClientErrors', 'PartnerRequests'].map((name) => [
          {
            MetricName: name,
            MetricNamespace: `${METRICS_NAMESPACE}/TrainingPlanCatalog`,
            MetricValue: '1',
            Unit: 'Count',
          },
        ]),
      ),
    );
  });

  it("without usage records (usageLogging false), alarms on CloudFront's 4xx rate of every request, and says the canary is in it", async () => {
    const off = await synth({ env: { account: ACCOUNT, region: 'us-east-1' }, usageLogging: false });
    off.template.resourceCountIs('AWS::Logs::MetricFilter', 0);
    const props = alarm(off.template, 'Edge4xxAnomaly').Properties;
    expect(String(props.AlarmDescription)).toMatch(
      /the canary's deliberate 4xx included, as usageLogging is off/,
    );
    const metrics = props.Metrics as Record<string, unknown>[];
    const band = metrics.find((m) => typeof m.Expression === 'string');
    const rate = metrics.find((m) => m.MetricStat !== undefined);
    expect(metrics).toHaveLength(2);
    expect(rate).toMatchObject({
      MetricStat: {
        Metric: {
          Namespace: 'AWS/CloudFront',
          MetricName: '4xxErrorRate',
          Dimensions: [
            {
              Name: 'DistributionId',
              Value: { Ref: logicalId(off.template, 'AWS::CloudFront::Distribution', 'Distribution') },
            },
            { Name: 'Region', Value: 'Global' },
          ],
        },
        Period: 300,
        Stat: 'Average',
      },
    });
    expect(band?.Expression).toContain(`(${rate?.Id as string},`);
  });

  for (const [id, name] of [
    ['ViewerRequest', 'TrainingPlanCatalog-viewer-request'],
    ['ViewerResponse', 'TrainingPlanCatalog-viewer-response'],
  ] as const) {
    it(`alarms on ${name}'s execution errors, throttles and compute utilization above 70%`, () => {
      const common = { Namespace: 'AWS/CloudFront', Dimensions: functionDimensions(name), ...toTopic() };
      expect(alarm(main.template, `${id}ExecutionErrors`).Properties).toMatchObject({
        ...common,
        MetricName: 'FunctionExecutionErrors',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(alarm(main.template, `${id}Throttles`).Properties).toMatchObject({
        ...common,
        MetricName: 'FunctionThrottles',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(alarm(main.template, `${id}ComputeUtilization`).Properties).toMatchObject({
        ...common,
        MetricName: 'FunctionComputeUtilization',
        Statistic: 'Average',
        Period: 300,
        Threshold: 70,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        TreatMissingData: 'notBreaching',
      });
    });
  }

  it('has twelve alarms in a us-east-1 stack, each notifying the topic on ALARM and on OK', () => {
    const all = Object.values(alarmsOf(main.template));
    expect(all).toHaveLength(12);
    for (const a of all) expect(a.Properties).toMatchObject(toTopic());
    expect(regionRule(main.template)).toEqual({ 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] });
  });
});

describe('the region the stack is deployed in', () => {
  it('without a region, keeps every alarm and refuses a deploy outside us-east-1 with a template rule', async () => {
    const s = await synth({});
    expect(Object.keys(alarmsOf(s.template))).toHaveLength(12);
    const rules = s.template.toJSON().Rules as Record<string, { Assertions: Record<string, unknown>[] }>;
    expect(rules.DeployRegion?.Assertions).toEqual([
      {
        Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
        AssertDescription: expect.stringContaining('Deploy this template in us-east-1'),
      },
    ]);
  });

  it('elsewhere, moves the edge alarms into a us-east-1 companion stack with its own topic', async () => {
    const s = await synth({ env: { account: ACCOUNT, region: 'eu-west-1' } });
    expect(
      Object.keys(alarmsOf(s.template))
        .map((id) => id.replace(/[0-9A-F]{8}$/, ''))
        .sort(),
    ).toEqual(['BuilderErrors', 'BuilderFailedInvocations', 'CatalogAgeHigh', 'NoSuccessfulRun']);
    // Each template refuses any region but its own.
    expect(regionRule(s.template)).toEqual({ 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'eu-west-1'] });
    const edgeStack = s.stack.monitoring.edgeStack;
    expect(edgeStack?.region).toBe('us-east-1');
    expect(edgeStack?.stackName).toBe('TrainingPlanCatalog-edge-eu-west-1');
    const edge = templateOf(s.stack, 'TrainingPlanCatalog-edge-eu-west-1');
    expect(regionRule(edge)).toEqual({ 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] });
    const edgeTopic = logicalId(edge, 'AWS::SNS::Topic', 'AlarmTopic');
    const edgeAlarms = Object.values(alarmsOf(edge));
    expect(edgeAlarms).toHaveLength(8);
    for (const a of edgeAlarms)
      expect(a.Properties).toMatchObject({
        AlarmActions: [{ Ref: edgeTopic }],
        OKActions: [{ Ref: edgeTopic }],
      });
    // The distribution id crosses regions as an output of the main stack that the edge stack reads.
    expect(alarm(edge, 'Edge5xxRate').Properties.Dimensions).toEqual([
      {
        Name: 'DistributionId',
        Value: {
          'Fn::GetStackOutput': {
            StackName: 'TrainingPlanCatalog',
            Region: 'eu-west-1',
            OutputName: expect.any(String),
          },
        },
      },
      { Name: 'Region', Value: 'Global' },
    ]);
    edge.hasOutput('AlarmTopicArn', { Value: { Ref: edgeTopic } });
  });

  it('elsewhere, notifies a given topic from the edge stack when that topic is in us-east-1', async () => {
    const topic = `arn:aws:sns:us-east-1:${ACCOUNT}:ops-alerts`;
    const s = await synth({ env: { account: ACCOUNT, region: 'eu-west-1' }, alarmTopicArn: topic });
    const edge = templateOf(s.stack, 'TrainingPlanCatalog-edge-eu-west-1');
    edge.resourceCountIs('AWS::SNS::Topic', 0);
    for (const a of Object.values(alarmsOf(edge))) expect(a.Properties).toMatchObject({ OKActions: [topic] });
  });
});

/** The assertion of the template's rule refusing other regions. */
const regionRule = (template: Template) =>
  (template.toJSON().Rules as Record<string, { Assertions: { Assert: unknown }[] }>).DeployRegion
    ?.Assertions[0]?.Assert;

/** What each metric had in one period (no key: no datapoint). */
type Period = Readonly<Record<string, number>>;

/**
 * The state an alarm ends in after these periods (the last `EvaluationPeriods` of them), evaluated as
 * CloudWatch does: its metric, or its metric math expression over its metrics (by their metric names here),
 * compared with the threshold; a period with no value counts as `TreatMissingData` says.
 */
function alarmState(props: Record<string, unknown>, periods: readonly Period[], fillsEveryPeriod: boolean) {
  const metrics =
    (props.Metrics as {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string } };
    }[]) ?? [];
  const expression = metrics.find((m) => m.Expression)?.Expression;
  const ids = Object.fromEntries(
    metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat?.Metric.MetricName]),
  );
  const values = periods.map((period): number | undefined => {
    if (!expression) return period[props.MetricName as string];
    const hasData = Object.values(ids).some((name) => period[name as string] !== undefined);
    if (!hasData && !fillsEveryPeriod) return undefined;
    // IF, FILL, AND and comparisons, as JavaScript.
    const js = expression
      .replaceAll('AND', '&&')
      .replace(
        /FILL\((\w+), (\d+)\)/g,
        (_, id: string, fill: string) => `(${period[ids[id] as string] ?? fill})`,
      )
      .replace(/IF\(/g, 'iff(');
    return Number(new Function('iff', `return ${js};`)((c: boolean, a: number, b: number) => (c ? a : b)));
  });
  if (props.ComparisonOperator !== 'LessThanThreshold')
    throw new Error('only LessThanThreshold is evaluated');
  const last = values.slice(-(props.EvaluationPeriods as number));
  const threshold = props.Threshold as number;
  const breaching = last.filter((value) =>
    value === undefined ? props.TreatMissingData === 'breaching' : value < threshold,
  ).length;
  return breaching >= ((props.DatapointsToAlarm as number) ?? last.length) ? 'ALARM' : 'OK';
}

/** The dashboard body with every token replaced by a readable marker, parsed. */
function dashboardBody(template: Template): { widgets: Record<string, unknown>[] } {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as Resource[];
  const body = dashboard?.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof body === 'string'
      ? body
      : body['Fn::Join'][1]
          .map((part) => (typeof part === 'string' ? part : `<${JSON.stringify(part).replaceAll('"', "'")}>`))
          .join('');
  return JSON.parse(text);
}

describe('dashboard', () => {
  it('shows the alarms, the builder metrics, the edge and the functions, reading CloudFront from us-east-1', async () => {
    const s = await synth({});
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    s.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'TrainingPlanCatalog' });
    const { widgets } = dashboardBody(s.template);
    const titles = widgets.map((w) => (w.properties as { title?: string }).title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Alarms',
        'Builder runs',
        'Catalog age (s)',
        '5xx rate (%)',
        "Partners' 4xx rate (%) and its expected band",
        'Function compute utilization (%)',
        'Function execution and validation errors',
        'Function throttles',
      ]),
    );
    const alarmWidget = widgets.find((w) => (w.properties as { title?: string }).title === 'Alarms');
    expect((alarmWidget?.properties as { alarms?: unknown[] } | undefined)?.alarms).toHaveLength(12);
    const metrics = widgets.flatMap(
      (w) => ((w.properties as { metrics?: unknown[][] }).metrics ?? []) as unknown[][],
    );
    const text = JSON.stringify(metrics);
    for (const metric of Object.values(METRICS)) expect(text).toContain(`"${metric.name}"`);
    for (const name of [
      'Requests',
      '5xxErrorRate',
      'PartnerClientErrors',
      'PartnerRequests',
      'FunctionComputeUtilization',
      'FunctionThrottles',
    ])
      expect(text).toContain(`"${name}"`);
    const cloudFront = metrics.filter((m) => m[0] === 'AWS/CloudFront');
    expect(cloudFront.length).toBeGreaterThan(5);
    for (const m of cloudFront) expect(m.at(-1)).toMatchObject({ region: 'us-east-1' });
    const builder = metrics.filter((m) => m[0] === METRICS_NAMESPACE);
    for (const m of builder)
      expect(m.slice(2, 6)).toEqual([
        METRICS_FUNCTION_DIMENSION,
        `<${JSON.stringify({ Ref: ids.builder }).replaceAll('"', "'")}>`,
        'service',
        METRICS_SERVICE,
      ]);
    expect(text).not.toContain('401ErrorRate');
  });
});

describe("CloudFront's additional metrics", () => {
  it('are off by default', () => {
    main.template.resourceCountIs('AWS::CloudFront::MonitoringSubscription', 0);
  });

  it('turn on with additionalCloudFrontMetrics, and the dashboard shows them', async () => {
    const s = await synth({ additionalCloudFrontMetrics: true });
    const distribution = logicalId(s.template, 'AWS::CloudFront::Distribution', 'Distribution');
    s.template.hasResourceProperties('AWS::CloudFront::MonitoringSubscription', {
      DistributionId: { Ref: distribution },
      MonitoringSubscription: {
        RealtimeMetricsSubscriptionConfig: { RealtimeMetricsSubscriptionStatus: 'Enabled' },
      },
    });
    const text = JSON.stringify(dashboardBody(s.template));
    for (const name of [
      '401ErrorRate',
      '403ErrorRate',
      '404ErrorRate',
      '502ErrorRate',
      'CacheHitRate',
      'OriginLatency',
    ])
      expect(text).toContain(`"${name}"`);
  });
});

describe('infra/README.md’s alarm table', () => {
  /** How the table's "missing data" column says each CloudWatch treatment, by its first words. */
  const TREATMENTS: [RegExp, string][] = [
    [/^\*\*breaching\*\*/, 'breaching'],
    [/^OK\b/, 'notBreaching'],
    [/^keeps its state/, 'ignore'],
    [/^not counted/, 'missing'],
  ];

  it('says how every alarm treats missing data, as the template does', async () => {
    const readme = await readFile(join(ROOT, 'infra', 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Alarms and dashboard'),
      readme.indexOf('## Usage records'),
    );
    const rows = section
      .split('\n')
      .filter((line) => /^\| `[A-Z]/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    // With the canary, so its alarms are there too.
    const s = await synth({
      env: { account: ACCOUNT, region: 'us-east-1' },
      monitoringKeySecretArn: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:TrainingPlanCatalog/monitoring-key-AbCdEf`,
    });
    // Each row names its alarms (`ViewerResponse…`: the viewer-request's twin) and says one treatment.
    const documented = rows.flatMap((cells) => {
      const ids = [...(cells[1] ?? '').matchAll(/`([A-Za-z0-9]+)(…)?`/g)].map(([, id, twin]) =>
        twin ? (cells[1]?.match(/`(ViewerRequest[A-Za-z]+)`/)?.[1] ?? '').replace('Request', 'Response') : id,
      );
      const said = cells.at(-2) ?? '';
      const treatment = TREATMENTS.find(([pattern]) => pattern.test(said))?.[1];
      return ids.map((id) => [id as string, treatment]);
    });
    const inTemplate = documented.map(([id]) => [
      id,
      alarm(s.template, id as string).Properties.TreatMissingData,
    ]);
    expect(documented).toEqual(inTemplate);
    // Every alarm of the stack has its row.
    expect(
      Object.keys(alarmsOf(s.template))
        .map((id) => id.replace(/[0-9A-F]{8}$/, ''))
        .sort(),
    ).toEqual(documented.map(([id]) => id).sort());
  });
});
