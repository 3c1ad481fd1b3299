/**
 * openapi.yaml's `components.schemas` come from the zod model, never by hand: `npm run openapi:sync` writes
 * them, and a test fails when the document and the model drift apart.
 */
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { API_SCHEMAS } from './model.ts';

/** The published schemas as JSON Schema 2020-12 (OpenAPI 3.1's dialect), cross-referenced by `$ref`. */
export function componentSchemas(): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(API_SCHEMAS)) registry.add(schema, { id });
  // Input view: objects do not forbid extra properties, so a partner's validator tolerates additions.
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Record<string, unknown>> };
  const result: Record<string, Record<string, unknown>> = {};
  for (const name of Object.keys(API_SCHEMAS).sort()) {
    const { $schema: _dialect, $id: _id, ...schema } = schemas[name] ?? {};
    result[name] = stripSafeIntegerBounds(schema) as Record<string, unknown>;
  }
  return result;
}

/** Drops zod's `maximum: Number.MAX_SAFE_INTEGER` on integers: true, but noise in a partner's document. */
function stripSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSafeIntegerBounds);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'maximum' && inner === Number.MAX_SAFE_INTEGER) continue;
    out[key] = stripSafeIntegerBounds(inner);
  }
  return out;
}

/** The document with `components.schemas` replaced by the model's; everything else (comments too) kept. */
export function syncOpenApi(text: string): string {
  const document = parseDocument(text);
  if (document.errors.length > 0)
    throw new Error(`openapi.yaml is not valid YAML: ${document.errors[0]?.message}`);
  document.setIn(['components', 'schemas'], document.createNode(componentSchemas()));
  return document.toString({ lineWidth: 0 });
}

/** The TypeScript types a partner generates from the document (openapi-typescript), as committed in partner/api.ts. */
export async function partnerTypes(openapiPath: string): Promise<string> {
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const ast = await openapiTS(new URL(`file://${openapiPath}`));
  return `/**\n * Generated from openapi.yaml by openapi-typescript (npm run openapi:sync). Do not edit.\n */\n\n${astToString(ast)}`;
}
