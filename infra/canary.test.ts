/**
 * The canary in the stack (infra/README.md "The canary"): its schedule, its function on the builder's runtime,
 * its role's exact permissions, its two alarms and their periods, its dashboard row, and the settings that
 * turn it off or refuse a deadline its period cannot hold.
 */
import { describe, expect, it } from 'vitest';
import { parseCanaryEnvironment } from '../app/settings/environment.ts';
import { STATE_CANARY } from '../contract/index.ts';
import { CANARY_METRICS } from '../contract/metrics.ts';
import { LAMBDA_BUNDLE } from '../lambda/bundling.ts';
import { constructStack, logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import { CatalogStackPropsError } from './stack.ts';

const MONITORING =
  'arn:aws:secretsmanager:us-east-1:123456789012:secret:TrainingPlanCatalog/monitoring-key-AbCdEf';
const CERT = 'arn:aws:acm:us-east-1:123456789012:certificate/0f2b1c3d-1111-2222-3333-444455556666';
const WITH_CANARY = {
  monitoringKeySecretArn: MONITORING,
  corsOrigin: 'https://app.example.com',
  domainName: 'catalog.example.com',
  certificateArn: CERT,
};

const resources = (s: Synthesized, type: string) => s.template.findResources(type);
const canaryOf = (s: Synthesized) =>
  resources(s, 'AWS::Lambda::Function')[logicalId(s.template, 'AWS::Lambda::Function', 'Canary')]
    ?.Properties as Record<string, unknown>;
const alarmNamed = (s: Synthesized, id: string) =>
  resources(s, 'AWS::CloudWatch::Alarm')[logicalId(s.template, 'AWS::CloudWatch::Alarm', id)]
    ?.Properties as Record<string, unknown>;

describe('the canary in the stack', () => {
  it('runs every 5 minutes by default, on the builder runtime, with the public base URL and the CORS origin', async () => {
    const s = await synthStack(WITH_CANARY);
    const canary = canaryOf(s);
    const canaryId = logicalId(s.template, 'AWS::Lambda::Function', 'Canary');
    expect(canary).toMatchObject({ Runtime: LAMBDA_BUNDLE.runtime, Architectures: ['arm64'], Timeout: 140 });
    // What it holds the deployment to, for a hand-run catalog check --deployment too.
    s.template.hasOutput('CorsOrigin', { Value: 'https://app.example.com' });
    s.template.hasOutput('CanaryFunctionName', {});
    const variables = (canary.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables).toMatchObject({
      CATALOG_BASE_URL: 'https://catalog.example.com',
      CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING,
      CATALOG_CORS_ORIGIN: 'https://app.example.com',
      CATALOG_CHECK_DEADLINE: '2m',
      CATALOG_CANARY_RATE_MINUTES: '5',
    });
    // The environment the stack writes is one the canary reads (its bucket is a token here).
    expect(() =>
      parseCanaryEnvironment({ ...variables, CATALOG_BUCKET: 'catalog-origin' } as Record<string, string>),
    ).not.toThrow();
    const schedules = Object.values(resources(s, 'AWS::Scheduler::Schedule')).filter((r) =>
      JSON.stringify(r.Properties.Target.Arn).includes(canaryId),
    );
    expect(schedules).toHaveLength(1);
    expect(schedules[0]?.Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      Target: { RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
  });

  it('its role: its own log group, that one secret, that one object under state/; nothing else', async () => {
    const s = await synthStack(WITH_CANARY);
    const role = logicalId(s.template, 'AWS::IAM::Role', 'CanaryRole');
    expect(resources(s, 'AWS::IAM::Role')[role]?.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = Object.values(resources(s, 'AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[]);
    const bucket = logicalId(s.template, 'AWS::S3::Bucket', 'Origin');
    const logs = logicalId(s.template, 'AWS::Logs::LogGroup', 'CanaryLogs');
    expect(statements).toEqual([
      {
        Sid: 'OwnLogs',
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [logs, 'Arn'] },
      },
      {
        Sid: 'ReadMonitoringKey',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: MONITORING,
      },
      {
        Sid: 'WriteReport',
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${STATE_CANARY}`]] },
      },
    ]);
  });

  it('alarms on a row failing in two consecutive runs and on two periods without a report, naming the runbook', async () => {
    const s = await synthStack(WITH_CANARY);
    const failed = alarmNamed(s, 'ConformanceFailed');
    expect(failed).toMatchObject({
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      // No report is the silence alarm's: this one neither fires nor clears on missing data.
      TreatMissingData: 'missing',
    });
    const metrics = failed.Metrics as {
      Id: string;
      Expression?: string;
      MetricStat?: { Period: number; Metric: { MetricName: string } };
    }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('failed + notrun + unreachable');
    expect(
      metrics.flatMap((m) => (m.MetricStat ? [[m.MetricStat.Metric.MetricName, m.MetricStat.Period]] : [])),
    ).toEqual([
      [CANARY_METRICS.failedRows.name, 300],
      [CANARY_METRICS.rowsNotRun.name, 300],
      [CANARY_METRICS.unreachable.name, 300],
    ]);
    const silent = alarmNamed(s, 'ConformanceSilent');
    expect(silent).toMatchObject({
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
    expect((silent.Metrics as { MetricStat?: unknown }[]).map((m) => m.MetricStat)).toMatchObject([
      { Metric: { MetricName: CANARY_METRICS.runDuration.name }, Period: 300, Stat: 'SampleCount' },
    ]);
    for (const alarm of [failed, silent])
      expect(String(alarm.AlarmDescription)).toMatch(/Runbook "the canary .*" in infra\/README\.md/);
  });

  it('shows the conformance of the last 24 h on the dashboard', async () => {
    const s = await synthStack(WITH_CANARY);
    const body = JSON.stringify(
      Object.values(resources(s, 'AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    expect(body).toContain('Conformance: rows failed or not run per canary run (last 24 h)');
    expect(body).toContain(CANARY_METRICS.failedRows.name);
    expect(body).toContain('\\"start\\":\\"-P1D\\"');
  });

  it("a quiet deployment does not alarm from the canary's 4xx alone: one run, the same requests, in every 4xx period", async () => {
    // The 4xx anomaly alarm judges the 4xx rate per 5-minute period; the canary runs once per such period and
    // sends the same requests every run (lambda/canary.test.ts counts them against the local edge), so with no
    // partner traffic each period's rate is the same number: a flat series, inside any band trained on it.
    const s = await synthStack(WITH_CANARY);
    const anomaly = alarmNamed(s, 'Edge4xxAnomaly');
    const period = (anomaly.Metrics as { MetricStat?: { Period: number } }[]).find((m) => m.MetricStat)
      ?.MetricStat?.Period;
    expect(anomaly.TreatMissingData).toBe('notBreaching');
    // The canary's schedule as synthesized: the runs in each of that alarm's periods.
    const schedule = Object.values(resources(s, 'AWS::Scheduler::Schedule')).find((r) =>
      JSON.stringify(r.Properties).includes('canary'),
    )?.Properties as { ScheduleExpression: string };
    const minutes = Number(/^rate\((\d+) minutes?\)$/.exec(schedule.ScheduleExpression)?.[1]);
    expect((period ?? 0) / (minutes * 60)).toBe(1);
  });

  it('is off with canaryEnabled false, and absent without a monitoring key secret', async () => {
    for (const props of [{ ...WITH_CANARY, canaryEnabled: false }, {}]) {
      const s = await synthStack(props);
      expect(
        Object.keys(resources(s, 'AWS::Lambda::Function')).filter((id) => id.startsWith('Canary')),
      ).toEqual([]);
      expect(
        Object.keys(resources(s, 'AWS::CloudWatch::Alarm')).filter((id) => id.startsWith('Conformance')),
      ).toEqual([]);
      expect(
        Object.keys(resources(s, 'AWS::Scheduler::Schedule')).filter((id) => id.startsWith('Canary')),
      ).toEqual([]);
    }
  });

  it('gives its function a whole number of seconds, within Lambda’s longest timeout', async () => {
    const s = await synthStack({ ...WITH_CANARY, checkDeadline: '100500ms' });
    expect(canaryOf(s)).toMatchObject({ Timeout: 121 });
    expect(() => constructStack({ ...WITH_CANARY, canaryRateMinutes: 60, checkDeadline: '20m' })).toThrow(
      "checkDeadline 20m: with the 20s the canary keeps to store its report, must fit Lambda's longest timeout (15 minutes)",
    );
  });

  it('refuses a deadline its period cannot hold', () => {
    expect(() => constructStack({ ...WITH_CANARY, checkDeadline: '290s' })).toThrow(CatalogStackPropsError);
    expect(() => constructStack({ ...WITH_CANARY, checkDeadline: '290s' })).toThrow(
      'checkDeadline 290s: with the 20s the canary keeps to store its report, must be shorter than canaryRateMinutes (5 minutes), or its runs would overlap',
    );
  });
});
