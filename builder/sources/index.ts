import { ConfigError } from '../errors.ts';
import type { PlanSource } from '../source.ts';
import { FileSource } from './file.ts';

/**
 * Opens the source named by `--source` / `CATALOG_SOURCE`: `postgres://…` or `postgresql://…`, `http(s)://…`,
 * or else a path to a JSON file.
 */
export async function openSource(spec: string): Promise<PlanSource> {
  if (spec.trim() === '') throw new ConfigError('--source must not be empty');
  if (/^postgres(ql)?:\/\//i.test(spec) || /^https?:\/\//i.test(spec)) {
    throw new ConfigError(`--source ${spec.split(':')[0]}://… is not supported yet; use a JSON file path`);
  }
  return new FileSource(spec);
}
