import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CATALOGS, catalogFile, PROBLEMS, problemDocument } from '../contract/index.ts';
import { ROOT } from '../testing/cli.ts';
import { schemaErrors } from '../testing/openapi.ts';
import { createTestWorld } from '../testing/world.ts';
import { PARTNER_SCHEMAS, partnerSchemas, partnerTypes, syncOpenApi } from './openapi-schemas.ts';

const CATALOG = ['components', 'schemas', 'Catalog'];

describe('openapi.yaml and the model', () => {
  it('publishes exactly the schemas of the zod model (run npm run openapi:sync after changing the model)', async () => {
    const text = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');
    expect(syncOpenApi(text)).toBe(text);
  });

  it('ships partner types that are what openapi-typescript generates from it (npm run openapi:sync)', async () => {
    const committed = await readFile(join(ROOT, 'partner/api.ts'), 'utf8');
    expect(await partnerTypes(join(ROOT, 'openapi.yaml'))).toBe(committed);
  });

  it('ships partner schemas that are what the model writes (npm run openapi:sync)', async () => {
    const committed = await readFile(join(ROOT, PARTNER_SCHEMAS), 'utf8');
    expect(partnerSchemas()).toBe(committed);
  });

  it('lists every problem type the service answers with', async () => {
    const text = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');
    for (const problem of Object.values(PROBLEMS)) expect(text).toContain(problem.type);
  });

  it('shows, in each example of a problem answer, the document the service sends', async () => {
    const document = parse(await readFile(join(ROOT, 'openapi.yaml'), 'utf8')) as {
      components: { responses: Record<string, { content?: Record<string, { example?: unknown }> }> };
    };
    const examples = Object.entries(document.components.responses).flatMap(([name, response]) => {
      const example = response.content?.['application/problem+json']?.example;
      return example === undefined ? [] : [[name, example as { type: string }] as const];
    });
    expect(examples.map(([name]) => name)).toContain('InvalidDiscipline');
    for (const [name, example] of examples) {
      const problem = Object.values(PROBLEMS).find((p) => p.type === example.type);
      expect(example, name).toEqual(problem === undefined ? undefined : JSON.parse(problemDocument(problem)));
    }
  });
});

describe('the builder output against the published Catalog schema', () => {
  it('validates every catalog file of a fixtures build', async () => {
    // The test world's live build is the fixtures published (testing/world.ts): built once per process.
    const world = await createTestWorld();
    try {
      expect(CATALOGS.length).toBeGreaterThanOrEqual(3);
      for (const name of CATALOGS) {
        const catalog = JSON.parse(world.objects[name].toString('utf8'));
        expect(catalog.plans.length, catalogFile(name)).toBeGreaterThan(0);
        expect(schemaErrors(CATALOG, catalog), catalogFile(name)).toEqual([]);
      }
    } finally {
      await world.remove();
    }
  });

  it('rejects a catalog that breaks the contract', async () => {
    const plan = {
      id: '0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
      title: 'x',
      summary: null,
      coverUrl: null,
      level: 'none',
      discipline: 'running',
      disciplineLabel: 'Outdoor',
      weeksCount: 1,
      daysPerWeek: null,
      estMinutesPerSession: null,
      webUrl: 'http://127.0.0.1:8787/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
      appUrl: 'trainingplans://plan/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
    };
    const generatedAt = '2026-11-21T08:00:00.000Z';
    expect(schemaErrors(CATALOG, { generatedAt, plans: [plan] })).toEqual([]);
    expect(schemaErrors(CATALOG, { generatedAt, plans: [{ ...plan, level: 'expert' }] })).not.toEqual([]);
    // http only on a loopback host: a local stack's own covers.
    for (const coverUrl of [
      'http://x.example/a.jpg',
      'http://127.0.0.1.example/a.png',
      'ftp://127.0.0.1/a.png',
    ])
      expect(schemaErrors(CATALOG, { generatedAt, plans: [{ ...plan, coverUrl }] }), coverUrl).not.toEqual(
        [],
      );
    for (const coverUrl of ['http://127.0.0.1:8787/_local/covers/a.png', 'http://localhost/a.png'])
      expect(schemaErrors(CATALOG, { generatedAt, plans: [{ ...plan, coverUrl }] }), coverUrl).toEqual([]);
    expect(schemaErrors(CATALOG, { generatedAt: 'yesterday', plans: [] })).not.toEqual([]);
    const { daysPerWeek: _omitted, ...missing } = plan;
    expect(schemaErrors(CATALOG, { generatedAt, plans: [missing] })).not.toEqual([]);
  });
});
