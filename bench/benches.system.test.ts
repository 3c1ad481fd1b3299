/**
 * Every `npm run bench:*` at a smoke size, so a benchmark that stops working fails the system suite: each runs
 * as its package.json script runs it (`tsx bench/NAME.ts`, the build made by `npm run test:system` first) with the
 * arguments of {@link SMOKE}, must exit 0, and must print its report: a line matching each pattern, in order.
 * The figures at this size mean nothing (the full-size runs, `npm run bench:NAME`, are what the docs quote): only
 * the report's shape is asserted, never a figure.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, scratchDir } from '../testing/cli.ts';

const N = String.raw`[\d.,]+`;

/** Each benchmark's smoke arguments and the lines its report must have, in order. */
const SMOKE: Record<string, { readonly args: readonly string[]; readonly report: readonly RegExp[] }> = {
  'bench:build': {
    args: ['--rows', '200'],
    report: [
      /^bench:build — seed \d+/,
      /^200 rows \(/,
      new RegExp(
        `^  catalog build +: ${N} s wall, ${N} CPU-s \\(user ${N}, system ${N}\\), peak RSS ${N} MB, ${N} MB written$`,
      ),
      /^ {4}stages +: read\+validate \d+ ms .*compress \d+ ms .*write \d+ ms/,
      /^ {2}publish, full +: .*\(published\)$/,
      /^ {2}publish, again +: .*\(skipped-identical\)$/,
      new RegExp(`^ {4}unchanged/full : ${N}% of the CPU, ${N}% of the wall time`),
      /^ {4}pages hashed +: \d+ by the unchanged run .*; \d+ of \d+ by a listing/,
      /^ {2}catalogs alone +: /,
      /^ {2}floor +: /,
      new RegExp(`^ {4}ratio +: ${N} without the compression \\(target ≤ 2\\.0\\); ${N} with it`),
      /^bench:build took [\d.]+ s$/,
    ],
  },
  'bench:publish': {
    args: ['--rows', '200'],
    report: [
      /^bench:publish — 200 rows/,
      /^first publish: published \S+$/,
      /^ {2}written : \d+ objects, [\d.]+ MB uploaded/,
      /^ {2}S3 +: .*PutObject \d+/,
      new RegExp(`^ {2}process : ${N} s wall, ${N} CPU-s .*peak RSS ${N} MB; s3rver ${N} CPU-s$`),
      /^ {2}steps +: prove .* total [\d.]+ s$/,
      /^the same source again: skipped-identical \S+$/,
      /^one title changed: published \S+$/,
      /^1 % of plans changed: published \S+$/,
      /^rollback \(to the one-title build\): rolled back to \S+$/,
      /^against a first publish:$/,
      new RegExp(`^ {2}unchanged +: ${N} % of its CPU$`),
      /^ {2}1 % of plans +: \d+ objects, [\d.]+ % of its objects$/,
    ],
  },
  'bench:wire': {
    args: ['--sizes', '200'],
    report: [
      /^bytes per full fetch of \/api\/plans through catalog serve$/,
      /^plans +Accept-Encoding +served as +bytes +raw JSON +gzip-6 +brotli-11 +bytes\/brotli-11$/,
      new RegExp(`^200 +\\(none\\) +identity +${N} KB`),
      new RegExp(`^200 +br +br +${N} KB +${N} KB +${N} KB +${N} KB +${N}$`),
      /^catalog publish into a local origin and store/,
      /^plans +publish +build bytes +wall +complete +upload +verify +go live$/,
      new RegExp(`^200 +first +${N} KB +${N} s +\\d+ ms +\\d+ ms +\\d+ ms +\\d+ ms$`),
      new RegExp(`^200 +second +${N} KB +${N} s +\\d+ ms +\\d+ ms +\\d+ ms +\\d+ ms$`),
    ],
  },
  'bench:gateway': {
    args: ['--rows', '100', '--seconds', '1', '--rounds', '1', '--warm-seconds', '1', '--calls', '200'],
    report: [
      /^bench:gateway — v\d+\.\d+\.\d+, \d+ plans \(catalog-running\.json [\d.]+ KB\)$/,
      /^ {2}bundle viewer-request\.js: \d+ bytes \(limit 10240, aim 4096\)$/,
      /^ {2}bundle viewer-response\.js: \d+ bytes \(limit 10240, aim 4096\)$/,
      new RegExp(
        `^ {2}viewer-request, valid key: ${N} µs/call; do-nothing handler: ${N} µs/call; ratio ${N}`,
      ),
      // Every request answered 200: a refused origin or key would show as non-2xx.
      /^ {2}bare node:http: \d+ req\/s, p50 \d+ ms, p99 \d+ ms, non-2xx 0, errors 0$/,
      /^ {2}catalog serve : \d+ req\/s, p50 \d+ ms, p99 \d+ ms, non-2xx 0, errors 0$/,
      new RegExp(`^ {2}edge / bare: ${N} \\(target ≥ 0\\.8; median of 1 turns`),
    ],
  },
  'bench:load': {
    args: ['--seconds', '1', '--warm-seconds', '1'],
    report: [
      /^bench:load — v\d+\.\d+\.\d+, 1 s, 10 connections, 20 request templates in rotation$/,
      /^ {2}\d+ req\/s, latency p50 \d+ ms, p99 \d+ ms, errors 0, timeouts 0$/,
      ...[200, 304, 400, 401, 405].map((status) => new RegExp(`^  ${status}: \\d+ answered, \\d+ expected$`)),
      /^ {2}counts match exactly: yes$/,
      /^ {2}server RSS: [\d.]+ MB at start, [\d.]+ MB at end/,
    ],
  },
  'bench:canary': {
    args: ['--plans', '200'],
    report: [
      /^bench:canary — 200 generated plans/,
      /^200 plans: the whole catalog [\d.]+ KB, in brotli [\d.]+ KB; build \S+$/,
      /^run +requests +received +peak RSS +run ms$/,
      /^probe, first \(each catalog in brotli\) +\d+ +[\d.]+ KB +\d+ MiB +\d+$/,
      /^probe, unchanged \(304s\) +\d+ +[\d.]+ KB +\d+ MiB +\d+$/,
      /^full table \(the canary\) +\d+ +[\d.]+ KB +\d+ MiB +\d+$/,
      /^catalog check \(this checkout\) +\d+ +[\d.]+ KB +\d+ MiB +\d+$/,
      /^budget +figure +limit +holds$/,
      /^probe requests \(first\) +\d+ +≤ 12 +yes$/,
      /^full table: each distinct request once +\d+ sent, \d+ distinct +sent = distinct +yes$/,
      /^a month \(/,
      /^probe +[\d,]+ +[\d.]+ MB +\$[\d.]+ .*\$[\d.]+$/,
      /^full table +[\d,]+ +[\d.]+ MB +\$[\d.]+ .*\$[\d.]+$/,
    ],
  },
  'bench:release': {
    args: ['--latency', '1', '--rate', '1000'],
    report: [
      /^the release step of one deploy, CloudFront answering after 1 ms/,
      /^deploy +wall +CloudFront calls +by action +KeyValueStore calls +outcome/,
      /^first deploy \(no LIVE\) +[\d.]+ s +\d+ +.*TestFunction \d+.*"ViewerRequest":"published","ViewerResponse":"published"/,
      /^both functions changed +[\d.]+ s +\d+ .*"ViewerRequest":"published","ViewerResponse":"published"/,
      /^no function changed +[\d.]+ s +\d+ .*"ViewerRequest":"unchanged","ViewerResponse":"unchanged"/,
      /^both changed, 1000 tests a second +[\d.]+ s +\d+ .*"ViewerRequest":"published","ViewerResponse":"published"/,
    ],
  },
  'bench:changes': {
    args: [
      '--plans',
      '200',
      '--runs',
      '1',
      '--kept',
      '10',
      '--alternate-plans',
      '100',
      '--alternations',
      '2',
    ],
    report: [
      /^plans: 200, runs: 1 \(medians\)$/,
      /^JSON\.parse of the new body .*: [\d.]+ ms, [\d.]+ MB$/,
      /^diff, typical publish .*: [\d.]+ ms \([\d.]+ × parse\)$/,
      /^diff, every plan changed: [\d.]+ ms/,
      /^history of 10 typical change sets: [\d.]+ MB next to a [\d.]+ MB copy$/,
      /^save copy \+ history \(atomic, fsync\): [\d.]+ ms/,
      /^load copy \+ history \(validated\): [\d.]+ ms$/,
      /^catalog proxy alternating between two catalogs of 100 plans with none in common, 2 alternations:$/,
      /^ {2}cache file [\d.]+ MB; changes: latest \d+, kept \d+$/,
      /^ {2}proxy process: rss [\d.]+ MB, peak rss [\d.]+ MB$/,
      /^ {2}\/changes\?since=0: [\d.]+ KB; &limit=100: [\d.]+ KB$/,
    ],
  },
};

/** The benchmark file a package.json script runs: `[npm run build --silent && ]tsx bench/NAME.ts`. */
function benchFileOf(script: string): string | undefined {
  return /^(?:npm run build --silent && )?tsx (bench\/[\w-]+\.ts)$/.exec(script)?.[1];
}

/**
 * Runs a benchmark file as its script does (`tsx FILE ARGS`, in the repository), and resolves to its standard
 * output; rejects, with its exit and its standard error, when it does not exit 0 (a bench that throws).
 */
function runBench(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), [file, ...args], {
      cwd: ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(`${file} ${args.join(' ')} exited ${code ?? signal}:\n${stderr}\n${stdout}`.trimEnd()),
        );
    });
  });
}

/** Where each pattern first matches a line after the previous one's, in order; -1 from the first missing. */
function reportLines(stdout: string, patterns: readonly RegExp[]): number[] {
  const lines = stdout.split('\n');
  let from = 0;
  return patterns.map((pattern) => {
    if (from < 0) return -1;
    const at = lines.findIndex((line, index) => index >= from && pattern.test(line));
    from = at < 0 ? -1 : at + 1;
    return at;
  });
}

const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
const benches = Object.entries(scripts).filter(([name]) => name.startsWith('bench:'));

describe('the benchmarks at a smoke size', () => {
  it('has a smoke size for every bench script, each running a bench file with tsx', () => {
    expect(benches.map(([name]) => name).sort()).toEqual(Object.keys(SMOKE).sort());
    for (const [name, script] of benches) expect(benchFileOf(script), `${name}: ${script}`).toBeDefined();
  });

  for (const [name, script] of benches) {
    const smoke = SMOKE[name];
    it.skipIf(!smoke)(`${name} runs and prints its report`, async () => {
      const stdout = await runBench(benchFileOf(script) as string, smoke?.args ?? []);
      const found = reportLines(stdout, smoke?.report ?? []);
      const missing = (smoke?.report ?? []).filter((_, i) => (found[i] as number) < 0);
      expect(missing, `${name} printed:\n${stdout}`).toEqual([]);
    });
  }

  it('fails a bench that throws, and a report that lacks a line or has them out of order', async () => {
    const { dir, remove } = await scratchDir('catalog-bench-smoke-');
    try {
      const file = join(dir, 'throws.mts');
      await writeFile(
        file,
        "console.log('bench:throws — started');\nawait Promise.resolve();\nthrow new Error('the origin is refused');\n",
      );
      await expect(runBench(file, ['--rows', '1'])).rejects.toThrow(
        /throws\.mts --rows 1 exited 1:[\s\S]*Error: the origin is refused[\s\S]*bench:throws — started/,
      );
    } finally {
      await remove();
    }
    expect(reportLines('a 1\nb 2\nc 3\n', [/^a/, /^c/])).toEqual([0, 2]);
    expect(reportLines('a 1\nb 2\nc 3\n', [/^c/, /^a/])).toEqual([2, -1]);
    expect(reportLines('a 1\nc 3\n', [/^a/, /^b/, /^c/])).toEqual([0, -1, -1]);
  });
});
