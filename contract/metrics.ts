/**
 * The metrics the builder emits (CloudWatch embedded metric format, one set per run) and the alarms and
 * dashboard of the stack read: one namespace, one dimension, and the metric names with their units.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { DISCIPLINES, type Discipline } from './disciplines.ts';

/** Where a function's figures go: the part of Powertools' `Metrics` the builder and the canary use. */
export type MetricsSink = Pick<Metrics, 'addMetric' | 'addMetadata' | 'publishStoredMetrics'>;

/** The CloudWatch namespace of the builder's metrics. */
export const METRICS_NAMESPACE = 'TrainingPlanCatalog';

/** The one dimension every metric carries: the service (`catalog`), so the stack can name each metric exactly. */
export const METRICS_SERVICE = 'catalog';

/** The deployed builder's second dimension, its function's name: each deployment has metrics of its own. */
export const METRICS_FUNCTION_DIMENSION = 'FunctionName';

/**
 * The outcome of a builder run. `busy` (another run held the lock) and `not-configured` (no source set yet)
 * did nothing, and are neither a success nor a failure.
 */
export const RUN_OUTCOMES = [
  'published',
  'skipped-identical',
  'skipped-pinned',
  'busy',
  'not-configured',
  'refused',
  'failed',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

/** Whether an outcome counts as a successful run (the catalog is as it should be). */
export function isSuccessfulOutcome(outcome: RunOutcome): boolean {
  return outcome === 'published' || outcome === 'skipped-identical' || outcome === 'skipped-pinned';
}

/** Whether an outcome counts as a failed run (a guard refused it, or it failed); `busy` and `not-configured` are neither. */
export function isFailedOutcome(outcome: RunOutcome): boolean {
  return outcome === 'refused' || outcome === 'failed';
}

/** The key of a discipline's plan count in {@link METRICS}: `plansRunning`. */
export type PlansMetric = `plans${Capitalize<Discipline>}`;
export function plansMetric(discipline: Discipline): PlansMetric {
  return `plans${capitalised(discipline)}`;
}
const capitalised = (discipline: Discipline) =>
  `${discipline.charAt(0).toUpperCase()}${discipline.slice(1)}` as Capitalize<Discipline>;

/** The builder's metrics: name and CloudWatch unit. */
export const METRICS = {
  /** 1 for a run that left the catalog as it should be (published, identical, or pinned), else absent. */
  runSucceeded: { name: 'RunSucceeded', unit: 'Count' },
  /** 1 for a run refused by a guard or failed, else absent (a `busy` or `not-configured` run emits neither). */
  runFailed: { name: 'RunFailed', unit: 'Count' },
  /** How long the build and publish took. */
  buildDuration: { name: 'BuildDuration', unit: 'Milliseconds' },
  /** Plans in the catalog, per discipline: `PlansRunning`… */
  ...(Object.fromEntries(
    DISCIPLINES.map((d) => [plansMetric(d), { name: `Plans${capitalised(d)}`, unit: 'Count' }]),
  ) as Record<PlansMetric, { readonly name: string; readonly unit: 'Count' }>),
  /** Invalid rows found (left out with skipInvalid, or the reason the run failed). */
  invalidRows: { name: 'InvalidRows', unit: 'Count' },
  /** Seconds since the live build's generatedAt, after the run. */
  catalogAge: { name: 'CatalogAge', unit: 'Seconds' },
  /** Seconds from the pointer move until the distribution served the new build (when measured). */
  propagation: { name: 'PropagationSeconds', unit: 'Seconds' },
} as const;

/** The canary's third dimension: the beat of the run (contract/index.ts `CANARY_BEATS`, `probe` or `full`). */
export const METRICS_BEAT_DIMENSION = 'Beat';

/**
 * The canary's metrics (app/canary.ts), one set per run, stamped with the run's start (so each schedule period
 * holds one run of its beat), dimensions `service`, the canary function's name and the beat. The alarms
 * `ConformanceFailed…` and `ConformanceSilent…` of each beat and the dashboard read them (infra/monitoring.ts).
 */
export const CANARY_METRICS = {
  /** Rows of the specification that failed in the run. */
  failedRows: { name: 'ConformanceFailedRows', unit: 'Count' },
  /** Rows not run: the run's deadline came first, or the canary's key was refused. */
  rowsNotRun: { name: 'ConformanceRowsNotRun', unit: 'Count' },
  /** 1 when the run did not reach the deployment at all, else 0. */
  unreachable: { name: 'ConformanceUnreachable', unit: 'Count' },
  /** How long the run took; emitted only once its report is stored (what the silence alarm counts). */
  runDuration: { name: 'ConformanceRunDuration', unit: 'Milliseconds' },
} as const;
