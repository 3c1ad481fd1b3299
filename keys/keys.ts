/**
 * API keys (docs/decisions.md#keys): `tpc_` + 43 base64url characters (32 random bytes). Only the SHA-256 hex digest of
 * a key is ever stored, under `key:<digest>`, with the partner label, creation time and optional expiry.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { CatalogError } from '../contract/errors.ts';
import {
  type KeyRecord as ContractKeyRecord,
  KVS_KEY_PREFIX,
  LOG_REASONS,
  LogValue,
} from '../contract/index.ts';

/** The prefix lets secret scanners recognise a leaked key. */
export const KEY_PREFIX = 'tpc_';
export const KEY_PATTERN = /^tpc_[A-Za-z0-9_-]{43}$/;

/** Labels no partner may take: the values the gateway records for requests that name no partner. */
const RESERVED_PARTNER_LABELS: readonly string[] = [...LOG_REASONS, LogValue.Page];

/**
 * A partner label, as a command takes it: lowercase letters, digits and hyphens, 1 to 64 characters,
 * starting and ending with a letter or digit (`acme`, `globex-eu`, `a--b`; not `-acme` or `---`).
 */
export const PartnerLabel = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, {
    error: 'must be 1–64 lowercase letters, digits or hyphens, starting and ending with a letter or digit',
  })
  .refine((label) => !RESERVED_PARTNER_LABELS.includes(label), {
    error: `is reserved: the access log records ${RESERVED_PARTNER_LABELS.join(', ')} for requests that name no partner (docs/decisions.md#usage)`,
  });

/** A stored partner label: any the commands ever accepted, so an older key still reads, lists and revokes. */
const StoredPartnerLabel = z
  .string()
  .regex(/^[a-z0-9-]{1,64}$/, { error: 'must be 1–64 lowercase letters, digits or hyphens' });

/**
 * A time in a key record: exactly as `Date#toISOString` writes it, the one form every runtime's `Date.parse`
 * must read the same way, CloudFront's included.
 */
export const RecordTime = z.string().refine(
  (text) => {
    const time = Date.parse(text);
    return Number.isFinite(time) && new Date(time).toISOString() === text;
  },
  { error: 'must be ISO 8601 UTC exactly as the commands write it (2026-12-01T00:00:00.000Z)' },
);

/** A stored key record (the KVS value): validated when written and when read back. */
export const KeyRecord = z.object({
  partner: StoredPartnerLabel,
  created: RecordTime,
  expires: RecordTime.exactOptional(),
});
export type KeyRecord = z.output<typeof KeyRecord> & ContractKeyRecord;

/** A new random key. Print it once; never store or log it. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The SHA-256 hex digest of a key: what the store and the gateway compare. */
export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The store key under which a key's record lives. */
export const storeKeyOf = (hash: string): string => KVS_KEY_PREFIX + hash;

/** The short, shareable id of a key: the first 12 hex digits of its hash (never the key itself). */
export const keyId = (hash: string): string => hash.slice(0, 12);

/** Why a stored value is not a key record the commands write (naming the field), or undefined. */
export function keyRecordProblem(value: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return 'is not JSON';
  }
  return recordProblem(json);
}

/** The first problem of a key record as a phrase naming the field, or undefined when there is none. */
function recordProblem(record: unknown): string | undefined {
  const parsed = KeyRecord.safeParse(record);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  return issue?.path.length ? `${issue.path.join('.')} ${issue.message}` : 'is not a key record';
}

/** A key record read back from the store, or undefined when the value is not a valid record. */
export function parseKeyRecord(value: string): KeyRecord | undefined {
  try {
    return KeyRecord.parse(JSON.parse(value)) as KeyRecord;
  } catch {
    return undefined;
  }
}

/** The stored form of a key record; throws a {@link CatalogError} for one that breaks {@link KeyRecord}. */
export function serializeKeyRecord(record: KeyRecord): string {
  const problem = recordProblem(record);
  if (problem !== undefined) throw new CatalogError(`refusing to store a key record: ${problem}`);
  return JSON.stringify({
    partner: record.partner,
    created: record.created,
    ...(record.expires !== undefined ? { expires: record.expires } : {}),
  });
}

/** `--key-id`: the 12 hex digits `keys list` shows, or a longer prefix of the hash up to all 64. */
export const KeyIdInput = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[0-9a-f]{12,64}$/, { error: 'must be a key id as keys list shows it (12 hex digits)' });
