/**
 * The CloudFront KeyValueStore backend of {@link KeyValueStore}, over the KVS data-plane API
 * (`@aws-sdk/client-cloudfront-keyvaluestore`, signed with SigV4A). An update reads the store's ETag
 * (DescribeKeyValueStore) BEFORE listing the entries (ListKeys), so any write between the two makes our
 * UpdateKeys fail its IfMatch instead of being lost; it then re-reads and retries, a bounded number of times.
 */
// Registers the SigV4A signer: KVS requests are signed for every region (X-Amz-Region-Set: *).
import '@aws-sdk/signature-v4a';
import {
  CloudFrontKeyValueStoreClient,
  type CloudFrontKeyValueStoreClientConfig,
  DescribeKeyValueStoreCommand,
  ListKeysCommand,
  UpdateKeysCommand,
  type UpdateKeysCommandInput,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import { type KeyValueStore, planWrite, StoreError, type StoreOptions } from './store.ts';

/** UpdateKeys takes at most this many puts and deletes together (the service's default quota). */
export const MAX_BATCH = 50;

/** ListKeys page size (the API's maximum). */
const PAGE_SIZE = 50;

/**
 * The KVS client the commands use. KeyValueStore is global: the region only picks the partition, and
 * requests are signed with SigV4A for all regions. Credentials come from the usual AWS chain.
 */
export function createKvsClient(
  config: CloudFrontKeyValueStoreClientConfig = {},
): CloudFrontKeyValueStoreClient {
  return new CloudFrontKeyValueStoreClient({ region: 'us-east-1', maxAttempts: 3, ...config });
}

/** Options of {@link CloudFrontKeyValueStore}. */
export interface KvsStoreOptions extends StoreOptions {
  /** How many times an update is tried when another writer changed the store meanwhile. Default: 5. */
  readonly maxAttempts?: number;
  /** Pause before a retry after a conflict, times the attempt number. Default: 200 ms. */
  readonly retryDelayMs?: number;
}

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/** The HTTP status of an SDK error, when the service answered at all. */
function statusOf(error: unknown): number | undefined {
  return (error as SdkError).$metadata?.httpStatusCode;
}

/** True for an IfMatch failure: the store changed since we read its ETag. */
function isConflict(error: unknown): boolean {
  const status = statusOf(error);
  return status === 412 || status === 409 || (error as SdkError).name === 'ConflictException';
}

/** A one-line reason for an SDK failure. */
function reasonOf(error: unknown): string {
  const e = error as SdkError;
  const code = e.code ?? /\b(E[A-Z_]{3,})\b/.exec(e.message ?? '')?.[1];
  if (code !== undefined && NETWORK_CODES.has(code)) {
    return `cannot reach the KeyValueStore API (${e.message?.includes(code) ? e.message : code})`;
  }
  if (e.name === 'CredentialsProviderError') return `no AWS credentials (${e.message})`;
  const status = statusOf(error);
  const what = [
    e.name && e.name !== 'Unknown' && e.name !== 'Error' ? e.name : '',
    status ? `(HTTP ${status})` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return [what, e.message].filter(Boolean).join(': ') || String(error);
}

/**
 * The real store. Takes a client built once at the entry point (see {@link createKvsClient}). Writes are
 * one UpdateKeys batch, all or nothing, guarded by IfMatch; changes larger than {@link MAX_BATCH} entries
 * are refused rather than split, so a rotation can never land half-way.
 */
export class CloudFrontKeyValueStore implements KeyValueStore {
  readonly name: string;
  readonly #client: CloudFrontKeyValueStoreClient;
  readonly #arn: string;
  readonly #maxAttempts: number;
  readonly #retryDelayMs: number;
  readonly #onWarning: (message: string) => void;

  constructor(client: CloudFrontKeyValueStoreClient, arn: string, options: KvsStoreOptions = {}) {
    this.#client = client;
    this.#arn = arn;
    this.name = arn;
    this.#maxAttempts = options.maxAttempts ?? 5;
    this.#retryDelayMs = options.retryDelayMs ?? 200;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  async read(): Promise<Map<string, string>> {
    try {
      return await this.#list();
    } catch (error) {
      throw new StoreError(`KeyValueStore ${this.#arn}: ${reasonOf(error)}`, { cause: error });
    }
  }

  async update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      let etag: string;
      let before: Map<string, string>;
      try {
        etag = await this.#etag();
        before = await this.#list();
      } catch (error) {
        throw new StoreError(`KeyValueStore ${this.#arn}: ${reasonOf(error)}; nothing was changed`, {
          cause: error,
        });
      }
      const plan = await planWrite(this.name, before, change);
      if (plan.empty) return plan.result;
      const size = plan.change.puts.size + plan.change.deletes.length;
      if (size > MAX_BATCH) {
        throw new StoreError(
          `KeyValueStore ${this.#arn}: the change touches ${size} entries, more than the ${MAX_BATCH} one UpdateKeys call takes; nothing was changed`,
        );
      }
      const input: UpdateKeysCommandInput = { KvsARN: this.#arn, IfMatch: etag };
      if (plan.change.puts.size > 0) {
        input.Puts = [...plan.change.puts].map(([Key, Value]) => ({ Key, Value }));
      }
      if (plan.change.deletes.length > 0) input.Deletes = plan.change.deletes.map((Key) => ({ Key }));
      try {
        await this.#client.send(new UpdateKeysCommand(input));
      } catch (error) {
        if (isConflict(error)) {
          if (attempt < this.#maxAttempts) {
            await new Promise((resolve) => setTimeout(resolve, this.#retryDelayMs * attempt));
            continue;
          }
          throw new StoreError(
            `KeyValueStore ${this.#arn}: changed by another writer during each of ${attempt} attempts; nothing was changed, try again`,
            { cause: error },
          );
        }
        // A 4xx answer rejected the whole batch; without an answer (or on a 5xx) it may have been applied.
        const status = statusOf(error);
        const outcome =
          status !== undefined && status < 500
            ? 'nothing was changed'
            : 'the change may or may not have been applied: check with catalog keys list / cors show';
        throw new StoreError(`KeyValueStore ${this.#arn}: ${reasonOf(error)}; ${outcome}`, { cause: error });
      }
      for (const warning of plan.warnings) this.#onWarning(`${this.name}: ${warning}`);
      return plan.result;
    }
  }

  async #etag(): Promise<string> {
    const described = await this.#client.send(new DescribeKeyValueStoreCommand({ KvsARN: this.#arn }));
    if (!described.ETag) throw new Error('DescribeKeyValueStore returned no ETag');
    return described.ETag;
  }

  async #list(): Promise<Map<string, string>> {
    const entries = new Map<string, string>();
    const seen = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListKeysCommand({
          KvsARN: this.#arn,
          MaxResults: PAGE_SIZE,
          ...(token !== undefined ? { NextToken: token } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        if (item.Key !== undefined && item.Value !== undefined) entries.set(item.Key, item.Value);
      }
      token = page.NextToken || undefined;
      if (token !== undefined) {
        if (seen.has(token)) throw new Error(`ListKeys repeated the page token ${token}`);
        seen.add(token);
      }
    } while (token !== undefined);
    return entries;
  }
}
