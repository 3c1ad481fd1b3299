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
 * Opens the source named by `--source` / `CATALOG_SOURCE`: `postgres://…` or `postgresql://…` (settings:
 * relation, statement and connect timeouts), `http(s)://…` (token, timeouts, body limit, retries), or else a
 * path to a JSON file. Settings that do not apply to the kind of source are ignored. Opens no connection: the
 * source connects when its batches are read. The PostgreSQL and HTTP clients load only when used.
 */
export async function openSource(spec: string, options: SourceOptions = {}): Promise<PlanSource> {
  if (spec.trim() === '') throw new ConfigError(`${settingRef('source')} must not be empty`);
  switch (sourceKind(spec)) {
    case 'postgres': {
      const { PostgresSource } = await import('./postgres.ts');
      return new PostgresSource(spec, {
        relation: options.relation,
        statementTimeoutMs: options.statementTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
      });
    }
    case 'http': {
      const { HttpSource } = await import('./http.ts');
      return new HttpSource(spec, {
        token: options.token,
        connectTimeoutMs: options.connectTimeoutMs,
        headersTimeoutMs: options.headersTimeoutMs,
        bodyTimeoutMs: options.bodyTimeoutMs,
        maxBodyBytes: options.maxBodyBytes,
        retries: options.retries,
      });
    }
    case 'file':
      return new FileSource(spec);
  }
}
