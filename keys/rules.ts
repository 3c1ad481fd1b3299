/**
 * The key rules (docs/decisions.md#keys) as pure functions over the store's entries, run by manage.ts inside
 * one atomic update: no I/O, no clock, no key (only hashes).
 */
import { CatalogError } from '../contract/errors.ts';
import { KVS_KEY_PREFIX } from '../contract/index.ts';
import { type KeyRecord, keyId, parseKeyRecord, serializeKeyRecord, storeKeyOf } from './keys.ts';

/** `active`: no expiry; `expiring`: an expiry still ahead; `expired`: refused by the gateway. */
export type KeyStatus = 'active' | 'expiring' | 'expired';

/** One key in the store: its hash, short id, and record (null when the stored value is unreadable). */
export interface StoredKey {
  readonly hash: string;
  readonly id: string;
  readonly record: KeyRecord | null;
}

/** A key rule was broken (unknown partner or key id, nothing to rotate…); nothing was changed. */
export class KeyRuleError extends CatalogError {
  override name = 'KeyRuleError';
}

/** Every `key:` entry, sorted by partner, then creation time, then id; unreadable records last. */
export function storedKeys(entries: ReadonlyMap<string, string>): StoredKey[] {
  const keys: StoredKey[] = [];
  for (const [name, value] of entries) {
    if (!name.startsWith(KVS_KEY_PREFIX)) continue;
    const hash = name.slice(KVS_KEY_PREFIX.length);
    keys.push({ hash, id: keyId(hash), record: parseKeyRecord(value) ?? null });
  }
  // Code-point order of partner, creation time (all ISO 8601 UTC) and hash; unreadable records last.
  const rank = (key: StoredKey) =>
    key.record === null
      ? `1\u0000${key.hash}`
      : `0\u0000${key.record.partner}\u0000${key.record.created}\u0000${key.hash}`;
  return keys.sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
}

/** The status of a key at `now`. The gateway refuses a key once `now` reaches its expiry. */
export function statusOf(record: KeyRecord, now: Date): KeyStatus {
  if (record.expires === undefined) return 'active';
  return Date.parse(record.expires) > now.getTime() ? 'expiring' : 'expired';
}

/** The record with its expiry brought forward to `at`: an expiry is never lengthened. */
export function withExpiryAtMost(record: KeyRecord, at: Date): KeyRecord {
  if (record.expires !== undefined && Date.parse(record.expires) <= at.getTime()) return record;
  return { partner: record.partner, created: record.created, expires: at.toISOString() };
}

/** A key whose expiry a command changed (or kept, being sooner): before (none: no expiry) and after. */
export interface ExpiryChange {
  readonly id: string;
  readonly partner: string;
  readonly before?: string;
  readonly after: string;
}

/** Adds a key's record under its hash; a key is issued once. */
export function applyIssue(entries: Map<string, string>, hash: string, record: KeyRecord): void {
  const name = storeKeyOf(hash);
  if (entries.has(name)) throw new KeyRuleError(`key ${keyId(hash)} is already in the store`);
  entries.set(name, serializeKeyRecord(record));
}

/** Brings each key's expiry forward to `at` (never later); returns one entry per key looked at. */
function capExpiries(entries: Map<string, string>, keys: readonly StoredKey[], at: Date): ExpiryChange[] {
  const changes: ExpiryChange[] = [];
  for (const key of keys) {
    if (key.record === null) continue;
    const capped = withExpiryAtMost(key.record, at);
    if (capped !== key.record) entries.set(storeKeyOf(key.hash), serializeKeyRecord(capped));
    changes.push({
      id: key.id,
      partner: key.record.partner,
      ...(key.record.expires !== undefined ? { before: key.record.expires } : {}),
      after: capped.expires as string,
    });
  }
  return changes;
}

/** What a rotation did: the partner's older keys, each with its expiry now. */
export interface RotateOutcome {
  readonly old: readonly ExpiryChange[];
}

/**
 * Rotation: adds the new key and gives each of the partner's accepted keys an expiry at `now + graceMs` at
 * most. Refuses a partner with no key at all (a typo would otherwise create a new partner).
 */
export function applyRotate(
  entries: Map<string, string>,
  options: { partner: string; hash: string; record: KeyRecord; now: Date; graceMs: number },
): RotateOutcome {
  const partnerKeys = storedKeys(entries).filter((key) => key.record?.partner === options.partner);
  if (partnerKeys.length === 0)
    throw new KeyRuleError(
      `partner ${options.partner} has no keys to rotate; issue a first key with catalog keys issue --partner ${options.partner}`,
    );
  const current = partnerKeys.filter(
    (key) => key.record !== null && statusOf(key.record, options.now) !== 'expired',
  );
  const old = capExpiries(entries, current, new Date(options.now.getTime() + options.graceMs));
  applyIssue(entries, options.hash, options.record);
  return { old };
}

/** Which keys to revoke: all of a partner's, or one by its id (or a longer prefix of its hash). */
export type RevokeTarget = { readonly partner: string } | { readonly keyId: string };

/** What a revocation did: keys removed now, or keys given an expiry. */
export interface RevokeOutcome {
  readonly removed: readonly StoredKey[];
  readonly expiring: readonly ExpiryChange[];
}

/** The keys a target names; refuses a target that names none, or a key id that names more than one. */
export function keysOf(entries: ReadonlyMap<string, string>, target: RevokeTarget): StoredKey[] {
  const keys = storedKeys(entries);
  if ('partner' in target) {
    const matched = keys.filter((key) => key.record?.partner === target.partner);
    if (matched.length === 0) throw new KeyRuleError(`partner ${target.partner} has no keys`);
    return matched;
  }
  const matched = keys.filter((key) => key.hash.startsWith(target.keyId));
  if (matched.length === 0) throw new KeyRuleError(`no key has the id ${target.keyId}`);
  if (matched.length > 1)
    throw new KeyRuleError(`the id ${target.keyId} matches ${matched.length} keys; give more hex digits`);
  return matched;
}

/** Revocation: removes the target's keys now, or with `afterMs` gives each an expiry at `now + afterMs` at most. */
export function applyRevoke(
  entries: Map<string, string>,
  options: { target: RevokeTarget; now: Date; afterMs?: number },
): RevokeOutcome {
  const keys = keysOf(entries, options.target);
  if (options.afterMs === undefined) {
    for (const key of keys) entries.delete(storeKeyOf(key.hash));
    return { removed: keys, expiring: [] };
  }
  const unreadable = keys.find((key) => key.record === null);
  if (unreadable)
    throw new KeyRuleError(
      `key ${unreadable.id} has an unreadable record, so it cannot be given an expiry; revoke it now (without --after)`,
    );
  const live = keys.filter((key) => key.record !== null && statusOf(key.record, options.now) !== 'expired');
  return {
    removed: [],
    expiring: capExpiries(entries, live, new Date(options.now.getTime() + options.afterMs)),
  };
}

/** One row of `keys list`: never the key, only its id. */
export interface KeyListing {
  readonly partner: string | null;
  readonly id: string;
  readonly created: string | null;
  readonly expires: string | null;
  /** `invalid`: the stored record is unreadable, and the gateway refuses the key. */
  readonly status: KeyStatus | 'invalid';
}

/** The rows of `keys list` at `now`. */
export function listKeys(entries: ReadonlyMap<string, string>, now: Date): KeyListing[] {
  return storedKeys(entries).map(({ id, record }) => ({
    partner: record?.partner ?? null,
    id,
    created: record?.created ?? null,
    expires: record?.expires ?? null,
    status: record ? statusOf(record, now) : 'invalid',
  }));
}
