/**
 * npm run bench:publish — a 30,000-plan catalog published end to end to s3rver (a real S3-protocol server) and
 * the KeyValueStore stand-in (testing/kvs.ts), through the production clients: a first publish, the same
 * source again (unchanged: decided before anything is compressed or rendered), then two publishes of changed
 * plans, the last of which prunes the first build (`--keep 1`). For each: wall and CPU time of the publishing
 * process alone (s3rver runs in this one), its peak RSS, each stage of its summary (build, read, upload,
 * verify, flip, prune), and the S3 requests it sent by kind. Prints the figures; asserts nothing.
 *
 *   npm run bench:publish [-- --rows 30000]
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateRows } from '../fixtures/generate.ts';
import { type S3Request, startS3 } from '../testing/aws.ts';
import { ROOT, scratchDir } from '../testing/cli.ts';
import { FakeKvs } from '../testing/kvs.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '30000' } } });
const rows = Number(values.rows);
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';

interface Summary {
  readonly result: string;
  readonly buildId: string;
  readonly bytes: number;
  readonly pruned: readonly string[];
  readonly durationsMs: Readonly<Record<string, number>>;
}

/** The kind of an S3 request, as a publish sends them. */
function kindOf(request: S3Request): string {
  const { method, query } = request;
  if (method === 'PUT') return 'PutObject';
  if (method === 'HEAD') return 'HeadObject';
  if (method === 'POST' && 'delete' in query) return 'DeleteObjects';
  if (method === 'DELETE') return 'DeleteObject';
  if (method === 'GET' && request.key === '')
    return query.delimiter ? `ListObjectsV2 (delimiter ${query.delimiter})` : 'ListObjectsV2';
  if (method === 'GET') return 'GetObject';
  return method;
}

const s = (ms: number) => (ms / 1000).toFixed(1);
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

const { dir, remove } = await scratchDir('catalog-bench-publish-');
const s3 = await startS3();
const kvs = new FakeKvs(KVS_ARN);
await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
const kvsPort = (kvs.server.address() as { port: number }).port;
try {
  const plans = [...generateRows(rows, 42)];
  const sources = await Promise.all(
    ['a', 'b', 'c'].map(async (tag, index) => {
      const path = join(dir, `source-${tag}.json`);
      // Each later source changes one title: a new catalog, the same size.
      const changed = plans.map((row, i) =>
        i === 0 && index > 0 ? { ...row, title: `${String(row.title)} ${tag}` } : row,
      );
      await (await import('node:fs/promises')).writeFile(path, JSON.stringify(changed));
      return path;
    }),
  );
  console.log(
    `bench:publish — ${rows} rows (seed 42) to s3rver and the KeyValueStore stand-in, ${process.version}; each publish a fresh process`,
  );
  const runs: [string, string, number][] = [
    ['first publish', sources[0] as string, 20],
    ['the same source again', sources[0] as string, 20],
    ['changed plans', sources[1] as string, 20],
    ['changed plans, --keep 1', sources[2] as string, 1],
  ];
  for (const [label, source, keep] of runs) {
    s3.requests.length = 0;
    const usageFile = join(dir, 'usage.json');
    const started = performance.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          join(ROOT, 'bench/rss.mjs'),
          '--import',
          'tsx',
          'bench/publish-run.ts',
          JSON.stringify({
            endpoint: s3.endpoint,
            bucket: s3.bucket,
            kvsPort,
            kvsArn: KVS_ARN,
            source,
            baseUrl: 'https://plans.example.com',
            keep,
          }),
        ],
        { cwd: ROOT, env: { ...process.env, BENCH_RSS_FILE: usageFile }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
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
        code === 0 ? resolve(out) : reject(new Error(`publish exited ${code}: ${err}`)),
      );
    });
    const wallMs = performance.now() - started;
    const usage = JSON.parse(await readFile(usageFile, 'utf8')) as {
      maxRssBytes: number;
      userMs: number;
      systemMs: number;
    };
    const summary = JSON.parse(stdout.trim()) as Summary;
    const counts = new Map<string, number>();
    for (const request of s3.requests) counts.set(kindOf(request), (counts.get(kindOf(request)) ?? 0) + 1);
    const d = summary.durationsMs;
    console.log(`\n${label}: ${summary.result} ${summary.buildId}, ${mb(summary.bytes)} MB`);
    console.log(
      `  process : ${s(wallMs)} s wall, ${s(usage.userMs + usage.systemMs)} CPU-s (user ${s(usage.userMs)}, system ${s(usage.systemMs)}), peak RSS ${mb(usage.maxRssBytes)} MB`,
    );
    console.log(
      `  stages  : build ${s(d.build ?? 0)} s, read ${s(d.read ?? 0)} s, upload ${s(d.upload ?? 0)} s, verify ${s(d.verify ?? 0)} s, flip ${d.flip ?? 0} ms, prune ${s(d.prune ?? 0)} s${summary.pruned.length > 0 ? ` (${summary.pruned.join(', ')})` : ''}`,
    );
    console.log(
      `  S3      : ${[...counts].map(([kind, n]) => `${kind} ${n}`).join(', ')}; KeyValueStore: ${kvs.requests.length} requests in all so far`,
    );
  }
} finally {
  await s3.stop();
  await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
  await remove();
}
