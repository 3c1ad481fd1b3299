/**
 * Helpers shared by the two CloudFront Functions. This code runs in cloudfront-js-2.0: no destructuring,
 * spread, classes, for-of, optional chaining or `??` (the bundle check refuses them), and it must stay small.
 */
import cf from 'cloudfront';
import type { Fields } from './event.ts';

const kvs = cf.kvs();

/** Reads a key from the store; a missing key (the store rejects) or a failing read gives null. */
export async function read(key: string): Promise<string | null> {
  try {
    return await kvs.get(key);
  } catch (_error) {
    return null;
  }
}

/**
 * Records `value` (nothing for null) in this request's access-log record (`viewer-request-log-data`; docs/decisions.md#usage) and
 * returns `result`, so that a decision and its record are one expression. Recording never decides an answer:
 * on a runtime without `cf.logCustomData` (new in 2026), or one where it throws, the answer is the same and
 * nothing is recorded (an exception here would be CloudFront's 503 for every request).
 */
export function logged<T>(value: string | null, result: T): T {
  try {
    if (value) cf.logCustomData(value);
  } catch (_error) {}
  return result;
}

/** Adds `Access-Control-Allow-Origin` when an origin is configured. */
export function addCors(headers: Fields, origin: string | null): Fields {
  if (origin) headers['access-control-allow-origin'] = { value: origin };
  return headers;
}

/** Sets every header of `values` (a kind of answer's headers, contract/index.ts) on `headers`. */
export function setHeaders(headers: Fields, values: Readonly<Record<string, string>>): Fields {
  const names = Object.keys(values);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    headers[name] = { value: values[name] as string };
  }
  return headers;
}
