import { parseDocument } from 'yaml';

/**
 * The openapi.yaml served at `{base_url}/openapi.yaml`: the repository's document with `servers` pointing at
 * this deployment's base URL, so a generated client needs no configuration.
 */
export function renderOpenApi(template: string, baseUrl: string): string {
  const document = parseDocument(template);
  if (document.errors.length > 0)
    throw new Error(`openapi.yaml is not valid YAML: ${document.errors[0]?.message}`);
  document.set('servers', [{ url: baseUrl, description: 'This deployment' }]);
  return document.toString({ lineWidth: 0 });
}
