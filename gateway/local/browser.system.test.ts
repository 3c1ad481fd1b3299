/**
 * CORS as a browser enforces it: Debian's Chromium (driven by playwright-core) on a page of one origin calls
 * `catalog serve` on another with `X-Api-Key`. By default the browser refuses although the server answered
 * the preflight; `catalog cors set` allows exactly one origin, replacing the one before; `cors clear` closes
 * it again. Runs in `npm run test:system` (`.ci/run` installs chromium).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../testing/chromium.ts';
import { runCatalog, type ServeProcess, scratchDir, startServe } from '../../testing/cli.ts';
import { createTestWorld, type TestWorld } from '../../testing/world.ts';

/** A page server: any path answers the same small page; its origin is `http://127.0.0.1:<port>`. */
async function pageServer(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>partner page</title><p>partner page</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('a browser calling the API from another origin', () => {
  let world: TestWorld;
  let edge: ServeProcess;
  let context: BrowserContext;
  let profile: { dir: string; remove: () => Promise<void> };
  const pages: { origin: string; server: Server }[] = [];
  let storePath: string;

  beforeAll(async () => {
    world = await createTestWorld();
    storePath = world.stores.plain;
    edge = await startServe(['--origin', world.originDir, '--store', storePath]);
    pages.push(await pageServer(), await pageServer());
    profile = await scratchDir('catalog-chromium-');
    context = await launchChromium(profile.dir);
  });
  afterAll(async () => {
    await context?.close();
    for (const page of pages) page.server.close();
    await edge?.stop();
    await profile?.remove();
    await world?.remove();
  });

  /** Opens a page on `origin` and fetches the catalog from the edge with the key, as partner code would. */
  async function fetchFrom(
    origin: string,
  ): Promise<{ ok: true; plans: number } | { ok: false; error: string }> {
    const page = await context.newPage();
    try {
      await page.goto(`${origin}/index.html`);
      return await page.evaluate(
        async ({ url, key }) => {
          try {
            // no-store: both pages share one HTTP-cache partition here (same site), and a copy cached under the
            // previous setting would otherwise be read for its 300 s lifetime.
            const init = { headers: { 'X-Api-Key': key }, cache: 'no-store' } as RequestInit;
            const response = await fetch(url, init);
            const body = (await response.json()) as { plans: unknown[] };
            return { ok: true as const, plans: body.plans.length as number };
          } catch (error) {
            return { ok: false as const, error: String(error) };
          }
        },
        { url: `${edge.url}/api/plans?discipline=running`, key: world.keys.valid },
      );
    } finally {
      await page.close();
    }
  }

  /** Retries `fetchFrom` until it gives the wanted outcome (the edge re-reads the store within a second). */
  async function settle(origin: string, allowed: boolean) {
    let outcome = await fetchFrom(origin);
    for (let i = 0; i < 20 && outcome.ok !== allowed; i += 1) {
      await sleep(100);
      outcome = await fetchFrom(origin);
    }
    return outcome;
  }

  const cors = async (...args: string[]) => {
    const result = await runCatalog(['cors', ...args, '--store', storePath]);
    expect(result.code, result.stderr).toBe(0);
  };

  const running = () => JSON.parse(world.objects.running.toString()).plans.length as number;

  it('is refused by default, although the server answered the preflight', async () => {
    const [a] = pages;
    const before = edge.lines.length;
    const outcome = await fetchFrom(a?.origin ?? '');
    expect(outcome).toMatchObject({ ok: false });
    expect((outcome as { error: string }).error).toMatch(/Failed to fetch/);
    await sleep(100);
    const log = edge.lines
      .slice(before)
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(log).toContainEqual(
      expect.objectContaining({ method: 'OPTIONS', path: '/api/plans', status: 204 }),
    );
  });

  it('gets the catalog once the page origin is allowed, and only that origin', async () => {
    const [a, c] = pages as [(typeof pages)[number], (typeof pages)[number]];
    await cors('set', a.origin);
    expect(await settle(a.origin, true)).toEqual({ ok: true, plans: running() });
    expect(await fetchFrom(c.origin)).toMatchObject({ ok: false });
  });

  it('allows only the new origin after another is set (one origin for the whole API)', async () => {
    const [a, c] = pages as [(typeof pages)[number], (typeof pages)[number]];
    await cors('set', c.origin);
    expect(await settle(c.origin, true)).toEqual({ ok: true, plans: running() });
    expect(await settle(a.origin, false)).toMatchObject({ ok: false });
  });

  it('is refused again after cors clear', async () => {
    const [a, c] = pages as [(typeof pages)[number], (typeof pages)[number]];
    await cors('clear');
    expect(await settle(c.origin, false)).toMatchObject({ ok: false });
    expect(await fetchFrom(a.origin)).toMatchObject({ ok: false });
  });
});
