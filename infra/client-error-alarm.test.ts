/**
 * The 4xx anomaly alarm judges the partners, not the canary: its actual inputs, as the synthesized template
 * declares them (the usage log group's metric filters and the alarm's metric math), evaluated on usage records of
 * real requests — the local edge running the built bundles, answering the local canary's runs and ten partners'
 * traffic (testing/served-log.ts) — turned into the records the distribution delivers (infra/usage-logs.ts).
 * One partner of ten losing its key moves the alarm's metric by 10 points with the canary running or not; the
 * partners pausing leaves it without a value, which the alarm reads as not breaching. CloudFront's own 4xx rate,
 * the alarm's input before, is computed beside it for comparison.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessLogEntry } from '../gateway/local/server.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { hashKey, storeKeyOf } from '../keys/keys.ts';
import { issueKey } from '../keys/manage.ts';
import { httpRequest } from '../testing/cli.ts';
import { logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import { evaluateMath, parseFilterPattern, type RecordTest } from '../testing/metric-filter.ts';
import { type LoggedWorld, runLocalCanaryOnce, serveWorldLogged } from '../testing/served-log.ts';
import { RECORD_FIELDS } from './usage-logs.ts';

type Resource = { Properties: Record<string, unknown> };
type Query = {
  Id: string;
  Expression?: string;
  MetricStat?: { Metric: { Namespace: string; MetricName: string }; Stat: string; Period: number };
};
type UsageRecord = Readonly<Record<string, unknown>>;

/** The record the distribution delivers for an access-log entry: the stack's fields, as text (or numbers). */
function usageRecord(entry: AccessLogEntry, statusAs: 'text' | 'number' = 'text'): UsageRecord {
  const at = new Date(entry.time);
  const values: Record<(typeof RECORD_FIELDS)[number], unknown> = {
    date: at.toISOString().slice(0, 10),
    time: at.toISOString().slice(11, 19),
    'sc-status': statusAs === 'text' ? String(entry.status) : entry.status,
    'sc-bytes': String(entry.bytes),
    'time-taken': String(entry.ms / 1000),
    'x-edge-result-type': entry.status < 400 ? 'Hit' : 'Error',
    'x-edge-location': 'LOCAL1',
    // CloudFront URL-encodes it, `-` when the function recorded nothing.
    'viewer-request-log-data': entry.logData === null ? '-' : encodeURIComponent(entry.logData),
  };
  return Object.fromEntries(RECORD_FIELDS.map((field) => [field, values[field]]));
}

/** The alarm's metric for one 5-minute period's records: the template's filters and expression, evaluated. */
interface AlarmInput {
  /** The value the band judges (null: none in the period), and each counted metric's Sum. */
  evaluate(records: readonly UsageRecord[]): { value: number | null; sums: Record<string, number | null> };
}

/** Reads the 4xx alarm's inputs from the template: the expression the band is on, each metric's filter. */
function alarmInput(synthesized: Synthesized): AlarmInput {
  const template = synthesized.template;
  const alarm = template.findResources('AWS::CloudWatch::Alarm')[
    logicalId(template, 'AWS::CloudWatch::Alarm', 'Edge4xxAnomaly')
  ] as Resource;
  const queries = alarm.Properties.Metrics as Query[];
  const band = queries.find((q) => q.Id === alarm.Properties.ThresholdMetricId);
  const judged = /^ANOMALY_DETECTION_BAND\((\w+),/.exec(band?.Expression ?? '')?.[1];
  const expression = queries.find((q) => q.Id === judged)?.Expression;
  if (!expression) throw new Error('the alarm judges no expression');
  const filters = Object.values(
    template.findResources('AWS::Logs::MetricFilter') as Record<string, Resource>,
  );
  const counted: { id: string; test: RecordTest; value: number }[] = queries.flatMap((q) => {
    if (!q.MetricStat) return [];
    expect(q.MetricStat).toMatchObject({ Stat: 'Sum', Period: 300 });
    const { Namespace, MetricName } = q.MetricStat.Metric;
    const filter = filters.find((f) => {
      const [transformation] = f.Properties.MetricTransformations as {
        MetricName: string;
        MetricNamespace: string;
      }[];
      return transformation?.MetricName === MetricName && transformation.MetricNamespace === Namespace;
    });
    if (!filter) throw new Error(`no metric filter writes ${Namespace} ${MetricName}`);
    const [transformation] = filter.Properties.MetricTransformations as { MetricValue: string }[];
    const pattern = filter.Properties.FilterPattern as string;
    return [{ id: q.Id, test: parseFilterPattern(pattern), value: Number(transformation?.MetricValue) }];
  });
  return {
    evaluate(records) {
      // A metric filter's Sum over a period: its value per matching record; no match, no datapoint.
      const sums: Record<string, number | null> = {};
      for (const { id, test, value } of counted) {
        const matched = records.filter(test).length;
        sums[id] = matched === 0 ? null : matched * value;
      }
      return { value: evaluateMath(expression, sums), sums };
    },
  };
}

/** CloudFront's 4xxErrorRate over the same requests (the alarm's input before): every request counts. */
const cloudFrontRate = (records: readonly UsageRecord[]) =>
  records.length === 0
    ? null
    : (100 * records.filter((r) => String(r['sc-status']).startsWith('4')).length) / records.length;

const PARTNERS = Array.from({ length: 10 }, (_, i) => `partner${String(i + 1).padStart(2, '0')}`);

describe("the 4xx alarm's inputs, evaluated on the usage records of the canary and ten partners", () => {
  let synthesized: Synthesized;
  let served: LoggedWorld;
  const keys = new Map<string, string>();
  /** The entries of each part of the traffic, as the local edge logged them. */
  const traffic: Record<'canary' | 'healthy' | 'lostKey', AccessLogEntry[]> = {
    canary: [],
    healthy: [],
    lostKey: [],
  };

  /** One partner's 5 minutes: each catalog read twice, plain and conditional, brotli as a good client asks. */
  const partnerPeriod = async (partner: string) => {
    const key = keys.get(partner) as string;
    for (const target of ['/api/plans', '/api/plans?discipline=running', '/api/plans?discipline=strength'])
      for (const conditional of [false, true])
        for (let i = 0; i < 2; i += 1)
          await httpRequest(served.url, {
            method: 'GET',
            target,
            headers: [
              ['X-Api-Key', key],
              ['Accept-Encoding', 'br'],
              ...(conditional ? ([['If-None-Match', '*']] as [string, string][]) : []),
            ],
          });
  };
  /** What the edge logs while `work` runs. */
  const logged = async (work: () => Promise<unknown>) => {
    const from = served.entries.length;
    await work();
    return served.entries.slice(from);
  };

  beforeAll(async () => {
    synthesized = await synthStack({ env: { account: '123456789012', region: 'us-east-1' } });
    served = await serveWorldLogged();
    const store = new FileKeyValueStore(served.world.stores.plain);
    for (const partner of PARTNERS)
      keys.set(partner, (await issueKey(store, { partner, now: new Date() })).key);
    traffic.canary = await logged(() => runLocalCanaryOnce(served));
    traffic.healthy = await logged(async () => {
      for (const partner of PARTNERS) await partnerPeriod(partner);
    });
    // The last partner's key is revoked (lost): its requests are refused from now on.
    const lost = PARTNERS.at(-1) as string;
    await store.update((entries) => {
      entries.delete(storeKeyOf(hashKey(keys.get(lost) as string)));
    });
    traffic.lostKey = await logged(async () => {
      for (const partner of PARTNERS) await partnerPeriod(partner);
    });
  });
  afterAll(async () => {
    await served?.close();
  });

  it('moves as much when one partner of ten loses its key with the canary running as without it, and not when partners pause', () => {
    const input = alarmInput(synthesized);
    for (const statusAs of ['text', 'number'] as const) {
      const records = (entries: readonly AccessLogEntry[]) => entries.map((e) => usageRecord(e, statusAs));
      const canary = records(traffic.canary);
      const healthy = records(traffic.healthy);
      const lostKey = records(traffic.lostKey);
      // The traffic is what it says: the canary refused on purpose, partners served, one partner refused.
      expect(canary.filter((r) => String(r['sc-status']).startsWith('4')).length).toBeGreaterThan(40);
      expect(healthy.every((r) => Number(r['sc-status']) < 400)).toBe(true);
      expect(lostKey.filter((r) => Number(r['sc-status']) === 401)).toHaveLength(healthy.length / 10);

      const periods = {
        'partners, canary running': [...healthy, ...canary],
        'partners, no canary': healthy,
        'one partner lost its key, canary running': [...lostKey, ...canary],
        'one partner lost its key, no canary': lostKey,
        'partners paused, canary running': canary,
      };
      const metric = Object.fromEntries(
        Object.entries(periods).map(([name, period]) => [name, input.evaluate(period).value]),
      );
      const before = Object.fromEntries(
        Object.entries(periods).map(([name, period]) => [name, cloudFrontRate(period)]),
      );
      const round = (n: number | null) => (n === null ? null : Math.round(n * 100) / 100);
      if (statusAs === 'text')
        console.info(
          `per 5 minutes: ${canary.length} canary requests, ${healthy.length} partner requests\n${Object.keys(
            periods,
          )
            .map(
              (name) =>
                `  ${name}: alarm's metric ${round(metric[name] ?? null) ?? 'no value'}, CloudFront's 4xx rate ${round(before[name] ?? null)}`,
            )
            .join('\n')}`,
        );

      // The canary is not in the metric: the same value with it and without it.
      expect(metric['partners, canary running']).toBe(metric['partners, no canary']);
      expect(metric['partners, canary running']).toBe(0);
      expect(metric['one partner lost its key, canary running']).toBe(
        metric['one partner lost its key, no canary'],
      );
      // One partner of ten, with an equal share of the requests: 10 points, canary or not.
      expect(metric['one partner lost its key, canary running']).toBeCloseTo(10, 10);
      // Partners paused: no partner request, no value; the alarm reads a missing value as not breaching.
      expect(metric['partners paused, canary running']).toBeNull();
      expect(input.evaluate(canary).sums).toEqual({ errors: null, requests: null });

      // Before, the canary's refusals were in CloudFront's rate: far from 0, a smaller step, a jump on pausing.
      const healthyBefore = before['partners, canary running'] as number;
      expect(healthyBefore).toBeGreaterThan(15);
      expect((before['one partner lost its key, canary running'] as number) - healthyBefore).toBeLessThan(8);
      expect(before['partners paused, canary running'] as number).toBeGreaterThan(healthyBefore + 10);
    }
    const alarm = synthesized.template.findResources('AWS::CloudWatch::Alarm')[
      logicalId(synthesized.template, 'AWS::CloudWatch::Alarm', 'Edge4xxAnomaly')
    ] as Resource;
    expect(alarm.Properties.TreatMissingData).toBe('notBreaching');
  });
});
