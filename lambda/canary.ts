/**
 * The canary as a Lambda function (lambda/README.md): every `canaryRateMinutes` the scheduler invokes it, it runs
 * `catalog check`'s rows against the deployment's public base URL with the monitoring key from its secret, within
 * `checkDeadline`, stores its report at the bucket (`state/canary.json`), logs one JSON line per failed row and
 * one for the run, and writes the run's metrics (app/canary.ts). A run that finds failures is no error for Lambda:
 * the alarms read the metrics. Its role may read that one secret, write that one object, and write its own logs.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  CANARY_RESERVE_MS,
  type CanaryReport,
  canaryLogLines,
  canaryReportObject,
  emitCanaryMetrics,
  runCanary,
  storeFailure,
  unrunReport,
} from '../app/canary.ts';
import { createS3Client, createSecretsClient } from '../app/clients.ts';
import { type CanarySettings, parseCanaryEnvironment } from '../app/settings/environment.ts';
import { renderMessage } from '../app/settings/index.ts';
import { describeCause } from '../contract/errors.ts';
import { CANARY_HEADER } from '../contract/index.ts';
import { KEY_PATTERN } from '../keys/keys.ts';
import { S3Origin } from '../publish/s3-origin.ts';
import { functionMetrics } from './metrics.ts';
import { readSecret } from './secrets.ts';

/** The clients the canary uses: the bucket its report goes to, the secret its key is in. */
export interface CanaryClients {
  readonly s3: S3Client;
  readonly secrets: SecretsManagerClient;
}

/** The environment (read once, on the first run) and what makes the clients from its settings (once). */
export interface CanaryHandlerOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clients: (settings: CanarySettings) => CanaryClients;
}

/** The part of the Lambda context the canary reads. */
export interface CanaryContext {
  getRemainingTimeInMillis?(): number;
  readonly functionName?: string;
}

/** The SDK's clients for the canary's settings, credentials and region from the SDK's default chain. */
export function canaryClients(settings: CanarySettings): CanaryClients {
  return { s3: createS3Client(settings), secrets: createSecretsClient(settings) };
}

/** Creates the handler; the configuration and clients of its first run serve every later one. */
export function createCanaryHandler(
  options: CanaryHandlerOptions,
): (event: unknown, context?: CanaryContext) => Promise<CanaryReport> {
  const log = (entry: object) => console.log(JSON.stringify(entry));
  const functionName = options.env.AWS_LAMBDA_FUNCTION_NAME;
  const metrics = functionMetrics(options.env);
  let ready: { settings: CanarySettings; clients: CanaryClients } | undefined;

  return async (_event: unknown, context?: CanaryContext): Promise<CanaryReport> => {
    if (!ready) {
      const settings = parseCanaryEnvironment(options.env);
      ready = { settings, clients: options.clients(settings) };
    }
    const { settings, clients } = ready;
    const runner = { kind: 'lambda', name: context?.functionName ?? functionName ?? 'canary' } as const;
    const periodMs = settings.canaryRateMinutes * 60_000;
    const started = new Date();
    const remaining = context?.getRemainingTimeInMillis?.();
    // The run ends by its deadline, and never so late that its report and metrics miss the function's timeout.
    const deadlineMs = Math.max(
      1_000,
      Math.min(settings.checkDeadline, (remaining ?? Number.POSITIVE_INFINITY) - CANARY_RESERVE_MS),
    );

    const unrun = (reason: string) =>
      unrunReport(settings.baseUrl, reason, { started, finished: new Date(), periodMs, runner });
    const run = async (): Promise<CanaryReport> => {
      let key: string;
      try {
        key = await readSecret(clients.secrets, settings.monitoringKeySecretArn);
      } catch (error) {
        return unrun(`the canary's key could not be read: ${describeCause(error)}`);
      }
      if (!KEY_PATTERN.test(key))
        return unrun(
          `the canary's key in ${settings.monitoringKeySecretArn} is not an API key (tpc_ and 43 base64url characters; the value is not shown): put the monitoring key there`,
        );
      return runCanary({
        check: {
          baseUrl: settings.baseUrl,
          key,
          alwaysHeaders: [[CANARY_HEADER, key]],
          cors: settings.corsOrigin,
          maxAgeMs: settings.maxAge,
          timeoutMs: settings.checkTimeout,
          // The deadline counts from the run's start: reading the key came out of it.
          deadlineMs: Math.max(1_000, deadlineMs - (Date.now() - started.getTime())),
        },
        periodMs,
        runner,
      });
    };
    // Setting names in its texts as this function's environment variables.
    const report = JSON.parse(renderMessage(JSON.stringify(await run()), 'lambda')) as CanaryReport;

    let stored = true;
    try {
      await new S3Origin(clients.s3, settings.bucket).put(canaryReportObject(report), { overwrite: true });
    } catch (error) {
      stored = false;
      log({ level: 'error', message: storeFailure(`s3://${settings.bucket}`, error) });
    }
    for (const line of canaryLogLines(report)) log(line);
    try {
      emitCanaryMetrics(metrics, report, stored);
    } catch (error) {
      log({ level: 'error', message: `the canary's metrics were not written (${describeCause(error)})` });
    }
    return report;
  };
}

/** The Lambda entry point: configuration from `process.env`, clients from the SDK's default chain. */
export const handler = createCanaryHandler({ env: process.env, clients: canaryClients });
