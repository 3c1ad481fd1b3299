import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpRequest, ROOT, runCatalog, startCatalog } from '../../testing/cli.ts';
import { freePort } from '../../testing/postgres.ts';
import { useScratchDir } from '../../testing/scratch.ts';

const READY = /Local stack ready on (http:\/\/\S+)/;

describe('catalog start (npm start)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-start-' });

  it('refuses a port in use with one clear line, before building or writing anything', async () => {
    const taken: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
    );
    try {
      const result = await runCatalog(['start', '--port', String(port)], { cwd: scratch.dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `catalog: 127.0.0.1:${port} is in use (is the local stack already running?); stop it, or pass another port\n`,
      );
      await expect(stat(join(scratch.dir, '.catalog'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('serves on the port and host it is given (or CATALOG_PORT), and a second start leaves the first untouched', async () => {
    const port = await freePort();
    const first = await startCatalog(['start'], {
      ready: READY,
      cwd: scratch.dir,
      env: { CATALOG_PORT: String(port) },
    });
    try {
      expect(first.url).toBe(`http://127.0.0.1:${port}`);
      const key = /dev key[^:]*: (tpc_\S+)/.exec(first.lines.join('\n'))?.[1] ?? '';
      const catalog = await httpRequest(first.url, {
        method: 'GET',
        target: '/api/plans?discipline=running',
        headers: [['X-Api-Key', key]],
      });
      expect(catalog.status).toBe(200);
      const plan = JSON.parse(catalog.body.toString('utf8')).plans[0];
      expect(plan.webUrl).toBe(`http://127.0.0.1:${port}/plans/${plan.id}`);
      // The banner names a plan's page, which opens without a key.
      const page =
        /a plan's page, for people \(no key\): (http:\/\/\S+)/.exec(first.lines.join('\n'))?.[1] ?? '';
      expect(page).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/plans/[0-9a-f-]{36}$`));
      expect((await httpRequest(first.url, { method: 'GET', target: new URL(page).pathname })).status).toBe(
        200,
      );
      const builds = await readdir(join(scratch.dir, '.catalog/origin/builds'));
      expect(builds).toHaveLength(1);
      const store = await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8');

      const second = await runCatalog(['start', '--port', String(port)], { cwd: scratch.dir });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`127.0.0.1:${port} is in use`);
      expect(await readdir(join(scratch.dir, '.catalog/origin/builds'))).toEqual(builds);
      expect(await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8')).toBe(store);

      // On another port: the same .catalog/, so refused at once, before anything is built or written.
      const other = await runCatalog(['start', '--port', String(await freePort())], { cwd: scratch.dir });
      expect(other.code).toBe(1);
      expect(other.stderr).toBe(
        `catalog: the local stack is already running: process ${first.pid} serves http://127.0.0.1:${port} from .catalog/ (one local stack per checkout); stop it first, or use it\n`,
      );
      expect(await readdir(join(scratch.dir, '.catalog/origin/builds'))).toEqual(builds);
      expect(await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8')).toBe(store);
      const still = await httpRequest(first.url, {
        method: 'GET',
        target: '/api/plans?discipline=running',
        headers: [['X-Api-Key', key]],
      });
      expect(still.status).toBe(200);
    } finally {
      await first.stop();
    }
    // Stopped, it leaves no claim on the local stack.
    await expect(stat(join(scratch.dir, '.catalog/stack.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes over the claim of a start that was killed (kill -9)', async () => {
    const killed = await startCatalog(['start', '--port', String(await freePort())], {
      ready: READY,
      cwd: scratch.dir,
    });
    process.kill(killed.pid, 'SIGKILL');
    await killed.stop();
    expect(await readFile(join(scratch.dir, '.catalog/stack.json'), 'utf8')).toContain(`"pid":${killed.pid}`);
    const port = await freePort();
    const next = await startCatalog(['start', '--port', String(port)], { ready: READY, cwd: scratch.dir });
    try {
      expect(next.url).toBe(`http://127.0.0.1:${port}`);
    } finally {
      await next.stop();
    }
  });

  it("serves the fixtures' covers itself: coverUrl on its own origin, the PNG from fixtures/covers, on the page too", async () => {
    const port = await freePort();
    const start = await startCatalog(['start', '--port', String(port)], { ready: READY, cwd: scratch.dir });
    try {
      const key = /dev key[^:]*: (tpc_\S+)/.exec(start.lines.join('\n'))?.[1] ?? '';
      const answer = await httpRequest(start.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      const plans = JSON.parse(answer.body.toString('utf8')).plans as {
        webUrl: string;
        coverUrl: string | null;
      }[];
      const covered = plans.filter((plan) => plan.coverUrl !== null);
      expect(covered.length).toBeGreaterThanOrEqual(6);
      for (const plan of covered) {
        const url = new URL(plan.coverUrl ?? '');
        expect(url.origin).toBe(start.url);
        expect(url.pathname).toMatch(/^\/_local\/covers\/[a-z-]+\.png$/);
        const image = await httpRequest(start.url, { method: 'GET', target: url.pathname });
        expect(image.status, url.pathname).toBe(200);
        expect(image.headers['content-type']).toBe('image/png');
        expect(
          image.body.equals(
            await readFile(join(ROOT, 'fixtures', 'covers', url.pathname.split('/').pop() ?? '')),
          ),
        ).toBe(true);
        const page = await httpRequest(start.url, { method: 'GET', target: new URL(plan.webUrl).pathname });
        expect(page.body.toString('utf8')).toContain(`<img src="${plan.coverUrl}" alt=""`);
      }
      for (const target of [
        '/_local/covers/none.png',
        '/_local/covers/../kvs.json',
        '/_local/covers/%2e%2e%2fkvs.json',
      ])
        expect((await httpRequest(start.url, { method: 'GET', target })).status, target).toBe(404);
    } finally {
      await start.stop();
    }
  });
});
