/**
 * The partner kit: the reference proxy (`startProxy`), the one-call client it is built on (`CatalogClient`),
 * the published schemas as zod schemas, and the types openapi-typescript generates from openapi.yaml.
 */
export type { components, operations, paths } from './api.ts';
export { CatalogClient, type CatalogClientOptions, type FetchResult, freshnessSeconds } from './client.ts';
export { loadCopy, type StoredCopy, saveCopy } from './copy-file.ts';
export {
  CatalogProxy,
  type Health,
  type LogEntry,
  PROXY_PROBLEMS,
  type ProxyOptions,
  type RefreshRecord,
  type RunningProxy,
  startProxy,
} from './proxy.ts';
export { Catalog, DISCIPLINES, type Discipline, Plan, Problem } from './schema.ts';
