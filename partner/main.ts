/**
 * Runs the proxy on its own, outside the catalog repository:
 *
 *   CATALOG_PARTNER_KEY=tpc_… node main.ts --upstream https://catalog.example.com [--port 8788]
 *     [--host 127.0.0.1] [--cache-file ./catalog-cache.json]
 *
 * (Node 22.18 or later runs the TypeScript directly; on Node 20 use `npx tsx main.ts …`.) The key comes only
 * from the environment: a flag would show in `ps` and in shell history.
 */
import { parseArgs } from 'node:util';
import { startProxy } from './proxy.ts';

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
      },
      strict: true,
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();

const key = process.env.CATALOG_PARTNER_KEY ?? '';
if (key === '') fail('set CATALOG_PARTNER_KEY to your API key (it is never read from a flag)');
const upstream = values.upstream ?? process.env.CATALOG_UPSTREAM ?? '';
if (!/^https?:\/\/[^/?#]+\/?$/.test(upstream))
  fail('--upstream must be the service base URL, http(s)://host[:port]');
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535)
  fail('--port must be a whole number from 0 to 65535');

const proxy = await startProxy({
  upstream: upstream.replace(/\/$/, ''),
  key,
  port,
  host: values.host,
  cacheFile: values['cache-file'],
});
process.stderr.write(`catalog-proxy: listening on ${proxy.url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    proxy.close().then(() => process.exit(0));
  });
