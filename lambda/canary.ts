/**
 * The canary as a Lambda function (lambda/README.md): the scheduler invokes it with the probe every
 * `canaryRateMinutes` and with the full table every `canaryFullRateMinutes` (the stack also once after each
 * deploy). It reads the monitoring key from its secret and the CORS origin from the key-value store at each run,
 * runs the beat against the deployment's public base URL within `checkDeadline` (a probe that finds the live
 * catalogs changed runs the full table too), stores each report at the bucket (`state/canary-probe.json`,
 * `state/canary-full.json`), logs one JSON line per failed row and one per run, and writes each run's metrics
 * (app/canary.ts). A run that finds failures is no error for Lambda: the alarms read the metrics. Its role may
 * read that one secret, that one store's entries, the probe's report, write the two reports, and its own logs.
 */
import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import {
  CANARY_RESERVE_MS,
  type CanaryOutcome,
  type CanaryReport,
  type CanaryTrigger,
  canaryLogLines,
  emitCanaryMetrics,
  runCanaryBeat,
  storeReport,
  unrunReport,
} from '../app/canary.ts';
import { createKvsClient, createS3Client, createSecretsClient } from '../app/clients.ts';
import { type CanarySettings, parseCanaryEnvironment } from '../app/settings/environment.ts';
import { renderMessage } from '../app/settings/index.ts';
import { ConfigError, describeCause } from '../contract/errors.ts';
import { CANARY_BEATS, CANARY_HEADER, KVS_CORS_ORIGIN } from '../contract/index.ts';
import { KEY_PATTERN } from '../keys/keys.ts';
import { readKvsEntry } from '../keys/kvs-store.ts';
import { S3Origin } from '../publish/s3-origin.ts';
import { functionMetrics } from './metrics.ts';
import { readSecret } from './secrets.ts';

/** The clients the canary uses: the bucket its reports go to, the secret its key is in, the store of the origin. */
export interface CanaryClients {
  readonly s3: S3Client;
  readonly secrets: SecretsManagerClient;
  readonly kvs: CloudFrontKeyValueStoreClient;
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

/**
 * What the canary is invoked with: its beat (the schedules and the stack's after-deploy run say it), and why
 * (`deploy` from the stack; a schedule's by default). An empty event is a scheduled probe.
 */
export const CanaryEvent = z
  .object({
    beat: z.enum(CANARY_BEATS).default('probe'),
    trigger: z.enum(['schedule', 'deploy'] satisfies CanaryTrigger[]).default('schedule'),
  })
  .strict();
export type CanaryEvent = z.input<typeof CanaryEvent>;

/** The SDK's clients for the canary's settings, credentials and region from the SDK's default chain. */
export function canaryClients(settings: CanarySettings): CanaryClients {
  return {
    s3: createS3Client(settings),
    secrets: createSecretsClient(settings),
    kvs: createKvsClient(settings),
  };
}

/** Creates the handler; the configuration and clients of its first run serve every later one. */
export function createCanaryHandler(
  options: CanaryHandlerOptions,
): (event: unknown, context?: CanaryContext) => Promise<CanaryReport[]> {
  const log = (entry: object) => console.log(JSON.stringify(entry));
  const functionName = options.env.AWS_LAMBDA_FUNCTION_NAME;
  const metrics = functionMetrics(options.env);
  let ready: { settings: CanarySettings; clients: CanaryClients } | undefined;

  return async (event: unknown, context?: CanaryContext): Promise<CanaryReport[]> => {
    const parsed = CanaryEvent.safeParse(event ?? {});
    if (!parsed.success)
      throw new ConfigError(
        `the canary's event ${JSON.stringify(event)} is not {"beat":"probe"|"full","trigger":…}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    const { beat, trigger } = parsed.data;
    if (!ready) {
      const settings = parseCanaryEnvironment(options.env);
      ready = { settings, clients: options.clients(settings) };
    }
    const { settings, clients } = ready;
    const runner = { kind: 'lambda', name: context?.functionName ?? functionName ?? 'canary' } as const;
    const periodsMs = {
      probe: settings.canaryRateMinutes * 60_000,
      full: settings.canaryFullRateMinutes * 60_000,
    };
    const started = new Date();
    const remaining = context?.getRemainingTimeInMillis?.();
    // The run ends by its deadline, and never so late that its reports and metrics miss the function's timeout.
    const deadlineMs = Math.max(
      1_000,
      Math.min(settings.checkDeadline, (remaining ?? Number.POSITIVE_INFINITY) - CANARY_RESERVE_MS),
    );
    const store = new S3Origin(clients.s3, settings.bucket);
    // Setting names in its texts as this function's environment variables.
    const render = (report: CanaryReport) =>
      JSON.parse(renderMessage(JSON.stringify(report), 'lambda')) as CanaryReport;

    const unrun = async (reason: string): Promise<CanaryOutcome[]> => {
      const report = render(
        unrunReport(settings.baseUrl, reason, {
          beat,
          trigger,
          started,
          finished: new Date(),
          periodMs: periodsMs[beat],
          runner,
        }),
      );
      return [{ report, storeProblem: await storeReport(store, report) }];
    };
    const run = async (): Promise<CanaryOutcome[]> => {
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
      // The origin partners' browsers are allowed, as the store holds it now: `catalog cors set` needs no deploy.
      let cors: string | undefined;
      try {
        cors = await readKvsEntry(clients.kvs, settings.kvsArn, KVS_CORS_ORIGIN);
      } catch (error) {
        return unrun(`the CORS origin could not be read from the key-value store: ${describeCause(error)}`);
      }
      return runCanaryBeat({
        beat,
        trigger,
        check: {
          baseUrl: settings.baseUrl,
          key,
          alwaysHeaders: [[CANARY_HEADER, key]],
          cors: cors ?? null,
          maxAgeMs: settings.maxAge,
          timeoutMs: settings.checkTimeout,
          // The deadline counts from the run's start: reading the key and the origin came out of it.
          deadlineMs: Math.max(1_000, deadlineMs - (Date.now() - started.getTime())),
        },
        periodsMs,
        runner,
        store,
        render,
      });
    };

    const outcomes = await run();
    for (const { report, storeProblem } of outcomes) {
      if (storeProblem) log({ level: 'error', message: storeProblem });
      for (const line of canaryLogLines(report)) log(line);
      try {
        emitCanaryMetrics(metrics, report, storeProblem === null);
      } catch (error) {
        log({ level: 'error', message: `the canary's metrics were not written (${describeCause(error)})` });
      }
    }
    return outcomes.map((outcome) => outcome.report);
  };
}

/** The Lambda entry point: configuration from `process.env`, clients from the SDK's default chain. */
export const handler = createCanaryHandler({ env: process.env, clients: canaryClients });
