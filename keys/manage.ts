/**
 * Key management on any {@link KeyValueStore} (docs/decisions.md#keys): issue, rotate, revoke, list. Each command is one
 * atomic store update running a rule from rules.ts. The functions take the clock and the store; they never
 * log or return a key except the one just issued.
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

/**
 * Rotates a partner's key: issues a new one and gives the partner's current keys an expiry at
 * `now + graceMs` (a sooner expiry is kept), in one atomic change. Fails for a partner with no keys.
 */
export async function rotateKey(
  store: KeyValueStore,
  options: { partner: string; graceMs: number; now: Date },
): Promise<{ issued: IssuedKey } & RotateOutcome> {
  const { key, hash, id, record } = newKey(options.partner, options.now);
  const outcome = await store.update((entries) =>
    applyRotate(entries, {
      partner: options.partner,
      hash,
      record,
      now: options.now,
      graceMs: options.graceMs,
    }),
  );
  return { issued: { key, id, record }, ...outcome };
}

/**
 * Revokes a partner's keys, or one key by id: removes them now, or with `afterMs` gives them an expiry at
 * `now + afterMs` (never later than one they have). Fails when the target names no key.
 */
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
