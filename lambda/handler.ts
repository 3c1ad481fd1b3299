/**
 * The builder as a Lambda function (handler `handler`, bundled as lambda/bundling.ts says): the same
 * publish as `catalog publish` (app/run.ts), configured from the environment (parsed once, by the settings'
 * own rules: app/settings/environment.ts), run on a schedule or by `catalog rebuild`. Each run logs one JSON
 * line; a failed run (source error, invalid rows, a guard's refusal, an upload or invalidation failure)
 * throws, so Lambda records an error and the alarm can fire.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import { createKvsClient, createS3Client, createSecretsClient } from '../app/clients.ts';
import { openTarget, publish, type TargetClients } from '../app/run.ts';
import { type LambdaSettings, parseLambdaEnvironment } from '../app/settings/environment.ts';
import { renderMessage } from '../app/settings/index.ts';
import { formatInvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { CatalogError, ConfigError, describeCause } from '../contract/errors.ts';
import type { PublishSummary, PublishTarget } from '../publish/publish.ts';

/** The clients of the handler; tests pass their own. */
export interface LambdaClients extends TargetClients {
  readonly secrets: SecretsManagerClient;
}

export interface HandlerOptions {
  /** The environment to read the configuration from (once, on the first run). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Clients to use instead of creating them from the configuration. */
  readonly clients?: LambdaClients;
  /** Where the one JSON line per run goes (default: console.log, i.e. CloudWatch Logs). */
  readonly log?: (line: string) => void;
  readonly now?: () => Date;
}

/** The options of an invocation's event: `{ "force": true }` skips the shrink and identical guards. */
export const LambdaEvent = z.preprocess(
  (event) => (event !== null && typeof event === 'object' && !Array.isArray(event) ? event : {}),
  z.object({ force: z.boolean({ error: 'must be true or false' }).optional() }),
);

/** What a source secret holds: the source spec, and the bearer token of an HTTP source. */
export interface SecretSource {
  readonly spec: string;
  readonly token?: string;
}

/**
 * Reads a source secret: either the secret string itself is the source spec (e.g.
 * `postgres://user:pass@host/db`), or it is a JSON object `{"source": "…", "token": "…"}` (`token`, optional,
 * is sent to an HTTP source as a bearer token). No part of the value ever enters an error message.
 */
export function sourceFromSecret(secretArn: string, secret: string | undefined): SecretSource {
  const text = secret?.trim() ?? '';
  if (text === '') throw new ConfigError(`secret ${secretArn}: has no SecretString`);
  if (!text.startsWith('{')) return { spec: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`secret ${secretArn}: starts with { but is not valid JSON`);
  }
  const { source, token } = parsed as { source?: unknown; token?: unknown };
  if (typeof source !== 'string' || source.trim() === '')
    throw new ConfigError(`secret ${secretArn}: the JSON object has no "source" string`);
  if (token !== undefined && typeof token !== 'string')
    throw new ConfigError(`secret ${secretArn}: "token" must be a string`);
  return { spec: source.trim(), ...(token ? { token } : {}) };
}

const MAX_LOGGED_ROWS = 100;

/** Reads the source spec from Secrets Manager, at run time (so a rotated secret is picked up). */
async function readSourceSecret(client: SecretsManagerClient, secretArn: string): Promise<SecretSource> {
  try {
    const answer = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
    return sourceFromSecret(secretArn, answer.SecretString);
  } catch (error) {
    if (error instanceof CatalogError) throw error;
    throw new CatalogError(`reading secret ${secretArn} failed (${describeCause(error)})`, { cause: error });
  }
}

/** Removes every occurrence of the secret's parts from a text (errors may quote a source name). */
function redact(text: string, secret: SecretSource | null): string {
  if (!secret) return text;
  let clean = text.split(secret.spec).join('<source from secret>');
  if (secret.token) clean = clean.split(secret.token).join('***');
  return clean;
}

/**
 * Creates a handler. The configuration is parsed and the clients created on the first run, then reused by
 * every run of the same execution environment.
 */
export function createHandler(options: HandlerOptions): (event: unknown) => Promise<PublishSummary> {
  const log = options.log ?? ((line: string) => console.log(line));
  const clock = options.now ?? (() => new Date());
  let ready: { settings: LambdaSettings; clients: LambdaClients; target: PublishTarget } | undefined;

  return async (event: unknown): Promise<PublishSummary> => {
    const started = performance.now();
    let secret: SecretSource | null = null;
    try {
      if (!ready) {
        const settings = parseLambdaEnvironment(options.env);
        const clients = options.clients ?? {
          s3: createS3Client(settings),
          kvs: createKvsClient(settings),
          secrets: createSecretsClient(settings),
        };
        ready = { settings, clients, target: await openTarget(settings, () => clients) };
      }
      const { settings, clients, target } = ready;
      const request = LambdaEvent.safeParse(event);
      if (!request.success) {
        const issue = request.error.issues[0];
        throw new CatalogError(`event ${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
      }
      if (settings.sourceSecretArn !== undefined) {
        secret = await readSourceSecret(clients.secrets, settings.sourceSecretArn);
      }
      const from: SecretSource = secret ?? { spec: settings.source as string };
      const { summary, invalidRows: invalid } = await publish(
        { ...settings, source: from.spec, sourceToken: from.token },
        target,
        // The one log line carries the invalid rows; nothing else is reported line by line.
        { now: clock(), force: request.data.force ?? false, report: () => {} },
      );
      const invalidRows = invalid.slice(0, MAX_LOGGED_ROWS).map(formatInvalidRow);
      // A skip's reason names settings as this function takes them.
      const rendered = (
        summary.reason ? { ...summary, reason: renderMessage(summary.reason, 'lambda') } : summary
      ) as PublishSummary;
      log(JSON.stringify({ level: 'info', ...rendered, ...(invalidRows.length > 0 ? { invalidRows } : {}) }));
      return rendered;
    } catch (error) {
      const message =
        error instanceof CatalogError ? renderMessage(error.message, 'lambda') : describeCause(error);
      const entry = {
        level: 'error',
        command: 'publish',
        error: error instanceof Error ? error.name : 'Error',
        message: redact(message, secret),
        ...(error instanceof InvalidRowsError
          ? {
              invalidRows: error
                .lines()
                .slice(0, MAX_LOGGED_ROWS)
                .map((line) => redact(line, secret)),
            }
          : {}),
        durationMs: Math.round(performance.now() - started),
      };
      log(JSON.stringify(entry));
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
export const handler = createHandler({ env: process.env });
