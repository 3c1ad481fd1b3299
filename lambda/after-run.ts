/**
 * What the builder does once a run is recorded (docs/decisions.md#operations): the propagation check
 * (propagation.ts) and the run's metrics (run-metrics.ts), which only the Lambda handler asks for.
 */
import type { RunEnded } from '../app/run.ts';
import { describeCause } from '../contract/errors.ts';
import type { MetricsSink } from '../contract/metrics.ts';
import { type PublishTarget, readManifest } from '../publish/steps.ts';
import { checkPropagation, type PropagationCheck, type PropagationResult } from './propagation.ts';
import { emitRunMetrics, runFigures } from './run-metrics.ts';

/**
 * What the builder does once a run is recorded (docs/decisions.md#operations): after a publish that moved the
 * pointer, how long the edge takes to serve the new build (propagation.ts; skipped, saying why, otherwise), then
 * the run's figures with the age of the catalog live after it (run-metrics.ts). A problem is a warning; returns
 * what the propagation check found (none for a failed or busy run).
 */
export async function afterRun(
  run: RunEnded,
  how: {
    readonly target: PublishTarget;
    readonly baseUrl: string;
    readonly metrics: MetricsSink;
    readonly propagation: PropagationCheck;
    readonly present: (message: string) => string;
  },
  warn: (warning: string) => void,
): Promise<PropagationResult | undefined> {
  const summary = 'summary' in run.end ? run.end.summary : undefined;
  const propagation =
    summary === undefined || summary.result === 'busy'
      ? undefined
      : summary.result !== 'published' || run.movedAt === undefined
        ? ({ outcome: 'skipped', reason: `nothing was published (${summary.result})` } as const)
        : await checkPropagation(how.propagation, {
            baseUrl: how.baseUrl,
            generatedAt: summary.generatedAt,
            movedAt: run.movedAt,
            present: how.present,
          });
  let catalogAgeSeconds: number | undefined;
  try {
    const manifest = run.live === null ? null : await readManifest(how.target.origin, run.live);
    if (manifest && !('problem' in manifest))
      catalogAgeSeconds = (Date.now() - Date.parse(manifest.generatedAt)) / 1000;
  } catch (error) {
    warn(`reading the live build for the catalog age failed (${describeCause(error)})`);
  }
  try {
    emitRunMetrics(how.metrics, runFigures(run.record, { catalogAgeSeconds, propagation }));
  } catch (error) {
    warn(`emitting the run's metrics failed (${describeCause(error)})`);
  }
  return propagation;
}
