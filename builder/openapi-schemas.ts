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

/** The generated partner/schema.ts, relative to the repository root. */
export const PARTNER_SCHEMAS = 'partner/schema.ts';

/** What the printer reads of a zod schema's definition (zod's `_zod.def`): the kinds the model publishes. */
interface SchemaDef {
  readonly type: string;
  readonly format?: string;
  readonly checks?: readonly { readonly _zod: { readonly def: CheckDef } }[];
  readonly entries?: Readonly<Record<string, string | number>>;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  /** A date-time's options, and a URL's. */
  readonly offset?: boolean;
  readonly local?: boolean;
  readonly precision?: number | null;
  readonly hostname?: RegExp;
  readonly protocol?: RegExp;
  readonly normalize?: boolean;
}
interface CheckDef {
  readonly check: string;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly value?: number;
  readonly inclusive?: boolean;
}

const quoted = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
const comment = (text: string, indent: string) => `${indent}/** ${text.replaceAll('*/', '*\\/')} */\n`;

/**
 * The zod expression of `schema`, as code: a schema with an `id` (its name in the document) other than `top` is
 * referred to by name, and added to `named`. Throws on anything the printer does not know, so the kit never
 * silently checks less than the model says.
 */
function zodSource(schema: z.ZodType, named: Map<string, z.ZodType>, indent: string, top = false): string {
  const meta = z.globalRegistry.get(schema);
  if (!top && typeof meta?.id === 'string') {
    named.set(meta.id, schema);
    return meta.id;
  }
  const def = schema._zod.def as unknown as SchemaDef;
  const unknown = (what: string) =>
    new Error(`partner schemas: cannot write ${what} (${JSON.stringify(def)})`);
  const checks = def.checks?.map((check) => check._zod.def) ?? [];
  let source: string;
  switch (def.type) {
    case 'object': {
      const fields = Object.entries(def.shape ?? {}).map(([key, field]) => {
        // A schema referred to by name has its description where it is written.
        const { id, description } = z.globalRegistry.get(field) ?? {};
        const text = zodSource(field, named, `${indent}  `);
        const note = description && id === undefined ? comment(description, `${indent}  `) : '';
        return `${note}${indent}  ${key}: ${text},\n`;
      });
      source = `z.object({\n${fields.join('')}${indent}})`;
      break;
    }
    case 'string': {
      if (def.format === 'datetime' && !def.offset && !def.local && def.precision === null)
        source = 'z.iso.datetime()';
      else if (def.format === 'url' && !def.hostname && !def.protocol && !def.normalize) source = 'z.url()';
      else if (def.format === undefined) source = 'z.string()';
      else throw unknown(`the string format ${def.format}`);
      for (const check of checks) {
        if (check.check === 'min_length') source += `.min(${check.minimum})`;
        else if (check.check === 'max_length') source += `.max(${check.maximum})`;
        else if (check.check === 'string_format' && check.format === 'regex' && check.pattern)
          source += `.regex(/${check.pattern.source}/${check.pattern.flags})`;
        else throw unknown(`the string check ${check.check}`);
      }
      break;
    }
    case 'number': {
      if (def.format !== 'safeint') throw unknown(`the number format ${def.format}`);
      source = 'z.int()';
      for (const check of checks) {
        if (check.check === 'greater_than' && check.inclusive) source += `.min(${check.value})`;
        else if (check.check === 'less_than' && check.inclusive) source += `.max(${check.value})`;
        else throw unknown(`the number check ${check.check}`);
      }
      break;
    }
    case 'enum': {
      const values = Object.values(def.entries ?? {}).map((value) =>
        typeof value === 'string' ? quoted(value) : String(value),
      );
      const inline = values.join(', ');
      source =
        inline.length <= 80
          ? `z.enum([${inline}])`
          : `z.enum([\n${values.map((value) => `${indent}  ${value},\n`).join('')}${indent}])`;
      break;
    }
    case 'nullable':
      if (!def.innerType) throw unknown('a nullable without its type');
      source = `${zodSource(def.innerType, named, indent)}.nullable()`;
      break;
    case 'array':
      if (!def.element) throw unknown('an array without its items');
      source = `z.array(${zodSource(def.element, named, indent)})`;
      break;
    default:
      throw unknown(`a ${def.type}`);
  }
  const { id: _id, description: _description, ...rest } = meta ?? {};
  const entries = Object.entries(rest).map(([key, value]) => {
    if (typeof value !== 'string') throw unknown(`the meta ${key}`);
    return `${key}: ${quoted(value)}`;
  });
  if (entries.length > 0) source += `.meta({ ${entries.join(', ')} })`;
  return source;
}

/**
 * The partner kit's zod schemas (partner/schema.ts), written from the model's published schemas: each schema a
 * constant and its type, the schemas it refers to first, the descriptions as comments; and the disciplines.
 */
export function partnerSchemas(): string {
  const written = new Map<string, string>();
  const write = (name: string, schema: z.ZodType) => {
    if (written.has(name)) return;
    const named = new Map<string, z.ZodType>();
    const source = zodSource(schema, named, '', true);
    for (const [other, otherSchema] of named) write(other, otherSchema);
    const description = z.globalRegistry.get(schema)?.description;
    written.set(
      name,
      `${description ? comment(description, '') : ''}export const ${name} = ${source};\nexport type ${name} = z.output<typeof ${name}>;\n`,
    );
  };
  for (const [name, schema] of Object.entries(API_SCHEMAS)) write(name, schema);
  return [
    `// Generated from the catalog model (builder/model.ts) by \`npm run openapi:sync\` (builder/openapi-schemas.ts). Do not edit.`,
    '',
    '/**',
    " * The published schemas (openapi.yaml's `components.schemas`) as zod schemas, so the proxy refuses a body that",
    ' * breaks the contract before it replaces its last good copy.',
    ' */',
    "import { z } from 'zod';",
    '',
    ...written.values(),
    '/** The disciplines, in catalog order. */',
    'export const DISCIPLINES = Discipline.options;',
    '',
  ].join('\n');
}
