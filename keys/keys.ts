/**
 * API keys (contract §4): `tpc_` + 43 base64url characters (32 random bytes). Only the SHA-256 hex digest of
 * a key is ever stored, under `key:<digest>`, with the partner label, creation time and optional expiry.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { type KeyRecord as ContractKeyRecord, KVS_KEY_PREFIX } from '../contract/index.ts';

/** The prefix lets secret scanners recognise a leaked key. */
export const KEY_PREFIX = 'tpc_';
export const KEY_PATTERN = /^tpc_[A-Za-z0-9_-]{43}$/;

/** A partner label: lowercase letters, digits and hyphens, 1 to 64 characters. */
export const PartnerLabel = z
  .string()
  .regex(/^[a-z0-9-]{1,64}$/, { error: 'must be 1–64 lowercase letters, digits or hyphens' });

/** A stored key record (the KVS value), validated when read back. */
export const KeyRecord = z.object({
  partner: PartnerLabel,
  created: z.iso.datetime(),
  expires: z.iso.datetime().exactOptional(),
});
export type KeyRecord = z.output<typeof KeyRecord> & ContractKeyRecord;

/** A new random key. Print it once; never store or log it. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The SHA-256 hex digest of a key: what the store and the gateway compare. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The store key under which a key's record lives. */
export function storeKeyOf(hash: string): string {
  return KVS_KEY_PREFIX + hash;
}

/** The short, shareable id of a key: the first 12 hex digits of its hash (never the key itself). */
export function keyId(hash: string): string {
  return hash.slice(0, 12);
}

/** A key record read back from the store, or undefined when the value is not a valid record. */
export function parseKeyRecord(value: string): KeyRecord | undefined {
  try {
    const parsed = KeyRecord.safeParse(JSON.parse(value));
    return parsed.success ? (parsed.data as KeyRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** `--key-id`: the 12 hex digits `keys list` shows, or a longer prefix of the hash up to all 64. */
export const KeyIdInput = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[0-9a-f]{12,64}$/, { error: 'must be a key id as keys list shows it (12 hex digits)' });
