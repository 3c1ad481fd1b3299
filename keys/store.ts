/** The store of the key and CORS commands; both backends run a change through {@link planWrite}. */
import { z } from 'zod';
import { StoreLimitError } from '../contract/errors.ts';
import { checkLimits, diffEntries } from './limits.ts';

/** A store that can be read and changed atomically: the local file, or CloudFront KeyValueStore. */
export interface KeyValueStore {
  /** A human name for messages (a path, or the KVS ARN). */
  readonly name: string;
  read(): Promise<Map<string, string>>;
  /**
   * Reads the entries, lets `change` edit a copy, and writes the difference as one atomic change. Concurrent
   * updates never lose each other's entries: `change` may run more than once (on fresh entries each time),
   * so it must not have side effects of its own. A `change` that throws writes nothing. Returns what the
   * last run of `change` returned.
   */
  update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T>;
}

export interface StoreOptions {
  /** Hears the warnings of a write that succeeded (a limit at 80% or more). */
  readonly onWarning?: (message: string) => void;
}

// The store's failures are the shared ones: a store that cannot be read or written, a limit passed.
export { StoreError, StoreLimitError } from '../contract/errors.ts';

/**
 * Runs `change` on a copy of `before` and checks the outcome against the KeyValueStore limits: what `change`
 * returned, the entries after it, the puts and deletes. Throws {@link StoreLimitError} when a limit would be
 * passed; `before` is never modified.
 */
export async function planWrite<T>(
  storeName: string,
  before: ReadonlyMap<string, string>,
  change: (entries: Map<string, string>) => T | Promise<T>,
) {
  const after = new Map(before);
  const result = await change(after);
  const diff = diffEntries(before, after);
  const { problems, warnings } = checkLimits(after, diff);
  if (problems.length > 0)
    throw new StoreLimitError(
      `${storeName}: refused, ${problems.join('; ')} (CloudFront KeyValueStore limits); nothing was changed`,
    );
  const empty = diff.puts.size === 0 && diff.deletes.length === 0;
  return { result, after, change: diff, empty, warnings };
}

/** A KeyValueStore ARN (here, not in kvs-store.ts: the command line checks it without loading the SDK). */
export const KvsArn = z
  .string()
  .trim()
  .regex(/^arn:aws[a-z-]*:cloudfront::\d{12}:key-value-store\/[A-Za-z0-9-]{1,128}$/, {
    error: 'must be a KeyValueStore ARN: arn:aws:cloudfront::<12-digit account>:key-value-store/<id>',
  });
