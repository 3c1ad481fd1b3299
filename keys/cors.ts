/**
 * The one CORS origin (docs/decisions.md#gateway), echoed by the gateway in `Access-Control-Allow-Origin`,
 * which a browser compares with its `Origin` byte for byte: so it is written exactly as a browser sends it.
 */
import { ConfigError } from '../contract/errors.ts';
import { KVS_CORS_ORIGIN } from '../contract/index.ts';
import type { KeyValueStore } from './store.ts';

/** Why `text` is not an origin the gateway may allow, or undefined when it is one. */
export function originProblem(text: string): string | undefined {
  if (text === '*') return 'must be one exact origin; * (any origin) is never allowed';
  if (text.toLowerCase() === 'null') return 'the null origin (sandboxed pages, files) is never allowed';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an origin: scheme://host[:port], such as https://partner.example';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must start with https:// or http://';
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password';
  const host = url.hostname;
  if (host.includes('*'))
    return 'must be one exact origin; a wildcard (*) is never allowed, name the one origin the pages are served from';
  const bare = host.replace(/\.+$/, '');
  if (bare === '' || bare.startsWith('.') || bare.includes('..'))
    return 'must have a host name with no empty label (no two dots in a row, no leading dot)';
  if (bare !== host) {
    const port = url.port === '' ? '' : `:${url.port}`;
    return `must not end the host with a dot (browsers send the name without it): ${new URL(`${url.protocol}//${bare}${port}`).origin}`;
  }
  const scheme = `${url.protocol}//`;
  if (text.slice(0, scheme.length).toLowerCase() === scheme) {
    const rest = text.slice(scheme.length);
    const tail = rest.slice(Math.max(0, rest.search(/[/?#]/)));
    if (tail === '/') return `must not end with a slash: ${url.origin}`;
    if (/^[/?#]/.test(tail))
      return `must be scheme://host[:port] with no path, query or fragment: ${url.origin}`;
  }
  if (text !== url.origin)
    return `must be written exactly as browsers send it (lowercase, no default port, punycode host): ${url.origin}`;
  return undefined;
}

/** Sets the one allowed origin, or with none turns CORS off. Returns the origin it replaced, if any. */
export async function setCorsOrigin(store: KeyValueStore, origin?: string): Promise<string | undefined> {
  const problem = origin === undefined ? undefined : originProblem(origin);
  if (problem !== undefined) throw new ConfigError(`origin ${JSON.stringify(origin)}: ${problem}`);
  return store.update((entries) => {
    const previous = entries.get(KVS_CORS_ORIGIN);
    if (origin === undefined) entries.delete(KVS_CORS_ORIGIN);
    else entries.set(KVS_CORS_ORIGIN, origin);
    return previous;
  });
}

/** The allowed origin, or undefined when CORS is off. */
export async function showCorsOrigin(store: KeyValueStore): Promise<string | undefined> {
  return (await store.read()).get(KVS_CORS_ORIGIN);
}
