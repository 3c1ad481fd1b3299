import { describe, expect, it } from 'vitest';
import { Duration, duration, formatDuration, IsoTime, parseWhen } from './time.ts';

const NOW = new Date('2026-06-01T12:00:00.000Z');

const FORMAT = 'must be a number and a unit ms, s, m, h or d, such as 30s or 7d';

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['12h', 43_200_000],
    ['7d', 604_800_000],
    [' 2s ', 2_000],
    ['500ms', 500],
  ])('reads %j as %d ms', (text, ms) => {
    expect(Duration.parse(text)).toBe(ms);
  });

  it.each([
    ['7', FORMAT],
    ['7w', FORMAT],
    ['-1d', FORMAT],
    ['1.5h', FORMAT],
    ['7D', FORMAT],
    ['0d', 'must be longer than zero'],
    ['36501d', 'must be at most 36500d (100 years)'],
    ['99999999999999999999d', 'must be at most 36500d (100 years)'],
  ])('refuses %j: %s', (text, message) => {
    expect(Duration.safeParse(text).error?.issues[0]?.message).toBe(message);
  });

  it('bounds each setting by its own longest', () => {
    const timeout = duration(86_400_000);
    expect([timeout.parse('24h'), timeout.parse('1d'), timeout.parse(' 2m ')]).toEqual([
      86_400_000, 86_400_000, 120_000,
    ]);
    expect(timeout.safeParse('25h').error?.issues[0]?.message).toBe('must be at most 1d');
    expect(timeout.safeParse('30 s').error?.issues[0]?.message).toBe(FORMAT);
  });

  it('formats a duration as the shortest exact text, which reads back', () => {
    const texts = [1_500, 30_000, 60_000, 7_200_000, 90_000_000, 2_592_000_000].map(formatDuration);
    expect(texts).toEqual(['1500ms', '30s', '1m', '2h', '25h', '30d']);
    expect(texts.map((text) => Duration.parse(text))).toEqual([
      1_500, 30_000, 60_000, 7_200_000, 90_000_000, 2_592_000_000,
    ]);
  });
});

describe('times', () => {
  it.each([
    ['2026-12-01T00:00:00Z', '2026-12-01T00:00:00.000Z'],
    ['2026-12-01T01:30+01:00', '2026-12-01T00:30:00.000Z'],
    ['2026-12-01T00:00:00.250Z', '2026-12-01T00:00:00.250Z'],
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
  ])('reads %j', (text, iso) => {
    expect(IsoTime.parse(text).toISOString()).toBe(iso);
  });

  it.each([
    '2026-02-30',
    '2027-02-29',
    '2026-13-01',
    '2026-12-01T24:00:00Z',
    '2026-12-01T10:00:00',
    'tomorrow',
    '12/01/2026',
  ])('refuses %j', (text) => {
    expect(IsoTime.safeParse(text).success).toBe(false);
  });
});

describe('--expires WHEN', () => {
  it('takes a duration from now, or a time', () => {
    expect(parseWhen('2h', NOW)).toEqual(new Date('2026-06-01T14:00:00.000Z'));
    expect(parseWhen('2026-07-01', NOW)).toEqual(new Date('2026-07-01T00:00:00.000Z'));
  });

  it('refuses a time that is not in the future, saying what time it is', () => {
    expect(parseWhen('2026-06-01T12:00:00Z', NOW)).toBe(
      'must be in the future (it is 2026-06-01T12:00:00.000Z now)',
    );
    expect(parseWhen('2020-01-01', NOW)).toMatch(/^must be in the future/);
  });

  it('explains a malformed duration or time', () => {
    expect(parseWhen('0s', NOW)).toBe('must be longer than zero');
    expect(parseWhen('soon', NOW)).toBe(
      'must be an ISO 8601 time (2026-12-01T00:00:00Z) or a duration (12h, 7d)',
    );
  });
});
