/**
 * What the builder does after each run, through the application layer's publish against real peers (a directory
 * origin with the store file, s3rver with the KeyValueStore API's stand-in, the real local edge): its metrics as
 * one embedded-metric-format line, the catalog age read from the live build after the run; and the propagation
 * check of a publish that moved the pointer.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveLocal } from '../app/local.ts';
import { type PublishRunOptions, type PublishSettings, publish } from '../app/run.ts';
import { renderMessage } from '../app/settings/index.ts';
import { SourceError } from '../contract/errors.ts';
import { DISCIPLINES } from '../contract/index.ts';
import {
  METRICS,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  type MetricsSink,
  plansMetric,
} from '../contract/metrics.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey } from '../keys/manage.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { readPointer } from '../publish/pointer.ts';
import type { PublishTarget } from '../publish/steps.ts';
import { fewPlansFile } from '../testing/aws.ts';
import { ROOT } from '../testing/cli.ts';
import { captureEmf, parseEmf } from '../testing/emf.ts';
import { useScratchDir } from '../testing/scratch.ts';
import {
  publishSummaryOf,
  runClock,
  TARGET_KINDS,
  testPublishSettings,
  usePublishTarget,
} from '../testing/targets.ts';
import { afterRun } from './after-run.ts';
import type { PropagationCheck, PropagationResult } from './propagation.ts';

/** The source of the runs: a few plans of the fixtures (testing/aws.ts), 14: 10 running, 4 strength. */
let PLANS = '';
beforeAll(async () => {
  PLANS = await fewPlansFile();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Publish settings: the defaults, a few plans, an https base URL. */
const settings = (extra: Partial<PublishSettings> = {}) => testPublishSettings(PLANS, extra);
const runOptions = runClock();

/** A publish whose end runs {@link afterRun} as the Lambda handler's does: its outcome and what the check found. */
async function publishThen(
  publishSettings: PublishSettings,
  target: PublishTarget,
  options: PublishRunOptions,
  how: { readonly metrics?: MetricsSink; readonly propagation?: PropagationCheck },
) {
  let propagation: PropagationResult | undefined;
  const check = how.propagation ?? { key: async () => undefined, maxWaitMs: 0, intervalMs: 100 };
  // Without a sink of the test's, the figures go nowhere (no EMF line printed).
  const quiet = { addMetric() {}, addMetadata() {}, publishStoredMetrics() {} } as unknown as MetricsSink;
  const metrics = how.metrics ?? quiet;
  const outcome = await publish(publishSettings, target, {
    ...options,
    ended: async (run) => {
      const after = {
        target,
        baseUrl: publishSettings.baseUrl,
        metrics,
        propagation: check,
        present: (line: string) => renderMessage(line, 'lambda'),
      };
      propagation = await afterRun(run, after, () => {});
    },
  });
  return { outcome, propagation };
}

describe.each(TARGET_KINDS)('the metrics of a run, on %s', (kind) => {
  const under = usePublishTarget(kind, 'catalog-after-run-');

  it('sends its figures as one EMF line, the catalog age read from the live build after the run', async () => {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
    // A fake clock stopped 90 s after the first run started: the second starts a minute after the first.
    const started = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: started + 90_000 });
    const published = await captureEmf(() =>
      publishThen(
        settings({ skipInvalid: true, source: `${ROOT}/fixtures/invalid/title-empty.json` }),
        under.target,
        { ...runOptions(), now: new Date(started) },
        { metrics },
      ),
    );
    expect(published.lines).toHaveLength(1);
    const emf = parseEmf(published.lines[0] ?? '');
    expect(emf.namespace).toBe(METRICS_NAMESPACE);
    const { counts } = publishSummaryOf(published.result.outcome.summary);
    const plans = Object.fromEntries(
      DISCIPLINES.map((d) => [METRICS[plansMetric(d)].name, { value: counts[d] }]),
    );
    expect(Object.keys(emf.metrics).sort()).toEqual(
      ['BuildDuration', 'CatalogAge', 'InvalidRows', ...Object.keys(plans), 'RunSucceeded'].sort(),
    );
    expect(emf.metrics).toMatchObject({
      RunSucceeded: { value: 1 },
      ...plans,
      InvalidRows: { value: 1 },
      CatalogAge: { unit: 'Seconds', value: 90 },
    });
    expect(emf.members).toMatchObject({
      outcome: 'published',
      buildId: publishSummaryOf(published.result.outcome.summary).buildId,
    });

    const failed = await captureEmf(() =>
      publishThen(
        settings({ source: `${under.dir}/gone.json` }),
        under.target,
        { ...runOptions(), now: new Date(started + 60_000) },
        { metrics },
      ).catch((error: unknown) => error),
    );
    expect(failed.result).toBeInstanceOf(SourceError);
    const after = parseEmf(failed.lines[0] ?? '');
    expect(after.metrics).toMatchObject({ RunFailed: { value: 1 }, CatalogAge: { value: 90 } });
    expect(after.metrics.RunSucceeded).toBeUndefined();
    expect(after.members.outcome).toBe('failed');
  });
});

describe('the propagation check after a publish, through the local edge over the same origin and store', () => {
  const scratch = useScratchDir({ prefix: 'catalog-run-edge-' });

  it('measures how long the edge took to serve the new build, with the monitoring key', async () => {
    const store = `${scratch.dir}/kvs.json`;
    const { key } = await issueKey(new FileKeyValueStore(store, { create: true }), {
      partner: 'monitoring',
      now: new Date(),
    });
    const edge = await serveLocal(
      { origin: `${scratch.dir}/origin`, store, port: 0, host: '127.0.0.1' },
      () => {},
    );
    try {
      const target = {
        origin: new DirectoryOrigin(`${scratch.dir}/origin`),
        kvs: new FileKeyValueStore(store, { create: true }),
      };
      const check = { key: async () => key, maxWaitMs: 10_000, intervalMs: 100 };
      const first = await publishThen(settings({ baseUrl: edge.url }), target, runOptions(), {
        propagation: check,
      });
      expect(first.propagation).toMatchObject({ outcome: 'measured', polls: 1 });
      const identical = await publishThen(settings({ baseUrl: edge.url }), target, runOptions(), {
        propagation: check,
      });
      expect(identical.propagation).toEqual({
        outcome: 'skipped',
        reason: 'nothing was published (skipped-identical)',
      });
    } finally {
      await edge.close();
    }
  });

  it('records a timeout as such when the edge never serves the new build, and the run still succeeds', async () => {
    // An edge stuck on an old catalog.
    let served = 0;
    const stuck = http.createServer((_req, res) => {
      served += 1;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"generatedAt":"2020-01-01T00:00:00.000Z","plans":[]}');
    });
    stuck.listen(0, '127.0.0.1');
    await once(stuck, 'listening');
    const target = {
      origin: new DirectoryOrigin(`${scratch.dir}/origin`),
      kvs: new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true }),
    };
    try {
      const baseUrl = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}`;
      const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
      const { result, lines } = await captureEmf(() =>
        publishThen(settings({ baseUrl }), target, runOptions(), {
          metrics,
          propagation: { key: async () => 'tpc_monitoring', maxWaitMs: 1_000, intervalMs: 200 },
        }),
      );
      expect(result.outcome.summary.result).toBe('published');
      expect(result.outcome.record.outcome).toBe('published');
      expect(result.propagation).toMatchObject({
        outcome: 'timeout',
        lastSeen: 'generatedAt 2020-01-01T00:00:00.000Z',
      });
      const waited = result.propagation?.outcome === 'timeout' ? result.propagation.waitedSeconds : 0;
      expect(waited).toBeGreaterThanOrEqual(1);
      expect(result.propagation).toMatchObject({ polls: served });
      const emf = parseEmf(lines[0] ?? '');
      expect(emf.metrics.PropagationSeconds).toBeUndefined();
      expect(emf.metrics.RunSucceeded?.value).toBe(1);
      expect(emf.members).toMatchObject({
        propagation: 'timeout',
        propagationDetail: `still serving generatedAt 2020-01-01T00:00:00.000Z after ${waited} s`,
      });
    } finally {
      stuck.closeAllConnections();
      await new Promise<void>((resolve) => stuck.close(() => resolve()));
    }
  });

  it('is skipped, and says so, without a monitoring key', async () => {
    const target = {
      origin: new DirectoryOrigin(`${scratch.dir}/origin`),
      kvs: new FileKeyValueStore(`${scratch.dir}/kvs.json`, { create: true }),
    };
    const { outcome, propagation } = await publishThen(settings(), target, runOptions(), {
      propagation: { key: async () => undefined, maxWaitMs: 10_000, intervalMs: 100 },
    });
    expect(propagation).toEqual({
      outcome: 'skipped',
      reason: 'no monitoring key is configured (CATALOG_MONITORING_KEY_SECRET_ARN)',
    });
    expect((await readPointer(target.kvs)).live).toBe(publishSummaryOf(outcome.summary).buildId);
  });
});
