import { describe, expect, it } from 'vitest';
import { checkLimits, diffEntries, storeBytes } from './limits.ts';

const MB = 1024 * 1024;

/** Entries of exactly `bytes` in total (as KeyValueStore counts them), in values of at most 500 bytes. */
function filler(bytes: number): Map<string, string> {
  const entries = new Map<string, string>();
  let left = bytes;
  for (let i = 0; left > 0; i += 1) {
    const key = `fill:${String(i).padStart(5, '0')}`;
    const value = 'x'.repeat(Math.min(500, left - key.length));
    entries.set(key, value);
    left -= key.length + value.length;
  }
  expect(storeBytes(entries)).toBe(bytes);
  return entries;
}

describe('the change between two sets of entries', () => {
  it('puts new and changed values and deletes missing keys, nothing else', () => {
    const before = new Map([
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ]);
    const after = new Map([
      ['a', '1'],
      ['b', '20'],
      ['d', '4'],
    ]);
    const change = diffEntries(before, after);
    expect([...change.puts]).toEqual([
      ['b', '20'],
      ['d', '4'],
    ]);
    expect(change.deletes).toEqual(['c']);
  });
});

describe('the KeyValueStore limits', () => {
  it('refuses a value over 1 KB', () => {
    const after = new Map([['cors:origin', 'x'.repeat(1025)]]);
    const report = checkLimits(after, diffEntries(new Map(), after));
    expect(report.problems).toEqual([
      'the value of cors:origin is 1025 bytes, over the 1 KB (1024-byte) limit',
    ]);
  });

  it('accepts a value of exactly 1 KB, with a warning from 80% on', () => {
    const after = new Map([
      ['a', 'x'.repeat(1024)],
      ['b', 'x'.repeat(819)],
      ['c', 'x'.repeat(820)],
    ]);
    const report = checkLimits(after, diffEntries(new Map(), after));
    expect(report.problems).toEqual([]);
    expect(report.warnings).toEqual([
      'the value of a is 1024 bytes, 100% of the 1 KB limit',
      'the value of c is 820 bytes, 80% of the 1 KB limit',
    ]);
  });

  it('refuses a write that takes the store over 5 MB', () => {
    const before = filler(5 * MB - 100);
    expect(checkLimits(before, diffEntries(new Map(), before)).problems).toEqual([]);
    const after = new Map(before).set('key:new', 'x'.repeat(94));
    const report = checkLimits(after, diffEntries(before, after));
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(
      /^the store would hold 5242881 bytes, over the 5 MB \(5242880-byte\) limit$/,
    );
  });

  it('warns once the store reaches 80% of 5 MB, and not below', () => {
    const below = filler(0.8 * 5 * MB - 12);
    const stillBelow = new Map(below).set('k', 'x'.repeat(10));
    expect(checkLimits(stillBelow, diffEntries(below, stillBelow)).warnings).toEqual([]);
    const over = new Map(below).set('k', 'x'.repeat(11));
    const report = checkLimits(over, diffEntries(below, over));
    expect(report.problems).toEqual([]);
    expect(report.warnings).toEqual([
      expect.stringMatching(/^the store holds \d+ bytes, 80% of the 5 MB limit/),
    ]);
  });

  it('lets a delete through even when the store is over a limit', () => {
    const before = filler(5 * MB + 5000);
    const after = new Map(before);
    after.delete('fill:00000');
    expect(checkLimits(after, diffEntries(before, after))).toEqual({ problems: [], warnings: [] });
  });
});
