#!/usr/bin/env node
/**
 * `catalog-check`, the kit's check of the service with the partner's own key (cli.ts `catalogCheck`; `--help`
 * says everything):
 *
 *   CATALOG_PARTNER_KEY=tpc_… npx catalog-check --upstream https://catalog.example.com
 */
import { catalogCheck } from './cli.ts';

process.exitCode = await catalogCheck(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
