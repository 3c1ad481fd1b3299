/**
 * One build, in memory: read the source, validate every row, order, render the three catalogs and the
 * companion objects (openapi.yaml, errors/500.json). Writing them (a directory, or S3) is the caller's job.
 */

import { SourceError } from '../contract/errors.ts';
import {
  type Discipline,
  HEADER_VALUES,
  ORIGIN_FILES,
  PROBLEM_INTERNAL,
  problemDocument,
} from '../contract/index.ts';
import { renderCatalogs, sortPlans } from './catalogs.ts';
import { type InvalidRow, InvalidRowsError, SourceRowError } from './errors.ts';
import type { LinkConfig } from './model.ts';
import { renderOpenApi } from './openapi.ts';
import { RowValidator, type SkippedRows } from './rows.ts';
import type { PlanSource } from './source.ts';

/** One object of the origin, with the metadata it is served with. */
export interface OriginFile {
  /** Object key / path relative to the origin root, e.g. `catalog.json` or `errors/500.json`. */
  readonly key: string;
  /** The bytes, contiguous (joined from `chunks` on first use, then kept). */
  readonly body: Buffer;
  /** The bytes as the build made them: write these to avoid a copy of a large catalog. */
  readonly chunks: readonly Buffer[];
  /** Size in bytes. */
  readonly size: number;
  readonly contentType: string;
  readonly cacheControl: string;
}

/** An origin file from its chunks; `body` joins them only when asked for. */
export function originFile(
  key: string,
  chunks: readonly Buffer[],
  contentType: string,
  cacheControl: string,
): OriginFile {
  let joined: Buffer | undefined;
  return {
    key,
    chunks,
    size: chunks.reduce((sum, chunk) => sum + chunk.length, 0),
    contentType,
    cacheControl,
    get body() {
      joined ??= chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks);
      return joined;
    },
  };
}

export interface BuildOptions {
  readonly links: LinkConfig;
  /** Publish the valid rows and return the invalid ones as warnings, instead of failing. */
  readonly skipInvalid: boolean;
  /** The build time, stamped as `generatedAt` in all three catalogs. */
  readonly now: Date;
  /** The repository's openapi.yaml; its `servers` are set to the base URL. */
  readonly openapiTemplate: string;
}

export interface BuildResult {
  readonly generatedAt: string;
  /** In upload order: the per-discipline catalogs, then catalog.json, openapi.yaml and errors/500.json. */
  readonly files: readonly OriginFile[];
  readonly counts: Readonly<Record<Discipline, number>>;
  readonly skipped: SkippedRows;
  /** Invalid rows left out because of `skipInvalid` (empty otherwise: invalid rows fail the build). */
  readonly warnings: readonly InvalidRow[];
  /** Rows read from the source. */
  readonly total: number;
  /** SHA-256 (hex) of the catalog's plans, independent of `generatedAt`: equal hashes mean equal content. */
  readonly plansHash: string;
}

/**
 * Runs a build. Throws `SourceError` when the source cannot be read or is not an array of objects, and
 * `InvalidRowsError` (listing every invalid row) when a row is invalid and `skipInvalid` is off.
 */
export async function buildCatalog(source: PlanSource, options: BuildOptions): Promise<BuildResult> {
  const validator = new RowValidator(options.links);
  try {
    for await (const batch of source.batches()) validator.add(batch);
  } catch (error) {
    if (error instanceof SourceRowError) throw new SourceError(source.name, error.message, { cause: error });
    throw error;
  }
  const report = validator.finish();
  if (report.invalid.length > 0 && !options.skipInvalid)
    throw new InvalidRowsError(source.name, report.invalid);

  const sorted = sortPlans(report.plans);
  const catalogs = renderCatalogs(sorted, options.now);

  const json = (key: string, chunks: readonly Buffer[]) =>
    originFile(key, chunks, HEADER_VALUES.json, HEADER_VALUES.cacheable);
  const files: OriginFile[] = [
    json(ORIGIN_FILES.strength, catalogs.byDiscipline.strength),
    json(ORIGIN_FILES.running, catalogs.byDiscipline.running),
    json(ORIGIN_FILES.all, catalogs.all),
    originFile(
      ORIGIN_FILES.openapi,
      [Buffer.from(renderOpenApi(options.openapiTemplate, options.links.baseUrl))],
      HEADER_VALUES.yaml,
      HEADER_VALUES.cacheable,
    ),
    originFile(
      ORIGIN_FILES.errorPage,
      [Buffer.from(problemDocument(PROBLEM_INTERNAL))],
      HEADER_VALUES.problem,
      HEADER_VALUES.noStore,
    ),
  ];
  return {
    generatedAt: catalogs.generatedAt,
    files,
    counts: catalogs.counts,
    skipped: report.skipped,
    warnings: report.invalid,
    total: report.total,
    plansHash: catalogs.plansHash,
  };
}
