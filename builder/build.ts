/**
 * One build, in two steps (docs/decisions.md#build-cost): {@link prepareBuild} fingerprints every input, enough
 * for a publish to decide that nothing changed; {@link completeBuild} makes the costly objects.
 */
import { createHash, randomBytes } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { SourceError } from '../contract/errors.ts';
import {
  catalogFile,
  DISCIPLINES,
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
  totalPlans,
  VARIANTS,
} from '../contract/index.ts';
import { fingerprintPlans, renderCatalogs, sortPlans } from './catalogs.ts';
import { type CompressionJob, compress, ENCODING_POLICY } from './compress.ts';
import { type InvalidRow, InvalidRowsError, SourceRowError } from './errors.ts';
import type { LinkConfig, Plan } from './model.ts';
import { renderOpenApi } from './openapi.ts';
import { PAGE_RENDERER, renderNotFoundPage, renderPlanPage } from './pages.ts';
import { RowValidator, type SkippedRows } from './rows.ts';
import type { PlanSource } from './source.ts';
import { TOOL } from './tool.ts';

/** How an object is stored; `cacheControl` when it does not depend on where it is written (the error page). */
export interface ObjectMetadata {
  readonly contentType: string;
  readonly contentEncoding?: 'br' | 'gzip';
  readonly cacheControl?: string;
}

/** An object as the manifest lists it; `md5` is what S3 reports as the ETag of a one-part upload. */
export interface ManifestEntry extends ObjectMetadata {
  readonly size: number;
  readonly sha256: string;
  readonly md5: string;
}

/** One object of a build; its key is relative to the build (or, for a root object, to the origin's root). */
export interface BuildObject extends ManifestEntry {
  readonly key: string;
  /** The bytes as the build made them (no copy of a large catalog); a page's are rendered again on each read. */
  readonly chunks: readonly Buffer[];
  /** The bytes, contiguous (joined on first use). */
  readonly body: Buffer;
}

/** `manifest.json`: what a build is, and every object it holds. */
export interface Manifest {
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Readonly<Record<Discipline, number>>;
  readonly plans: number;
  readonly plansHash: string;
  /** The source, as named in messages (no password or token). */
  readonly source: string;
  readonly tool: { readonly name: string; readonly version: string };
  /** The build's own objects (the manifest and the pages aside), by key relative to the build. */
  readonly objects: Readonly<Record<string, ManifestEntry>>;
  /**
   * Plan id → the MD5 of its page's bytes (hex), the digest S3 lists for every object: the page's bytes are
   * named by it (`pages/<digest>.html`, docs/decisions.md#plan-pages). Empty when the pages live on a website
   * elsewhere.
   */
  readonly pages: Readonly<Record<string, string>>;
  /** The objects written at the origin's root with the build (the error pages), by key. */
  readonly root: Readonly<Record<string, ManifestEntry>>;
  readonly inputs: BuildInputs;
  readonly inputsHash: string;
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

/** The manifest entry of an object: its metadata, size and digests. */
export function manifestEntry(object: BuildObject): ManifestEntry {
  const { size, sha256, md5, contentType, contentEncoding, cacheControl } = object;
  return {
    size,
    sha256,
    md5,
    contentType,
    ...(contentEncoding ? { contentEncoding } : {}),
    ...(cacheControl ? { cacheControl } : {}),
  };
}

/**
 * A new build id: the UTC second, compacted, then the millisecond (3 hex digits) and 13 random ones, 52 bits of
 * `random` (`20260301T101500Z-1f4a2b3c4d5e6f70`), so ids sort by build time to the millisecond and do not collide:
 * of 50 ids made in one millisecond, two are the same with a chance of 3 in 10^13.
 */
export function newBuildId(generatedAt: Date, random: (size: number) => Buffer = randomBytes): string {
  const stamp = generatedAt
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  const millisecond = generatedAt.getUTCMilliseconds().toString(16).padStart(3, '0');
  return `${stamp}-${millisecond}${random(7).toString('hex').slice(0, 13)}`;
}

/**
 * Every input that shapes a build's objects, `generatedAt` aside, compared with the live build's before anything
 * costly: `openapi` is SHA-256 of what openapi.yaml is rendered from (its template, base URL and contact address;
 * the renderer is the tool's), `root` of the error pages, `pages` the renderer's (or null).
 */
export interface BuildInputs {
  /** SHA-256 of the plans (catalog order, as served). */
  readonly plansHash: string;
  readonly baseUrl: string;
  readonly webBaseUrl: string | null;
  readonly appScheme: string;
  /** `name@version` of the tool. */
  readonly tool: string;
  readonly openapi: string;
  readonly root: string;
  readonly pages: string | null;
  /** The compression policy of the variants. */
  readonly encodings: string;
}

export interface BuildOptions {
  readonly links: LinkConfig;
  /** Publish the valid rows and return the invalid ones as warnings, instead of failing. */
  readonly skipInvalid: boolean;
  /** The build time, stamped as `generatedAt` in all three catalogs. */
  readonly now: Date;
  /** The repository's openapi.yaml; its `servers` are set to the base URL. */
  readonly openapiTemplate: string;
  /** Where partners ask for a key, written into openapi.yaml (the `contactAddress` setting). */
  readonly contactAddress: string;
}

/**
 * Where a build's time went, in milliseconds (docs/decisions.md#build-cost): `compress` from the first
 * compression to the last, `compressBusy` their own time summed over `compressThreads` (0: libuv's pool).
 */
export interface BuildTimings {
  /** Reading the source and validating every row. */
  readonly read: number;
  /** Ordering and fingerprinting the plans, rendering openapi.yaml, the error pages and the catalogs. */
  readonly render: number;
  readonly compress: number;
  readonly compressBusy: number;
  readonly compressThreads: number;
  /** Rendering and hashing the pages, and the manifest. */
  readonly pages: number;
}

/** What a build is before its costly part: enough to decide whether it differs from the live one. */
export interface PreparedBuild {
  readonly buildId: string;
  readonly generatedAt: string;
  readonly counts: Readonly<Record<Discipline, number>>;
  readonly skipped: SkippedRows;
  /** Invalid rows left out because of `skipInvalid` (empty otherwise: invalid rows fail the build). */
  readonly warnings: readonly InvalidRow[];
  /** Rows read from the source. */
  readonly total: number;
  readonly plansHash: string;
  readonly inputs: BuildInputs;
  readonly inputsHash: string;
  /** The source, as named in messages. */
  readonly source: string;
  readonly tool: { readonly name: string; readonly version: string };
  readonly timings: Pick<BuildTimings, 'read' | 'render'>;
  /** @internal What {@link completeBuild} needs. */
  readonly parts: {
    readonly plans: readonly Plan[];
    readonly now: Date;
    readonly openapi: () => Buffer;
    readonly root: readonly BuildObject[];
    readonly pages: boolean;
  };
}

export interface BuildResult extends Omit<PreparedBuild, 'parts' | 'timings'> {
  /** The catalogs and openapi.yaml with their variants, a page per plan, and the manifest, the last. */
  readonly objects: readonly BuildObject[];
  /** Objects written at the origin's root along with the build (the error pages). */
  readonly root: readonly BuildObject[];
  readonly manifest: Manifest;
  readonly timings: BuildTimings;
}

const sha256Of = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The error pages at the origin's root: no catalog in them, so the stack puts them there at deploy too. */
export function rootObjects(appScheme: string): BuildObject[] {
  return [
    buildObject(ERROR_PAGE, [Buffer.from(problemDocument(PROBLEM_INTERNAL))], {
      contentType: HEADER_VALUES.problem,
      cacheControl: HEADER_VALUES.noStore,
    }),
    buildObject(NOT_FOUND_PAGE, [Buffer.from(renderNotFoundPage({ appScheme }))], {
      contentType: PAGE_HEADERS.html,
      cacheControl: HEADER_VALUES.noStore,
    }),
  ];
}

/**
 * The first step: reads and validates every row, orders the plans, renders openapi.yaml and the error pages,
 * and fingerprints the inputs. Throws `SourceError`, or `InvalidRowsError` unless `skipInvalid`.
 */
export async function prepareBuild(source: PlanSource, options: BuildOptions): Promise<PreparedBuild> {
  const started = performance.now();
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
  const read = performance.now();

  const plans = sortPlans(report.plans);
  // The catalogs are rendered only when the build is completed: their fingerprint needs no bytes.
  const { plansHash, counts } = fingerprintPlans(plans);
  // Rendered when the build is completed: an unchanged run parses no YAML.
  const openapi = () =>
    Buffer.from(renderOpenApi(options.openapiTemplate, options.links.baseUrl, options.contactAddress));
  const root = rootObjects(options.links.appScheme);
  // One page per plan, unless the pages live on a website elsewhere (docs/decisions.md#plan-pages).
  const pages = !options.links.webBaseUrl;
  const inputs: BuildInputs = {
    plansHash,
    baseUrl: options.links.baseUrl,
    webBaseUrl: options.links.webBaseUrl ?? null,
    appScheme: options.links.appScheme,
    tool: `${TOOL.name}@${TOOL.version}`,
    openapi: sha256Of(
      JSON.stringify([options.openapiTemplate, options.links.baseUrl, options.contactAddress]),
    ),
    root: sha256Of(root.map((object) => `${object.key} ${object.sha256} ${object.contentType}`).join('\n')),
    pages: pages ? PAGE_RENDERER : null,
    encodings: ENCODING_POLICY,
  };
  return {
    buildId: newBuildId(options.now),
    generatedAt: options.now.toISOString(),
    counts,
    skipped: report.skipped,
    warnings: report.invalid,
    total: report.total,
    plansHash,
    inputs,
    // The JSON of the fields in the order written above (the manifest keeps it).
    inputsHash: sha256Of(JSON.stringify(inputs)),
    source: source.name,
    tool: TOOL,
    timings: { read: read - started, render: performance.now() - read },
    parts: { plans, now: options.now, openapi, root, pages },
  };
}

/** The precompressed variants of each served object. */
const ENCODINGS = ['br', 'gzip'] as const;

/** Pages rendered between two turns of the event loop (the compression threads' answers wait for one). */
const PAGES_PER_TURN = 500;

/** The second step: the catalogs' variants (on worker threads) while the pages render, then the manifest. */
export async function completeBuild(prepared: PreparedBuild): Promise<BuildResult> {
  const { parts, timings, ...kept } = prepared;
  const { openapi, root, plans } = parts;
  const renderStarted = performance.now();
  const catalogs = renderCatalogs(plans, parts.now);
  // The fingerprint the publish decided on must be the one of the bytes it publishes.
  if (catalogs.plansHash !== prepared.plansHash)
    throw new Error(
      `the rendered catalogs' fingerprint ${catalogs.plansHash} is not the prepared ${prepared.plansHash}`,
    );
  const renderMs = performance.now() - renderStarted;
  const json = { contentType: HEADER_VALUES.json };
  const plain = [
    buildObject(ORIGIN_FILES.all, [shared(catalogs.all)], json),
    ...DISCIPLINES.map((d) => buildObject(catalogFile(d), [shared(catalogs.byDiscipline[d])], json)),
    buildObject(ORIGIN_FILES.openapi, [shared([openapi()])], { contentType: HEADER_VALUES.yaml }),
  ];
  const jobs: CompressionJob[] = plain.flatMap((object) =>
    ENCODINGS.map((encoding) => ({ encoding, chunks: object.chunks, size: object.size })),
  );
  const compressStarted = performance.now();
  let compressEnded = compressStarted;
  const compressing = compress(jobs).then((done) => {
    compressEnded = performance.now();
    return done;
  });

  // Pages are stored as they are: the distribution compresses them (docs/decisions.md#plan-pages).
  let pagesMs = 0;
  const pages: [string, BuildObject][] = [];
  try {
    if (parts.pages) {
      for (let start = 0; start < plans.length; start += PAGES_PER_TURN) {
        const sliceStarted = performance.now();
        for (const plan of plans.slice(start, start + PAGES_PER_TURN))
          pages.push([plan.id, pageObject(plan)]);
        pagesMs += performance.now() - sliceStarted;
        await yieldToLoop();
      }
    }
  } catch (error) {
    // A page that cannot be rendered fails the build once the compression threads have ended.
    await compressing.catch(() => undefined);
    throw error;
  }
  const { outputs, stats } = await compressing;

  // The outputs come in the order of the jobs.
  let output = 0;
  const objects: BuildObject[] = plain.flatMap((object) => [
    object,
    ...ENCODINGS.map((contentEncoding) =>
      buildObject(`${object.key}${VARIANTS[contentEncoding]}`, [outputs[output++] as Buffer], {
        contentType: object.contentType,
        contentEncoding,
      }),
    ),
  ]);

  const manifestStarted = performance.now();
  const manifest: Manifest = {
    buildId: prepared.buildId,
    generatedAt: prepared.generatedAt,
    counts: prepared.counts,
    plans: totalPlans(prepared.counts),
    plansHash: prepared.plansHash,
    source: prepared.source,
    tool: prepared.tool,
    objects: Object.fromEntries(objects.map((object) => [object.key, manifestEntry(object)])),
    pages: Object.fromEntries(pages.map(([id, page]) => [id, page.md5])),
    root: Object.fromEntries(root.map((object) => [object.key, manifestEntry(object)])),
    inputs: prepared.inputs,
    inputsHash: prepared.inputsHash,
  };
  // Compact: at 30,000 plans its page list is most of a publish's bytes beyond the catalogs.
  const manifestObject = buildObject(MANIFEST, [Buffer.from(`${JSON.stringify(manifest)}\n`)], {
    contentType: HEADER_VALUES.json,
  });
  pagesMs += performance.now() - manifestStarted;
  return {
    ...kept,
    objects: [...objects, ...pages.map(([, page]) => page), manifestObject],
    root,
    manifest,
    timings: {
      read: timings.read,
      render: timings.render + renderMs,
      compress: compressEnded - compressStarted,
      compressBusy: stats.busyMs,
      compressThreads: stats.threads,
      pages: pagesMs,
    },
  };
}

/** The chunks copied into one buffer over a `SharedArrayBuffer` (the threads read it without a copy). */
function shared(chunks: readonly Buffer[]): Buffer {
  const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const buffer = Buffer.from(new SharedArrayBuffer(size));
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(buffer, offset);
  return buffer;
}

/** A plan's page without its bytes: hashed once, rendered again on each read, so no build holds them all. */
function pageObject(plan: Plan): BuildObject {
  const rendered = Buffer.from(renderPlanPage(plan));
  const metadata = { contentType: PAGE_HEADERS.html, cacheControl: PAGE_HEADERS.cacheable };
  return {
    key: planPageKey(plan.id),
    ...manifestEntry(buildObject('', [rendered], metadata)),
    get chunks() {
      return [Buffer.from(renderPlanPage(plan))];
    },
    get body() {
      return Buffer.from(renderPlanPage(plan));
    },
  };
}
