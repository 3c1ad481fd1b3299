/**
 * The metrics sink of a function of this stack (the builder, the canary): Powertools' `Metrics`, written as one
 * embedded-metric-format log line per run, in the namespace and with the dimensions the stack's alarms read
 * (contract/metrics.ts). On Lambda the function's name tells this deployment's metrics from another's.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_FUNCTION_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE } from '../contract/metrics.ts';

/** The sink for a function whose environment is `env` (`AWS_LAMBDA_FUNCTION_NAME`, which Lambda sets). */
export function functionMetrics(env: Readonly<Record<string, string | undefined>>): Metrics {
  const functionName = env.AWS_LAMBDA_FUNCTION_NAME;
  return new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: METRICS_SERVICE,
    ...(functionName ? { defaultDimensions: { [METRICS_FUNCTION_DIMENSION]: functionName } } : {}),
  });
}
