import { describe, expect, it } from 'vitest';
import {
  busyRefusal,
  cpuSeconds,
  formatReport,
  pairRatios,
  parseLoadAverage,
  parseMemInUse,
  parseProcStat,
  parseVitestCounts,
  type Run,
} from './test-cpu-figures.ts';

const STAT = `cpu  1000 20 300 5000 40 6 7 8 90 10
cpu0 500 10 150 2500 20 3 3 4 45 5
cpu1 500 10 150 2500 20 3 4 4 45 5
intr 12345
`;

describe('the CPU comparison figures', () => {
  it('counts user, nice, system, irq, softirq and steal as work, and not idle, iowait or guest', () => {
    expect(parseProcStat(STAT)).toEqual({ busy: 1000 + 20 + 300 + 6 + 7 + 8, total: 1341 + 5000 + 40 });
  });

  it('turns the busy ticks between two readings into CPU-seconds at the clock rate', () => {
    const before = parseProcStat(STAT);
    const after = parseProcStat('cpu  1250 20 350 5100 40 6 7 8 0 0\n');
    expect(cpuSeconds(before, after, 100)).toBe(3);
    expect(cpuSeconds(before, after, 250)).toBe(1.2);
  });

  it('fails on a /proc/stat without a whole-machine cpu line', () => {
    expect(() => parseProcStat('cpu0 1 2 3 4 5 6 7 8\n')).toThrow(/no "cpu" line/);
    expect(() => parseProcStat('cpu  1 2 3\n')).toThrow(/fewer than 8/);
  });

  it('reads the memory in use as MemTotal less MemAvailable', () => {
    const meminfo = 'MemTotal:        4000000 kB\nMemFree:          100000 kB\nMemAvailable:    3000000 kB\n';
    expect(parseMemInUse(meminfo)).toBe(1_000_000 * 1024);
    expect(() => parseMemInUse('MemTotal: 1 kB\n')).toThrow(/MemAvailable/);
  });

  it('refuses a machine whose load average is above the bound, unless told to measure anyway', () => {
    const load = parseLoadAverage('2.31 1.50 0.90 3/456 7890\n');
    expect(load).toBe(2.31);
    expect(busyRefusal(load, 1, false)).toMatch(
      /^refusing to measure: the machine is not quiet \(load average 2\.31 .* above --max-load 1\).*--busy-ok/,
    );
    expect(busyRefusal(load, 1, true)).toBeUndefined();
    expect(busyRefusal(0.4, 1, false)).toBeUndefined();
  });

  it("reads vitest's last summary, colour codes and all", () => {
    const output = [
      ' Test Files  3 passed (3)',
      '      Tests  10 passed (10)',
      '\u001b[2m Test Files \u001b[22m \u001b[1m\u001b[32m106 passed\u001b[39m\u001b[22m\u001b[90m (106)\u001b[39m',
      '\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[32m2657 passed\u001b[39m\u001b[22m\u001b[2m | \u001b[22m\u001b[33m1 skipped\u001b[39m\u001b[90m (2658)\u001b[39m',
      '   Duration  171.2s',
    ].join('\n');
    expect(parseVitestCounts(output)).toEqual({
      files: 106,
      passed: 2657,
      failed: 0,
      skipped: 1,
      total: 2658,
    });
  });

  it('reads failed tests and says nothing when there is no summary', () => {
    expect(
      parseVitestCounts(
        ' Test Files  1 failed | 99 passed (100)\n      Tests  2 failed | 2360 passed | 6 skipped (2368)\n',
      ),
    ).toEqual({ files: 100, passed: 2360, failed: 2, skipped: 6, total: 2368 });
    expect(parseVitestCounts('error TS2322: Type string is not assignable\n')).toBeUndefined();
  });

  const run = (side: 'A' | 'B', pair: number, cpu: number, wall: number): Run => ({
    side,
    pair,
    cpuSeconds: cpu,
    wallSeconds: wall,
    peakMemBytes: 900 * 1024 * 1024,
    peakRiseBytes: 600 * 1024 * 1024,
    exitCode: 0,
    counts: { files: 106, passed: 2657, failed: 0, skipped: 1, total: 2658 },
  });

  it('gives the ratio B/A of each pair, and none for a pair missing a side', () => {
    const runs = [
      run('A', 1, 300, 170),
      run('B', 1, 150, 100),
      run('A', 2, 320, 160),
      run('B', 2, 144, 80),
      run('A', 3, 1, 1),
    ];
    expect(pairRatios(runs)).toEqual([
      { pair: 1, cpu: 0.5, wall: 100 / 170 },
      { pair: 2, cpu: 0.45, wall: 0.5 },
    ]);
  });

  it('prints a row per run and the ratios', () => {
    const report = formatReport({ A: 'round-start (3465105)', B: 'HEAD (abc1234)' }, [
      run('A', 1, 313.04, 171.26),
      run('B', 1, 150.5, 90),
    ]);
    expect(report.split('\n')).toEqual([
      'A = round-start (3465105)',
      'B = HEAD (abc1234)',
      expect.stringMatching(/^CPU-s: whole machine, \/proc\/stat .*every 200 ms/),
      'pair  side  CPU-s  wall s  peak mem  rise    exit  tests',
      '1     A     313.0  171.3   900 MB    600 MB  0     2657 passed, 1 skipped (106 files)',
      '1     B     150.5  90.0    900 MB    600 MB  0     2657 passed, 1 skipped (106 files)',
      'ratio B/A per pair:',
      '  pair 1: B/A CPU 0.48, wall 0.53',
    ]);
  });
});
