import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateRows } from '../fixtures/generate.ts';
import { type S3Request, startS3, TEST_AWS_ENV } from '../testing/aws.ts';
import { CATALOG_BIN, ROOT, scratchDir } from '../testing/cli.ts';
import { FakeKvs, RESOLVE_KVS_TEST_HOST } from '../testing/kvs.ts';
import { measuredProcess } from './process.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '30000' },
    bin: { type: 'string', default: CATALOG_BIN },
    first: { type: 'boolean', default: false },
  },
});
const rows = Number(values.rows);
const bin = resolve(values.bin);
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';

/** The kind of an S3 request, as a publish sends them. */
function kindOf(request: S3Request): string {
  const { method, query } = request;
  if (method === 'PUT') return request.copyOf === undefined ? 'PutObject' : 'CopyObject';
  if (method === 'HEAD') return 'HeadObject';
  if (method === 'POST' && 'delete' in query) return 'DeleteObjects';
  if (method === 'DELETE') return 'DeleteObject';
  if (method === 'GET' && request.key === '')
    return query.delimiter ? `ListObjectsV2 (delimiter ${query.delimiter})` : 'ListObjectsV2';
  if (method === 'GET') return 'GetObject';
  return method;
}

interface Figures {
  readonly label: string;
  readonly written: number;
  readonly state: number;
  readonly bytes: number;
  /** Of `bytes`, the build's catalogs and their variants, and the changed pages (once). */
  readonly catalogBytes: number;
  readonly pageBytes: number;
  readonly cpuMs: number;
  readonly wallMs: number;
}

const s = (ms: number) => (ms / 1000).toFixed(1);
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const count = (n: number) => n.toLocaleString('en');

const { dir, remove } = await scratchDir('catalog-bench-publish-');
const s3 = await startS3();
const kvs = new FakeKvs(KVS_ARN);
await new Promise<void>((done) => kvs.server.listen(0, '127.0.0.1', done));
const env: Record<string, string> = {
  PATH: process.env.PATH ?? '',
  ...TEST_AWS_ENV,
  AWS_ENDPOINT_URL_S3: s3.endpoint,
  AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
  CATALOG_S3_PATH_STYLE: '1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};
const target = ['--bucket', s3.bucket, '--kvs-arn', KVS_ARN];

/** Runs one `catalog` command in its own process; returns its stdout, CPU and wall time, and peak RSS. */
async function catalog(args: readonly string[]) {
  const serverCpu = process.cpuUsage();
  const run = await measuredProcess(['--import', RESOLVE_KVS_TEST_HOST, bin, ...args], {
    env,
    cwd: ROOT,
    usageFile: join(dir, 'usage.json'),
  });
  if (run.code !== 0) throw new Error(`catalog ${args[0]} exited ${run.code}: ${run.stderr}`);
  const { user, system } = process.cpuUsage(serverCpu);
  return { ...run, serverCpuMs: (user + system) / 1000 };
}

try {
  // Each later source changes the one before it: one title, then one plan in a hundred.
  const plans = [...generateRows(rows, 42)] as { title: string }[];
  const retitle = (from: readonly { title: string }[], tag: string, picked: (index: number) => boolean) =>
    from.map((row, index) => (picked(index) ? { ...row, title: `${row.title} ${tag}` } : row));
  const oneTitle = retitle(plans, 'b', (index) => index === 0);
  const onePercent = retitle(oneTitle, 'c', (index) => index % 100 === 50);
  const sources = await Promise.all(
    [plans, oneTitle, onePercent].map(async (source, index) => {
      const path = join(dir, `source-${index}.json`);
      await writeFile(path, JSON.stringify(source));
      return path;
    }),
  );
  const publish = (source: string) => [
    'publish',
    '--source',
    source,
    '--base-url',
    'https://plans.example.com',
    ...target,
  ];
  console.log(
    `bench:publish — ${count(rows)} rows (seed 42), ${bin}, to s3rver and the KeyValueStore stand-in, ${process.version}; each command its own process`,
  );
  const runs: [string, string[]][] = [
    ['first publish', publish(sources[0] as string)],
    ['the same source again', publish(sources[0] as string)],
    ['one title changed', publish(sources[1] as string)],
    ['1 % of plans changed', publish(sources[2] as string)],
    ['rollback (to the one-title build)', ['rollback', ...target]],
  ];
  const figures: Figures[] = [];
  if (values.first) runs.splice(1);
  for (const [label, args] of runs) {
    s3.requests.length = 0;
    const { stdout, wallMs, cpuMs, userMs, systemMs, rssBytes, serverCpuMs } = await catalog(args);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      result?: string;
      buildId?: string;
      durationsMs?: Readonly<Record<string, number>>;
    };
    const kinds = new Map<string, number>();
    for (const request of s3.requests) kinds.set(kindOf(request), (kinds.get(kindOf(request)) ?? 0) + 1);
    const writes = s3.requests.filter(({ method }) => method === 'PUT');
    const state = writes.filter(({ key }) => key.startsWith('state/')).length;
    const uploaded = writes.filter(({ copyOf }) => copyOf === undefined);
    const bytes = uploaded.reduce((sum, { bytes: size }) => sum + size, 0);
    const catalogBytes = uploaded
      .filter(({ key }) => key.startsWith('builds/') && !key.endsWith('/manifest.json'))
      .reduce((sum, { bytes: size }) => sum + size, 0);
    // The changed pages' bytes, once: stored under their digest (pages/…html), or written live (plans/, before).
    const pagesAt = uploaded.some(({ key }) => /^pages\/.*\.html$/.test(key))
      ? /^pages\/.*\.html$/
      : /^plans\//;
    const pageBytes = uploaded
      .filter(({ key }) => pagesAt.test(key))
      .reduce((sum, { bytes: size }) => sum + size, 0);
    figures.push({
      label,
      written: writes.length - state,
      state,
      bytes,
      catalogBytes,
      pageBytes,
      cpuMs,
      wallMs,
    });
    console.log(`\n${label}: ${summary.result ?? 'rolled back to'} ${summary.buildId ?? ''}`);
    console.log(
      `  written : ${count(writes.length - state)} objects, ${mb(bytes)} MB uploaded (and ${state} records of the run under state/)`,
    );
    console.log(`  S3      : ${[...kinds].map(([kind, n]) => `${kind} ${count(n)}`).join(', ')}`);
    console.log(
      `  process : ${s(wallMs)} s wall, ${s(cpuMs)} CPU-s (user ${s(userMs)}, system ${s(systemMs)}), peak RSS ${mb(rssBytes)} MB; s3rver ${s(serverCpuMs)} CPU-s`,
    );
    const d = summary.durationsMs;
    if (d)
      console.log(
        `  steps   : ${Object.entries(d)
          .map(([step, ms]) => `${step} ${s(ms)} s`)
          .join(', ')}`,
      );
  }
  const [full, unchanged, one, some] = figures;
  if (full && unchanged && one && some) {
    const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;
    console.log('\nagainst a first publish:');
    console.log(`  unchanged      : ${pct(unchanged.cpuMs, full.cpuMs)} of its CPU`);
    console.log(
      `  one title      : ${count(one.written)} objects, ${mb(one.bytes)} MB (${pct(one.bytes, full.bytes)} of its bytes; beyond the catalogs and their variants, ${count(Math.round((one.bytes - one.catalogBytes) / 1024))} kB)`,
    );
    const ratio = (run: Figures) => (run.bytes / (run.catalogBytes + run.pageBytes)).toFixed(3);
    console.log(
      `  uploaded / (changed catalogs with variants + changed pages): one title ${ratio(one)}, 1 % ${ratio(some)}`,
    );
    console.log(
      `  1 % of plans   : ${count(some.written)} objects, ${pct(some.written, full.written)} of its objects`,
    );
  }
} finally {
  await s3.stop();
  await new Promise<void>((done) => kvs.server.close(() => done()));
  await remove();
}
