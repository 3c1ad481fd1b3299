/**
 * The pure part of `npm run test:cpu` (tools/test-cpu.ts): reading /proc/stat, /proc/meminfo, /proc/loadavg and
 * vitest's summary, and the table of runs with the ratio B/A of each pair. No I/O.
 */

/** The whole machine's CPU time counters of /proc/stat's `cpu` line, in clock ticks. */
export interface CpuTicks {
  /** user + nice + system + irq + softirq + steal: time spent working (guest time is inside user and nice). */
  readonly busy: number;
  /** busy + idle + iowait. */
  readonly total: number;
}

/** The `cpu` line of /proc/stat (all cores together). */
export function parseProcStat(text: string): CpuTicks {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) throw new Error('/proc/stat has no "cpu" line');
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  if (fields.length < 8 || fields.some((n) => !Number.isFinite(n)))
    throw new Error(`/proc/stat's cpu line has fewer than 8 numbers: ${line}`);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** CPU-seconds the whole machine worked between two readings, at `ticksPerSecond` (getconf CLK_TCK: 100). */
export function cpuSeconds(before: CpuTicks, after: CpuTicks, ticksPerSecond = 100): number {
  return (after.busy - before.busy) / ticksPerSecond;
}

/** Memory in use on the whole machine, in bytes: MemTotal − MemAvailable of /proc/meminfo. */
export function parseMemInUse(text: string): number {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
    if (!match?.[1]) throw new Error(`/proc/meminfo has no ${name}`);
    return Number(match[1]) * 1024;
  };
  return field('MemTotal') - field('MemAvailable');
}

/** The one-minute load average of /proc/loadavg. */
export function parseLoadAverage(text: string): number {
  const value = Number(text.trim().split(/\s+/)[0]);
  if (!Number.isFinite(value)) throw new Error(`/proc/loadavg unreadable: ${text}`);
  return value;
}

/** Why a comparison will not start on a busy machine, or undefined when it is quiet enough (or told to go on). */
export function busyRefusal(load: number, maxLoad: number, busyOk: boolean): string | undefined {
  if (busyOk || load <= maxLoad) return undefined;
  return `refusing to measure: the machine is not quiet (load average ${load.toFixed(2)} over the last minute, above --max-load ${maxLoad}); figures taken beside other work compare that work, not the two suites. Wait until it is quiet, or pass --busy-ok to measure anyway`;
}

/** What vitest's summary says: test files and tests by outcome. */
export interface TestCounts {
  readonly files: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly total: number;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences of a coloured terminal
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * The counts of the last `Test Files …` and `Tests …` lines of vitest's output (`Tests  2657 passed | 1 skipped
 * (2658)`), colour codes removed; undefined when there is no such summary (the run did not get that far).
 */
export function parseVitestCounts(output: string): TestCounts | undefined {
  const text = output.replace(ANSI, '');
  const last = (label: string) =>
    [...text.matchAll(new RegExp(`^\\s*${label}\\s+(.+?)\\s+\\((\\d+)\\)\\s*$`, 'gm'))].at(-1);
  const files = last('Test Files');
  const tests = last('Tests');
  if (!files?.[2] || !tests?.[1] || !tests[2]) return undefined;
  const count = (summary: string, outcome: string) =>
    Number(new RegExp(`(\\d+) ${outcome}`).exec(summary)?.[1] ?? 0);
  return {
    files: Number(files[2]),
    passed: count(tests[1], 'passed'),
    failed: count(tests[1], 'failed'),
    skipped: count(tests[1], 'skipped') + count(tests[1], 'todo'),
    total: Number(tests[2]),
  };
}

/** One measured `npm test` of one side. */
export interface Run {
  readonly side: 'A' | 'B';
  readonly pair: number;
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  /** The peak of memory in use on the whole machine during the run, in bytes. */
  readonly peakMemBytes: number;
  /** That peak less the memory in use when the run started. */
  readonly peakRiseBytes: number;
  readonly exitCode: number;
  readonly counts: TestCounts | undefined;
}

/** B's figure over A's, for each pair that has both sides. */
export function pairRatios(runs: readonly Run[]): { pair: number; cpu: number; wall: number }[] {
  const pairs = [...new Set(runs.map((run) => run.pair))].sort((a, b) => a - b);
  return pairs.flatMap((pair) => {
    const a = runs.find((run) => run.pair === pair && run.side === 'A');
    const b = runs.find((run) => run.pair === pair && run.side === 'B');
    if (!a || !b) return [];
    return [{ pair, cpu: b.cpuSeconds / a.cpuSeconds, wall: b.wallSeconds / a.wallSeconds }];
  });
}

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
const countsText = (counts: TestCounts | undefined) =>
  counts
    ? `${counts.passed} passed${counts.failed ? `, ${counts.failed} failed` : ''}${counts.skipped ? `, ${counts.skipped} skipped` : ''} (${counts.files} files)`
    : 'no summary';

/** The printed report: a row per run, then the ratio B/A of each pair. */
export function formatReport(
  sides: { readonly A: string; readonly B: string },
  runs: readonly Run[],
): string {
  const head = ['pair', 'side', 'CPU-s', 'wall s', 'peak mem', 'rise', 'exit', 'tests'];
  const rows = runs.map((run) => [
    String(run.pair),
    run.side,
    run.cpuSeconds.toFixed(1),
    run.wallSeconds.toFixed(1),
    mb(run.peakMemBytes),
    mb(run.peakRiseBytes),
    String(run.exitCode),
    countsText(run.counts),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const ratios = pairRatios(runs).map(
    ({ pair, cpu, wall }) => `  pair ${pair}: B/A CPU ${cpu.toFixed(2)}, wall ${wall.toFixed(2)}`,
  );
  return [
    `A = ${sides.A}`,
    `B = ${sides.B}`,
    "CPU-s: whole machine, /proc/stat (user+nice+system+irq+softirq+steal); peak mem: whole machine, MemTotal − MemAvailable of /proc/meminfo sampled every 200 ms; rise: the peak less the value at the run's start",
    line(head),
    ...rows.map(line),
    'ratio B/A per pair:',
    ...ratios,
  ].join('\n');
}
