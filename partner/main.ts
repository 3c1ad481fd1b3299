#!/usr/bin/env node
/**
 * Runs the proxy on its own, outside the catalog repository (the package's `catalog-proxy`):
 *
 *   CATALOG_PARTNER_KEY=tpc_… npx catalog-proxy --upstream https://catalog.example.com [--port 8788]
 *     [--host 127.0.0.1] [--cache-file ./catalog-cache.json] [--refresh-seconds N] [--changes-kept N]
 *     [--notify https://app.example.com/hooks/catalog]
 *
 * The key comes only from the environment: a flag would show in `ps` and in shell history. In the catalog
 * repository, `catalog proxy` runs the same proxy with the repository's settings.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_CHANGES_KEPT, MIN_REFRESH_SECONDS, startProxy } from './proxy.ts';

function fail(message: string): never {
  process.stderr.write(`catalog-proxy: ${message}\n`);
  process.exit(1);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        upstream: { type: 'string' },
        port: { type: 'string', default: '8788' },
        host: { type: 'string', default: '127.0.0.1' },
        'cache-file': { type: 'string', default: 'catalog-cache.json' },
        'refresh-seconds': { type: 'string' },
        'changes-kept': { type: 'string', default: String(DEFAULT_CHANGES_KEPT) },
        notify: { type: 'string' },
      },
      strict: true,
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();

/** A flag holding a whole number from `min` to `max`, or a failure naming it. */
function whole(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    fail(`--${flag} "${text}": must be a whole number from ${min} to ${max}`);
  return value;
}

const key = process.env.CATALOG_PARTNER_KEY ?? '';
if (key === '') fail('set CATALOG_PARTNER_KEY to your API key (it is never read from a flag)');
const upstream = values.upstream ?? process.env.CATALOG_UPSTREAM ?? '';
if (!/^https?:\/\/[^/?#@]+\/?$/.test(upstream))
  fail('--upstream must be the service base URL, http(s)://host[:port] (no user:password@)');
const port = whole('port', values.port, 0, 65_535);
const refreshSeconds =
  values['refresh-seconds'] === undefined
    ? undefined
    : whole('refresh-seconds', values['refresh-seconds'], MIN_REFRESH_SECONDS, 86_400);
const changesKept = whole('changes-kept', values['changes-kept'], 1, 10_000);
const notify = values.notify;

// The proxy refuses a bad notify URL (or upstream), said in one line.
const proxy = await startProxy({
  upstream: upstream.replace(/\/$/, ''),
  key,
  port,
  host: values.host,
  cacheFile: values['cache-file'],
  changesKept,
  ...(refreshSeconds === undefined ? {} : { refreshSeconds }),
  ...(notify === undefined ? {} : { notify: { url: notify } }),
}).catch((error: Error) => fail(error.message));
process.stderr.write(`catalog-proxy: listening on ${proxy.url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    proxy.close().then(() => process.exit(0));
  });
