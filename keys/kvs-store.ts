/**
 * The CloudFront KeyValueStore backend (the data-plane API, SigV4A). An update reads the ETag BEFORE listing
 * the entries, so a write between the two fails our UpdateKeys' IfMatch instead of being lost: it is retried.
 */
import {
  type CloudFrontKeyValueStoreClient,
  DescribeKeyValueStoreCommand,
  GetKeyCommand,
  paginateListKeys,
  UpdateKeysCommand,
  type UpdateKeysCommandInput,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import { describeCause, httpStatusOf, StoreError } from '../contract/errors.ts';
import { type KeyValueStore, planWrite, type StoreOptions } from './store.ts';

/**
 * One entry of the store, read alone (GetKey: the one permission a reader of that entry needs), or undefined
 * when the store has no such key (the API answers ResourceNotFoundException, 404).
 */
export async function readKvsEntry(
  client: CloudFrontKeyValueStoreClient,
  arn: string,
  key: string,
): Promise<string | undefined> {
  try {
    return (await client.send(new GetKeyCommand({ KvsARN: arn, Key: key }))).Value;
  } catch (error) {
    if ((error as { name?: unknown }).name === 'ResourceNotFoundException' || httpStatusOf(error) === 404)
      return undefined;
    throw new StoreError(`KeyValueStore ${arn}: reading ${key}: ${describeCause(error)}`, { cause: error });
  }
}

/** UpdateKeys takes at most this many puts and deletes together (the service's default quota). */
const MAX_BATCH = 50;

/** Tries of an update that another writer races, and the pause before a retry × the attempt number. */
const MAX_ATTEMPTS = 5;
const RETRY_DELAY_MS = 200;

/** True for an IfMatch failure: the store changed since we read its ETag. */
function isConflict(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status === 412 || status === 409 || (error as { name?: unknown }).name === 'ConflictException';
}

/** The real store. A write is one UpdateKeys batch; a larger change is refused, so none lands half-way. */
export class CloudFrontKeyValueStore implements KeyValueStore {
  readonly name: string;
  readonly #client: CloudFrontKeyValueStoreClient;
  readonly #arn: string;
  readonly #onWarning: (message: string) => void;

  constructor(client: CloudFrontKeyValueStoreClient, arn: string, options: StoreOptions = {}) {
    this.#client = client;
    this.#arn = arn;
    this.name = arn;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  async read(): Promise<Map<string, string>> {
    try {
      return await this.#list();
    } catch (error) {
      throw new StoreError(`KeyValueStore ${this.#arn}: ${describeCause(error)}`, { cause: error });
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
        throw new StoreError(`KeyValueStore ${this.#arn}: ${describeCause(error)}; nothing was changed`, {
          cause: error,
        });
      }
      const plan = await planWrite(this.name, before, change);
      if (plan.empty) return plan.result;
      const size = plan.change.puts.size + plan.change.deletes.length;
      if (size > MAX_BATCH)
        throw new StoreError(
          `KeyValueStore ${this.#arn}: the change touches ${size} entries, more than the ${MAX_BATCH} one UpdateKeys call takes; nothing was changed`,
        );
      const input: UpdateKeysCommandInput = { KvsARN: this.#arn, IfMatch: etag };
      if (plan.change.puts.size > 0)
        input.Puts = [...plan.change.puts].map(([Key, Value]) => ({ Key, Value }));
      if (plan.change.deletes.length > 0) input.Deletes = plan.change.deletes.map((Key) => ({ Key }));
      try {
        await this.#client.send(new UpdateKeysCommand(input));
      } catch (error) {
        if (isConflict(error)) {
          if (attempt < MAX_ATTEMPTS) {
            await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * attempt));
            continue;
          }
          throw new StoreError(
            `KeyValueStore ${this.#arn}: changed by another writer during each of ${attempt} attempts; nothing was changed, try again`,
            { cause: error },
          );
        }
        // A 4xx answer rejected the whole batch; without an answer (or on a 5xx) it may have been applied.
        const status = httpStatusOf(error);
        const outcome =
          status !== undefined && status < 500
            ? 'nothing was changed'
            : 'the change may or may not have been applied: check with catalog keys list / cors show';
        throw new StoreError(`KeyValueStore ${this.#arn}: ${describeCause(error)}; ${outcome}`, {
          cause: error,
        });
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
    const pages = paginateListKeys(
      { client: this.#client, pageSize: 50, stopOnSameToken: true },
      { KvsARN: this.#arn },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? [])
        if (item.Key !== undefined && item.Value !== undefined) entries.set(item.Key, item.Value);
    }
    return entries;
  }
}
