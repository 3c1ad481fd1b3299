import { ConfigError, settingRef } from '../../contract/errors.ts';
import type { PlanSource } from '../source.ts';
import { FileSource } from './file.ts';
import type { SourceOptions } from './options.ts';

export { SOURCE_DEFAULTS, type SourceOptions } from './options.ts';

/** Which kind of source a source spec names. */
export function sourceKind(spec: string): 'postgres' | 'http' | 'file' {
  if (/^postgres(ql)?:\/\//i.test(spec)) return 'postgres';
  if (/^https?:\/\//i.test(spec)) return 'http';
  return 'file';
}

/**
 * Opens the source named by `--source` / `CATALOG_SOURCE`: `postgres://…` or `postgresql://…`, `http(s)://…`,
 * or else a path to a JSON file. Each takes the settings that apply to it and ignores the others. Opens no
 * connection: the source connects when its batches are read. The PostgreSQL and HTTP clients load only when used.
 */
export async function openSource(spec: string, options: SourceOptions = {}): Promise<PlanSource> {
  if (spec.trim() === '') throw new ConfigError(`${settingRef('source')} must not be empty`);
  switch (sourceKind(spec)) {
    case 'postgres':
      return new (await import('./postgres.ts')).PostgresSource(spec, options);
    case 'http':
      return new (await import('./http.ts')).HttpSource(spec, options);
    case 'file':
      return new FileSource(spec, options);
  }
}
