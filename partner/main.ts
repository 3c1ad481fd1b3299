#!/usr/bin/env node
/**
 * `catalog-proxy`, the kit's proxy on its own (cli.ts `catalogProxy`; `--help` says everything):
 *
 *   CATALOG_PARTNER_KEY=tpc_… npx catalog-proxy --upstream https://catalog.example.com [--port 8788]
 *
 * Stops on SIGTERM or SIGINT, exit 0. In the catalog repository, `catalog proxy` runs the same proxy with the
 * repository's settings.
 */
import { catalogProxy } from './cli.ts';

const io = {
  env: process.env,
  stdout: (text: string) => process.stdout.write(text),
  stderr: (text: string) => process.stderr.write(text),
};
const code = await catalogProxy(process.argv.slice(2), io, (proxy) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      proxy.close().then(() => process.exit(0));
    });
});
if (code !== 0) process.exit(code);
