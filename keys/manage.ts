/**
 * Key management on any {@link KeyValueStore} (docs/decisions.md#keys): each command is one atomic update
 * running a rule of rules.ts; no key is logged or returned but the one just issued.
 */
import { generateKey, hashKey, type KeyRecord, keyId, parseKeyRecord, storeKeyOf } from './keys.ts';
import {
  applyIssue,
  applyRevoke,
  applyRotate,
  type KeyListing,
  listKeys as listKeyRows,
  type RevokeOutcome,
  type RevokeTarget,
  type RotateOutcome,
} from './rules.ts';
import type { KeyValueStore } from './store.ts';

export interface IssuedKey {
  /** The key itself: print it once, then forget it. */
  readonly key: string;
  readonly id: string;
  readonly record: KeyRecord;
}

function newKey(partner: string, now: Date, expires?: Date): IssuedKey & { hash: string } {
  const key = generateKey();
  const hash = hashKey(key);
  const record: KeyRecord = {
    partner,
    created: now.toISOString(),
    ...(expires ? { expires: expires.toISOString() } : {}),
  };
  return { key, hash, id: keyId(hash), record };
}

/** Issues a key for `partner`, optionally expiring at `expires`. */
export async function issueKey(
  store: KeyValueStore,
  options: { partner: string; expires?: Date; now: Date },
): Promise<IssuedKey> {
  const { key, hash, id, record } = newKey(options.partner, options.now, options.expires);
  await store.update((entries) => applyIssue(entries, hash, record));
  return { key, id, record };
}

/** Rotates a partner's key: a new one, and the current ones expire at `now + graceMs` at most (rules.ts). */
export async function rotateKey(
  store: KeyValueStore,
  options: { partner: string; graceMs: number; now: Date },
): Promise<{ issued: IssuedKey } & RotateOutcome> {
  const { key, hash, id, record } = newKey(options.partner, options.now);
  const outcome = await store.update((entries) => applyRotate(entries, { ...options, hash, record }));
  return { issued: { key, id, record }, ...outcome };
}

/** Revokes a partner's keys, or one key by id, now or after `afterMs` (rules.ts). */
export async function revokeKeys(
  store: KeyValueStore,
  options: { target: RevokeTarget; now: Date; afterMs?: number },
): Promise<RevokeOutcome> {
  return store.update((entries) => applyRevoke(entries, options));
}

/** The keys in the store at `now` (ids and records only). */
export async function listKeys(store: KeyValueStore, now: Date): Promise<KeyListing[]> {
  return listKeyRows(await store.read(), now);
}

/** The record stored for a key, or undefined when the key is unknown (or its record unreadable). */
export async function lookupKey(store: KeyValueStore, key: string): Promise<KeyRecord | undefined> {
  const value = (await store.read()).get(storeKeyOf(hashKey(key)));
  return value === undefined ? undefined : parseKeyRecord(value);
}
