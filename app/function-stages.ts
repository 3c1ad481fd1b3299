/**
 * A CloudFront function's two stages (infra/README.md, "Verifying the function"): DEVELOPMENT, where a deploy puts
 * new code, and LIVE, what every distribution using the function runs. Read them, tell whether they differ (the
 * code, the runtime or the key value store: what decides an answer), and publish DEVELOPMENT to LIVE with the
 * ETag of what was verified. `catalog status`, `catalog publish-functions` and the deploy's release step share it.
 */
import { createHash } from 'node:crypto';
import {
  type CloudFrontClient,
  type FunctionStage,
  GetFunctionCommand,
  PublishFunctionCommand,
} from '@aws-sdk/client-cloudfront';
import { CatalogError, describeCause } from '../contract/errors.ts';
import { describeFunction } from './verify-function.ts';

/** One stage of a function: its ETag, and what decides its answers. */
export interface StageState {
  readonly etag: string;
  /** The SHA-256 of its code. */
  readonly codeSha256: string;
  readonly runtime: string | undefined;
  readonly keyValueStores: readonly string[];
}

/** Both stages of a function; `live` is null before its first publish. */
export interface FunctionStages {
  readonly name: string;
  readonly development: StageState;
  readonly live: StageState | null;
}

const isMissing = (error: unknown) =>
  ((error as { cause?: { name?: string } }).cause?.name ?? (error as { name?: string }).name) ===
  'NoSuchFunctionExists';

/** Reads one stage (two calls: DescribeFunction, GetFunction); null when the function has no such stage. */
async function readStage(
  client: CloudFrontClient,
  name: string,
  stage: FunctionStage,
  signal?: AbortSignal,
): Promise<StageState | null> {
  const options = signal ? { abortSignal: signal } : {};
  try {
    const [described, code] = await Promise.all([
      describeFunction(client, name, stage, signal),
      client.send(new GetFunctionCommand({ Name: name, Stage: stage }), options).catch((error: unknown) => {
        if (isMissing(error)) throw error;
        throw new CatalogError(`GetFunction ${name} (${stage}) failed (${describeCause(error)})`, {
          cause: error,
        });
      }),
    ]);
    const config = described.FunctionSummary?.FunctionConfig;
    return {
      etag: described.ETag,
      codeSha256: createHash('sha256')
        .update(code.FunctionCode ?? new Uint8Array())
        .digest('hex'),
      runtime: config?.Runtime,
      keyValueStores: (config?.KeyValueStoreAssociations?.Items ?? [])
        .flatMap((item) => (item.KeyValueStoreARN ? [item.KeyValueStoreARN] : []))
        .sort(),
    };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Reads both stages of a function (four calls at once); a function without DEVELOPMENT is an error naming it. */
export async function readStages(
  client: CloudFrontClient,
  name: string,
  signal?: AbortSignal,
): Promise<FunctionStages> {
  const [development, live] = await Promise.all([
    readStage(client, name, 'DEVELOPMENT', signal),
    readStage(client, name, 'LIVE', signal),
  ]);
  if (development === null) throw new CatalogError(`no CloudFront function ${JSON.stringify(name)}`);
  return { name, development, live };
}

/** Whether LIVE runs something else than DEVELOPMENT (or nothing yet): code, runtime or key value store. */
export function stagesDiffer(stages: FunctionStages): boolean {
  const { development, live } = stages;
  return (
    live === null ||
    live.codeSha256 !== development.codeSha256 ||
    live.runtime !== development.runtime ||
    live.keyValueStores.join() !== development.keyValueStores.join()
  );
}

/**
 * Copies DEVELOPMENT to LIVE, as it was when its ETag was read: a DEVELOPMENT changed since (another deploy) is
 * refused by CloudFront, so what goes live is what was verified.
 */
export async function publishFunction(
  client: CloudFrontClient,
  name: string,
  developmentEtag: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await client.send(
      new PublishFunctionCommand({ Name: name, IfMatch: developmentEtag }),
      signal ? { abortSignal: signal } : {},
    );
  } catch (error) {
    const changed = ['PreconditionFailed', 'InvalidIfMatchVersion'].includes(
      (error as { name?: string }).name ?? '',
    );
    throw new CatalogError(
      changed
        ? `PublishFunction ${name}: its DEVELOPMENT stage changed after it was verified (another deploy?); nothing was published`
        : `PublishFunction ${name} failed (${describeCause(error)})`,
      { cause: error },
    );
  }
}
