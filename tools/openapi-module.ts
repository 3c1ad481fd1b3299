/**
 * The repository's openapi.yaml as a TypeScript module (`builder/openapi-template.generated.ts`), so every
 * build — the command line, its bundle and the Lambda's — carries the template without a file beside it.
 * `npm run build` regenerates it; a test fails when it is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The generated module, relative to the repository root. */
export const OPENAPI_MODULE = 'builder/openapi-template.generated.ts';

/** The source of the generated module for the given openapi.yaml text. */
export function openapiModuleSource(yaml: string): string {
  const escaped = yaml.replaceAll('\\', '\\\\').replaceAll('`', '\\`').replaceAll('${', '\\${');
  return [
    '// Generated from openapi.yaml by `npm run build` (tools/openapi-module.ts). Do not edit: edit openapi.yaml.',
    '',
    "/** The repository's openapi.yaml: the template of the served document. */",
    `export const OPENAPI_TEMPLATE = \`${escaped}\`;`,
    '',
  ].join('\n');
}

/** Rewrites the generated module when openapi.yaml changed; returns whether it did. */
export async function writeOpenApiModule(root: string): Promise<boolean> {
  const source = openapiModuleSource(await readFile(join(root, 'openapi.yaml'), 'utf8'));
  const path = join(root, OPENAPI_MODULE);
  const current = await readFile(path, 'utf8').catch(() => null);
  if (current === source) return false;
  await writeFile(path, source);
  return true;
}
