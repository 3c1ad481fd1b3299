import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, runCatalog, scratchDir, startCatalog, startServe } from '../../testing/cli.ts';
import { createTestWorld, type TestWorld } from '../../testing/world.ts';

const READY = /catalog proxy: listening on (http:\/\/\S+)/;

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
      // The first request waits for the refresh the proxy starts with.
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
  });
});
