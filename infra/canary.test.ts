/**
 * The canary in the stack (infra/README.md "The canary"): its two schedules (the probe, the full table), its
 * function on the builder's runtime with the memory setting, its role's exact permissions (the CORS origin read
 * from the store, the probe's report read, both reports written), its full run after each deploy, its alarms per
 * beat and their periods, its dashboard row, and the settings that turn it off or refuse what its periods
 * cannot hold.
 */
import { describe, expect, it } from 'vitest';
import { parseCanaryEnvironment } from '../app/settings/environment.ts';
import { defaultOf } from '../app/settings/index.ts';
import { CANARY_BEATS, STATE_CANARY } from '../contract/index.ts';
import { CANARY_METRICS, METRICS_BEAT_DIMENSION } from '../contract/metrics.ts';
import { LAMBDA_BUNDLE } from '../lambda/bundling.ts';
import { constructStack, logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import { conformanceAlarmId } from './monitoring.ts';
import { CatalogStackPropsError } from './stack.ts';

const MONITORING =
  'arn:aws:secretsmanager:us-east-1:123456789012:secret:TrainingPlanCatalog/monitoring-key-AbCdEf';
const CERT = 'arn:aws:acm:us-east-1:123456789012:certificate/0f2b1c3d-1111-2222-3333-444455556666';
const WITH_CANARY = {
  monitoringKeySecretArn: MONITORING,
  domainName: 'catalog.example.com',
  certificateArn: CERT,
};

type Properties = Record<string, unknown>;
const resources = (s: Synthesized, type: string) => s.template.findResources(type);
const canaryId = (s: Synthesized) => logicalId(s.template, 'AWS::Lambda::Function', 'Canary');
const canaryOf = (s: Synthesized) =>
  resources(s, 'AWS::Lambda::Function')[canaryId(s)]?.Properties as Properties;
const alarmNamed = (s: Synthesized, id: string) =>
  resources(s, 'AWS::CloudWatch::Alarm')[logicalId(s.template, 'AWS::CloudWatch::Alarm', id)]
    ?.Properties as Properties;
/** The canary's schedules: their expression and the event each sends. */
const canarySchedules = (s: Synthesized) =>
  Object.values(resources(s, 'AWS::Scheduler::Schedule'))
    .filter((r) => JSON.stringify(r.Properties.Target.Arn).includes(canaryId(s)))
    .map((r) => ({
      expression: r.Properties.ScheduleExpression as string,
      input: JSON.parse(r.Properties.Target.Input as string) as unknown,
      retries: r.Properties.Target.RetryPolicy?.MaximumRetryAttempts as number,
    }));

describe('the canary in the stack', () => {
  it('runs the probe every 5 minutes and the full table every hour by default, each schedule naming its beat', async () => {
    const s = await synthStack(WITH_CANARY);
    expect(canarySchedules(s).sort((a, b) => a.expression.localeCompare(b.expression))).toEqual([
      { expression: 'rate(1 hour)', input: { beat: 'full' }, retries: 0 },
      { expression: 'rate(5 minutes)', input: { beat: 'probe' }, retries: 0 },
    ]);
    s.template.hasOutput('CanaryScheduleName', {});
    s.template.hasOutput('CanaryFullScheduleName', {});
    const other = await synthStack({ ...WITH_CANARY, canaryRateMinutes: 10, canaryFullRateMinutes: 240 });
    expect(
      canarySchedules(other)
        .map((schedule) => schedule.expression)
        .sort(),
    ).toEqual(['rate(10 minutes)', 'rate(4 hours)']);
  });

  it('on the builder runtime, with the memory setting, the public base URL and the key store, no CORS origin of its own', async () => {
    const s = await synthStack(WITH_CANARY);
    const canary = canaryOf(s);
    expect(canary).toMatchObject({
      Runtime: LAMBDA_BUNDLE.runtime,
      Architectures: ['arm64'],
      Timeout: 140,
      MemorySize: defaultOf('canaryMemoryMiB'),
    });
    s.template.hasOutput('CanaryFunctionName', {});
    const variables = (canary.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables).toMatchObject({
      CATALOG_BASE_URL: 'https://catalog.example.com',
      CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING,
      CATALOG_KVS_ARN: {
        'Fn::GetAtt': [logicalId(s.template, 'AWS::CloudFront::KeyValueStore', 'Keys'), 'Arn'],
      },
      CATALOG_CHECK_DEADLINE: '2m',
      CATALOG_CANARY_RATE_MINUTES: '5',
      CATALOG_CANARY_FULL_RATE_MINUTES: '60',
    });
    // The origin is the store's, read at each run: a deployment holds none of its own.
    expect(variables).not.toHaveProperty('CATALOG_CORS_ORIGIN');
    expect(() => s.template.hasOutput('CorsOrigin', {})).toThrow();
    // The environment the stack writes is one the canary reads (its bucket and store are tokens here).
    expect(() =>
      parseCanaryEnvironment({
        ...variables,
        CATALOG_BUCKET: 'catalog-origin',
        CATALOG_KVS_ARN:
          'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0',
      } as Record<string, string>),
    ).not.toThrow();
    const bigger = await synthStack({ ...WITH_CANARY, canaryMemoryMiB: 1024 });
    expect(canaryOf(bigger)).toMatchObject({ MemorySize: 1024 });
  });

  it('its role: its own log group, that one secret, the store read key by key, its two reports; nothing else', async () => {
    const s = await synthStack(WITH_CANARY);
    const role = logicalId(s.template, 'AWS::IAM::Role', 'CanaryRole');
    expect(resources(s, 'AWS::IAM::Role')[role]?.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = Object.values(resources(s, 'AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Properties[]);
    const bucket = logicalId(s.template, 'AWS::S3::Bucket', 'Origin');
    const store = logicalId(s.template, 'AWS::CloudFront::KeyValueStore', 'Keys');
    const logs = logicalId(s.template, 'AWS::Logs::LogGroup', 'CanaryLogs');
    const object = (key: string) => ({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${key}`]] });
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
        Sid: 'ReadCorsOrigin',
        Effect: 'Allow',
        Action: 'cloudfront-keyvaluestore:GetKey',
        Resource: { 'Fn::GetAtt': [store, 'Arn'] },
      },
      {
        Sid: 'ReadProbeReport',
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: object(STATE_CANARY.probe),
      },
      {
        Sid: 'WriteReports',
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: expect.toSatisfy(
          (resources: unknown[]) =>
            resources.length === CANARY_BEATS.length &&
            CANARY_BEATS.every((beat) =>
              resources.some((r) => JSON.stringify(r) === JSON.stringify(object(STATE_CANARY[beat]))),
            ),
        ),
      },
    ]);
  });

  it('runs the full table after each deploy, once the distribution, the functions and the canary are in place', async () => {
    const s = await synthStack(WITH_CANARY);
    const calls = s.template.findResources('Custom::AWS');
    const id = logicalId(s.template, 'Custom::AWS', 'CanaryAfterDeploy');
    const call = calls[id] as { Properties: Properties; DependsOn: string[] };
    const create = JSON.parse(
      JSON.stringify((call.Properties.Create as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]).replace(
        /\{"Ref":"[^"]+"\}/g,
        '"<canary>"',
      ),
    ) as string[];
    expect(JSON.parse(create.join(''))).toEqual({
      service: 'Lambda',
      action: 'invoke',
      parameters: {
        FunctionName: '<canary>',
        InvocationType: 'Event',
        Payload: JSON.stringify({ beat: 'full', trigger: 'deploy' }),
      },
      physicalResourceId: { id: 'canary-after-deploy' },
    });
    expect(call.Properties.Update).toEqual(call.Properties.Create);
    // A new value at each synthesis: every deploy updates the call, so it runs again.
    expect(Date.parse(String(call.Properties.DeployedAt))).toBeGreaterThan(Date.now() - 600_000);
    for (const [type, prefix] of [
      ['AWS::CloudFront::Distribution', 'Distribution'],
      ['AWS::CloudFront::Function', 'ViewerRequest'],
      ['AWS::CloudFront::Function', 'ViewerResponse'],
      ['AWS::Lambda::Function', 'Canary'],
    ] as const)
      expect(call.DependsOn, prefix).toContain(logicalId(s.template, type, prefix));
    // The call may invoke the canary and nothing else.
    const policy = resources(s, 'AWS::IAM::Policy')[
      logicalId(s.template, 'AWS::IAM::Policy', 'CanaryAfterDeploy')
    ];
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [canaryId(s), 'Arn'] } },
    ]);
    // A later step (a check of the functions) can be ordered before it.
    const stack = constructStack(WITH_CANARY);
    expect(stack.canaryAfterDeploy?.node.id).toBe('CanaryAfterDeploy');
  });

  it('alarms per beat, over its own period: a row failing in two consecutive periods, two periods without a report', async () => {
    const s = await synthStack(WITH_CANARY);
    for (const [beat, period] of [
      ['probe', 300],
      ['full', 3600],
    ] as const) {
      const failed = alarmNamed(s, conformanceAlarmId('Failed', beat));
      expect(failed, beat).toMatchObject({
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        // No report is the silence alarm's: this one does not count a period without one (with none in both it
        // is INSUFFICIENT_DATA, neither ALARM nor OK).
        TreatMissingData: 'missing',
      });
      const metrics = failed.Metrics as {
        Expression?: string;
        MetricStat?: {
          Period: number;
          Stat: string;
          Metric: { MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
        };
      }[];
      expect(metrics.find((m) => m.Expression)?.Expression).toBe('failed + notrun + unreachable');
      const stats = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat] : []));
      expect(stats.map((m) => [m.Metric.MetricName, m.Period, m.Stat])).toEqual([
        [CANARY_METRICS.failedRows.name, period, 'Maximum'],
        [CANARY_METRICS.rowsNotRun.name, period, 'Maximum'],
        [CANARY_METRICS.unreachable.name, period, 'Maximum'],
      ]);
      for (const stat of stats)
        expect(stat.Metric.Dimensions).toContainEqual({ Name: METRICS_BEAT_DIMENSION, Value: beat });
      const silent = alarmNamed(s, conformanceAlarmId('Silent', beat));
      expect(silent, beat).toMatchObject({
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
        TreatMissingData: 'breaching',
      });
      expect((silent.Metrics as { MetricStat?: unknown }[]).map((m) => m.MetricStat)).toMatchObject([
        {
          Metric: {
            MetricName: CANARY_METRICS.runDuration.name,
            Dimensions: expect.arrayContaining([{ Name: METRICS_BEAT_DIMENSION, Value: beat }]),
          },
          Period: period,
          Stat: 'SampleCount',
        },
      ]);
      for (const alarm of [failed, silent])
        expect(String(alarm.AlarmDescription)).toMatch(/Runbook "the canary .*" in infra\/README\.md/);
    }
    expect(
      Object.keys(resources(s, 'AWS::CloudWatch::Alarm')).filter((id) => id.startsWith('Conformance')),
    ).toHaveLength(4);
  });

  it('shows the conformance of both beats over the last 24 h on the dashboard', async () => {
    const s = await synthStack(WITH_CANARY);
    const body = JSON.stringify(
      Object.values(resources(s, 'AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    expect(body).toContain(
      'Conformance: rows failed or not run per canary run, probe and full table (last 24 h)',
    );
    expect(body).toContain(`${CANARY_METRICS.failedRows.name} (probe)`);
    expect(body).toContain(`${CANARY_METRICS.failedRows.name} (full)`);
    expect(body).toContain('\\"start\\":\\"-P1D\\"');
  });

  it('its probe runs once in each period of the 4xx alarm, sending the same requests each time', async () => {
    // The 4xx anomaly alarm judges the 4xx rate per 5-minute period; the probe runs once per such period and
    // sends the same requests every run (lambda/canary.test.ts counts them against the local edge).
    const s = await synthStack(WITH_CANARY);
    const anomaly = alarmNamed(s, 'Edge4xxAnomaly');
    const period = (anomaly.Metrics as { MetricStat?: { Period: number } }[]).find((m) => m.MetricStat)
      ?.MetricStat?.Period;
    const probe = canarySchedules(s).find((schedule) => JSON.stringify(schedule.input).includes('probe'));
    const minutes = Number(/^rate\((\d+) minutes?\)$/.exec(probe?.expression ?? '')?.[1]);
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
      expect(
        Object.keys(s.template.findResources('Custom::AWS')).filter((id) => id.startsWith('Canary')),
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

  it('fails on a deadline its period cannot hold, or a full table more frequent than the probe', () => {
    expect(() => constructStack({ ...WITH_CANARY, checkDeadline: '290s' })).toThrow(CatalogStackPropsError);
    expect(() => constructStack({ ...WITH_CANARY, checkDeadline: '290s' })).toThrow(
      'checkDeadline 290s: with the 20s the canary keeps to store its report, must be shorter than canaryRateMinutes (5 minutes), or its runs would overlap',
    );
    expect(() =>
      constructStack({ ...WITH_CANARY, canaryRateMinutes: 30, canaryFullRateMinutes: 15 }),
    ).toThrow(
      'canaryFullRateMinutes 15: the full table runs no more often than the probe (canaryRateMinutes 30)',
    );
  });
});
