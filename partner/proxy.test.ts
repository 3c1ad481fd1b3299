import { readdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { hashKey, storeKeyOf } from '../keys/keys.ts';
import { issueKey } from '../keys/manage.ts';
import { httpRequest, type ServeProcess, scratchDir, startServe } from '../testing/cli.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { type LogEntry, PROXY_PROBLEMS, type RunningProxy, startProxy } from './proxy.ts';

type FrontMode = 'pass' | 'fail' | 'invalid';

/**
 * A real HTTP server on 127.0.0.1 in front of `catalog serve`: it passes requests through, or answers every
 * one with a 500 problem, or with a 200 whose body is not a valid catalog.
 */
async function startFront(target: string) {
  let mode: FrontMode = 'pass';
  const server: Server = createServer((request, response) => {
    if (mode === 'fail') {
      response.writeHead(500, { 'content-type': 'application/problem+json', 'cache-control': 'no-store' });
      response.end(
        JSON.stringify({
          type: 'tag:training-plan-catalog,2026:problem:internal-error',
          title: 'Internal Server Error',
          status: 500,
          detail: 'The catalog could not be served.',
        }),
      );
      return;
    }
    if (mode === 'invalid') {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', etag: '"broken"' });
      response.end('{"generatedAt":"2026-11-21T08:00:00.000Z","plans":[{"id":"not-a-plan"}]}');
      return;
    }
    const headers = Object.entries(request.headers)
      .filter(([name, value]) => name !== 'host' && value !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)] as const);
    httpRequest(target, { method: request.method ?? 'GET', target: request.url ?? '/', headers }).then(
      (answer) => {
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
      },
      () => response.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set: (next: FrontMode) => {
      mode = next;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const get = (proxy: RunningProxy, target: string, headers: [string, string][] = []) =>
  httpRequest(proxy.url, { method: 'GET', target, headers });
const healthOf = async (proxy: RunningProxy) => JSON.parse((await get(proxy, '/healthz')).body.toString());

describe('the partner proxy in front of a real catalog serve', () => {
  let world: TestWorld;
  let serve: ServeProcess;
  let scratch: { dir: string; remove: () => Promise<void> };
  /** A `catalog serve` that has been stopped: its address refuses connections. */
  let down: string;
  const proxies: RunningProxy[] = [];
  const logs: LogEntry[] = [];

  /** A proxy that refreshes only when told (so each test decides when the service is called). */
  async function proxyOf(options: {
    upstream: string;
    key?: string;
    cacheFile?: string;
    autoRefresh?: boolean;
  }) {
    const proxy = await startProxy({
      key: world.keys.valid,
      port: 0,
      autoRefresh: false,
      log: (entry) => logs.push(entry),
      ...options,
    });
    proxies.push(proxy);
    return proxy;
  }

  beforeAll(async () => {
    world = await createTestWorld();
    serve = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    scratch = await scratchDir('catalog-proxy-');
    const stopped = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    await stopped.stop();
    down = stopped.url;
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await serve?.stop();
    await scratch?.remove();
    await world?.remove();
  });

  it('serves a fresh copy: the catalog and each discipline, byte for byte what the service serves', async () => {
    const proxy = await proxyOf({ upstream: serve.url });
    const logged = logs.length;
    expect(await proxy.refresh()).toMatchObject({ outcome: 'fetched', status: 200 });
    expect(logs.slice(logged).filter((l) => l.event === 'refresh')).toHaveLength(1);

    const all = await get(proxy, '/plans.json');
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(all.body).toEqual(world.objects.all);
    expect((await get(proxy, '/plans.json?discipline=running')).body).toEqual(world.objects.running);
    expect((await get(proxy, '/plans.json?discipline=strength')).body).toEqual(world.objects.strength);

    const head = await httpRequest(proxy.url, { method: 'HEAD', target: '/plans.json' });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([
      200,
      String(world.objects.all.length),
      0,
    ]);
    const etag = all.headers.etag ?? '';
    expect((await get(proxy, '/plans.json', [['If-None-Match', etag]])).status).toBe(304);
    expect(await healthOf(proxy)).toMatchObject({
      status: 'ok',
      copy: { plans: JSON.parse(world.objects.all.toString()).plans.length, source: 'service' },
      lastRefresh: { outcome: 'fetched', status: 200 },
      consecutiveFailures: 0,
    });
  });

  it('answers its own errors as problems: a bad discipline, another path, another method', async () => {
    const proxy = await proxyOf({ upstream: serve.url });
    await proxy.refresh();
    for (const [target, method, status, type] of [
      ['/plans.json?discipline=walking', 'GET', 400, PROXY_PROBLEMS.invalidDiscipline.type],
      [
        '/plans.json?discipline=running&discipline=running',
        'GET',
        400,
        PROXY_PROBLEMS.invalidDiscipline.type,
      ],
      ['/api/plans', 'GET', 404, PROXY_PROBLEMS.notFound.type],
      ['/plans.json', 'POST', 405, PROXY_PROBLEMS.methodNotAllowed.type],
    ] as const) {
      const answer = await httpRequest(proxy.url, { method, target });
      expect(answer.status, target).toBe(status);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(answer.body.toString())).toMatchObject({ type, status });
    }
  });

  it('revalidates with If-None-Match: the service answers 304 and the copy stays', async () => {
    const proxy = await proxyOf({ upstream: serve.url });
    const before = serve.lines.length;
    await proxy.refresh();
    expect(await proxy.refresh()).toMatchObject({ outcome: 'not-modified', status: 304 });
    const statuses = () =>
      serve.lines
        .slice(before)
        .filter((l) => l.startsWith('{"time"'))
        .map((l) => JSON.parse(l).status);
    for (let i = 0; i < 40 && statuses().length < 2; i += 1) await new Promise((r) => setTimeout(r, 25));
    expect(statuses()).toEqual([200, 304]);
    expect((await get(proxy, '/plans.json')).body).toEqual(world.objects.all);
    expect(await healthOf(proxy)).toMatchObject({ status: 'ok', lastRefresh: { outcome: 'not-modified' } });
  });

  it('keeps the last good copy when the service answers 500, or a body that is not a valid catalog', async () => {
    const front = await startFront(serve.url);
    try {
      const proxy = await proxyOf({ upstream: front.url });
      await proxy.refresh();
      front.set('fail');
      expect(await proxy.refresh()).toMatchObject({
        outcome: 'failed',
        status: 500,
        problemType: 'tag:training-plan-catalog,2026:problem:internal-error',
      });
      expect((await get(proxy, '/plans.json?discipline=running')).body).toEqual(world.objects.running);
      front.set('invalid');
      expect(await proxy.refresh()).toMatchObject({
        outcome: 'failed',
        status: 200,
        error: expect.stringMatching(/^invalid body: /),
      });
      expect((await get(proxy, '/plans.json')).body).toEqual(world.objects.all);
      expect(await healthOf(proxy)).toMatchObject({
        status: 'degraded',
        copy: { source: 'service' },
        lastRefresh: { outcome: 'failed', status: 200 },
        consecutiveFailures: 2,
      });
      front.set('pass');
      expect(await proxy.refresh()).toMatchObject({ outcome: 'not-modified' });
      expect(await healthOf(proxy)).toMatchObject({ status: 'ok', consecutiveFailures: 0 });
    } finally {
      await front.close();
    }
  });

  it('keeps the last good copy when the service cannot be reached', async () => {
    const upstream = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    const proxy = await proxyOf({ upstream: upstream.url });
    await proxy.refresh();
    await upstream.stop();
    expect(await proxy.refresh()).toMatchObject({
      outcome: 'failed',
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    expect((await get(proxy, '/plans.json?discipline=strength')).body).toEqual(world.objects.strength);
    const health = await healthOf(proxy);
    expect(health).toMatchObject({ status: 'degraded', lastRefresh: { outcome: 'failed' } });
    expect(health.lastRefresh).not.toHaveProperty('status');
  });

  it('starts from the disk copy after a restart, even with the service down', async () => {
    const cacheFile = join(scratch.dir, 'restart', 'catalog-cache.json');
    const first = await proxyOf({ upstream: serve.url, cacheFile });
    await first.refresh();
    await first.close();
    expect(await readdir(join(scratch.dir, 'restart'))).toEqual(['catalog-cache.json']);

    // The restarted proxy refreshes at once (autoRefresh), fails, and serves the copy of its previous run.
    const second = await proxyOf({ upstream: down, cacheFile, autoRefresh: true });
    expect((await get(second, '/plans.json')).body).toEqual(world.objects.all);
    expect(await second.refresh()).toMatchObject({
      outcome: 'failed',
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    expect((await get(second, '/plans.json?discipline=running')).body).toEqual(world.objects.running);
    expect(await healthOf(second)).toMatchObject({ status: 'degraded', copy: { source: 'disk' } });
  });

  it('answers 502 with a problem when it has nothing and the service is down', async () => {
    const proxy = await proxyOf({ upstream: down, autoRefresh: true });
    const answer = await get(proxy, '/plans.json');
    expect(answer.status).toBe(502);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body.toString())).toMatchObject({
      type: PROXY_PROBLEMS.noCatalog.type,
      status: 502,
    });
    const health = await get(proxy, '/healthz');
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body.toString())).toMatchObject({
      status: 'empty',
      copy: null,
      lastRefresh: { outcome: 'failed', error: expect.stringMatching(/ECONNREFUSED/) },
    });
  });

  it('ignores a corrupt disk copy rather than serve it', async () => {
    const cacheFile = join(scratch.dir, 'corrupt.json');
    await writeFile(cacheFile, '{"version":1,"body":"{}","fetchedAt":"x"}');
    const logged = logs.length;
    const proxy = await proxyOf({ upstream: down, cacheFile });
    expect(logs.slice(logged)).toEqual([
      expect.objectContaining({
        event: 'load',
        outcome: 'ignored',
        error: expect.stringContaining(cacheFile),
      }),
    ]);
    await proxy.refresh();
    expect((await get(proxy, '/plans.json')).status).toBe(502);
  });

  it('reports a revoked key (401) in /healthz while the last good copy keeps being served', async () => {
    const store = new FileKeyValueStore(world.stores.plain);
    const { key } = await issueKey(store, { partner: 'proxy-partner', now: new Date() });
    const logged = logs.length;
    const proxy = await proxyOf({ upstream: serve.url, key });
    expect(await proxy.refresh()).toMatchObject({ outcome: 'fetched' });
    await store.update((entries) => {
      entries.delete(storeKeyOf(hashKey(key)));
    });
    expect(await proxy.refresh()).toMatchObject({
      outcome: 'failed',
      status: 401,
      problemType: 'tag:training-plan-catalog,2026:problem:unauthorized',
    });
    expect((await get(proxy, '/plans.json')).body).toEqual(world.objects.all);
    const health = await get(proxy, '/healthz');
    expect(JSON.parse(health.body.toString())).toMatchObject({
      status: 'degraded',
      lastRefresh: { outcome: 'failed', status: 401 },
    });
    expect(health.body.toString()).not.toContain(key);
    expect(JSON.stringify(logs.slice(logged))).not.toContain(key);
  });
});
