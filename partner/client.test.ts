import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from '../testing/cli.ts';
import { refusedPort } from '../testing/postgres.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { CatalogClient, freshnessSeconds } from './client.ts';

/** A real HTTP server on 127.0.0.1 that answers every request with one fixed answer. */
async function fixedServer(status: number, body: string, headers: Record<string, string> = {}) {
  const server: Server = createServer((_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

describe('the partner client against a real catalog serve', () => {
  let world: TestWorld;
  let serve: ServeProcess;
  beforeAll(async () => {
    world = await createTestWorld();
    serve = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
  });
  afterAll(async () => {
    await serve?.stop();
    await world?.remove();
  });

  it('fetches the catalog as sent, with its ETag and lifetime, then revalidates it with If-None-Match', async () => {
    const client = new CatalogClient({ upstream: serve.url, key: world.keys.valid });
    try {
      const first = await client.fetch();
      if (first.kind !== 'fetched') throw new Error(`expected a catalog, got ${JSON.stringify(first)}`);
      expect(first.body).toBe(world.objects.all.toString('utf8'));
      expect(first.freshForSeconds).toBe(300);
      expect(first.etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await client.fetch(first.etag);
      expect(again).toEqual({ kind: 'not-modified', freshForSeconds: 300 });
    } finally {
      await client.close();
    }
  });

  it('reports a refused call by status and problem type, and never names the key', async () => {
    const client = new CatalogClient({ upstream: serve.url, key: world.keys.expired });
    try {
      const result = await client.fetch();
      expect(result).toEqual({
        kind: 'failed',
        status: 401,
        problemType: 'tag:training-plan-catalog,2026:problem:unauthorized',
        error: 'the service answered 401 tag:training-plan-catalog,2026:problem:unauthorized',
      });
      expect(JSON.stringify(result)).not.toContain(world.keys.expired);
    } finally {
      await client.close();
    }
  });

  it('treats a service that cannot be reached as a failed call', async () => {
    // Nothing listens there (testing/postgres.ts refusedPort).
    const client = new CatalogClient({
      upstream: `http://127.0.0.1:${await refusedPort()}`,
      key: world.keys.valid,
    });
    try {
      const result = await client.fetch();
      expect(result.kind).toBe('failed');
      expect(result).toMatchObject({ error: expect.stringMatching(/ECONNREFUSED/) });
      expect(result).not.toHaveProperty('status');
    } finally {
      await client.close();
    }
  });

  it('refuses a 200 whose body breaks the published schema, or is not JSON', async () => {
    const plan = JSON.parse(world.objects.all.toString('utf8')).plans[0];
    const broken = await fixedServer(
      200,
      JSON.stringify({ generatedAt: '2026-11-21T08:00:00.000Z', plans: [{ ...plan, level: 'expert' }] }),
    );
    const notJson = await fixedServer(200, '<html>maintenance</html>');
    const clients = [broken, notJson].map((s) => new CatalogClient({ upstream: s.url, key: 'k' }));
    try {
      expect(await clients[0]?.fetch()).toEqual({
        kind: 'failed',
        status: 200,
        error: expect.stringMatching(/^invalid body: plans\.0\.level: /),
      });
      expect(await clients[1]?.fetch()).toEqual({
        kind: 'failed',
        status: 200,
        error: 'invalid body: not JSON',
      });
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await Promise.all([broken.close(), notJson.close()]);
    }
  });
});

describe('freshness from Cache-Control', () => {
  it('is max-age less Age, none when unsaid, and zero when the answer must not be reused', () => {
    expect(freshnessSeconds('public, max-age=300', undefined)).toBe(300);
    expect(freshnessSeconds('public, max-age=300', '120')).toBe(180);
    expect(freshnessSeconds('max-age=60', '600')).toBe(0);
    expect(freshnessSeconds('public', undefined)).toBeUndefined();
    expect(freshnessSeconds(undefined, '5')).toBeUndefined();
    expect(freshnessSeconds('no-store', undefined)).toBe(0);
    expect(freshnessSeconds('s-maxage=10, max-age=30', 'garbage')).toBe(30);
  });
});
