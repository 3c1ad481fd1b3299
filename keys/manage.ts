/**
 * Key management on any {@link KeyValueStore} (contract §4): issue, list. The functions take the clock and
 * the store; they never log or return a key except the one just issued.
 */
import type { KeyValueStore } from './file-store.ts';
import { generateKey, hashKey, KeyRecord, keyId, storeKeyOf } from './keys.ts';

export interface IssuedKey {
  /** The key itself: print it once, then forget it. */
  readonly key: string;
  readonly id: string;
  readonly record: KeyRecord;
}

/** Issues a key for `partner`, optionally expiring at `expires`. */
export async function issueKey(
  store: KeyValueStore,
  options: { partner: string; expires?: Date; now: Date },
): Promise<IssuedKey> {
  const key = generateKey();
  const hash = hashKey(key);
  const record: KeyRecord = {
    partner: options.partner,
    created: options.now.toISOString(),
    ...(options.expires ? { expires: options.expires.toISOString() } : {}),
  };
  await store.update((entries) => {
    entries.set(storeKeyOf(hash), JSON.stringify(record));
  });
  return { key, id: keyId(hash), record };
}

/** The record stored for a key, or undefined when the key is unknown (or its record unreadable). */
export async function lookupKey(store: KeyValueStore, key: string): Promise<KeyRecord | undefined> {
  const value = (await store.read()).get(storeKeyOf(hashKey(key)));
  if (value === undefined) return undefined;
  try {
    const parsed = KeyRecord.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
