/**
 * The builder's metrics of a run: the figures under contract/metrics.ts's names (which the stack's alarms
 * read), and the embedded-metric-format line Powertools' Metrics writes from them, parsed back.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import type { LastRun } from '../app/last-run.ts';
import { DISCIPLINES, perDiscipline } from '../contract/index.ts';
import { METRICS, METRICS_NAMESPACE, METRICS_SERVICE } from '../contract/metrics.ts';
import { planCounts } from '../testing/counts.ts';
import { captureEmf, parseEmf } from '../testing/emf.ts';
import { emitRunMetrics, runFigures } from './run-metrics.ts';

/** Each discipline's metric name (`PlansRunning`…), and its figure in {@link published}: none of a discipline it does not name. */
const PLANS_METRIC = perDiscipline((d) => `Plans${d.charAt(0).toUpperCase()}${d.slice(1)}`);
const COUNTS = planCounts({ running: 22, strength: 21 });
const plansFigures = <T>(figure: (count: number) => T) =>
  Object.fromEntries(DISCIPLINES.map((d) => [PLANS_METRIC[d], figure(COUNTS[d])]));

const published: LastRun = {
  started: '2026-03-01T10:00:00.000Z',
  finished: '2026-03-01T10:00:04.000Z',
  outcome: 'published',
  reason: 'published build 20260301T100000Z-0123abcd (43 plans); the live build was (none)',
  buildId: '20260301T100000Z-0123abcd',
  counts: COUNTS,
  plans: 43,
  invalidRows: 2,
  durationMs: 4000,
  confirmed: { at: '2026-03-01T10:00:04.000Z', buildId: '20260301T100000Z-0123abcd' },
};
const failed: LastRun = {
  ...published,
  outcome: 'failed',
  error: 'SourceError',
  reason: 'source http://127.0.0.1:9/plans: cannot reach the service',
  buildId: null,
  counts: null,
  plans: null,
  invalidRows: null,
  durationMs: 120,
};

const values = (figures: ReturnType<typeof runFigures>['figures']) =>
  Object.fromEntries(figures.map((figure) => [figure.name, figure.value]));

describe('the figures of a run', () => {
  it('of a publish: succeeded, duration, plans per discipline, invalid rows, catalog age, propagation', () => {
    const { figures, metadata } = runFigures(published, {
      catalogAgeSeconds: 3.6,
      propagation: { outcome: 'measured', seconds: 41.25, polls: 9 },
    });
    expect(values(figures)).toEqual({
      RunSucceeded: 1,
      BuildDuration: 4000,
      ...plansFigures((count) => count),
      InvalidRows: 2,
      CatalogAge: 4,
      PropagationSeconds: 41.25,
    });
    for (const figure of figures) {
      const declared = Object.values(METRICS).find((metric) => metric.name === figure.name);
      expect(figure.unit, figure.name).toBe(declared?.unit);
    }
    expect(metadata).toEqual({
      outcome: 'published',
      reason: published.reason,
      buildId: published.buildId,
      propagation: 'measured',
    });
  });

  it('of a failed run: failed, its duration, the catalog age, and nothing it never measured', () => {
    const { figures, metadata } = runFigures(failed, { catalogAgeSeconds: 7200 });
    expect(values(figures)).toEqual({ RunFailed: 1, BuildDuration: 120, CatalogAge: 7200 });
    expect(metadata).toEqual({ outcome: 'failed', reason: failed.reason });
  });

  it('of a refused run: failed, with the guard', () => {
    const refused: LastRun = { ...published, outcome: 'refused', guard: 'shrink', reason: 'refused: …' };
    const { figures, metadata } = runFigures(refused, {});
    expect(values(figures)).toMatchObject({ RunFailed: 1 });
    expect(values(figures).RunSucceeded).toBeUndefined();
    expect(metadata).toMatchObject({ outcome: 'refused', guard: 'shrink' });
  });

  it('of a run whose source is not configured yet: neither succeeded nor failed (no alarm), with its reason', () => {
    const unset: LastRun = { ...failed, outcome: 'not-configured', error: 'SourceNotConfiguredError' };
    const { figures, metadata } = runFigures(unset, { catalogAgeSeconds: 60 });
    expect(values(figures)).toEqual({ BuildDuration: 120, CatalogAge: 60 });
    expect(metadata).toEqual({ outcome: 'not-configured', reason: failed.reason });
  });

  it('record a propagation timeout or skip as such, with no figure', () => {
    const timeout = runFigures(published, {
      propagation: {
        outcome: 'timeout',
        waitedSeconds: 120,
        polls: 25,
        lastSeen: 'generatedAt 2026-02-28T10:00:00.000Z',
      },
    });
    expect(values(timeout.figures).PropagationSeconds).toBeUndefined();
    expect(timeout.metadata).toMatchObject({
      propagation: 'timeout',
      propagationDetail: 'still serving generatedAt 2026-02-28T10:00:00.000Z after 120 s',
    });
    const skipped = runFigures(published, {
      propagation: { outcome: 'skipped', reason: 'no monitoring key is configured' },
    });
    expect(skipped.metadata).toMatchObject({
      propagation: 'skipped',
      propagationDetail: 'no monitoring key is configured',
    });
  });
});

describe("Powertools' embedded-metric-format line", () => {
  it('is one valid EMF line: the namespace, the service dimension, each metric with its unit and value', async () => {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
    const { lines } = await captureEmf(async () =>
      emitRunMetrics(
        metrics,
        runFigures(published, {
          catalogAgeSeconds: 0,
          propagation: { outcome: 'measured', seconds: 12.5, polls: 3 },
        }),
      ),
    );
    expect(lines).toHaveLength(1);
    const emf = parseEmf(lines[0] ?? '');
    expect(emf.namespace).toBe('TrainingPlanCatalog');
    expect(emf.dimensions).toEqual([['service']]);
    expect(emf.members.service).toBe('catalog');
    expect(emf.metrics).toEqual({
      RunSucceeded: { unit: 'Count', value: 1 },
      BuildDuration: { unit: 'Milliseconds', value: 4000 },
      ...plansFigures((value) => ({ unit: 'Count', value })),
      InvalidRows: { unit: 'Count', value: 2 },
      CatalogAge: { unit: 'Seconds', value: 0 },
      PropagationSeconds: { unit: 'Seconds', value: 12.5 },
    });
    expect(emf.members).toMatchObject({
      outcome: 'published',
      buildId: published.buildId,
      propagation: 'measured',
    });
  });

  it('starts empty for the next run', async () => {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
    const { lines } = await captureEmf(async () => {
      emitRunMetrics(metrics, runFigures(published, {}));
      emitRunMetrics(metrics, runFigures(failed, {}));
    });
    expect(lines.map((line) => Object.keys(parseEmf(line).metrics))).toEqual([
      ['RunSucceeded', 'BuildDuration', ...DISCIPLINES.map((d) => PLANS_METRIC[d]), 'InvalidRows'],
      ['RunFailed', 'BuildDuration'],
    ]);
  });
});
