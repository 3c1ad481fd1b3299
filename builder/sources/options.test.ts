import { describe, expect, it } from 'vitest';
import { ByteSize, formatBytes, formatMs, TimeoutMs } from './options.ts';

describe('source settings', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    [' 2m ', 120_000],
    ['24h', 86_400_000],
  ])('reads the timeout %j as %i ms', (text, ms) => {
    expect(TimeoutMs.parse(text)).toBe(ms);
  });

  it.each(['0s', '30', '1.5s', '-1s', '25h', '30 s'])('refuses the timeout %j', (text) => {
    expect(TimeoutMs.safeParse(text).success).toBe(false);
  });

  it.each([
    ['1024', 1024],
    ['100B', 100],
    ['64KiB', 65_536],
    ['128MiB', 134_217_728],
  ])('reads the size %j as %i bytes', (text, bytes) => {
    expect(ByteSize.parse(text)).toBe(bytes);
  });

  it.each(['0', '64MB', '1GiB', '1.5MiB'])('refuses the size %j', (text) => {
    expect(ByteSize.safeParse(text).success).toBe(false);
  });

  it('formats durations and sizes exactly and briefly', () => {
    expect([formatMs(60_000), formatMs(1_500), formatMs(30_000), formatMs(7_200_000)]).toEqual([
      '1m',
      '1500ms',
      '30s',
      '2h',
    ]);
    expect([formatBytes(134_217_728), formatBytes(1024), formatBytes(1000)]).toEqual([
      '128MiB',
      '1KiB',
      '1000B',
    ]);
  });
});
