/**
 * npm run bench:load — 60 s of mixed traffic against `catalog serve` (autocannon, 10 connections): valid
 * requests for all three variants (some conditional), 20% unknown keys, 10% bad `discipline`, 5% other methods.
 * Every answer is tallied against the status its request must get: the counts must match exactly. Prints
 * req/s, p50/p99 latency, the counts, and the server's RSS at start and end (growth target < 10%).
 *
 *   npm run bench:load [-- --seconds 60 --warm-seconds 3]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startServe } from '../testing/cli.ts';
import { createTestWorld, etagOf } from '../testing/world.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: process.env.BENCH_SECONDS ?? '60' },
    'warm-seconds': { type: 'string', default: '3' },
  },
});
const seconds = Number(values.seconds);

const world = await createTestWorld();
const server = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
try {
  const key = world.keys.valid;
  const runningTag = etagOf(world.objects.running);
  /** 20 request templates; autocannon cycles through them on every connection. */
  const templates: { method: string; path: string; headers: Record<string, string>; expect: number }[] = [
    ...Array.from({ length: 4 }, () => ({
      method: 'GET',
      path: '/api/plans',
      headers: { 'x-api-key': key },
      expect: 200,
    })),
    ...Array.from({ length: 3 }, () => ({
      method: 'GET',
      path: '/api/plans?discipline=running',
      headers: { 'x-api-key': key },
      expect: 200,
    })),
    ...Array.from({ length: 3 }, () => ({
      method: 'GET',
      path: '/api/plans?discipline=strength',
      headers: { 'x-api-key': key },
      expect: 200,
    })),
    ...Array.from({ length: 2 }, () => ({
      method: 'GET',
      path: '/api/plans?discipline=running',
      headers: { 'x-api-key': key, 'if-none-match': runningTag },
      expect: 304,
    })),
    {
      method: 'GET',
      path: '/api/plans?discipline=running&utm=x',
      headers: { 'x-api-key': world.keys.other },
      expect: 200,
    },
    ...Array.from({ length: 4 }, (_, i) => ({
      method: 'GET',
      path: '/api/plans',
      headers: { 'x-api-key': `tpc_unknown_${i}` },
      expect: 401,
    })),
    { method: 'GET', path: '/api/plans?discipline=walking', headers: { 'x-api-key': key }, expect: 400 },
    { method: 'GET', path: '/api/plans?discipline=Running', headers: { 'x-api-key': key }, expect: 400 },
    { method: 'DELETE', path: '/api/plans', headers: { 'x-api-key': key }, expect: 405 },
  ];
  const expected = new Map<number, number>();
  const actual = new Map<number, number>();
  const bump = (map: Map<number, number>, status: number) => map.set(status, (map.get(status) ?? 0) + 1);
  const rss = () =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) * 1024;

  // Warm up (JIT, caches, compression of nothing), then measure.
  await new Promise((resolve) =>
    autocannon(
      { url: server.url, connections: 4, duration: Number(values['warm-seconds']), requests: templates },
      resolve,
    ),
  );
  const rssStart = rss();
  const result = await new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      {
        url: server.url,
        connections: 10,
        duration: seconds,
        requests: templates.map((t) => ({
          method: t.method,
          path: t.path,
          headers: t.headers,
          onResponse: (status: number) => {
            bump(expected, t.expect);
            bump(actual, status);
          },
        })),
      },
      (error, r) => (error ? reject(error) : resolve(r)),
    ),
  );
  const rssEnd = rss();
  const statuses = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  const exact = statuses.every((s) => expected.get(s) === actual.get(s));
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  console.log(
    `bench:load — ${process.version}, ${seconds} s, 10 connections, ${templates.length} request templates in rotation`,
  );
  console.log(
    `  ${result.requests.average.toFixed(0)} req/s, latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${result.errors}, timeouts ${result.timeouts}`,
  );
  for (const status of statuses) {
    console.log(`  ${status}: ${actual.get(status) ?? 0} answered, ${expected.get(status) ?? 0} expected`);
  }
  console.log(`  counts match exactly: ${exact ? 'yes' : 'NO'}`);
  const growth = ((rssEnd - rssStart) / rssStart) * 100;
  console.log(
    `  server RSS: ${mb(rssStart)} MB at start, ${mb(rssEnd)} MB at end (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%, target < 10%)`,
  );
  if (!exact) process.exitCode = 1;
} finally {
  await server.stop();
  await world.remove();
}
