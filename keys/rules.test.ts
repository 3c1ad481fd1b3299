import { describe, expect, it } from 'vitest';
import { KVS_CORS_ORIGIN } from '../contract/index.ts';
import { hashKey, type KeyRecord, storeKeyOf } from './keys.ts';
import {
  applyIssue,
  applyRevoke,
  applyRotate,
  KeyRuleError,
  listKeys,
  statusOf,
  withExpiryAtMost,
} from './rules.ts';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs).toISOString();

/** A store holding `records`, each under the hash of a made-up key named after its index. */
function storeWith(...records: KeyRecord[]): { entries: Map<string, string>; hashes: string[] } {
  const entries = new Map<string, string>([[KVS_CORS_ORIGIN, 'https://partner.example']]);
  const hashes = records.map((record, index) => {
    const hash = hashKey(`key-${index}`);
    entries.set(storeKeyOf(hash), JSON.stringify(record));
    return hash;
  });
  return { entries, hashes };
}

const recordOf = (entries: Map<string, string>, hash: string) =>
  JSON.parse(entries.get(storeKeyOf(hash)) ?? 'null') as KeyRecord | null;

describe('key status', () => {
  it('is active without an expiry, expiring before it, and expired from the expiry on', () => {
    expect(statusOf({ partner: 'a', created: at(-DAY) }, NOW)).toBe('active');
    expect(statusOf({ partner: 'a', created: at(-DAY), expires: at(1) }, NOW)).toBe('expiring');
    expect(statusOf({ partner: 'a', created: at(-DAY), expires: at(0) }, NOW)).toBe('expired');
  });
});

describe('an expiry is never lengthened', () => {
  it('brings a later expiry forward and gives one to a key without', () => {
    expect(
      withExpiryAtMost({ partner: 'a', created: at(-DAY), expires: at(9 * DAY) }, new Date(at(DAY))),
    ).toEqual({
      partner: 'a',
      created: at(-DAY),
      expires: at(DAY),
    });
    expect(withExpiryAtMost({ partner: 'a', created: at(-DAY) }, new Date(at(DAY))).expires).toBe(at(DAY));
  });

  it('keeps a sooner expiry as it is', () => {
    const record = { partner: 'a', created: at(-DAY), expires: at(HOUR) };
    expect(withExpiryAtMost(record, new Date(at(DAY)))).toBe(record);
  });
});

describe('rotation', () => {
  const newRecord: KeyRecord = { partner: 'acme', created: NOW.toISOString() };
  const newHash = hashKey('the-new-key');

  it("adds the new key and gives the partner's current keys an expiry at now + grace", () => {
    const { entries, hashes } = storeWith(
      { partner: 'acme', created: at(-DAY) },
      { partner: 'globex', created: at(-DAY) },
    );
    const outcome = applyRotate(entries, {
      partner: 'acme',
      hash: newHash,
      record: newRecord,
      now: NOW,
      graceMs: 7 * DAY,
    });
    expect(recordOf(entries, newHash)).toEqual(newRecord);
    expect(recordOf(entries, hashes[0] as string)?.expires).toBe(at(7 * DAY));
    expect(recordOf(entries, hashes[1] as string)).toEqual({ partner: 'globex', created: at(-DAY) });
    expect(outcome.old).toEqual([
      { id: (hashes[0] as string).slice(0, 12), partner: 'acme', after: at(7 * DAY) },
    ]);
    expect(entries.get(KVS_CORS_ORIGIN)).toBe('https://partner.example');
  });

  it('never lengthens a key that already expires sooner than the grace period', () => {
    const { entries, hashes } = storeWith({ partner: 'acme', created: at(-DAY), expires: at(HOUR) });
    const outcome = applyRotate(entries, {
      partner: 'acme',
      hash: newHash,
      record: newRecord,
      now: NOW,
      graceMs: 7 * DAY,
    });
    expect(recordOf(entries, hashes[0] as string)?.expires).toBe(at(HOUR));
    expect(outcome.old[0]).toMatchObject({ before: at(HOUR), after: at(HOUR) });
  });

  it('leaves keys that have expired already untouched', () => {
    const expired = { partner: 'acme', created: at(-2 * DAY), expires: at(-DAY) };
    const { entries, hashes } = storeWith(expired);
    const outcome = applyRotate(entries, {
      partner: 'acme',
      hash: newHash,
      record: newRecord,
      now: NOW,
      graceMs: DAY,
    });
    expect(recordOf(entries, hashes[0] as string)).toEqual(expired);
    expect(outcome.old).toEqual([]);
  });

  it('fails for a partner with no keys and changes nothing', () => {
    const { entries } = storeWith({ partner: 'acme', created: at(-DAY) });
    const before = new Map(entries);
    expect(() =>
      applyRotate(entries, { partner: 'acmee', hash: newHash, record: newRecord, now: NOW, graceMs: DAY }),
    ).toThrow(
      new KeyRuleError(
        'partner acmee has no keys to rotate; issue a first key with catalog keys issue --partner acmee',
      ),
    );
    expect(entries).toEqual(before);
  });
});

describe('revocation', () => {
  it("removes every key of the partner now, and only that partner's", () => {
    const { entries, hashes } = storeWith(
      { partner: 'acme', created: at(-DAY) },
      { partner: 'acme', created: at(-HOUR), expires: at(-1) },
      { partner: 'globex', created: at(-DAY) },
    );
    const outcome = applyRevoke(entries, { target: { partner: 'acme' }, now: NOW });
    expect(outcome.removed.map((key) => key.hash).sort()).toEqual([hashes[0], hashes[1]].sort());
    expect([...entries.keys()].sort()).toEqual([KVS_CORS_ORIGIN, storeKeyOf(hashes[2] as string)].sort());
  });

  it('removes one key by its 12-digit id', () => {
    const { entries, hashes } = storeWith(
      { partner: 'acme', created: at(-DAY) },
      { partner: 'acme', created: at(-DAY) },
    );
    applyRevoke(entries, { target: { keyId: (hashes[1] as string).slice(0, 12) }, now: NOW });
    expect(entries.has(storeKeyOf(hashes[0] as string))).toBe(true);
    expect(entries.has(storeKeyOf(hashes[1] as string))).toBe(false);
  });

  it('with --after gives an expiry at now + after, never lengthening a sooner one', () => {
    const { entries, hashes } = storeWith(
      { partner: 'acme', created: at(-DAY) },
      { partner: 'acme', created: at(-DAY), expires: at(HOUR) },
    );
    const outcome = applyRevoke(entries, { target: { partner: 'acme' }, now: NOW, afterMs: DAY });
    expect(recordOf(entries, hashes[0] as string)?.expires).toBe(at(DAY));
    expect(recordOf(entries, hashes[1] as string)?.expires).toBe(at(HOUR));
    expect(outcome.removed).toEqual([]);
    expect(outcome.expiring).toHaveLength(2);
  });

  it('fails for a partner with no keys, and changes nothing', () => {
    const { entries } = storeWith({ partner: 'acme', created: at(-DAY) });
    const before = new Map(entries);
    expect(() => applyRevoke(entries, { target: { partner: 'globex' }, now: NOW })).toThrow(
      'partner globex has no keys',
    );
    expect(entries).toEqual(before);
  });

  it('fails for an unknown key id', () => {
    const { entries } = storeWith({ partner: 'acme', created: at(-DAY) });
    expect(() => applyRevoke(entries, { target: { keyId: '000000000000' }, now: NOW })).toThrow(
      'no key has the id 000000000000',
    );
  });
});

describe('issuing', () => {
  it('refuses a hash that is already stored', () => {
    const { entries, hashes } = storeWith({ partner: 'acme', created: at(-DAY) });
    expect(() => applyIssue(entries, hashes[0] as string, { partner: 'x', created: at(0) })).toThrow(
      KeyRuleError,
    );
  });
});

describe('the key listing', () => {
  it('shows partner, id, times and status, sorted by partner then creation, and never a key or hash', () => {
    const { entries, hashes } = storeWith(
      { partner: 'globex', created: at(-DAY) },
      { partner: 'acme', created: at(-HOUR), expires: at(HOUR) },
      { partner: 'acme', created: at(-DAY), expires: at(-1) },
    );
    entries.set(storeKeyOf(hashKey('broken')), 'not json');
    const rows = listKeys(entries, NOW);
    expect(rows).toEqual([
      { partner: 'acme', id: hashes[2]?.slice(0, 12), created: at(-DAY), expires: at(-1), status: 'expired' },
      {
        partner: 'acme',
        id: hashes[1]?.slice(0, 12),
        created: at(-HOUR),
        expires: at(HOUR),
        status: 'expiring',
      },
      { partner: 'globex', id: hashes[0]?.slice(0, 12), created: at(-DAY), expires: null, status: 'active' },
      { partner: null, id: hashKey('broken').slice(0, 12), created: null, expires: null, status: 'invalid' },
    ]);
    expect(JSON.stringify(rows)).not.toContain(hashes[0]);
  });
});
