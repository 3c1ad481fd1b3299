/**
 * The repository's openapi.yaml as a TypeScript module (`publish/openapi.generated.ts`), so the Lambda gets
 * the template however it is bundled (`npm run build:lambda`, or a CDK NodejsFunction with default settings):
 * no loader, no file next to the bundle. `npm run build:lambda` regenerates it; a test fails when it is stale.
 */

/** The generated module, relative to the repository root. */
export const OPENAPI_MODULE = 'publish/openapi.generated.ts';

/** The source of the generated module for the given openapi.yaml text. */
export function openapiModuleSource(yaml: string): string {
  const escaped = yaml.replaceAll('\\', '\\\\').replaceAll('`', '\\`').replaceAll('${', '\\${');
  return [
    '// Generated from openapi.yaml by `npm run build:lambda` (publish/bundle.ts). Do not edit: edit openapi.yaml.',
    '',
    "/** The repository's openapi.yaml: the template of the served document, for the Lambda bundle. */",
    `export const OPENAPI_TEMPLATE = \`${escaped}\`;`,
    '',
  ].join('\n');
}
