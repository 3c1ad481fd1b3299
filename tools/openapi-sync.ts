/**
 * `npm run openapi:sync`: writes the model's schemas into openapi.yaml (builder/openapi-schemas.ts), then the
 * types a partner generates from it into partner/api.ts, the kit's zod schemas into partner/schema.ts, and the
 * template module every build embeds.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../app/paths.ts';
import { PARTNER_SCHEMAS, partnerSchemas, partnerTypes, syncOpenApi } from '../builder/openapi-schemas.ts';
import { OPENAPI_MODULE, writeOpenApiModule } from './openapi-module.ts';

const root = repoRoot();
const path = join(root, 'openapi.yaml');
const before = await readFile(path, 'utf8');
const after = syncOpenApi(before);
if (after === before) console.log('openapi.yaml already matches the model');
else {
  await writeFile(path, after);
  console.log('openapi.yaml: components.schemas rewritten from the model');
}
const typesPath = join(root, 'partner', 'api.ts');
const types = await partnerTypes(path);
if (types !== (await readFile(typesPath, 'utf8').catch(() => ''))) {
  await writeFile(typesPath, types);
  console.log('partner/api.ts regenerated');
}
const schemasPath = join(root, PARTNER_SCHEMAS);
const schemas = partnerSchemas();
if (schemas !== (await readFile(schemasPath, 'utf8').catch(() => ''))) {
  await writeFile(schemasPath, schemas);
  console.log(`${PARTNER_SCHEMAS} regenerated`);
}
if (await writeOpenApiModule(root)) console.log(`${OPENAPI_MODULE} regenerated`);
