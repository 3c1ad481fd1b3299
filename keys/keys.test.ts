import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useScratchDir } from '../testing/scratch.ts';
import { FileKeyValueStore } from './file-store.ts';
import {
  generateKey,
  KeyRecord,
  keyRecordProblem,
  PartnerLabel,
  parseKeyRecord,
  RecordTime,
  serializeKeyRecord,
} from './keys.ts';
import { issueKey, revokeKeys, rotateKey } from './manage.ts';
import { applyIssue } from './rules.ts';

describe('a new key', () => {
  it('is fresh each time, in the service format', () => {
    expect(generateKey()).toMatch(/^tpc_[A-Za-z0-9_-]{43}$/);
    expect(generateKey()).not.toBe(generateKey());
  });
});

describe('a partner label', () => {
  it.each([
    ['one character', 'a'],
    ['one digit', '7'],
    ['64 characters', `a${'b'.repeat(62)}c`],
    ['a hyphen inside', 'globex-eu'],
    ['two hyphens inside', 'a--b'],
    ['digits and letters', 'x9-2y'],
  ])('accepts %s (%s)', (_name, label) => {
    expect(PartnerLabel.safeParse(label).success).toBe(true);
  });

  it.each([
    ['65 characters', 'a'.repeat(65)],
    ['nothing', ''],
    ['a leading hyphen', '-acme'],
    ['a trailing hyphen', 'acme-'],
    ['only hyphens', '---'],
    ['one hyphen', '-'],
    ['an uppercase letter', 'Acme'],
    ['an underscore', 'ac_me'],
  ])('refuses %s (%j)', (_name, label) => {
    const parsed = PartnerLabel.safeParse(label);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(
      'must be 1–64 lowercase letters, digits or hyphens, starting and ending with a letter or digit',
    );
  });

  it.each(['no-key', 'unknown-key', 'expired-key', 'many-keys', 'discipline', 'method', 'path', 'page'])(
    'refuses %s: the access log records it for requests that name no partner',
    (label) => {
      const parsed = PartnerLabel.safeParse(label);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(
        /^is reserved: the access log records no-key, .*, page /,
      );
    },
  );

  it('of a key issued before the first and last character had to be a letter or digit still reads', () => {
    expect(parseKeyRecord('{"partner":"-acme","created":"2026-01-01T00:00:00.000Z"}')).toEqual({
      partner: '-acme',
      created: '2026-01-01T00:00:00.000Z',
    });
  });
});

describe('the times of a key record', () => {
  const scratch = useScratchDir({ prefix: 'catalog-keys-' });

  it('are stored only as ISO 8601 UTC with milliseconds', () => {
    expect(RecordTime.safeParse('2026-12-01T00:00:00.000Z').success).toBe(true);
    for (const text of [
      'Dec 1 2026',
      '2026-12-01',
      '2026-12-01T00:00:00Z',
      '2026-12-01T00:00:00.000+00:00',
      '2026-12-01T00:00:00.0000Z',
      '2026-02-30T00:00:00.000Z',
      '2026-12-01t00:00:00.000z',
      ' 2026-12-01T00:00:00.000Z',
    ]) {
      expect(RecordTime.safeParse(text).success, text).toBe(false);
    }
  });

  it('refuse a record with "expires":"Dec 1 2026", naming the field and the form', () => {
    const value = '{"partner":"acme","created":"2026-01-01T00:00:00.000Z","expires":"Dec 1 2026"}';
    expect(parseKeyRecord(value)).toBeUndefined();
    expect(keyRecordProblem(value)).toBe(
      'expires must be ISO 8601 UTC exactly as the commands write it (2026-12-01T00:00:00.000Z)',
    );
    expect(keyRecordProblem('not json')).toBe('is not JSON');
    expect(keyRecordProblem('[]')).toBe('is not a key record');
  });

  it('are never written in another form', () => {
    expect(() => serializeKeyRecord({ partner: 'acme', created: '2026-01-01T00:00:00Z' })).toThrow(
      'must be ISO 8601 UTC exactly as the commands write it',
    );
    const entries = new Map<string, string>();
    expect(() =>
      applyIssue(entries, 'a'.repeat(64), {
        partner: 'acme',
        created: '2026-01-01T00:00:00.000Z',
        expires: 'Dec 1 2026',
      }),
    ).toThrow('must be ISO 8601 UTC exactly as the commands write it');
    expect(entries.size).toBe(0);
  });

  it('come out of issue, rotate and revoke --after in the stored form only', async () => {
    const store = new FileKeyValueStore(join(scratch.dir, 'kvs.json'), { create: true });
    const now = new Date('2026-03-04T05:06:07.089Z');
    await issueKey(store, { partner: 'acme', now, expires: new Date('2026-12-01') });
    await rotateKey(store, { partner: 'acme', now, graceMs: 7 * 86_400_000 });
    const revoked = await revokeKeys(store, { target: { partner: 'acme' }, now, afterMs: 3_600_000 });
    expect(revoked.expiring).toHaveLength(2);
    const records = [...(await store.read()).values()].map((value) => KeyRecord.parse(JSON.parse(value)));
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(record.created).toBe('2026-03-04T05:06:07.089Z');
      expect(record.expires).toBe('2026-03-04T06:06:07.089Z');
    }
  });
});
