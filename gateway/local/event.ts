/**
 * CloudFront Functions events from raw HTTP requests, shaped as CloudFront shapes them (gateway/README.md). Field
 * maps have a null prototype and are read through own properties only: `__proto__` is a name like any other.
 */
import type { CloudFrontEvent, CloudFrontResponse, Field, Fields } from '../functions/event.ts';

/** A request as it came off the wire: its target as sent, its headers as Node's `rawHeaders`. */
export interface RawRequest {
  readonly method: string;
  readonly target: string;
  readonly rawHeaders: readonly string[];
  readonly remoteAddress: string;
}

/** Hop-by-hop headers: they concern one connection, and CloudFront does not pass them to functions. */
const HOP_BY_HOP = new Set(
  'connection keep-alive proxy-connection te trailer transfer-encoding upgrade'.split(' '),
);

/** An empty field map with no prototype, so that any name is just a key. */
function emptyFields(): Fields {
  return Object.create(null) as Fields;
}

/** The field of that name, if the map has one of its own. */
function fieldOf(fields: Fields, name: string): Field | undefined {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

function add(fields: Fields, name: string, value: string): void {
  const existing = fieldOf(fields, name);
  if (!existing) fields[name] = { value };
  else {
    if (!Object.hasOwn(existing, 'multiValue')) existing.multiValue = [{ value: existing.value }];
    existing.multiValue?.push({ value });
  }
}

/** Splits a request target into the path and the raw query string. */
function splitTarget(target: string): { uri: string; query: string } {
  // Absolute-form: the path starts after the authority (`/` when there is none).
  const authority = /^https?:\/\/[^/?]*/i.exec(target);
  let pathAndQuery = authority ? target.slice(authority[0].length) : target;
  if (authority && !pathAndQuery.startsWith('/')) pathAndQuery = `/${pathAndQuery}`;
  const question = pathAndQuery.indexOf('?');
  if (question === -1) return { uri: pathAndQuery, query: '' };
  return { uri: pathAndQuery.slice(0, question), query: pathAndQuery.slice(question + 1) };
}

/** Adds the `name=value` pairs of a query string or cookie header (names and values not decoded). */
function addPairs(fields: Fields, text: string, separator: '&' | ';'): Fields {
  for (const pair of text.split(separator)) {
    // Cookie pairs are separated by `; `; query parameters are taken exactly as sent.
    const part = separator === ';' ? pair.trim() : pair;
    if (part === '') continue;
    const equals = part.indexOf('=');
    if (equals === -1) add(fields, part, '');
    else add(fields, part.slice(0, equals), part.slice(equals + 1));
  }
  return fields;
}

/** The viewer-request event for a raw request. */
export function viewerRequestEvent(raw: RawRequest, requestId: string): CloudFrontEvent {
  const { uri, query } = splitTarget(raw.target);
  const headers = emptyFields();
  const cookies = emptyFields();
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const name = (raw.rawHeaders[i] as string).toLowerCase();
    const value = raw.rawHeaders[i + 1] as string;
    if (name === 'cookie') addPairs(cookies, value, ';');
    else if (!HOP_BY_HOP.has(name)) add(headers, name, value);
  }
  return {
    version: '1.0',
    context: {
      distributionDomainName: 'localhost',
      distributionId: 'LOCAL',
      eventType: 'viewer-request',
      requestId,
    },
    viewer: { ip: raw.remoteAddress },
    request: { method: raw.method, uri, querystring: addPairs(emptyFields(), query, '&'), headers, cookies },
  };
}

/** The viewer-response event: a request (as the viewer sent it, or as viewer-request left it) and the origin's answer. */
export function viewerResponseEvent(request: CloudFrontEvent, response: CloudFrontResponse): CloudFrontEvent {
  return { ...request, context: { ...request.context, eventType: 'viewer-response' }, response };
}

/** Every value of the named field (none when the map has no such field of its own). */
export function values(fields: Fields, name: string): string[] {
  const field = fieldOf(fields, name);
  if (!field) return [];
  const multiValue = Object.hasOwn(field, 'multiValue') ? field.multiValue : undefined;
  return multiValue ? multiValue.map((v) => v.value) : [field.value];
}
