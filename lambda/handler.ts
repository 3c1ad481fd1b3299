/**
 * The builder as a Lambda function (lambda/README.md): `catalog publish` configured from the environment, one
 * JSON line per run. Once a run is recorded, it measures propagation and sends the run's metrics. A failed run
 * throws (the alarm fires); a `busy` or `not-configured` one does not.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import type { RunSource } from '../app/build.ts';
import { createKvsClient, createS3Client, createSecretsClient } from '../app/clients.ts';
import type { NotConfiguredSummary, RunSummary } from '../app/last-run.ts';
import { publish } from '../app/run.ts';
import { type LambdaSettings, parseLambdaEnvironment } from '../app/settings/environment.ts';
import { renderMessage } from '../app/settings/index.ts';
import { openTarget, type TargetClients } from '../app/target.ts';
import { formatInvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { CatalogError, ConfigError, describeCause, SourceNotConfiguredError } from '../contract/errors.ts';
import type { PublishTarget } from '../publish/steps.ts';
import { afterRun } from './after-run.ts';
import { functionMetrics } from './metrics.ts';
import type { PropagationCheck, PropagationResult } from './propagation.ts';
import { readSecret } from './secrets.ts';

export interface LambdaClients extends TargetClients {
  readonly secrets: SecretsManagerClient;
}

/** The environment (read once, on the first run) and what makes the clients from its settings (once). */
export interface HandlerOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clients: (settings: LambdaSettings) => LambdaClients;
}

/** The SDK's clients for the Lambda's settings, credentials and region from the SDK's default chain. */
export function sdkClients(settings: LambdaSettings): LambdaClients {
  return {
    s3: createS3Client(settings),
    kvs: createKvsClient(settings),
    secrets: createSecretsClient(settings),
  };
}

/** The part of the Lambda context the handler reads; `functionName` is who moved the pointer, in its history. */
export interface LambdaContext {
  getRemainingTimeInMillis?(): number;
  readonly functionName?: string;
}

/** Time the propagation check leaves for the rest of the run (metrics, the log line) before the timeout. */
const PROPAGATION_RESERVE_MS = 15_000;

/** The options of an invocation's event: `{ "force": true }` skips the shrink and identical guards. */
export const LambdaEvent = z.preprocess(
  (event) => (event !== null && typeof event === 'object' && !Array.isArray(event) ? event : {}),
  z.object({ force: z.boolean({ error: 'must be true or false' }).optional() }),
);

/** A source secret in its JSON form. */
const SourceSecretJson = z.object({ source: z.string().trim(), token: z.string().optional() });

/**
 * Reads a source secret's string: the source itself (`postgres://…`), or `{"source": "…", "token": "…"}` (the
 * token an HTTP source's bearer token). An empty `source` (the stack's placeholder) is
 * {@link SourceNotConfiguredError}. No part of the value ever enters an error message.
 */
export function sourceFromSecret(secretArn: string, text: string): RunSource {
  if (!text.startsWith('{')) return { source: text };
  let secret: z.infer<typeof SourceSecretJson>;
  try {
    secret = SourceSecretJson.parse(JSON.parse(text));
  } catch {
    throw new ConfigError(
      `secret ${secretArn}: starts with { but is not {"source": "…", "token": "…"} (JSON strings)`,
    );
  }
  if (secret.source === '')
    throw new SourceNotConfiguredError(
      `secret ${secretArn}: no source is set yet (the placeholder the stack created); put the source there: aws secretsmanager put-secret-value --secret-id ${secretArn} --secret-string 'postgres://…' (or '{"source":"https://…","token":"…"}')`,
    );
  return { source: secret.source, ...(secret.token ? { sourceToken: secret.token } : {}) };
}

const MAX_LOGGED_ROWS = 100;

/** Removes every occurrence of the secret's parts from a text (errors may quote a source name). */
function redact(text: string, secret: RunSource | null): string {
  if (!secret) return text;
  let clean = text.split(secret.source).join('<source from secret>');
  if (secret.sourceToken) clean = clean.split(secret.sourceToken).join('***');
  return clean;
}

/** Creates a handler; the configuration and clients of its first run serve every later one. */
export function createHandler(
  options: HandlerOptions,
): (event: unknown, context?: LambdaContext) => Promise<RunSummary | NotConfiguredSummary> {
  // One JSON line per run to CloudWatch Logs.
  const log = (entry: object) => console.log(JSON.stringify(entry));
  const metrics = functionMetrics(options.env);
  let ready: { settings: LambdaSettings; clients: LambdaClients; target: PublishTarget } | undefined;

  return async (event: unknown, context?: LambdaContext): Promise<RunSummary | NotConfiguredSummary> => {
    const started = performance.now();
    let secret: RunSource | null = null;
    // Warnings of the run (its record or metrics not written), for the error line of a failed run.
    const warnings: string[] = [];
    // Those of the steps after its record: its metrics not sent.
    const after: string[] = [];
    let propagation = undefined as PropagationResult | undefined;
    try {
      if (!ready) {
        const settings = parseLambdaEnvironment(options.env);
        const clients = options.clients(settings);
        ready = { settings, clients, target: await openTarget(settings, () => clients) };
      }
      const { settings, clients, target } = ready;
      const request = LambdaEvent.safeParse(event);
      if (!request.success) {
        const issue = request.error.issues[0];
        throw new CatalogError(`event ${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
      }
      const secretArn = settings.sourceSecretArn;
      const monitoringArn = settings.monitoringKeySecretArn;
      const remaining = context?.getRemainingTimeInMillis?.bind(context);
      const present = (message: string) => redact(renderMessage(message, 'lambda'), secret);
      const check: PropagationCheck = {
        key: async () =>
          monitoringArn === undefined ? undefined : readSecret(clients.secrets, monitoringArn),
        maxWaitMs: settings.propagationMaxWait,
        intervalMs: settings.propagationInterval,
        ...(remaining ? { timeLeftMs: () => remaining() - PROPAGATION_RESERVE_MS } : {}),
      };
      const outcome = await publish(settings, target, {
        now: new Date(),
        // A second invocation while one runs (no reserved concurrency) finds the run lock and ends busy.
        runBy: 'lambda',
        force: request.data.force ?? false,
        actor: `lambda ${context?.functionName ?? 'builder'}`,
        // The one log line carries the invalid rows and the warnings; nothing is reported line by line.
        report: (line) => {
          if (line.startsWith('warning: ') && !line.startsWith('warning: invalid '))
            warnings.push(line.slice(9));
        },
        // The secret is read inside the run, so a run whose secret cannot be read is recorded too.
        ...(secretArn !== undefined
          ? {
              source: async () => {
                secret = sourceFromSecret(secretArn, await readSecret(clients.secrets, secretArn));
                return secret;
              },
            }
          : {}),
        present,
        ended: async (run) => {
          const how = { target, baseUrl: settings.baseUrl, metrics, propagation: check, present };
          propagation = await afterRun(run, how, (warning) => after.push(warning));
        },
      });
      const { summary } = outcome;
      const invalidRows = outcome.invalidRows.slice(0, MAX_LOGGED_ROWS).map(formatInvalidRow);
      // A skip's reason names settings as this function takes them.
      const rendered = (
        summary.reason ? { ...summary, reason: renderMessage(summary.reason, 'lambda') } : summary
      ) as RunSummary;
      log({
        level: 'info',
        ...rendered,
        warnings: [...('warnings' in rendered ? rendered.warnings : []), ...outcome.warnings, ...after],
        ...(invalidRows.length > 0 ? { invalidRows } : {}),
        // Its texts without the source secret (they quote no key).
        ...(propagation
          ? {
              propagation:
                'reason' in propagation
                  ? { ...propagation, reason: redact(propagation.reason, secret) }
                  : propagation,
            }
          : {}),
      });
      return rendered;
    } catch (error) {
      if (error instanceof SourceNotConfiguredError) {
        // A deployment whose source is not set yet: its record says so and no failure is counted, and no
        // error goes to Lambda (no alarm, no failure queue).
        const reason = renderMessage(error.message, 'lambda');
        const summary = { command: 'publish', result: 'not-configured', reason } as const;
        log({ level: 'warn', ...summary, durationMs: Math.round(performance.now() - started) });
        return summary;
      }
      const message =
        error instanceof CatalogError ? renderMessage(error.message, 'lambda') : describeCause(error);
      const clean = (line: string) => redact(line, secret);
      const entry = {
        level: 'error',
        command: 'publish',
        error: error instanceof Error ? error.name : 'Error',
        message: redact(message, secret),
        ...(error instanceof InvalidRowsError
          ? { invalidRows: error.lines().slice(0, MAX_LOGGED_ROWS).map(clean) }
          : {}),
        ...(warnings.length + after.length > 0 ? { warnings: [...warnings, ...after].map(clean) } : {}),
        durationMs: Math.round(performance.now() - started),
      };
      log(entry);
      if (error instanceof Error) {
        // Lambda reports the message and the stack of a thrown error: neither may hold the secret, and the
        // message names settings as this function's environment variables.
        error.message = redact(renderMessage(error.message, 'lambda'), secret);
        if (error.stack) error.stack = redact(renderMessage(error.stack, 'lambda'), secret);
      }
      throw error;
    }
  };
}

/** The Lambda entry point: configuration from `process.env`, clients from the SDK's default chain. */
export const handler = createHandler({ env: process.env, clients: sdkClients });
