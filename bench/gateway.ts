/**
 * npm run bench:gateway — the gateway's costs, measured in one run:
 *  1. the size of both function bundles;
 *  2. viewer-request µs per call in the local runtime for a valid-key request, against a do-nothing handler in
 *     the same harness (the ratio is the function's own cost);
 *  3. `catalog serve` throughput (autocannon, 10 s, 10 connections) on GET /api/plans?discipline=running with a
 *     key over a 1,000-plan catalog, against a minimal node:http server sending the same bytes from memory.
 * Target: edge ≥ 0.5 × the bare server. Prints the figures; asserts nothing.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildFrom, writeFlatBuild } from '../app/run.ts';
import { DEFAULT_LINKS } from '../builder/model.ts';
import type { PlanSource } from '../builder/source.ts';
import { generateRows } from '../fixtures/generate.ts';
import { viewerRequestEvent } from '../gateway/local/event.ts';
import { loadFunction } from '../gateway/local/sandbox.ts';
import { WatchedKeyValueStore } from '../gateway/local/store.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey } from '../keys/manage.ts';
import { ROOT, scratchDir, startServe } from '../testing/cli.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CALLS = 20_000;

async function perCall(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2_000; i += 1) await run();
  const started = performance.now();
  for (let i = 0; i < CALLS; i += 1) await run();
  return ((performance.now() - started) * 1000) / CALLS;
}

function load(url: string, key: string): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}/api/plans?discipline=running`,
        headers: { 'x-api-key': key },
        connections: 10,
        duration: SECONDS,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

const BARE_SERVER = `
const http = require('node:http');
const body = require('node:fs').readFileSync(process.argv[1]);
http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.error('listening on http://127.0.0.1:' + this.address().port); });
`;

function startBare(file: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', BARE_SERVER, file], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const match = /listening on (\S+)/.exec(chunk);
      if (match?.[1]) resolve({ url: match[1], stop: () => child.kill() });
    });
    child.on('exit', (code) => reject(new Error(`bare server exited ${code}`)));
  });
}

const { dir, remove } = await scratchDir('catalog-bench-gateway-');
try {
  // A 1,000-plan catalog and a key.
  const rows = [...generateRows(1_060, 7)];
  const source: PlanSource = {
    name: 'generated',
    batches: async function* () {
      yield rows;
    },
  };
  const result = await buildFrom(source, { ...DEFAULT_LINKS, skipInvalid: false }, new Date(), () => {});
  const origin = join(dir, 'origin');
  await writeFlatBuild(origin, result);
  const storePath = join(dir, 'kvs.json');
  const { key } = await issueKey(new FileKeyValueStore(storePath), { partner: 'bench', now: new Date() });
  const plans = result.counts.running + result.counts.strength;

  // 1. Bundle sizes.
  const bundles: Record<string, string> = {};
  for (const name of ['viewer-request', 'viewer-response'])
    bundles[name] = await readFile(join(ROOT, 'dist/gateway', `${name}.js`), 'utf8');

  // 2. viewer-request in the local runtime, against a do-nothing handler.
  const kvs = new WatchedKeyValueStore(storePath);
  await kvs.load();
  const fn = loadFunction(bundles['viewer-request'] as string, { kvs });
  const nothing = loadFunction('async function handler(event) { return event.request; }', { kvs });
  const event = viewerRequestEvent(
    {
      method: 'GET',
      target: '/api/plans?discipline=running',
      rawHeaders: ['Host', 'x', 'X-Api-Key', key],
      remoteAddress: '127.0.0.1',
    },
    'bench',
  );
  const fnUs = await perCall(() => fn.run(event));
  const nothingUs = await perCall(() => nothing.run(event));

  // 3. Throughput: the bare server first, then the edge, each in its own process.
  const bare = await startBare(join(origin, 'catalog-running.json'));
  const bareResult = await load(bare.url, key);
  bare.stop();
  const edge = await startServe(['--origin', origin, '--store', storePath]);
  const edgeResult = await load(edge.url, key);
  await edge.stop();

  const mb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `bench:gateway — ${process.version}, ${plans} plans (catalog-running.json ${mb(result.objects.find((o) => o.key === 'catalog-running.json')?.size ?? 0)})`,
  );
  for (const [name, code] of Object.entries(bundles))
    console.log(`  bundle ${name}.js: ${Buffer.byteLength(code)} bytes (limit 10240, aim 4096)`);
  console.log(
    `  viewer-request, valid key: ${fnUs.toFixed(1)} µs/call; do-nothing handler: ${nothingUs.toFixed(1)} µs/call; ratio ${(fnUs / nothingUs).toFixed(2)}`,
  );
  const line = (label: string, r: autocannon.Result) =>
    `  ${label}: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
  console.log(line('bare node:http', bareResult));
  console.log(line('catalog serve ', edgeResult));
  console.log(
    `  edge / bare: ${(edgeResult.requests.average / bareResult.requests.average).toFixed(2)} (target ≥ 0.5), ${SECONDS} s each, 10 connections`,
  );
} finally {
  await remove();
}
