/**
 * The usage records in the template: standard logging (v2) from the distribution to a CloudWatch Logs group
 * with exactly the fields `catalog usage` reads, the group's retention, the switch, where the delivery goes
 * for a stack outside us-east-1, and the dashboard widgets. The builder is not bundled here.
 */

import { Template } from 'aws-cdk-lib/assertions';
import type { App } from 'aws-cdk-lib/core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { constructStack, logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import type { CatalogStack } from './stack.ts';

const ACCOUNT = '123456789012';
/** The last part of the stack's id, as the template computes it. */
const STACK_ID_PART = { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] };
const synth = async (props: Parameters<typeof synthStack>[0] = {}) => {
  return synthStack(props);
};

/** A CloudFormation value as text: `Fn::Join` parts joined, a `Ref` as `<Name>`, a `GetAtt` as `<Id.Attr>`. */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v['Fn::Join']) return ((v['Fn::Join'] as [string, unknown[]])[1] ?? []).map(joined).join('');
  if (v.Ref) return `<${String(v.Ref)}>`;
  if (v['Fn::GetAtt']) {
    const [id, attr] = v['Fn::GetAtt'] as [string, string];
    return `<${id.replace(/[0-9A-F]{8}$/, '')}.${attr}>`;
  }
  // The id of this creation of the stack: the last part of its stack id.
  if (JSON.stringify(v) === JSON.stringify(STACK_ID_PART)) return '<stack id>';
  throw new Error(`cannot show ${JSON.stringify(value)}`);
}

/** The widgets of the stack's one dashboard. */
function dashboardWidgets(template: Template): { type: string; properties: Record<string, unknown> }[] {
  const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as {
    Properties: { DashboardBody: unknown };
  }[];
  expect(dashboards).toHaveLength(1);
  return JSON.parse(joined(dashboards[0]?.Properties.DashboardBody)).widgets;
}

describe('the usage records (standard logging v2 to CloudWatch Logs)', () => {
  let main: Synthesized;
  beforeAll(async () => {
    main = await synth({ env: { account: ACCOUNT, region: 'us-east-1' } });
  });

  it('delivers exactly the fields catalog usage reads, as JSON, from the distribution to the usage log group', () => {
    const t = main.template;
    t.resourceCountIs('AWS::Logs::DeliverySource', 1);
    t.resourceCountIs('AWS::Logs::DeliveryDestination', 1);
    t.resourceCountIs('AWS::Logs::Delivery', 1);
    const distribution = logicalId(t, 'AWS::CloudFront::Distribution', 'Distribution');
    const source = logicalId(t, 'AWS::Logs::DeliverySource', 'UsageLogsSource');
    const destination = logicalId(t, 'AWS::Logs::DeliveryDestination', 'UsageLogsDestination');
    const group = logicalId(t, 'AWS::Logs::LogGroup', 'UsageLogsGroup');
    t.hasResourceProperties('AWS::Logs::DeliverySource', {
      LogType: 'ACCESS_LOGS',
      ResourceArn: {
        'Fn::Join': ['', [`arn:aws:cloudfront::${ACCOUNT}:distribution/`, { Ref: distribution }]],
      },
    });
    t.hasResourceProperties('AWS::Logs::DeliveryDestination', {
      DestinationResourceArn: { 'Fn::GetAtt': [group, 'Arn'] },
      OutputFormat: 'json',
    });
    const delivery = Object.values(t.findResources('AWS::Logs::Delivery'))[0] as {
      Properties: Record<string, unknown>;
      DependsOn: string[];
    };
    const sourceName = (
      t.findResources('AWS::Logs::DeliverySource')[source] as { Properties: { Name: string } }
    ).Properties.Name;
    expect(sourceName).toBe('TrainingPlanCatalog-usage-source');
    expect(delivery.Properties).toEqual({
      DeliverySourceName: sourceName,
      DeliveryDestinationArn: { 'Fn::GetAtt': [destination, 'Arn'] },
      RecordFields: [
        'date',
        'time',
        'sc-status',
        'sc-bytes',
        'time-taken',
        'x-edge-result-type',
        'x-edge-location',
        'viewer-request-log-data',
      ],
    });
    expect(delivery.DependsOn).toContain(source);
  });

  it('keeps the records 400 days by default in a group named after the stack and this creation of it, kept when the stack goes (not when its first create fails)', () => {
    const t = main.template;
    const name = { 'Fn::Join': ['', ['/aws/vendedlogs/TrainingPlanCatalog/usage/', STACK_ID_PART]] };
    t.hasResource('AWS::Logs::LogGroup', {
      Properties: { LogGroupName: name, RetentionInDays: 400 },
      DeletionPolicy: 'RetainExceptOnCreate',
      UpdateReplacePolicy: 'Retain',
    });
    t.hasOutput('UsageLogGroupName', { Value: name });
  });

  it('creates the delivery’s destination after the group’s resource policy, as CDK’s own delivery constructs do', () => {
    const t = main.template;
    const policy = logicalId(t, 'AWS::Logs::ResourcePolicy', 'UsageLogsDeliveryPolicy');
    const destination = logicalId(t, 'AWS::Logs::DeliveryDestination', 'UsageLogsDestination');
    expect(t.toJSON().Resources[destination].DependsOn).toEqual([policy]);
  });

  it('lets only the log delivery service of this account write to the group', () => {
    const policies = Object.values(main.template.findResources('AWS::Logs::ResourcePolicy')) as {
      Properties: { PolicyDocument: unknown };
    }[];
    expect(policies).toHaveLength(1);
    expect(JSON.parse(joined(policies[0]?.Properties.PolicyDocument))).toEqual({
      Statement: [
        {
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Condition: {
            StringEquals: { 'aws:SourceAccount': '<AWS::AccountId>' },
            ArnLike: { 'aws:SourceArn': 'arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:*' },
          },
          Effect: 'Allow',
          Principal: { Service: 'delivery.logs.amazonaws.com' },
          Resource: '<UsageLogsGroup.Arn>',
        },
      ],
      Version: '2012-10-17',
    });
  });

  it('puts requests per partner and 401s per reason on the dashboard', () => {
    const widgets = dashboardWidgets(main.template);
    expect(widgets.find((w) => w.properties.title === 'Requests per partner (hourly)')?.properties).toEqual({
      view: 'timeSeries',
      title: 'Requests per partner (hourly)',
      region: 'us-east-1',
      query: [
        "SOURCE '/aws/vendedlogs/TrainingPlanCatalog/usage/<stack id>' | fields `viewer-request-log-data` as data",
        'parse data /^(?<partner>[a-z0-9-]+)/',
        'filter ispresent(partner) and partner not in ["no-key", "unknown-key", "expired-key", "many-keys", "discipline", "method", "path", "page"]',
        'stats count(*) as requests by bin(1h), partner',
      ].join('\n| '),
      stacked: false,
    });
    // The deployment's own checks' refusals (`monitoring.no-key`…) are not the partners'.
    expect(
      widgets.find((w) => w.properties.title === "Partners' 401s per reason (hourly)")?.properties,
    ).toEqual({
      view: 'timeSeries',
      title: "Partners' 401s per reason (hourly)",
      region: 'us-east-1',
      query: [
        "SOURCE '/aws/vendedlogs/TrainingPlanCatalog/usage/<stack id>' | fields `viewer-request-log-data` as data, `sc-status` as status",
        'filter status = 401 and data not like /^monitoring([.]|$)/',
        'parse data /(?<reason>[a-z-]+)$/',
        'stats count(*) as refusals by bin(1h), reason',
      ].join('\n| '),
      stacked: false,
    });
  });

  it('takes a retention the log group offers, and refuses another naming the prop', async () => {
    const t = (await synth({ usageLogRetentionDays: 30 })).template;
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    await expect(synth({ usageLogRetentionDays: 31 })).rejects.toThrow(
      /usageLogRetentionDays.*must be one of the retention periods CloudWatch Logs offers: 1, 3, 5, 7, 14, 30/,
    );
  });

  it('delivers nothing when switched off, and leaves the dashboard without the widgets', async () => {
    const t = (await synth({ usageLogging: false })).template;
    for (const type of [
      'AWS::Logs::DeliverySource',
      'AWS::Logs::DeliveryDestination',
      'AWS::Logs::Delivery',
      'AWS::Logs::MetricFilter',
    ])
      t.resourceCountIs(type, 0);
    expect(dashboardWidgets(t).filter((w) => w.type === 'log')).toEqual([]);
    expect(Object.keys(t.findOutputs('UsageLogGroupName'))).toEqual([]);
  });

  it('puts the delivery in the us-east-1 companion for a stack elsewhere, and the widgets and the group’s name on the stack', async () => {
    const { stack, template } = await synth({ env: { account: ACCOUNT, region: 'eu-west-1' } });
    template.resourceCountIs('AWS::Logs::Delivery', 0);
    const edge = Template.fromStack(
      (stack.node.scope as App).node.tryFindChild('TrainingPlanCatalog-edge-eu-west-1') as CatalogStack,
    );
    edge.resourceCountIs('AWS::Logs::Delivery', 1);
    // The partner traffic's metric filters are on the group, in the companion, beside the alarm that reads them,
    // in the namespace of this deployment (its region in it: the same name elsewhere would be another's).
    template.resourceCountIs('AWS::Logs::MetricFilter', 0);
    const namespace = 'TrainingPlanCatalog/TrainingPlanCatalog_eu-west-1';
    const group = Object.keys(edge.findResources('AWS::Logs::LogGroup'))[0];
    for (const name of ['PartnerRequests', 'PartnerClientErrors'])
      edge.hasResourceProperties('AWS::Logs::MetricFilter', {
        LogGroupName: { Ref: group },
        MetricTransformations: [
          { MetricName: name, MetricNamespace: namespace, MetricValue: '1', Unit: 'Count' },
        ],
      });
    const alarm = Object.entries(edge.findResources('AWS::CloudWatch::Alarm')).find(([id]) =>
      id.startsWith('Edge4xxAnomaly'),
    )?.[1] as { Properties: { Metrics: { MetricStat?: { Metric: { Namespace: string } } }[] } };
    expect(
      alarm.Properties.Metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.Namespace] : [])),
    ).toEqual([namespace, namespace]);
    // The group's name, computed in the stack, reaches the companion whole, as the stack's output of that
    // name: one Fn::GetStackOutput, nested in nothing (cfn-lint refuses one inside Fn::Split).
    const name = { 'Fn::Join': ['', ['/aws/vendedlogs/TrainingPlanCatalog/usage/', STACK_ID_PART]] };
    template.hasOutput('UsageLogGroupName', { Value: name });
    edge.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: {
        'Fn::GetStackOutput': {
          StackName: 'TrainingPlanCatalog',
          Region: 'eu-west-1',
          OutputName: 'UsageLogGroupName',
        },
      },
    });
    expect(JSON.stringify(edge.toJSON())).not.toMatch(/"Fn::Split":\["\/",\{"Fn::GetStackOutput"/);
    // The distribution's ARN reaches it whole too, as the stack's output of that name: nothing is joined around
    // a stack output (no Fn::GetStackOutput inside Fn::Join).
    template.hasOutput('DistributionArn', {
      Value: {
        'Fn::Join': [
          '',
          [
            `arn:aws:cloudfront::${ACCOUNT}:distribution/`,
            { Ref: logicalId(template, 'AWS::CloudFront::Distribution', 'Distribution') },
          ],
        ],
      },
    });
    edge.hasResourceProperties('AWS::Logs::DeliverySource', {
      ResourceArn: {
        'Fn::GetStackOutput': {
          StackName: 'TrainingPlanCatalog',
          Region: 'eu-west-1',
          OutputName: 'DistributionArn',
        },
      },
    });
    const joinsAnOutput = (value: unknown): boolean =>
      Array.isArray(value)
        ? value.some(joinsAnOutput)
        : typeof value === 'object' && value !== null
          ? Object.entries(value).some(([key, inner]) =>
              key === 'Fn::Join'
                ? JSON.stringify(inner).includes('Fn::GetStackOutput')
                : joinsAnOutput(inner),
            )
          : false;
    expect(joinsAnOutput(edge.toJSON())).toBe(false);
    expect(Object.keys(edge.findOutputs('UsageLogGroupName'))).toEqual([]);
    const widget = dashboardWidgets(template).find(
      (w) => w.properties.title === 'Requests per partner (hourly)',
    );
    expect(widget?.properties.region).toBe('us-east-1');
  });

  it('outside us-east-1, builds both stacks with no deprecated CDK API (a deprecation warning on every synth)', () => {
    // CDK prints a deprecated call's warning once per process; `fail` makes it an error instead.
    vi.stubEnv('JSII_DEPRECATED', 'fail');
    try {
      expect(() => constructStack({ env: { account: ACCOUNT, region: 'eu-central-1' } })).not.toThrow();
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
