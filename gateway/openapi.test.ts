import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KVS_LIVE_BUILD } from '../contract/index.ts';
import { httpRequest, type ServeProcess, startServe } from '../testing/cli.ts';
import { conformanceProblems } from '../testing/openapi.ts';
import { createTestWorld, resolveCase, type TestWorld } from '../testing/world.ts';
import { REQUEST_CASES } from './cases.ts';

/** The path a request names, as OpenAPI sees it (no query string). */
const pathOf = (target: string) => target.split('?')[0] ?? target;

describe('every answer of catalog serve conforms to openapi.yaml', () => {
  let world: TestWorld;
  let servers: Record<'plain' | 'cors', ServeProcess>;
  beforeAll(async () => {
    world = await createTestWorld();
    servers = {
      plain: await startServe(['--origin', world.originDir, '--store', world.stores.plain]),
      cors: await startServe(['--origin', world.originDir, '--store', world.stores.cors]),
    };
  });
  afterAll(async () => {
    await Promise.all([servers?.plain.stop(), servers?.cors.stop()]);
    await world?.remove();
  });

  it.each(REQUEST_CASES.map((c) => [`${c.status} ${c.name}`, c] as const))('%s', async (_name, testCase) => {
    const request = resolveCase(testCase, world);
    const answer = await httpRequest(servers[testCase.cors ? 'cors' : 'plain'].url, request);
    expect(answer.status).toBe(testCase.status);
    expect(conformanceProblems(request.method, pathOf(request.target), answer)).toEqual([]);
  });

  it('documents the 500 answer the edge gives when the live build names an object that is missing', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    // A store whose pointer names a build the origin does not hold: every catalog request misses at the origin.
    const dir = await mkdtemp(join(tmpdir(), 'catalog-openapi-'));
    const { readFile } = await import('node:fs/promises');
    const store = JSON.parse(await readFile(world.stores.plain, 'utf8'));
    const file = join(dir, 'store.json');
    const missing = '20260101T000000Z-0000abcd';
    const data = store.data.map((entry: { key: string; value: string }) =>
      entry.key === KVS_LIVE_BUILD ? { ...entry, value: missing } : entry,
    );
    await writeFile(file, JSON.stringify({ ...store, data }));
    const server = await startServe(['--origin', world.originDir, '--store', file]);
    try {
      const answer = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans?discipline=running',
        headers: [['X-Api-Key', world.keys.valid]],
      });
      expect(answer.status).toBe(500);
      expect(conformanceProblems('GET', '/api/plans', answer)).toEqual([]);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('would notice an answer that breaks the document', () => {
    const catalog = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"plans":[]}'),
    };
    const problems = conformanceProblems('GET', '/api/plans', catalog);
    expect(problems.join('\n')).toMatch(/required header Cache-Control is missing/);
    expect(problems.join('\n')).toMatch(/generatedAt/);
    expect(conformanceProblems('GET', '/api/plans', { ...catalog, status: 418 })).toEqual([
      'status 418 is not documented for GET /api/plans',
    ]);
  });
});
