/**
 * npm run test:cpu — the CPU `npm test` costs at two revisions, measured side by side on this machine. Clones both
 * (default: tag `round-start` and HEAD) into scratch directories, runs `npm ci` and one warm-up `npm test` in each
 * (the compilers' and vitest's caches then are as a developer has them), then alternates `npm test` A, B, A, B …
 * (`--pairs N`, default 2). For each run: the whole machine's CPU time (from /proc/stat), wall time, the peak of
 * the memory in use on the machine (MemTotal − MemAvailable, sampled every 200 ms) and the test counts vitest
 * prints; then the ratio B/A of each pair. Whole-machine figures include everything else the machine does, so it
 * refuses to start when the load average is above `--max-load` (default 1), unless `--busy-ok`. Run it alone: a
 * full comparison takes about 25 minutes.
 *
 *   npm run test:cpu [-- [--pairs 2] [--max-load 1] [--busy-ok] [--keep] [REF_A [REF_B]]]
 *
 * Exit 1 when a run fails (its figures are in the table, marked by its exit code). The clones are removed at
 * the end unless `--keep`; each run's output is kept in its clone's `test-cpu.log` meanwhile.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  busyRefusal,
  type CpuTicks,
  cpuSeconds,
  formatReport,
  parseLoadAverage,
  parseMemInUse,
  parseProcStat,
  parseVitestCounts,
  type Run,
} from './test-cpu-figures.ts';

const ROOT = new URL('..', import.meta.url).pathname;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pairs: { type: 'string', default: '2' },
    'max-load': { type: 'string', default: '1' },
    'busy-ok': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const pairs = Number(values.pairs);
const maxLoad = Number(values['max-load']);
if (!Number.isInteger(pairs) || pairs < 1)
  throw new Error(`--pairs must be a whole number ≥ 1: ${values.pairs}`);
if (!(maxLoad >= 0)) throw new Error(`--max-load must be a number ≥ 0: ${values['max-load']}`);
if (positionals.length > 2) throw new Error(`at most two revisions (A and B): ${positionals.join(' ')}`);
const refs = { A: positionals[0] ?? 'round-start', B: positionals[1] ?? 'HEAD' };

const refusal = busyRefusal(
  parseLoadAverage(await readFile('/proc/loadavg', 'utf8')),
  maxLoad,
  values['busy-ok'],
);
if (refusal) {
  console.error(refusal);
  process.exit(2);
}

const ticksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function git(args: readonly string[], cwd = ROOT): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** Runs a command in `cwd`, its output appended to `log`; resolves to its exit code and output. */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  log: string,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(log, { flags: 'a' });
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr])
      stream.on('data', (chunk: Buffer) => {
        output += chunk;
        out.write(chunk);
      });
    child.on('error', reject);
    child.on('close', (code) => out.end(() => resolve({ code: code ?? 1, output })));
  });
}

const readTicks = async (): Promise<CpuTicks> => parseProcStat(await readFile('/proc/stat', 'utf8'));
const memInUse = async () => parseMemInUse(await readFile('/proc/meminfo', 'utf8'));

/** One measured `npm test` in `dir`. */
async function measure(side: 'A' | 'B', pair: number, dir: string): Promise<Run> {
  const startMem = await memInUse();
  let peak = startMem;
  const sampler = setInterval(() => {
    memInUse().then(
      (used) => {
        peak = Math.max(peak, used);
      },
      () => {},
    );
  }, 200);
  const before = await readTicks();
  const started = performance.now();
  const { code, output } = await run('npm', ['test'], dir, join(dir, 'test-cpu.log'));
  const wallSeconds = (performance.now() - started) / 1000;
  const after = await readTicks();
  clearInterval(sampler);
  return {
    side,
    pair,
    cpuSeconds: cpuSeconds(before, after, ticksPerSecond),
    wallSeconds,
    peakMemBytes: peak,
    peakRiseBytes: peak - startMem,
    exitCode: code,
    counts: parseVitestCounts(output),
  };
}

const commits = { A: git(['rev-parse', `${refs.A}^{commit}`]), B: git(['rev-parse', `${refs.B}^{commit}`]) };
const scratch = await mkdtemp(join(tmpdir(), 'catalog-test-cpu-'));
// mkdtemp makes the directory 0700; as root, the source tests' PostgreSQL runs as the postgres user
// (testing/postgres.ts), which must reach its binaries inside the clones.
await chmod(scratch, 0o755);
const dirs = { A: join(scratch, 'a'), B: join(scratch, 'b') };
const runs: Run[] = [];
try {
  for (const side of ['A', 'B'] as const) {
    const dir = dirs[side];
    console.error(
      `${side}: ${refs[side]} (${commits[side].slice(0, 7)}) into ${dir}: clone, npm ci, warm-up npm test`,
    );
    git(['clone', '--quiet', '--no-checkout', ROOT, dir]);
    git(['checkout', '--quiet', '--detach', commits[side]], dir);
    const log = join(dir, 'test-cpu.log');
    const ci = await run('npm', ['ci', '--no-audit', '--no-fund'], dir, log);
    if (ci.code !== 0) throw new Error(`npm ci failed in ${dir} (see ${log})`);
    const warm = await run('npm', ['test'], dir, log);
    if (warm.code !== 0) console.error(`${side}: the warm-up npm test exited ${warm.code} (see ${log})`);
  }
  for (let pair = 1; pair <= pairs; pair += 1)
    for (const side of ['A', 'B'] as const) {
      const result = await measure(side, pair, dirs[side]);
      runs.push(result);
      console.error(
        `pair ${pair} ${side}: ${result.cpuSeconds.toFixed(1)} CPU-s, ${result.wallSeconds.toFixed(1)} s, exit ${result.exitCode}`,
      );
    }
  console.log(
    formatReport(
      { A: `${refs.A} (${commits.A.slice(0, 7)})`, B: `${refs.B} (${commits.B.slice(0, 7)})` },
      runs,
    ),
  );
  if (runs.some((result) => result.exitCode !== 0)) process.exitCode = 1;
} finally {
  if (values.keep) console.error(`kept ${scratch}`);
  else await rm(scratch, { recursive: true, force: true });
}
