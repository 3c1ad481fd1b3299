/**
 * Checks answers against openapi.yaml with a JSON Schema 2020-12 validator (ajv): the status is documented for
 * the request, the documented required headers are there with valid values, the Content-Type is exactly a
 * documented one (parameters such as `charset` included), and the body is valid for it. Test support only.
 *
 * The document's operations are everything the service does; the answers to every other request (other paths,
 * refused methods) are described once in its text and `components.responses`. {@link NOT_OPERATIONS} is that
 * text as a table, and a test checks that the text names each component the table uses.
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

/** The HTTP methods an OpenAPI path item may hold as operations. */
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The answers the document gives in its text rather than as operations, by `components.responses` name:
 * the 404 of a path that is no operation's (HTML under `/plans/`, a problem elsewhere), the 405 of a method a
 * documented path refuses, and the preflight of `/openapi.yaml`.
 */
export const NOT_OPERATIONS = {
  otherPath: (path: string) => (path.startsWith('/plans/') ? 'PlanPageNotFound' : 'NotFound'),
  refusedMethod: {
    '/api/plans': 'MethodNotAllowed',
    '/openapi.yaml': 'MethodNotAllowed',
    '/plans/{id}': 'PlanPageMethodNotAllowed',
    '/': 'PlanPageMethodNotAllowed',
  } as Readonly<Record<string, string>>,
  /** Methods a path answers although they are not its operations, with the status and the answer. */
  alsoAnswered: [{ path: '/openapi.yaml', method: 'OPTIONS', status: 204, response: 'Preflight' }] as const,
} as const;

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

/** The documented path template a request path falls under (`/plans/{id}` for `/plans/abc`), if any. */
export function templateOf(path: string): string | undefined {
  return Object.keys(OPENAPI_DOCUMENT.paths as Json).find((template) => {
    const pattern = template
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    return new RegExp(`^${pattern}$`).test(path);
  });
}

/** The operations (lowercase methods) the document lists for a path template. */
export function operationsOf(template: string): string[] {
  const item = (OPENAPI_DOCUMENT.paths as Json)[template] as Json;
  return OPERATION_METHODS.filter((method) => method in item);
}

const component = (name: string) =>
  resolve({ $ref: `#/components/responses/${name}` }, ['components', 'responses', name]);

/** The documented response for a request and a status, or why there is none. */
function documentedResponse(
  method: string,
  path: string,
  status: number,
): { node: Json; at: string[] } | string {
  const template = templateOf(path);
  if (template === undefined) {
    // Under /plans/ the pages' method rule comes first: anything but GET and HEAD is 405.
    if (path.startsWith('/plans/') && method !== 'GET' && method !== 'HEAD') {
      if (status !== 405) return `${method} ${path} answers 405 (got ${status})`;
      return component(NOT_OPERATIONS.refusedMethod['/plans/{id}'] ?? '');
    }
    if (status !== 404) return `${path} is not documented, so only 404 may answer it (got ${status})`;
    return component(NOT_OPERATIONS.otherPath(path));
  }
  const operation = ((OPENAPI_DOCUMENT.paths as Json)[template] as Json)[method.toLowerCase()] as
    | Json
    | undefined;
  if (operation && OPERATION_METHODS.includes(method.toLowerCase())) {
    const responses = operation.responses as Json;
    const documented = responses[String(status)] ?? responses.default;
    if (!documented) return `status ${status} is not documented for ${method} ${template}`;
    return resolve(documented, ['paths', template, method.toLowerCase(), 'responses', String(status)]);
  }
  const also = NOT_OPERATIONS.alsoAnswered.find((a) => a.path === template && a.method === method);
  if (also) {
    if (status !== also.status) return `${method} ${template} answers ${also.status} (got ${status})`;
    return component(also.response);
  }
  const refusal = NOT_OPERATIONS.refusedMethod[template];
  if (refusal === undefined) return `${method} ${template} is not documented`;
  if (status !== 405) return `${method} is refused on ${template}, so only 405 may answer it (got ${status})`;
  return component(refusal);
}

/** A media type with its parameters, lowercase and without spaces: `application/json;charset=utf-8`. */
function normalizedType(value: string): string {
  return value
    .split(';')
    .map((part) =>
      part
        .trim()
        .toLowerCase()
        .replace(/\s*=\s*/, '='),
    )
    .filter(Boolean)
    .join(';');
}

export interface DocumentedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Every way an answer departs from the document (empty when it conforms). */
export function conformanceProblems(method: string, path: string, answer: DocumentedAnswer): string[] {
  const response = documentedResponse(method, path, answer.status);
  if (typeof response === 'string') return [response];
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
  // The document says where CORS headers appear, and so where they never do (the CDN's error pages).
  const declared = new Set(
    Object.keys((response.node.headers ?? {}) as Json).map((name) => name.toLowerCase()),
  );
  for (const name of Object.keys(answer.headers))
    if (name.startsWith('access-control-') && !declared.has(name))
      problems.push(`header ${name} is sent but not documented for this answer`);
  const content = response.node.content as Json | undefined;
  if (!content) {
    if (answer.body.length > 0 && method !== 'HEAD') problems.push('a body where none is documented');
    return problems;
  }
  if (method === 'HEAD') return problems;
  const sent = answer.headers['content-type'] ?? '';
  const type = Object.keys(content).find((key) => normalizedType(key) === normalizedType(sent));
  if (type === undefined)
    return [...problems, `content type ${sent} is not documented (${Object.keys(content).join(', ')})`];
  const encoding = answer.headers['content-encoding'];
  const raw =
    encoding === 'gzip'
      ? gunzipSync(answer.body)
      : encoding === 'br'
        ? brotliDecompressSync(answer.body)
        : answer.body;
  const text = raw.toString('utf8');
  let body: unknown = text;
  if (/[/+]json(;|$)/.test(normalizedType(type))) {
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
