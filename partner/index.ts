/**
 * The partner kit: the reference proxy (`startProxy`), the one-call client it is built on (`CatalogClient`),
 * the change sets it records and serves (`ChangeSet`, `ChangesPage`, `diffPlans`), the published schemas as zod
 * schemas, and the types openapi-typescript generates from openapi.yaml.
 */
export type { components, operations, paths } from './api.ts';
export {
  ChangeLog,
  ChangeSet,
  ChangesPage,
  diffPlans,
  LISTED_MAX,
  PLAN_FIELDS,
  type PlanChanges,
  PlanField,
  StoredChanges,
} from './changes.ts';
export { CatalogClient, type CatalogClientOptions, type FetchResult, freshnessSeconds } from './client.ts';
export { loadState, type StoredCopy, type StoredState, saveState } from './copy-file.ts';
export { ChangeNotifier, type NotifyAttempt, type NotifyHealth, type NotifyOptions } from './notify.ts';
export {
  CatalogProxy,
  CHANGES_HISTORY_HEADER,
  CHANGES_PAGE,
  CHANGES_SEQUENCE_HEADER,
  DEFAULT_CHANGES_KEPT,
  type Health,
  type LogEntry,
  PROXY_PROBLEMS,
  type ProxyOptions,
  type RefreshRecord,
  type RunningProxy,
  startProxy,
} from './proxy.ts';
export { Catalog, DISCIPLINES, type Discipline, Plan, Problem } from './schema.ts';
