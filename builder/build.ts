/**
 * One build, in memory: read the source, validate every row, order, render the three catalogs and the
 * companion objects (openapi.yaml, the plan pages, the error page), their precompressed variants and the
 * manifest that lists them all. Writing them (a directory, or S3) is the caller's job.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { SourceError } from '../contract/errors.ts';
import {
  type Discipline,
  ERROR_PAGE,
  HEADER_VALUES,
  MANIFEST,
  NOT_FOUND_PAGE,
  ORIGIN_FILES,
  PAGE_HEADERS,
  PROBLEM_INTERNAL,
  planPageKey,
  problemDocument,
  VARIANTS,
} from '../contract/index.ts';
import { renderCatalogs, sortPlans } from './catalogs.ts';
import { type InvalidRow, InvalidRowsError, SourceRowError } from './errors.ts';
import type { LinkConfig } from './model.ts';
import { renderOpenApi } from './openapi.ts';
import { renderNotFoundPage, renderPlanPage } from './pages.ts';
import { RowValidator, type SkippedRows } from './rows.ts';
import type { PlanSource } from './source.ts';
import { TOOL } from './tool.ts';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** How an object is stored: its type and, for a precompressed variant, its encoding. */
export interface ObjectMetadata {
  readonly contentType: string;
  readonly contentEncoding?: 'br' | 'gzip';
  /** The object's own Cache-Control when it does not depend on where it is written (the error page). */
  readonly cacheControl?: string;
}

/** One object of a build, with what it is stored with and its digests. */
export interface BuildObject extends ObjectMetadata {
  /** The key relative to the build (or, for a root object, to the origin's root): `catalog.json.br`. */
  readonly key: string;
  /** The bytes as the build made them: write these to avoid a copy of a large catalog. */
  readonly chunks: readonly Buffer[];
  /** The bytes, contiguous (joined from `chunks` on first use, then kept). */
  readonly body: Buffer;
  readonly size: number;
  /** SHA-256 of the bytes, hex. */
  readonly sha256: string;
  /** MD5 of the bytes, hex: what S3 reports as the ETag of an object uploaded in one part. */
  readonly md5: string;
}

/** An object as the manifest lists it. */
export interface ManifestEntry extends ObjectMetadata {
  readonly size: number;
  readonly sha256: string;
  readonly md5: string;
}

/** `manifest.json`: what a build is, and every object it holds. */
export interface Manifest {
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Readonly<Record<Discipline, number>>;
  readonly plans: number;
  /** SHA-256 of the plans, independent of `generatedAt`: equal fingerprints mean equal plans. */
  readonly plansHash: string;
  /** The source, as named in messages (no password or token). */
  readonly source: string;
  readonly tool: { readonly name: string; readonly version: string };
  /** The build's objects (the manifest aside), by key relative to the build. */
  readonly objects: Readonly<Record<string, ManifestEntry>>;
  /** The objects written at the origin's root with the build (the error page), by key. */
  readonly root: Readonly<Record<string, ManifestEntry>>;
}

/** A build object from its bytes and metadata; `body` joins the chunks only when asked for. */
export function buildObject(key: string, chunks: readonly Buffer[], metadata: ObjectMetadata): BuildObject {
  let joined: Buffer | undefined;
  const sha256 = createHash('sha256');
  const md5 = createHash('md5');
  let size = 0;
  for (const chunk of chunks) {
    sha256.update(chunk);
    md5.update(chunk);
    size += chunk.length;
  }
  return {
    key,
    chunks,
    size,
    sha256: sha256.digest('hex'),
    md5: md5.digest('hex'),
    ...metadata,
    get body() {
      joined ??= chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks);
      return joined;
    },
  };
}

/** The manifest entry of an object. */
export function manifestEntry(object: BuildObject): ManifestEntry {
  return {
    size: object.size,
    sha256: object.sha256,
    md5: object.md5,
    contentType: object.contentType,
    ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
    ...(object.cacheControl ? { cacheControl: object.cacheControl } : {}),
  };
}

/** Compressed bodies by the SHA-256 of what was compressed: the few most recent small ones, both encodings. */
const compressed = new Map<string, Promise<[Buffer, Buffer]>>();
const COMPRESSED_KEPT = 8;
/** Bodies larger than this are compressed every time, so the memory kept stays a few megabytes at most. */
const COMPRESSED_MAX_BYTES = 256 * 1024;

/**
 * The brotli (quality 11, the largest window) and gzip (level 9) forms of a body. The compression runs in
 * libuv's thread pool, so the variants of all objects are made at once. The same bytes compress to the same
 * bytes, so a small body seen lately (openapi.yaml, which is the same in every build for a base URL; a catalog built
 * again unchanged) is not compressed again: brotli at quality 11 costs tens of milliseconds a file.
 */
function compress(body: Buffer, sha256: string): Promise<[Buffer, Buffer]> {
  const known = compressed.get(sha256);
  if (known) return known;
  const pending: Promise<[Buffer, Buffer]> = Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzipAsync(body, { level: 9 }),
  ]);
  if (body.length <= COMPRESSED_MAX_BYTES) {
    pending.catch(() => compressed.delete(sha256));
    if (compressed.size >= COMPRESSED_KEPT) compressed.delete(compressed.keys().next().value as string);
    compressed.set(sha256, pending);
  }
  return pending;
}

/** The object and its brotli and gzip variants. */
async function withVariants(
  key: string,
  chunks: readonly Buffer[],
  contentType: string,
): Promise<BuildObject[]> {
  const plain = buildObject(key, chunks, { contentType });
  const [br, gz] = await compress(plain.body, plain.sha256);
  return [
    plain,
    buildObject(`${key}${VARIANTS.br}`, [br], { contentType, contentEncoding: 'br' }),
    buildObject(`${key}${VARIANTS.gzip}`, [gz], { contentType, contentEncoding: 'gzip' }),
  ];
}

/**
 * A new build id: the build's UTC second, compacted, and 8 lowercase hex digits (`20260301T101500Z-1f4a2b3c`)
 * — the millisecond (3 digits) then 5 random ones, so ids sort by build time to the millisecond and are unique.
 */
export function newBuildId(
  generatedAt: Date,
  suffix: string = generatedAt.getUTCMilliseconds().toString(16).padStart(3, '0') +
    randomBytes(3).toString('hex').slice(0, 5),
): string {
  const stamp = generatedAt
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${stamp}-${suffix}`;
}

export interface BuildOptions {
  readonly links: LinkConfig;
  /** Publish the valid rows and return the invalid ones as warnings, instead of failing. */
  readonly skipInvalid: boolean;
  /** The build time, stamped as `generatedAt` in all three catalogs. */
  readonly now: Date;
  /** The repository's openapi.yaml; its `servers` are set to the base URL. */
  readonly openapiTemplate: string;
  /** The random part of the build id (tests fix it). */
  readonly buildIdSuffix?: string;
}

export interface BuildResult {
  readonly buildId: string;
  readonly generatedAt: string;
  /** The build's objects, keyed relative to the build; the manifest is the last. */
  readonly objects: readonly BuildObject[];
  /** Objects written at the origin's root along with the build (the error page CloudFront serves). */
  readonly root: readonly BuildObject[];
  readonly manifest: Manifest;
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
  const buildId = newBuildId(options.now, options.buildIdSuffix);

  const served = await Promise.all([
    withVariants(ORIGIN_FILES.all, catalogs.all, HEADER_VALUES.json),
    withVariants(ORIGIN_FILES.running, catalogs.byDiscipline.running, HEADER_VALUES.json),
    withVariants(ORIGIN_FILES.strength, catalogs.byDiscipline.strength, HEADER_VALUES.json),
    withVariants(
      ORIGIN_FILES.openapi,
      [Buffer.from(renderOpenApi(options.openapiTemplate, options.links.baseUrl))],
      HEADER_VALUES.yaml,
    ),
  ]);
  // One page per plan, unless the pages live on a website elsewhere (docs/decisions.md#plan-pages). Pages are
  // stored as they are: the distribution compresses them.
  const pages = options.links.webBaseUrl
    ? []
    : sorted.map((plan) =>
        buildObject(planPageKey(plan.id), [Buffer.from(renderPlanPage(plan))], {
          contentType: PAGE_HEADERS.html,
        }),
      );
  const objects = [...served.flat(), ...pages];
  const root = [
    buildObject(ERROR_PAGE, [Buffer.from(problemDocument(PROBLEM_INTERNAL))], {
      contentType: HEADER_VALUES.problem,
      cacheControl: HEADER_VALUES.noStore,
    }),
    buildObject(NOT_FOUND_PAGE, [Buffer.from(renderNotFoundPage({ appScheme: options.links.appScheme }))], {
      contentType: PAGE_HEADERS.html,
      cacheControl: HEADER_VALUES.noStore,
    }),
  ];
  const manifest: Manifest = {
    buildId,
    generatedAt: catalogs.generatedAt,
    counts: catalogs.counts,
    plans: catalogs.counts.running + catalogs.counts.strength,
    plansHash: catalogs.plansHash,
    source: source.name,
    tool: TOOL,
    objects: Object.fromEntries(objects.map((object) => [object.key, manifestEntry(object)])),
    root: Object.fromEntries(root.map((object) => [object.key, manifestEntry(object)])),
  };
  const manifestObject = buildObject(MANIFEST, [Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)], {
    contentType: HEADER_VALUES.json,
  });
  return {
    buildId,
    generatedAt: catalogs.generatedAt,
    objects: [...objects, manifestObject],
    root,
    manifest,
    counts: catalogs.counts,
    skipped: report.skipped,
    warnings: report.invalid,
    total: report.total,
    plansHash: catalogs.plansHash,
  };
}
