import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OPENAPI_DOCUMENT } from '../testing/openapi.ts';
import { Catalog, Discipline, Level, Plan, Problem } from './schema.ts';

/** The schemas under the names the document gives them. */
const DOCUMENT_SCHEMAS = { Catalog, Plan, Level, Discipline, Problem };

/** A JSON Schema without what does not change which values are valid (texts, zod's safe-integer bound). */
function meaningOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(meaningOf);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(
        ([key, inner]) => key !== 'description' && !(key === 'maximum' && inner === Number.MAX_SAFE_INTEGER),
      )
      .map(([key, inner]) => [key, meaningOf(inner)]),
  );
}

describe("the proxy's schemas", () => {
  it('say exactly what openapi.yaml says (descriptions aside)', () => {
    const registry = z.registry<{ id: string }>();
    for (const [id, schema] of Object.entries(DOCUMENT_SCHEMAS)) registry.add(schema, { id });
    const { schemas } = z.toJSONSchema(registry, {
      target: 'draft-2020-12',
      io: 'input',
      uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, Record<string, unknown>> };
    const ours = Object.fromEntries(
      Object.entries(schemas).map(([name, { $schema: _s, $id: _i, ...schema }]) => [name, meaningOf(schema)]),
    );
    const documented = (OPENAPI_DOCUMENT.components as { schemas: Record<string, unknown> }).schemas;
    expect(ours).toEqual(meaningOf(documented));
  });

  it('keep what the service may add: extra fields are allowed, as the document allows them', () => {
    const catalog = { generatedAt: '2026-11-21T08:00:00.000Z', plans: [], nextField: 1 };
    expect(Catalog.safeParse(catalog).success).toBe(true);
    expect(Catalog.safeParse({ ...catalog, generatedAt: 'yesterday' }).success).toBe(false);
  });
});
