/**
 * Checks answers against openapi.yaml with a JSON Schema 2020-12 validator (ajv): the status is documented for
 * the operation, the documented required headers are there with valid values, and the body is valid for its
 * media type. Test support only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { ROOT } from './cli.ts';

type Json = Record<string, unknown>;

export const OPENAPI_DOCUMENT = parse(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8'), {
  maxAliasCount: -1,
}) as Json;
const DOC_ID = 'https://catalog.invalid/openapi.yaml';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ ...OPENAPI_DOCUMENT, $id: DOC_ID });

function pointer(path: string[]): string {
  return `#/${path.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

function resolve(node: unknown, at: string[]): { node: Json; at: string[] } {
  const ref = (node as Json | undefined)?.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const path = ref
      .slice(2)
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    let target: unknown = OPENAPI_DOCUMENT;
    for (const part of path) target = (target as Json)[part];
    return resolve(target, path);
  }
  return { node: node as Json, at };
}

/** Validates `value` against the schema at a JSON pointer path of the document; returns the errors. */
export function schemaErrors(path: string[], value: unknown): string[] {
  const validate = ajv.getSchema(`${DOC_ID}${pointer(path)}`);
  if (!validate) return [`no schema at ${pointer(path)}`];
  return validate(value)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
}

export interface DocumentedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Every way an answer departs from the document (empty when it conforms). */
export function conformanceProblems(method: string, path: string, answer: DocumentedAnswer): string[] {
  const paths = OPENAPI_DOCUMENT.paths as Json;
  let response: { node: Json; at: string[] };
  if (!(path in paths)) {
    if (answer.status !== 404)
      return [`${path} is not documented, so only 404 may answer it (got ${answer.status})`];
    response = resolve({ $ref: '#/components/responses/NotFound' }, []);
  } else {
    const operation = (paths[path] as Json)[method.toLowerCase()] as Json | undefined;
    if (!operation) return [`${method} ${path} is not documented`];
    const responses = operation.responses as Json;
    const documented = responses[String(answer.status)] ?? responses.default;
    if (!documented) return [`status ${answer.status} is not documented for ${method} ${path}`];
    response = resolve(documented, ['paths', path, method.toLowerCase(), 'responses', String(answer.status)]);
  }
  const problems: string[] = [];
  for (const [name, header] of Object.entries((response.node.headers ?? {}) as Json)) {
    const { node, at } = resolve(header, [...response.at, 'headers', name]);
    const value = answer.headers[name.toLowerCase()];
    if (value === undefined) {
      if (node.required) problems.push(`required header ${name} is missing`);
      continue;
    }
    for (const error of schemaErrors([...at, 'schema'], value)) problems.push(`header ${name}: ${error}`);
  }
  const content = response.node.content as Json | undefined;
  if (!content) {
    if (answer.body.length > 0 && method !== 'HEAD') problems.push('a body where none is documented');
    return problems;
  }
  if (method === 'HEAD') return problems;
  const type = (answer.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  if (!(type in content))
    return [...problems, `content type ${type} is not documented (${Object.keys(content).join(', ')})`];
  const encoding = answer.headers['content-encoding'];
  const raw =
    encoding === 'gzip'
      ? gunzipSync(answer.body)
      : encoding === 'br'
        ? brotliDecompressSync(answer.body)
        : answer.body;
  const text = raw.toString('utf8');
  let body: unknown = text;
  if (type.endsWith('json')) {
    try {
      body = JSON.parse(text);
    } catch {
      return [...problems, 'the body is not JSON'];
    }
  }
  for (const error of schemaErrors([...response.at, 'content', type, 'schema'], body))
    problems.push(`body: ${error}`);
  return problems;
}
