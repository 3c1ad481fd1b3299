import { describe, expect, it } from 'vitest';
import { ByteSize, formatBytes } from './options.ts';

describe('source settings', () => {
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

  it('formats sizes exactly and briefly', () => {
    expect([formatBytes(134_217_728), formatBytes(1024), formatBytes(1000)]).toEqual([
      '128MiB',
      '1KiB',
      '1000B',
    ]);
  });
});
