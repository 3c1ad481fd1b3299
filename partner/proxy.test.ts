import { readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { hashKey, storeKeyOf } from '../keys/keys.ts';
import { issueKey } from '../keys/manage.ts';
import { fewRows } from '../testing/aws.ts';
import {
  accessLogStart,
  httpRequest,
  localTargetEnv,
  runCatalog,
  type ServeProcess,
  scratchDir,
  startCatalog,
  startServe,
} from '../testing/cli.ts';
import { refusedPort } from '../testing/postgres.ts';
import { until } from '../testing/until.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { ChangeSet, ChangesPage } from './changes.ts';
import {
  CHANGES_HISTORY_HEADER,
  CHANGES_SEQUENCE_HEADER,
  type LogEntry,
  PROXY_PROBLEMS,
  type ProxyOptions,
  type RunningProxy,
  startProxy,
} from './proxy.ts';

type FrontMode = 'pass' | 'fail' | 'invalid' | 'no-key' | 'truncated' | 'drop' | 'trickle';

/**
 * A real HTTP server on 127.0.0.1 in front of `catalog serve`: it passes requests through (`pass`), or
 * answers every one with a 500 problem (`fail`), with a 200 whose body is not a valid catalog (`invalid`), with
 * the service's own answer to the request without its key (`no-key`: a real 401), with the first half of the
 * service's body and then a closed connection (`truncated`), closes the connection at once (`drop`), or sends a
 * 200 and then one byte of its body every two seconds, never ending it (`trickle`: never idle long enough for a
 * body timeout).
 */
async function startFront(target: string) {
  let mode: FrontMode = 'pass';
  let trickling = 0;
  /** The answers trickling now, each with how to end it. */
  const trickles = new Set<(rest: Buffer) => void>();
  const server: Server = createServer((request, response) => {
    if (mode === 'drop') {
      request.socket.destroy();
      return;
    }
    if (mode === 'trickle') {
      trickling += 1;
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.write('{');
      const timer = setInterval(() => response.write(' '), 2_000);
      const finish = (rest: Buffer) => {
        clearInterval(timer);
        response.end(rest);
      };
      trickles.add(finish);
      response.on('close', () => {
        clearInterval(timer);
        trickles.delete(finish);
      });
      return;
    }
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
      .filter(([name]) => mode !== 'no-key' || name !== 'x-api-key')
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)] as const);
    const truncate = mode === 'truncated';
    httpRequest(target, { method: request.method ?? 'GET', target: request.url ?? '/', headers }).then(
      (answer) => {
        response.writeHead(answer.status, answer.headers);
        if (truncate)
          response.write(answer.body.subarray(0, answer.body.length >> 1), () => response.destroy());
        else response.end(answer.body);
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
    /** How many requests it has answered in `trickle` mode. */
    trickling: () => trickling,
    /** Ends every answer trickling now with `body` (a JSON object, whose `{` was sent first). */
    finishTrickles: (body: Buffer) => {
      for (const finish of trickles) finish(body.subarray(body.indexOf('{') + 1));
    },
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

const get = (proxy: RunningProxy, target: string, headers: [string, string][] = []) =>
  httpRequest(proxy.url, { method: 'GET', target, headers });
const healthOf = async (proxy: RunningProxy) => JSON.parse((await get(proxy, '/healthz')).body.toString());

describe('the partner proxy in front of a real catalog serve', () => {
  let world: TestWorld;
  let serve: ServeProcess;
  let scratch: { dir: string; remove: () => Promise<void> };
  /** The service down: an address of 127.0.0.1 that refuses connections (testing/postgres.ts refusedPort). */
  let down: string;
  const proxies: RunningProxy[] = [];
  const logs: LogEntry[] = [];

  /** A proxy that refreshes only when told (so each test decides when the service is called). */
  async function proxyOf(options: Partial<ProxyOptions> & { upstream: string }) {
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
    down = `http://127.0.0.1:${await refusedPort()}`;
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
    const before = await accessLogStart(serve);
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

  it('refreshes every refreshSeconds when set, else when the max-age of the service says, and retries sooner after a failure', async () => {
    /** A proxy refreshing on its own schedule, and the seconds to its next refresh after each refresh(). */
    const scheduled = async (upstream: string, refreshSeconds?: number) => {
      const own: LogEntry[] = [];
      const proxy = await startProxy({
        upstream,
        key: world.keys.valid,
        port: 0,
        log: (entry) => own.push(entry),
        ...(refreshSeconds === undefined ? {} : { refreshSeconds }),
      });
      proxies.push(proxy);
      await proxy.refresh(); // joins the refresh it starts with
      return {
        proxy,
        nextIn: async () => {
          const logged = own.length;
          await proxy.refresh();
          return own.slice(logged).find((l) => l.event === 'refresh')?.nextRefreshInSeconds;
        },
      };
    };
    const byService = await scheduled(serve.url);
    const bySetting = await scheduled(serve.url, 7);
    expect([await byService.nextIn(), await bySetting.nextIn()]).toEqual([300, 7]);
    const next = Date.parse(bySetting.proxy.health().nextRefreshAt ?? '');
    expect(next - Date.now()).toBeGreaterThan(5_000);
    expect(next - Date.now()).toBeLessThanOrEqual(7_000);

    // After failures: 5 s, doubling (the first failure was the refresh at start), up to the usual interval or
    // 300 s, whichever is longer: a short --refresh-seconds does not make a failing service called every 5 s.
    const failing = await scheduled(down);
    const failingEvery5 = await scheduled(down, 5);
    expect([await failing.nextIn(), await failing.nextIn()]).toEqual([10, 20]);
    expect([await failingEvery5.nextIn(), await failingEvery5.nextIn()]).toEqual([10, 20]);
    await expect(startProxy({ upstream: serve.url, key: 'k', port: 0, refreshSeconds: 4 })).rejects.toThrow(
      'refreshSeconds must be at least 5, not 4',
    );
    await expect(
      startProxy({ upstream: 'http://user:s3cret@127.0.0.1:9', key: 'k', port: 0 }),
    ).rejects.toThrow('the upstream URL must not hold user:password@ (the key is the credential)');
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
    await until(() => proxy.health().lastRefresh, 'the refresh the proxy started with to fail');
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

  it('serves its first copy when it cannot save it (nothing saved yet), says so in /healthz, and numbers it once a refresh saves it', async () => {
    // The cache file's folder is a file: every save fails, as on a full disk, until it is removed.
    const folder = join(scratch.dir, 'unsavable');
    await writeFile(folder, 'not a folder');
    const cacheFile = join(folder, 'catalog-cache.json');
    const proxy = await proxyOf({ upstream: serve.url, cacheFile });
    expect(await proxy.refresh()).toMatchObject({ outcome: 'fetched', status: 200 });

    const plans = await get(proxy, '/plans.json');
    expect([plans.status, plans.body]).toEqual([200, world.objects.all]);
    expect((await get(proxy, '/plans.json?discipline=running')).body).toEqual(world.objects.running);
    // Served, not numbered: no sequence is given out before it is saved.
    expect(plans.headers[CHANGES_SEQUENCE_HEADER]).toBe('0');
    expect(JSON.parse((await get(proxy, '/changes?since=0')).body.toString())).toMatchObject({
      latest: 0,
      changes: [],
    });
    const unsaved = {
      status: 'degraded',
      copy: { source: 'service' },
      lastRefresh: { outcome: 'fetched', status: 200 },
      cacheFile: { saved: false, savedAt: null, error: expect.stringMatching(/EEXIST|ENOTDIR/) },
      changes: { latest: 0 },
    };
    expect(await healthOf(proxy)).toMatchObject(unsaved);
    // A load balancer that asks is told: 503 unless ok.
    const strict = await get(proxy, '/healthz?strict');
    expect(strict.status).toBe(503);
    expect(JSON.parse(strict.body.toString())).toMatchObject(unsaved);

    // Room again: the next refresh (the service says nothing changed) saves the copy, and numbers it.
    await rm(folder);
    expect(await proxy.refresh()).toMatchObject({ outcome: 'not-modified' });
    expect(await healthOf(proxy)).toMatchObject({
      status: 'ok',
      cacheFile: { saved: true, savedAt: expect.any(String), error: null },
      changes: { latest: 1 },
    });
    expect(JSON.parse((await get(proxy, '/changes?since=0')).body.toString())).toMatchObject({
      latest: 1,
      changes: [{ sequence: 1, resync: true, previous: null }],
    });
    expect((await get(proxy, '/plans.json')).headers[CHANGES_SEQUENCE_HEADER]).toBe('1');
    expect((await get(proxy, '/healthz?strict')).status).toBe(200);
    expect(await readdir(folder)).toEqual(['catalog-cache.json']);
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

  it('gives every refresh a total deadline against a service that trickles a byte every 2 s: 502 with no copy, the last good copy otherwise, degraded once a refresh is overdue', async () => {
    const front = await startFront(serve.url);
    try {
      front.set('trickle');
      const deadline = { totalMs: 2_000 };
      const proxy = await proxyOf({
        upstream: front.url,
        autoRefresh: true,
        refreshSeconds: 5,
        timeouts: deadline,
      });
      // The refresh the proxy started with is ended by its deadline: no hang, and still no copy (502).
      await until(() => proxy.health().lastRefresh, 'the refresh deadline');
      expect((await get(proxy, '/plans.json')).status).toBe(502);
      expect(await healthOf(proxy)).toMatchObject({
        status: 'empty',
        lastRefresh: { outcome: 'failed', error: 'no whole answer within 2 s (the refresh deadline)' },
      });

      front.set('pass');
      await until(() => proxy.health().copy !== null, 'the retry after the failed refresh');
      front.set('trickle');
      // The next refresh is due 5 s after that one; once it is due for longer than the deadline, /healthz says
      // degraded and the last good copy is served.
      const due = Date.parse(proxy.health().nextRefreshAt ?? '');
      await until(() => Date.now() > due + deadline.totalMs + 200, 'the refresh to be overdue');
      const health = await healthOf(proxy);
      expect(health).toMatchObject({ status: 'degraded', copy: { source: 'service' } });
      expect(Date.parse(health.nextRefreshAt)).toBeGreaterThan(due);
      expect((await get(proxy, '/plans.json')).body).toEqual(world.objects.all);
    } finally {
      await front.close();
    }
  });

  it('answers 502 at once when it has no copy, while its first refresh trickles on in the background and then serves what it fetched', async () => {
    const front = await startFront(serve.url);
    try {
      front.set('trickle');
      // A deadline far beyond the test: only the service's answer ends this refresh.
      const proxy = await proxyOf({ upstream: front.url, autoRefresh: true, timeouts: { totalMs: 600_000 } });
      await until(() => front.trickling() > 0, 'the first refresh to reach the service');
      const answers = await Promise.all(Array.from({ length: 4 }, () => get(proxy, '/plans.json')));
      // Every caller has its answer while the refresh is still in flight: none has ended yet.
      expect(proxy.health()).toMatchObject({ status: 'empty', lastRefresh: null });
      for (const answer of answers) {
        expect(answer.status).toBe(502);
        expect(JSON.parse(answer.body.toString())).toMatchObject({
          type: PROXY_PROBLEMS.noCatalog.type,
          detail: expect.stringContaining('under way'),
        });
      }
      // The refresh went on: once the service's answer ends, its copy is served.
      front.finishTrickles(world.objects.all);
      await until(() => proxy.health().lastRefresh, 'the refresh to end');
      expect(proxy.health()).toMatchObject({ status: 'ok', lastRefresh: { outcome: 'fetched' } });
      const served = await get(proxy, '/plans.json');
      expect(served.status).toBe(200);
      expect(JSON.parse(served.body.toString())).toEqual(JSON.parse(world.objects.all.toString()));
    } finally {
      await front.close();
    }
  });

  it('stops on SIGTERM without waiting for a service that trickles (a real catalog proxy process)', async () => {
    const front = await startFront(serve.url);
    try {
      front.set('trickle');
      const proxy = await startCatalog(
        ['proxy', '--upstream', front.url, '--port', '0', '--cache-file', join(scratch.dir, 'sigterm.json')],
        {
          ready: /catalog proxy: listening on (http:\/\/\S+)/,
          env: { CATALOG_PARTNER_KEY: world.keys.valid },
          process: true,
        },
      );
      await until(() => front.trickling() > 0, 'the refresh to reach the service');
      // The upstream never finishes its answer: the process exits anyway, cleanly.
      expect(await proxy.stop()).toBe(0);
      expect(proxy.lines.join('\n')).toMatch(/SIGTERM: shutting down/);
    } finally {
      await front.close();
    }
  });
});

/** A source row of fixtures/plans.json. */
type Row = Record<string, unknown> & { id: string; title: string; published: boolean; approved: boolean };

/** One request a receiver got. */
interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

/**
 * The partner's application as the notify hook sees it: a real HTTP server on 127.0.0.1 that records every
 * request and answers with the status `answer` gives for it (its index among all requests, from 0).
 */
async function startReceiver() {
  const received: Received[] = [];
  let answer: (index: number) => number = () => 204;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = answer(received.length);
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        status,
      });
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status < 300 ? '' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answerWith: (next: (index: number) => number) => {
      answer = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

describe('the change log, against a real catalog serve whose live build real publishes change', () => {
  let scratch: { dir: string; remove: () => Promise<void> };
  let serve: ServeProcess;
  let key: string;
  let rows: Row[];
  let published: Row[];
  let sources = 0;
  const proxies: RunningProxy[] = [];
  const logs: LogEntry[] = [];
  const env = (extra: Record<string, string> = {}) => localTargetEnv(scratch.dir, extra);

  /** Publishes `source` rows for real (`catalog publish` on the origin and store `catalog serve` reads). */
  async function publish(source: Row[], ...args: string[]): Promise<{ generatedAt: string }> {
    sources += 1;
    const path = join(scratch.dir, `rows-${sources}.json`);
    await writeFile(path, JSON.stringify(source));
    const result = await runCatalog(['publish', '--source', path, ...args], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { generatedAt: string };
  }

  async function proxyOf(options: Partial<ProxyOptions> & { upstream: string }) {
    const proxy = await startProxy({
      key,
      port: 0,
      autoRefresh: false,
      log: (entry) => logs.push(entry),
      ...options,
    });
    proxies.push(proxy);
    return proxy;
  }

  const changesOf = async (proxy: RunningProxy, query: string) => {
    const answer = await get(proxy, `/changes?${query}`);
    return { status: answer.status, headers: answer.headers, json: JSON.parse(answer.body.toString()) };
  };
  const pageOf = async (proxy: RunningProxy, query: string) => {
    const answer = await changesOf(proxy, query);
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return ChangesPage.parse(answer.json);
  };
  const sequencesOf = (page: { changes: ChangeSet[] }) => page.changes.map((set) => set.sequence);
  const generatedAtOf = (proxy: RunningProxy) => proxy.health().copy?.generatedAt ?? '';
  const titled = (index: number, title: string) =>
    rows.map((row) => (row.id === published[index]?.id ? { ...row, title } : row));
  const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  beforeAll(async () => {
    scratch = await scratchDir('catalog-proxy-changes-');
    // A few plans of the fixtures (testing/aws.ts): each publish builds and writes the changed pages.
    rows = (await fewRows()) as Row[];
    published = rows.filter((row) => row.published === true && row.approved === true);
    await publish(rows);
    const issued = await runCatalog(['keys', 'issue', '--partner', 'proxy-changes'], { env: env() });
    expect(issued.code, issued.stderr).toBe(0);
    key = issued.stdout.trim();
    serve = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await serve?.stop();
    await scratch?.remove();
  });

  it('records the exact change set of each publish that changes plans (added, retitled, removed, rolled back), and none for a new generatedAt alone', async () => {
    const proxy = await proxyOf({ upstream: serve.url, cacheFile: join(scratch.dir, 'exact', 'cache.json') });
    await proxy.refresh();
    // The first copy starts the history: a change set that says resync (a receiver reloads /plans.json).
    const start = await pageOf(proxy, 'since=0');
    const history = start.history;
    expect(start).toEqual({
      history,
      since: 0,
      latest: 1,
      next: 1,
      changes: [
        {
          history,
          sequence: 1,
          at: ISO,
          resync: true,
          previous: null,
          current: { generatedAt: generatedAtOf(proxy), plans: published.length },
          added: [],
          changed: [],
          removed: [],
        },
      ],
    });

    // The same plans again, in a new build: a new generatedAt, no change.
    const before = generatedAtOf(proxy);
    await publish(rows, '--force');
    expect(await proxy.refresh()).toMatchObject({ outcome: 'fetched' });
    const same = generatedAtOf(proxy);
    expect(same).not.toBe(before);
    expect(proxy.health().changes).toEqual({ history, latest: 1, oldest: 1, kept: 1 });

    const template = published[0] as Row;
    const extra: Row = { ...template, id: 'a0000000-0000-4000-8000-000000000001', title: 'Hill Sprints' };
    const withExtra = [...rows, extra];
    const added = (await publish(withExtra)).generatedAt;
    await proxy.refresh();
    // A new title moves the plan to another position in the catalog: still one change, of its title.
    const retitledRows = [...titled(0, 'Zzz Strength Finisher'), extra];
    const retitled = (await publish(retitledRows)).generatedAt;
    await proxy.refresh();
    const gone = published[5] as Row;
    const removed = (await publish(retitledRows.filter((row) => row.id !== gone.id))).generatedAt;
    await proxy.refresh();
    const rolled = await runCatalog(['rollback'], { env: env() });
    expect(rolled.code, rolled.stderr).toBe(0);
    await proxy.refresh();
    expect((await runCatalog(['unpin'], { env: env() })).code).toBe(0);

    const n = published.length;
    const page = await pageOf(proxy, 'since=1');
    const set = { history, at: ISO, resync: false };
    expect(page).toEqual({
      history,
      since: 1,
      latest: 5,
      next: 5,
      changes: [
        {
          ...set,
          sequence: 2,
          previous: { generatedAt: same, plans: n },
          current: { generatedAt: added, plans: n + 1 },
          added: [{ id: extra.id, title: 'Hill Sprints' }],
          changed: [],
          removed: [],
        },
        {
          ...set,
          sequence: 3,
          previous: { generatedAt: added, plans: n + 1 },
          current: { generatedAt: retitled, plans: n + 1 },
          added: [],
          changed: [{ id: template.id, title: 'Zzz Strength Finisher', fields: ['title'] }],
          removed: [],
        },
        {
          ...set,
          sequence: 4,
          previous: { generatedAt: retitled, plans: n + 1 },
          current: { generatedAt: removed, plans: n },
          added: [],
          changed: [],
          removed: [{ id: gone.id, title: gone.title }],
        },
        {
          ...set,
          sequence: 5,
          previous: { generatedAt: removed, plans: n },
          current: { generatedAt: retitled, plans: n + 1 },
          added: [{ id: gone.id, title: gone.title }],
          changed: [],
          removed: [],
        },
      ],
    });
    const plans = await get(proxy, '/plans.json');
    expect(plans.headers[CHANGES_SEQUENCE_HEADER]).toBe('5');
    expect(plans.headers[CHANGES_HISTORY_HEADER]).toBe(history);
    expect(JSON.parse(plans.body.toString()).generatedAt).toBe(retitled);
    expect(await healthOf(proxy)).toMatchObject({ changes: { history, latest: 5, oldest: 1, kept: 5 } });
    const refreshes = logs.filter((l) => l.event === 'refresh' && l.changes !== undefined);
    expect(refreshes.slice(-5).map((l) => l.changes)).toEqual([
      { sequence: 1, resync: true, added: 0, changed: 0, removed: 0 },
      { sequence: 2, resync: false, added: 1, changed: 0, removed: 0 },
      { sequence: 3, resync: false, added: 0, changed: 1, removed: 0 },
      { sequence: 4, resync: false, added: 0, changed: 0, removed: 1 },
      { sequence: 5, resync: false, added: 1, changed: 0, removed: 0 },
    ]);
  });

  it('pages /changes?since=, answers 410 with a problem past its history or after a reset, and keeps its history and sequence across a restart', async () => {
    const cacheFile = join(scratch.dir, 'paging', 'cache.json');
    const first = await proxyOf({ upstream: serve.url, cacheFile, changesKept: 3 });
    await first.refresh();
    for (const title of ['Title One', 'Title Two', 'Title Three', 'Title Four']) {
      await publish(titled(1, title));
      await first.refresh();
    }
    // Sequence 1 started the history; the four titles are 2 to 5, and the last three are kept.
    expect(sequencesOf(await pageOf(first, 'since=2'))).toEqual([3, 4, 5]);
    expect(await pageOf(first, 'since=2&limit=2')).toMatchObject({ since: 2, latest: 5, next: 4 });
    expect(sequencesOf(await pageOf(first, 'since=2&limit=2'))).toEqual([3, 4]);
    expect(sequencesOf(await pageOf(first, 'since=4&limit=2'))).toEqual([5]);
    const { history } = await pageOf(first, 'since=5');
    expect(await pageOf(first, 'since=5')).toEqual({ history, since: 5, latest: 5, next: 5, changes: [] });
    expect((await pageOf(first, 'since=4')).changes[0]?.changed).toEqual([
      { id: published[1]?.id, title: 'Title Four', fields: ['title'] },
    ]);

    for (const [since, detail] of [
      [
        '0',
        /^The change sets after 0 are no longer held \(the history starts at 3\)\. Resync from GET \/plans\.json/,
      ],
      [
        '6',
        /^Sequence 6 is after the latest change set \(5\): the proxy's history was started again\. Resync/,
      ],
    ] as const) {
      const gone = await changesOf(first, `since=${since}`);
      expect(gone.status).toBe(410);
      expect(gone.headers['content-type']).toBe('application/problem+json');
      expect(gone.json).toEqual({
        ...PROXY_PROBLEMS.changesGone,
        detail: expect.stringMatching(detail),
        latest: 5,
        oldest: 3,
        resync: '/plans.json',
      });
    }
    for (const query of [
      '',
      'since=',
      'since=-1',
      'since=1.5',
      'since=one',
      'since=1&since=2',
      'since=1&limit=0',
      'since=1&limit=101',
    ]) {
      const bad = await changesOf(first, query);
      expect([bad.status, bad.json.type], query).toEqual([400, PROXY_PROBLEMS.invalidChangesQuery.type]);
    }
    expect((await httpRequest(first.url, { method: 'POST', target: '/changes?since=0' })).status).toBe(405);
    const page = (await get(first, '/changes?since=2')).body;
    await first.close();

    // Restarted with the service down: the same history and sequence, from the cache file.
    const second = await proxyOf({
      upstream: `http://127.0.0.1:${await refusedPort()}`,
      cacheFile,
      changesKept: 3,
    });
    expect((await get(second, '/changes?since=2')).body).toEqual(page);
    expect((await get(second, '/plans.json')).headers[CHANGES_SEQUENCE_HEADER]).toBe('5');
    expect(await healthOf(second)).toMatchObject({ changes: { history, latest: 5, oldest: 3, kept: 3 } });
    await second.close();

    // Restarted with the service up: the next change set carries on from the copy and sequence on disk.
    const onDisk = JSON.parse(page.toString()).changes.at(-1).current.generatedAt;
    const third = await proxyOf({ upstream: serve.url, cacheFile, changesKept: 3 });
    await publish(titled(1, 'Title Five'));
    await third.refresh();
    expect(await pageOf(third, 'since=5')).toMatchObject({
      history,
      latest: 6,
      changes: [
        { history, sequence: 6, previous: { generatedAt: onDisk }, changed: [{ fields: ['title'] }] },
      ],
    });
    expect(third.health().changes).toEqual({ history, latest: 6, oldest: 4, kept: 3 });
  });

  it('never reports a removal on a failed refresh (500, 401, an invalid or truncated body, no answer) or on one empty catalog', async () => {
    await publish(rows);
    const front = await startFront(serve.url);
    try {
      const proxy = await proxyOf({
        upstream: front.url,
        cacheFile: join(scratch.dir, 'false', 'cache.json'),
      });
      await proxy.refresh();
      const copy = (await get(proxy, '/plans.json')).body;
      const plans = JSON.parse(copy.toString()).plans as { id: string; title: string }[];
      // The service now has a catalog without one plan; none of these refreshes may report it.
      const gone = published[7] as Row;
      await publish(rows.filter((row) => row.id !== gone.id));
      for (const [mode, failure] of [
        ['fail', { status: 500, problemType: 'tag:training-plan-catalog,2026:problem:internal-error' }],
        ['no-key', { status: 401, problemType: 'tag:training-plan-catalog,2026:problem:unauthorized' }],
        ['invalid', { status: 200, error: expect.stringMatching(/^invalid body: /) }],
        ['truncated', { error: expect.any(String) }],
        ['drop', { error: expect.any(String) }],
      ] as const) {
        front.set(mode);
        expect(await proxy.refresh(), mode).toMatchObject({ outcome: 'failed', ...failure });
        expect((await get(proxy, '/plans.json')).body, mode).toEqual(copy);
        expect(proxy.health().changes.latest, mode).toBe(1);
      }
      front.set('pass');
      await proxy.refresh();
      expect((await pageOf(proxy, 'since=1')).changes.map((set) => set.removed)).toEqual([
        [{ id: gone.id, title: gone.title }],
      ]);

      // An empty catalog where the copy has plans is taken only when the next refresh answers it again.
      const kept = (await get(proxy, '/plans.json')).body;
      await publish([], '--allow-empty', '--force');
      const held = {
        outcome: 'failed',
        status: 200,
        error: `the service answered an empty catalog where the copy has ${plans.length - 1} plans: the copy is kept until the next refresh confirms it`,
      };
      expect(await proxy.refresh()).toMatchObject(held);
      front.set('fail');
      expect(await proxy.refresh()).toMatchObject({ outcome: 'failed', status: 500 });
      front.set('pass');
      expect(await proxy.refresh()).toMatchObject(held);
      expect((await get(proxy, '/plans.json')).body).toEqual(kept);
      expect(await healthOf(proxy)).toMatchObject({ status: 'degraded', changes: { latest: 2 } });
      expect(await proxy.refresh()).toMatchObject({ outcome: 'fetched' });
      expect(JSON.parse((await get(proxy, '/plans.json')).body.toString()).plans).toEqual([]);
      const emptied = await pageOf(proxy, 'since=2');
      expect(emptied.changes).toMatchObject([{ sequence: 3, current: { plans: 0 }, added: [], changed: [] }]);
      expect(emptied.changes[0]?.removed).toEqual(
        plans.filter((plan) => plan.id !== gone.id).map(({ id, title }) => ({ id, title })),
      );
    } finally {
      front.set('pass');
      await front.close();
    }
  });

  it('POSTs each new change set to the notify URL, retrying with back-off until the receiver accepts, without holding up serving; a restart delivers what waits', async () => {
    await publish(rows);
    const receiver = await startReceiver();
    const cacheFile = join(scratch.dir, 'notify', 'cache.json');
    const notify = { url: `${receiver.url}/hooks/catalog?token=s3cret`, minRetryMs: 100, maxRetryMs: 400 };
    try {
      const proxy = await proxyOf({ upstream: serve.url, cacheFile, notify });
      await proxy.refresh();
      // The first copy starts the history: the receiver is told to resync.
      await until(() => proxy.health().notify?.delivered === 1, 'the first delivery');
      expect(proxy.health().notify).toEqual({
        status: 'ok',
        receiver: receiver.url,
        delivered: 1,
        pending: 0,
        consecutiveFailures: 0,
        lastAttempt: { at: ISO, sequence: 1, attempt: 1, outcome: 'delivered', status: 204 },
        nextAttemptAt: null,
      });
      expect(JSON.parse(receiver.received[0]?.body ?? '')).toMatchObject({ sequence: 1, resync: true });

      receiver.answerWith((index) => (index < 3 ? 503 : 204));
      const logged = logs.length;
      await publish(titled(2, 'Easy Intervals'));
      expect(await proxy.refresh()).toMatchObject({ outcome: 'fetched' });
      // The refresh and the frontend never wait for the receiver: two retries are still to come.
      expect(proxy.health().notify).toMatchObject({ delivered: 1, pending: 1 });
      expect((await get(proxy, '/plans.json')).headers[CHANGES_SEQUENCE_HEADER]).toBe('2');
      await until(() => proxy.health().notify?.delivered === 2, 'the delivery');

      const [set] = (await pageOf(proxy, 'since=1')).changes;
      expect(set).toMatchObject({ sequence: 2, resync: false, changed: [{ fields: ['title'] }] });
      const retried = receiver.received.slice(1);
      expect(retried.map((r) => [r.method, r.url, r.headers['content-type'], r.status])).toEqual([
        ['POST', '/hooks/catalog?token=s3cret', 'application/json; charset=utf-8', 503],
        ['POST', '/hooks/catalog?token=s3cret', 'application/json; charset=utf-8', 503],
        ['POST', '/hooks/catalog?token=s3cret', 'application/json; charset=utf-8', 204],
      ]);
      for (const request of retried) expect(JSON.parse(request.body)).toEqual(set);
      expect(proxy.health().notify).toMatchObject({
        status: 'ok',
        delivered: 2,
        pending: 0,
        consecutiveFailures: 0,
        lastAttempt: { sequence: 2, attempt: 3, outcome: 'delivered', status: 204 },
      });
      expect(
        logs
          .slice(logged)
          .filter((l) => l.event === 'notify')
          .map(({ outcome, sequence, attempt, status, nextAttemptInSeconds }) => ({
            outcome,
            sequence,
            attempt,
            status,
            nextAttemptInSeconds,
          })),
      ).toEqual([
        { outcome: 'failed', sequence: 2, attempt: 1, status: 503, nextAttemptInSeconds: 0.1 },
        { outcome: 'failed', sequence: 2, attempt: 2, status: 503, nextAttemptInSeconds: 0.2 },
        { outcome: 'delivered', sequence: 2, attempt: 3, status: 204, nextAttemptInSeconds: undefined },
      ]);

      // A receiver that keeps failing: visible in /healthz; the change set waits through a restart.
      receiver.answerWith(() => 500);
      await publish(titled(2, 'Easier Intervals'));
      await proxy.refresh();
      await until(() => (proxy.health().notify?.consecutiveFailures ?? 0) >= 2, 'two failures');
      expect(await healthOf(proxy)).toMatchObject({
        status: 'ok',
        notify: {
          status: 'retrying',
          delivered: 2,
          pending: 1,
          lastAttempt: { sequence: 3, outcome: 'failed', status: 500, error: 'the receiver answered 500' },
          nextAttemptAt: ISO,
        },
      });
      await proxy.close();
      const before = receiver.received.length;
      receiver.answerWith(() => 204);
      const restarted = await proxyOf({ upstream: serve.url, cacheFile, notify });
      await until(() => restarted.health().notify?.delivered === 3, 'the delivery after the restart');
      expect(receiver.received.slice(before).map((r) => [JSON.parse(r.body).sequence, r.status])).toEqual([
        [3, 204],
      ]);
      expect(JSON.stringify(logs)).not.toContain('s3cret');
      expect(JSON.stringify(restarted.health())).not.toContain('s3cret');
    } finally {
      await receiver.close();
    }
  });

  it('starts a new history when the cache file is lost between two deliveries: the receiver and /changes readers are told to resync', async () => {
    await publish(rows);
    const receiver = await startReceiver();
    const cacheFile = join(scratch.dir, 'lost', 'cache.json');
    const notify = { url: `${receiver.url}/hook`, minRetryMs: 100, maxRetryMs: 400 };
    const bodies = () => receiver.received.map((r) => ChangeSet.parse(JSON.parse(r.body)));
    try {
      const first = await proxyOf({ upstream: serve.url, cacheFile, notify });
      await first.refresh();
      await publish(titled(3, 'Before The Loss'));
      await first.refresh();
      await until(() => first.health().notify?.delivered === 2, 'two deliveries');
      const old = (await pageOf(first, 'since=0')).history;
      await first.close();

      // The cache file is lost, and the catalog changes while no proxy runs.
      await rm(cacheFile);
      const gone = published[4] as Row;
      await publish(titled(3, 'Before The Loss').filter((row) => row.id !== gone.id));
      const second = await proxyOf({ upstream: serve.url, cacheFile, notify });
      await second.refresh();
      await until(() => receiver.received.length === 3, 'the delivery after the loss');
      const renewed = second.health().changes.history;
      expect(renewed).not.toBe(old);
      expect(bodies()).toMatchObject([
        { history: old, sequence: 1, resync: true, previous: null },
        { history: old, sequence: 2, resync: false, changed: [{ id: published[3]?.id, fields: ['title'] }] },
        // Sequence 1 again, but of another history, and saying resync: never taken for the one applied.
        {
          history: renewed,
          sequence: 1,
          resync: true,
          previous: null,
          current: { plans: published.length - 1 },
        },
      ]);

      // A reader of /changes that applied the old history's sequence 2 is told the same.
      const ahead = await changesOf(second, 'since=2');
      expect([ahead.status, ahead.json.type]).toEqual([410, PROXY_PROBLEMS.changesGone.type]);
      expect(await pageOf(second, 'since=0')).toMatchObject({ history: renewed, latest: 1 });
      const plans = await get(second, '/plans.json');
      expect([plans.headers[CHANGES_HISTORY_HEADER], plans.headers[CHANGES_SEQUENCE_HEADER]]).toEqual([
        renewed,
        '1',
      ]);
    } finally {
      await receiver.close();
    }
  });
});
