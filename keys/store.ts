/**
 * The one store interface the key and CORS commands use, with two backends: the local file
 * ({@link ./file-store.ts}) and CloudFront KeyValueStore ({@link ./kvs-store.ts}). Both run a change through
 * {@link planWrite}, so the limits and the "nothing to write" case behave the same everywhere.
 */
import { z } from 'zod';
import { StoreLimitError } from '../contract/errors.ts';
import { checkLimits, diffEntries, isEmptyChange, type StoreChange } from './limits.ts';

/** A store that can be read and changed atomically: the local file, or CloudFront KeyValueStore. */
export interface KeyValueStore {
  /** A human name for messages (a path, or the KVS ARN). */
  readonly name: string;
  /** Every entry now. */
  read(): Promise<Map<string, string>>;
  /**
   * Reads the entries, lets `change` edit a copy, and writes the difference as one atomic change. Concurrent
   * updates never lose each other's entries: `change` may run more than once (on fresh entries each time),
   * so it must not have side effects of its own. A `change` that throws writes nothing. Returns what the
   * last run of `change` returned.
   */
  update<T>(change: (entries: Map<string, string>) => T | Promise<T>): Promise<T>;
}

/** Options both backends take. */
export interface StoreOptions {
  /** Hears the warnings of a write that succeeded (a limit at 80% or more). Default: none. */
  readonly onWarning?: (message: string) => void;
}

// The store's failures are the shared ones: a store that cannot be read or written, a limit passed.
export { StoreError, StoreLimitError } from '../contract/errors.ts';

/** A change ready to write: what `change` returned, the entries after it, and the puts and deletes. */
export interface PlannedWrite<T> {
  readonly result: T;
  readonly after: ReadonlyMap<string, string>;
  readonly change: StoreChange;
  readonly empty: boolean;
  readonly warnings: readonly string[];
}

/**
 * Runs `change` on a copy of `before` and checks the outcome against the KeyValueStore limits. Throws
 * {@link StoreLimitError} (naming `storeName`) when a limit would be passed; `before` is never modified.
 */
export async function planWrite<T>(
  storeName: string,
  before: ReadonlyMap<string, string>,
  change: (entries: Map<string, string>) => T | Promise<T>,
): Promise<PlannedWrite<T>> {
  const after = new Map(before);
  const result = await change(after);
  const diff = diffEntries(before, after);
  const { problems, warnings } = checkLimits(after, diff);
  if (problems.length > 0) {
    throw new StoreLimitError(
      `${storeName}: refused, ${problems.join('; ')} (CloudFront KeyValueStore limits); nothing was changed`,
    );
  }
  return { result, after, change: diff, empty: isEmptyChange(diff), warnings };
}

/**
 * A CloudFront KeyValueStore ARN, `arn:aws:cloudfront::<account>:key-value-store/<id>` (here rather than in
 * kvs-store.ts so the command line can check it without loading the AWS SDK).
 */
export const KvsArn = z
  .string()
  .trim()
  .regex(/^arn:aws[a-z-]*:cloudfront::\d{12}:key-value-store\/[A-Za-z0-9-]{1,128}$/, {
    error: 'must be a KeyValueStore ARN: arn:aws:cloudfront::<12-digit account>:key-value-store/<id>',
  });
