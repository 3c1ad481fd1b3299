/** The KeyValueStore limits, checked before a write to either backend: passing one refuses it, 80% warns. */

/** CloudFront KeyValueStore limits: key 512 bytes, value 1 KB, store 5 MB (CloudFront quotas). */
export const KVS_LIMITS = { keyBytes: 512, valueBytes: 1024, storeBytes: 5 * 1024 * 1024 } as const;

const WARN_RATIO = 0.8;

/** The puts and deletes that turn one set of entries into another. */
export interface StoreChange {
  readonly puts: ReadonlyMap<string, string>;
  readonly deletes: readonly string[];
}

/** The total size of a store's entries as KeyValueStore counts it: keys and values, in UTF-8 bytes. */
export function storeBytes(entries: ReadonlyMap<string, string>): number {
  let total = 0;
  for (const [key, value] of entries) total += Buffer.byteLength(key) + Buffer.byteLength(value);
  return total;
}

/** The puts (new or changed values) and deletes (keys gone) from `before` to `after`, sorted by key. */
export function diffEntries(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): StoreChange {
  const puts = new Map<string, string>();
  for (const key of [...after.keys()].sort()) {
    const value = after.get(key) as string;
    if (before.get(key) !== value) puts.set(key, value);
  }
  const deletes = [...before.keys()].filter((key) => !after.has(key)).sort();
  return { puts, deletes };
}

function percent(part: number, whole: number): string {
  return `${Math.floor((part / whole) * 100)}%`;
}

/**
 * What a write would do to the limits: `problems` refuse it, `warnings` are printed and it goes ahead. Only
 * what the write puts is checked entry by entry, so an existing entry never blocks an unrelated change.
 */
export function checkLimits(
  after: ReadonlyMap<string, string>,
  change: StoreChange,
): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const [key, value] of change.puts) {
    const keyBytes = Buffer.byteLength(key);
    const valueBytes = Buffer.byteLength(value);
    if (keyBytes > KVS_LIMITS.keyBytes)
      problems.push(
        `the key ${key.slice(0, 40)}… is ${keyBytes} bytes, over the ${KVS_LIMITS.keyBytes}-byte limit`,
      );
    if (valueBytes > KVS_LIMITS.valueBytes) {
      problems.push(
        `the value of ${key} is ${valueBytes} bytes, over the 1 KB (${KVS_LIMITS.valueBytes}-byte) limit`,
      );
    } else if (valueBytes >= KVS_LIMITS.valueBytes * WARN_RATIO) {
      warnings.push(
        `the value of ${key} is ${valueBytes} bytes, ${percent(valueBytes, KVS_LIMITS.valueBytes)} of the 1 KB limit`,
      );
    }
  }
  if (change.puts.size > 0) {
    const total = storeBytes(after);
    if (total > KVS_LIMITS.storeBytes) {
      problems.push(
        `the store would hold ${total} bytes, over the 5 MB (${KVS_LIMITS.storeBytes}-byte) limit`,
      );
    } else if (total >= KVS_LIMITS.storeBytes * WARN_RATIO) {
      warnings.push(
        `the store holds ${total} bytes, ${percent(total, KVS_LIMITS.storeBytes)} of the 5 MB limit: revoke keys that are no longer needed (expired keys stay until revoked)`,
      );
    }
  }
  return { problems, warnings };
}
