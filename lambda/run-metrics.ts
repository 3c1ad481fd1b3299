/**
 * The builder's metrics of one run (docs/decisions.md#operations) under contract/metrics.ts's names: figures from
 * a run's record (pure), handed to a sink (the Lambda: Powertools' `Metrics`, one EMF line).
 */
import type { LastRun } from '../app/last-run.ts';
import { DISCIPLINES } from '../contract/index.ts';
import {
  isFailedOutcome,
  isSuccessfulOutcome,
  METRICS,
  type MetricsSink,
  plansMetric,
} from '../contract/metrics.ts';
import type { PropagationResult } from './propagation.ts';

type MetricKey = keyof typeof METRICS;

/** One figure: a metric of contract/metrics.ts and its value. */
const figure = (key: MetricKey, value: number) => ({
  name: METRICS[key].name,
  unit: METRICS[key].unit,
  value,
});
type Figure = ReturnType<typeof figure>;

/**
 * The figures of a run (`RunSucceeded` or `RunFailed`, neither when `busy`; the others when known); the outcome,
 * reason, build and propagation outcome travel as properties of the same line.
 */
export function runFigures(
  record: LastRun,
  after: {
    readonly catalogAgeSeconds?: number | undefined;
    readonly propagation?: PropagationResult | undefined;
  },
): { figures: Figure[]; metadata: Record<string, string> } {
  const figures: Figure[] = [];
  // A busy run did nothing: the run that held the lock reports its own outcome.
  if (isSuccessfulOutcome(record.outcome)) figures.push(figure('runSucceeded', 1));
  else if (isFailedOutcome(record.outcome)) figures.push(figure('runFailed', 1));
  figures.push(figure('buildDuration', record.durationMs));
  const counts = record.counts;
  if (counts) figures.push(...DISCIPLINES.map((d) => figure(plansMetric(d), counts[d])));
  if (record.invalidRows !== null) figures.push(figure('invalidRows', record.invalidRows));
  if (after.catalogAgeSeconds !== undefined)
    figures.push(figure('catalogAge', Math.max(0, Math.round(after.catalogAgeSeconds))));
  const propagation = after.propagation;
  if (propagation?.outcome === 'measured') figures.push(figure('propagation', propagation.seconds));

  const metadata: Record<string, string> = { outcome: record.outcome, reason: record.reason };
  if (record.guard !== undefined) metadata.guard = record.guard;
  if (record.buildId !== null) metadata.buildId = record.buildId;
  if (propagation) {
    metadata.propagation = propagation.outcome;
    if (propagation.outcome === 'timeout')
      metadata.propagationDetail = `still serving ${propagation.lastSeen} after ${propagation.waitedSeconds} s`;
    if (propagation.outcome === 'skipped' || propagation.outcome === 'failed')
      metadata.propagationDetail = propagation.reason;
  }
  return { figures, metadata };
}

/** Hands a run's figures to the sink and publishes them (one log line). */
export function emitRunMetrics(sink: MetricsSink, run: ReturnType<typeof runFigures>): void {
  for (const { name, unit, value } of run.figures) sink.addMetric(name, unit, value);
  for (const [key, value] of Object.entries(run.metadata)) sink.addMetadata(key, value);
  sink.publishStoredMetrics();
}
