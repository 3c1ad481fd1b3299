import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from '../testing/cli.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { CatalogClient, NoCatalogError } from './client.ts';

describe('a partner client typed from openapi.yaml', () => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createTestWorld();
  });
  afterAll(() => world.remove());

  it('fetches the catalog, revalidates with If-None-Match, and serves the last good copy when the service fails', async () => {
    const server = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    const client = new CatalogClient(server.url, world.keys.valid);
    let stopped = false;
    try {
      const first = await client.plans('running');
      expect(first.stale).toBe(false);
      expect(JSON.stringify(first.catalog)).toBe(world.objects.running.toString('utf8'));
      expect(
        first.catalog.plans.every(
          (plan) => plan.discipline === 'running' && plan.disciplineLabel === 'Outdoor',
        ),
      ).toBe(true);

      const second = await client.plans('running');
      expect(second).toEqual({ catalog: first.catalog, stale: false });
      const statuses = () =>
        server.lines
          .filter((l) => l.startsWith('{"time"'))
          .map((l) => JSON.parse(l))
          .filter((entry) => 'method' in entry)
          .map((entry) => entry.status);
      for (let i = 0; i < 40 && statuses().length < 2; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(statuses()).toEqual([200, 304]);

      await server.stop();
      stopped = true;
      const fallback = await client.plans('running');
      expect(fallback.stale).toBe(true);
      expect(fallback.catalog).toEqual(first.catalog);
      expect(fallback.failure).toMatch(/ECONNREFUSED|connect/);
      await expect(client.plans('strength')).rejects.toThrow(NoCatalogError);
    } finally {
      if (!stopped) await server.stop();
    }
  });

  it('reports the problem type of a refused call when it has nothing cached', async () => {
    const server = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    try {
      const client = new CatalogClient(server.url, world.keys.expired);
      await expect(client.plans()).rejects.toThrow(
        'no catalog yet: 401 tag:training-plan-catalog,2026:problem:unauthorized',
      );
    } finally {
      await server.stop();
    }
  });
});
