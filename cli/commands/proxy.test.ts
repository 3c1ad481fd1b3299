import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fewPlansFile, fewRows } from '../../testing/aws.ts';
import {
  httpRequest,
  localTargetEnv,
  runCatalog,
  scratchDir,
  startCatalog,
  startServe,
} from '../../testing/cli.ts';
import { until } from '../../testing/until.ts';
import { createTestWorld, type TestWorld } from '../../testing/world.ts';

const READY = /catalog proxy: listening on (http:\/\/\S+)/;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('catalog proxy', () => {
  let world: TestWorld;
  let scratch: { dir: string; remove: () => Promise<void> };
  beforeAll(async () => {
    world = await createTestWorld();
    scratch = await scratchDir('catalog-proxy-cli-');
  });
  afterAll(async () => {
    await scratch?.remove();
    await world?.remove();
  });

  const startProxy = (upstream: string, cacheFile: string) =>
    startCatalog(['proxy', '--upstream', upstream, '--port', '0', '--cache-file', cacheFile], {
      ready: READY,
      env: { CATALOG_PARTNER_KEY: world.keys.valid },
    });

  it('serves the catalog with the key from the environment, restarts from its disk copy, and never prints the key', async () => {
    const cacheFile = join(scratch.dir, 'cache.json');
    const serve = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    const first = await startProxy(serve.url, cacheFile);
    try {
      // Until the refresh the proxy starts with brings a copy, /healthz answers 503 (and /plans.json 502).
      await until(
        async () => (await httpRequest(first.url, { method: 'GET', target: '/healthz' })).status === 200,
        'the first refresh',
      );
      const answer = await httpRequest(first.url, {
        method: 'GET',
        target: '/plans.json?discipline=running',
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(world.objects.running);
    } finally {
      await first.stop();
      await serve.stop();
    }
    const refreshes = first.lines.filter((line) => line.includes('"event":"refresh"'));
    expect(refreshes.map((line) => JSON.parse(line).outcome)).toEqual(['fetched']);

    const second = await startProxy(serve.url, cacheFile);
    try {
      const answer = await httpRequest(second.url, { method: 'GET', target: '/plans.json' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(world.objects.all);
      // Join the refresh it started with (the service is down): /healthz then reports it.
      for (let i = 0; i < 100 && !second.lines.some((l) => l.includes('"event":"refresh"')); i += 1)
        await new Promise((r) => setTimeout(r, 20));
      const health = JSON.parse(
        (await httpRequest(second.url, { method: 'GET', target: '/healthz' })).body.toString(),
      );
      expect(health).toMatchObject({
        status: 'degraded',
        copy: { source: 'disk' },
        lastRefresh: { outcome: 'failed', error: expect.stringMatching(/ECONNREFUSED/) },
      });
    } finally {
      await second.stop();
    }
    expect([...first.lines, ...second.lines].join('\n')).not.toContain(world.keys.valid);
  });

  it('takes the key from CATALOG_PARTNER_KEY only: none is an error, and there is no flag for it', async () => {
    const missing = await runCatalog(['proxy', '--upstream', 'http://127.0.0.1:9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('catalog: CATALOG_PARTNER_KEY: is required\n');
    const flag = await runCatalog(['proxy', '--upstream', 'http://127.0.0.1:9', '--key', world.keys.valid]);
    expect(flag.code).not.toBe(0);
    expect(flag.stderr).toMatch(/unknown option '--key'/);
    const badUpstream = await runCatalog(['proxy', '--upstream', 'http://127.0.0.1:9/api/plans'], {
      env: { CATALOG_PARTNER_KEY: world.keys.valid },
    });
    expect(badUpstream.code).toBe(1);
    expect(badUpstream.stderr).toMatch(/^catalog: --upstream "http:\/\/127.0.0.1:9\/api\/plans": must be/);
    expect(badUpstream.stderr).not.toContain(world.keys.valid);
    // A URL with credentials is refused without printing them.
    const credentials = await runCatalog(['proxy', '--upstream', 'http://partner:s3cret@127.0.0.1:9'], {
      env: { CATALOG_PARTNER_KEY: world.keys.valid },
    });
    expect([credentials.code, credentials.stderr]).toEqual([
      1,
      'catalog: --upstream "http://partner:***@127.0.0.1:9": must be http(s)://host[:port] with no path, query or fragment\n',
    ]);
  });

  it('refreshes every --refresh-seconds and POSTs the change set of a real publish to --notify', async () => {
    const dir = join(scratch.dir, 'notify');
    const env = (source: string) => localTargetEnv(dir, { CATALOG_SOURCE: source });
    // A few of the fixtures' rows: the change set is one plan removed, whatever the others.
    const rows = (await fewRows()) as { id: string; title: string; published: boolean; approved: boolean }[];
    const first = await fewPlansFile();
    expect((await runCatalog(['publish'], { env: env(first) })).code).toBe(0);
    const key = (
      await runCatalog(['keys', 'issue', '--partner', 'cli-proxy'], { env: env(first) })
    ).stdout.trim();
    const serve = await startServe(['--origin', join(dir, 'origin'), '--store', join(dir, 'kvs.json')]);
    const bodies: string[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      request.on('end', () => {
        bodies.push(body);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const proxy = await startCatalog(
      [
        'proxy',
        ...['--upstream', serve.url, '--port', '0', '--cache-file', join(dir, 'cache.json')],
        ...['--refresh-seconds', '5', '--notify', hook, '--changes-kept', '10'],
      ],
      { ready: READY, env: { CATALOG_PARTNER_KEY: key } },
    );
    try {
      const refreshes = () =>
        proxy.lines.filter((l) => l.includes('"event":"refresh"')).map((l) => JSON.parse(l));
      for (let i = 0; i < 250 && refreshes().length === 0; i += 1)
        await new Promise((r) => setTimeout(r, 20));
      expect(refreshes()[0]).toMatchObject({ outcome: 'fetched', nextRefreshInSeconds: 5 });

      const gone = rows.filter((row) => row.published && row.approved)[3];
      const source = join(dir, 'fewer.json');
      await writeFile(source, JSON.stringify(rows.filter((row) => row.id !== gone?.id)));
      const published = await runCatalog(['publish'], { env: env(source) });
      expect(published.code, published.stderr).toBe(0);
      // The first copy started the history (the hook says resync); the next scheduled refresh (within 5 s)
      // takes the new build and the hook delivers its change set.
      for (let i = 0; i < 600 && bodies.length < 2; i += 1) await new Promise((r) => setTimeout(r, 20));
      expect(bodies.map((body) => JSON.parse(body))).toEqual([
        expect.objectContaining({ sequence: 1, resync: true, previous: null }),
        expect.objectContaining({
          sequence: 2,
          resync: false,
          added: [],
          changed: [],
          removed: [{ id: gone?.id, title: gone?.title }],
        }),
      ]);
      const health = JSON.parse(
        (await httpRequest(proxy.url, { method: 'GET', target: '/healthz' })).body.toString(),
      );
      expect(health).toMatchObject({ changes: { latest: 2 }, notify: { delivered: 2, pending: 0 } });
    } finally {
      await proxy.stop();
      await serve.stop();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('refuses a refresh interval under 5 seconds, a history of no change set and a notify URL that is not http(s)', async () => {
    const run = (...args: string[]) =>
      runCatalog(['proxy', '--upstream', 'http://127.0.0.1:9', ...args], {
        env: { CATALOG_PARTNER_KEY: world.keys.valid },
      });
    expect((await run('--refresh-seconds', '4')).stderr).toBe(
      'catalog: --refresh-seconds "4": must be a whole number from 5 to 86400\n',
    );
    expect((await run('--changes-kept', '0')).stderr).toBe(
      'catalog: --changes-kept "0": must be a whole number from 1 to 10000\n',
    );
    const notify = await run('--notify', 'ftp://app.example.com/hook');
    expect([notify.code, notify.stderr]).toEqual([
      1,
      'catalog: --notify "ftp://app.example.com/hook": must be an http(s):// URL without user:password@ or a #fragment\n',
    ]);
  });

  it.each([
    ['http://user:s3cretPW@127.0.0.1:9/', 'http://user:***@127.0.0.1:9/'],
    // The WHATWG parser reads backslashes as slashes: this URL has a password too.
    ['http:\\\\user:s3cretPW@127.0.0.1:9/', 'http:\\\\user:***@127.0.0.1:9/'],
    ['http:\\\\user:s3cretPW@127.0.0.1:99999/', 'http:\\\\user:***@127.0.0.1:99999/'],
  ])('refuses --upstream %s without echoing its password', async (given, shown) => {
    const refused = await runCatalog(['proxy', '--upstream', given, '--port', '0'], {
      env: { CATALOG_PARTNER_KEY: world.keys.valid },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(`^catalog: --upstream ${escapeRegExp(JSON.stringify(shown))}: must be`),
    );
    expect(refused.stderr).not.toContain('s3cretPW');
  });

  it('fails to listen as the local edge does: a port another program holds and a host this machine lacks are named, with the setting to change', async () => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await new Promise((resolve) => holder.once('listening', resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      const env = { CATALOG_PARTNER_KEY: world.keys.valid };
      const upstream = ['--upstream', 'http://127.0.0.1:9', '--cache-file', join(scratch.dir, 'unused.json')];
      const taken = await runCatalog(['proxy', ...upstream, '--port', String(port)], { env });
      expect([taken.code, taken.stderr]).toEqual([
        1,
        `catalog: 127.0.0.1:${port} is in use by another program; stop it, or pass another --port (0 picks a free one)\n`,
      ]);
      // 192.0.2.1 is TEST-NET-1 (documentation only): no machine's own address.
      const foreign = await runCatalog(['proxy', ...upstream, '--host', '192.0.2.1', '--port', '0'], { env });
      expect([foreign.code, foreign.stderr]).toEqual([
        1,
        'catalog: cannot listen on 192.0.2.1:0: 192.0.2.1 is no address of this machine (EADDRNOTAVAIL); give a --host this machine has, such as 127.0.0.1 (0.0.0.0: all of them)\n',
      ]);
    } finally {
      holder.close();
    }
  });
});
