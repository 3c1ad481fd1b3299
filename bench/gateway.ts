/**
 * npm run bench:gateway — the gateway's costs, measured in one run:
 *  1. the size of both function bundles (aim ≤ 4 KB each);
 *  2. viewer-request µs per call in the local runtime for a valid-key request, against a do-nothing handler in
 *     the same sandbox (the ratio is the function's own cost; target ≤ 3);
 *  3. `catalog serve` throughput (autocannon, 10 connections, 10 s each side) on GET /api/plans?discipline=running
 *     with a key over a 1,000-plan catalog, against a minimal node:http server sending the same bytes from
 *     memory (target: edge ≥ 0.8 × the bare server).
 * The machines are shared: both sides are measured in turns (rounds), so a burst of someone else's work falls
 * on both, and each figure is the best round (µs per call) or the median of the rounds' ratios (throughput).
 * Each server first takes {@link WARM_SECONDS} of the same load, so the turns compare warm servers (after one
 * second, the edge's first turn measured 0.63–0.67 of the bare server, the later ones 0.83–1.00).
 * Both servers write what they write (the edge its access log, to a file); the client reads only the answers.
 * Prints the figures; asserts nothing.
 */
import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { writeFlatBuild } from '../app/build-output.ts';
import { LOCAL_CONTACT_ADDRESS } from '../app/settings/registry.ts';
import { DEFAULT_LINKS } from '../builder/model.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import type { PlanSource } from '../builder/source.ts';
import { generateRows } from '../fixtures/generate.ts';
import { fillContactAddress } from '../gateway/functions/contact.ts';
import { viewerRequestEvent } from '../gateway/local/event.ts';
import { loadFunction } from '../gateway/local/sandbox.ts';
import { WatchedKeyValueStore } from '../gateway/local/store.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey } from '../keys/manage.ts';
import { CATALOG_BIN, ROOT, scratchDir } from '../testing/cli.ts';
import { buildCatalog } from '../testing/plans.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = 5;
/** Load on each server before the turns (the JIT compiler's warm-up). */
const WARM_SECONDS = 4;
const CALLS = 10_000;

/** µs per call, the best of {@link ROUNDS} turns taken alternately with the other handler. */
async function perCall(runs: readonly (() => Promise<unknown>)[]): Promise<number[]> {
  for (const run of runs) for (let i = 0; i < 2_000; i += 1) await run();
  const best = runs.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < ROUNDS; round += 1)
    for (const [index, run] of runs.entries()) {
      const started = performance.now();
      for (let i = 0; i < CALLS; i += 1) await run();
      best[index] = Math.min(best[index] as number, ((performance.now() - started) * 1000) / CALLS);
    }
  return best;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

function load(url: string, key: string, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}/api/plans?discipline=running`,
        headers: { 'x-api-key': key },
        connections: 10,
        duration: seconds,
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

/** A server process that announces `listening on URL` on stderr, which goes to `logFile` (read only for that). */
async function startServer(
  args: readonly string[],
  logFile: string,
): Promise<{ url: string; stop: () => void }> {
  const log = await open(logFile, 'w');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', log.fd] });
  await log.close();
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`))),
  );
  for (let waited = 0; waited < 20_000; waited += 50) {
    const match = /listening on (http:\/\/\S+)/.exec(await readFile(logFile, 'utf8'));
    if (match?.[1]) {
      exited.catch(() => {});
      return { url: match[1], stop: () => child.kill() };
    }
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 50))]);
  }
  child.kill();
  throw new Error(`${args.join(' ')} did not start`);
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
  const result = await buildCatalog(source, {
    links: DEFAULT_LINKS,
    skipInvalid: false,
    now: new Date(),
    openapiTemplate: OPENAPI_TEMPLATE,
    contactAddress: LOCAL_CONTACT_ADDRESS,
  });
  const origin = join(dir, 'origin');
  await writeFlatBuild(origin, result);
  const storePath = join(dir, 'kvs.json');
  const { key } = await issueKey(new FileKeyValueStore(storePath, { create: true }), {
    partner: 'bench',
    now: new Date(),
  });
  const plans = result.counts.running + result.counts.strength;

  // 1. Bundle sizes.
  const bundles: Record<string, string> = {};
  for (const name of ['viewer-request', 'viewer-response'])
    bundles[name] = await readFile(join(ROOT, 'dist/gateway', `${name}.js`), 'utf8');
  // The 401 names the local stack's contact address, as catalog serve's does.
  bundles['viewer-request'] = fillContactAddress(bundles['viewer-request'] as string, LOCAL_CONTACT_ADDRESS);

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
  const [fnUs, nothingUs] = (await perCall([() => fn.run(event), () => nothing.run(event)])) as [
    number,
    number,
  ];

  // 3. Throughput: each server in its own process, measured in turns.
  const bare = await startServer(
    ['-e', BARE_SERVER, join(origin, 'catalog-running.json')],
    join(dir, 'bare.log'),
  );
  const edge = await startServer(
    [CATALOG_BIN, 'serve', '--port', '0', '--origin', origin, '--store', storePath],
    join(dir, 'edge.log'),
  );
  const rounds: { bare: autocannon.Result; edge: autocannon.Result }[] = [];
  try {
    await load(bare.url, key, WARM_SECONDS);
    await load(edge.url, key, WARM_SECONDS);
    for (let round = 0; round < ROUNDS; round += 1) {
      const bareResult = await load(bare.url, key, SECONDS / ROUNDS);
      const edgeResult = await load(edge.url, key, SECONDS / ROUNDS);
      rounds.push({ bare: bareResult, edge: edgeResult });
    }
  } finally {
    bare.stop();
    edge.stop();
  }
  const total = (side: 'bare' | 'edge') => ({
    requests: rounds.reduce((sum, round) => sum + round[side].requests.total, 0) / SECONDS,
    non2xx: rounds.reduce((sum, round) => sum + round[side].non2xx, 0),
    errors: rounds.reduce((sum, round) => sum + round[side].errors, 0),
    p50: median(rounds.map((round) => round[side].latency.p50)),
    p99: median(rounds.map((round) => round[side].latency.p99)),
  });
  const ratios = rounds.map((round) => round.edge.requests.average / round.bare.requests.average);

  const mb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `bench:gateway — ${process.version}, ${plans} plans (catalog-running.json ${mb(result.objects.find((o) => o.key === 'catalog-running.json')?.size ?? 0)})`,
  );
  for (const [name, code] of Object.entries(bundles))
    console.log(`  bundle ${name}.js: ${Buffer.byteLength(code)} bytes (limit 10240, aim 4096)`);
  console.log(
    `  viewer-request, valid key: ${fnUs.toFixed(1)} µs/call; do-nothing handler: ${nothingUs.toFixed(1)} µs/call; ratio ${(fnUs / nothingUs).toFixed(2)} (target ≤ 3; best of ${ROUNDS} turns each)`,
  );
  const line = (label: string, r: ReturnType<typeof total>) =>
    `  ${label}: ${r.requests.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
  console.log(line('bare node:http', total('bare')));
  console.log(line('catalog serve ', total('edge')));
  console.log(
    `  edge / bare: ${median(ratios).toFixed(2)} (target ≥ 0.8; median of ${ROUNDS} turns: ${ratios.map((r) => r.toFixed(2)).join(' ')}), ${SECONDS} s each side, 10 connections`,
  );
} finally {
  await remove();
}
