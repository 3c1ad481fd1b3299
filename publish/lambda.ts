/**
 * The builder as a Lambda function (handler `handler`): the same pipeline as `catalog publish`, configured
 * from the environment (parsed once, see publish/README.md), run on a schedule or by `catalog rebuild`.
 * Each run logs one JSON line; a failed run (source error, invalid rows, a guard's refusal, an upload or
 * invalidation failure) throws, so Lambda records an error and the alarm can fire.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type BuildResult, buildCatalog } from '../builder/build.ts';
import { CatalogError, formatInvalidRow, InvalidRowsError } from '../builder/errors.ts';
import { openSource } from '../builder/sources/index.ts';
import { createCloudFrontClient, createS3Client, createSecretsClient } from './clients.ts';
import {
  type LambdaConfig,
  LambdaEvent,
  parseLambdaEnv,
  type SecretSource,
  sourceFromSecret,
} from './config.ts';
import { causeText } from './errors.ts';
import { OPENAPI_TEMPLATE } from './openapi.generated.ts';
import { type PublishClients, type PublishSummary, publishBuild } from './publish.ts';

/** The clients of the handler; tests pass their own. */
export interface LambdaClients extends PublishClients {
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

const MAX_LOGGED_ROWS = 100;

/** Builds in memory from the configured source, with the bundled openapi template. */
async function build(from: SecretSource, config: LambdaConfig, now: Date): Promise<BuildResult> {
  const source = await openSource(from.spec, from.token !== undefined ? { token: from.token } : {});
  return buildCatalog(source, {
    links: { baseUrl: config.baseUrl, appScheme: config.appScheme },
    skipInvalid: config.skipInvalid,
    now,
    openapiTemplate: OPENAPI_TEMPLATE,
  });
}

/** Reads the source spec from Secrets Manager, at run time (so a rotated secret is picked up). */
async function readSourceSecret(client: SecretsManagerClient, secretArn: string): Promise<SecretSource> {
  try {
    const answer = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
    return sourceFromSecret(secretArn, answer.SecretString);
  } catch (error) {
    if (error instanceof CatalogError) throw error;
    throw new CatalogError(`reading secret ${secretArn} failed (${causeText(error)})`, { cause: error });
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
  let ready: { config: LambdaConfig; clients: LambdaClients } | undefined;

  return async (event: unknown): Promise<PublishSummary> => {
    const started = performance.now();
    let secret: SecretSource | null = null;
    try {
      if (!ready) {
        const config = parseLambdaEnv(options.env);
        ready = {
          config,
          clients: options.clients ?? {
            s3: createS3Client(config),
            cloudfront: createCloudFrontClient(config),
            secrets: createSecretsClient(config),
          },
        };
      }
      const { config, clients } = ready;
      const request = LambdaEvent.safeParse(event);
      if (!request.success) {
        const issue = request.error.issues[0];
        throw new CatalogError(`event ${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
      }
      let from: SecretSource;
      if ('secretArn' in config.source) {
        from = await readSourceSecret(clients.secrets, config.source.secretArn);
        secret = from;
      } else {
        from = { spec: config.source.spec };
      }
      const built = await build(from, config, clock());
      const buildMs = performance.now() - started;
      const summary = await publishBuild(built, clients, {
        bucket: config.bucket,
        distributionId: config.distributionId,
        force: request.data.force ?? false,
        allowEmpty: config.allowEmpty,
        minRatio: config.minRatio,
        keep: config.keep,
        buildMs,
      });
      const invalidRows = built.warnings.slice(0, MAX_LOGGED_ROWS).map(formatInvalidRow);
      log(JSON.stringify({ level: 'info', ...summary, ...(invalidRows.length > 0 ? { invalidRows } : {}) }));
      return summary;
    } catch (error) {
      const entry = {
        level: 'error',
        command: 'publish',
        error: error instanceof Error ? error.name : 'Error',
        message: redact(error instanceof CatalogError ? error.message : causeText(error), secret),
        ...(error instanceof InvalidRowsError
          ? { invalidRows: error.lines().slice(0, MAX_LOGGED_ROWS) }
          : {}),
        durationMs: Math.round(performance.now() - started),
      };
      log(JSON.stringify(entry));
      if (secret && error instanceof Error) {
        // Lambda reports the message and the stack of a thrown error: neither may hold the secret.
        error.message = redact(error.message, secret);
        if (error.stack) error.stack = redact(error.stack, secret);
      }
      throw error;
    }
  };
}

/** The Lambda entry point: configuration from `process.env`, clients from the SDK's default chain. */
export const handler = createHandler({ env: process.env });
