import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LOCAL_CONTACT_ADDRESS } from '../app/settings/registry.ts';
import { SourceError, settingRef } from '../contract/errors.ts';
import { DISCIPLINES, PROBLEMS, perDiscipline, totalPlans } from '../contract/index.ts';
import pkg from '../package.json' with { type: 'json' };
import { ROOT } from '../testing/cli.ts';
import { planCounts } from '../testing/counts.ts';
import { buildCatalog } from '../testing/plans.ts';
import { asVersion } from '../testing/tool.ts';
import { type BuildOptions, prepareBuild } from './build.ts';
import { ENCODING_POLICY } from './compress.ts';
import { InvalidRowsError } from './errors.ts';
import { Catalog, DEFAULT_LINKS } from './model.ts';
import { PAGE_RENDERER } from './pages.ts';
import type { PlanSource } from './source.ts';
import { FileSource } from './sources/file.ts';
import { openSource } from './sources/index.ts';

const openapiTemplate = readFileSync(`${ROOT}/openapi.yaml`, 'utf8');
const fixture = (name: string) => `${ROOT}/fixtures/${name}`;

function options(overrides: Partial<BuildOptions> = {}): BuildOptions {
  return {
    links: DEFAULT_LINKS,
    skipInvalid: false,
    now: new Date('2026-11-21T08:00:00.000Z'),
    openapiTemplate,
    contactAddress: LOCAL_CONTACT_ADDRESS,
    ...overrides,
  };
}

/** A source over rows in memory, delivered in the given batches. */
function memorySource(...batches: unknown[][]): PlanSource {
  return {
    name: 'memory',
    async *batches() {
      yield* batches;
    },
  };
}

const text = (result: Awaited<ReturnType<typeof buildCatalog>>, key: string) =>
  [...result.objects, ...result.root].find((f) => f.key === key)?.body.toString('utf8') ?? '';

const JSON_TYPE = 'application/json; charset=utf-8';
const YAML_TYPE = 'application/yaml; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

describe('a build of the fixtures', () => {
  it('holds each catalog and openapi.yaml with its brotli and gzip variants, a page per plan, then its manifest', async () => {
    const result = await buildCatalog(new FileSource(fixture('plans.json')), options());
    // The build's second, its millisecond (000) and 13 random hex digits.
    expect(result.buildId).toMatch(/^20261121T080000Z-000[0-9a-f]{13}$/);
    const all = Catalog.parse(JSON.parse(text(result, 'catalog.json')));
    expect(result.objects.map((f) => [f.key, f.contentType, f.contentEncoding])).toEqual([
      ...['catalog.json', ...DISCIPLINES.map((d) => `catalog-${d}.json`)].flatMap((key) => [
        [key, JSON_TYPE, undefined],
        [`${key}.br`, JSON_TYPE, 'br'],
        [`${key}.gz`, JSON_TYPE, 'gzip'],
      ]),
      ['openapi.yaml', YAML_TYPE, undefined],
      ['openapi.yaml.br', YAML_TYPE, 'br'],
      ['openapi.yaml.gz', YAML_TYPE, 'gzip'],
      ...all.plans.map((plan) => [`plans/${plan.id}.html`, HTML_TYPE, undefined]),
      ['manifest.json', JSON_TYPE, undefined],
    ]);
    expect(result.root.map((f) => [f.key, f.contentType, f.cacheControl])).toEqual([
      ['errors/500.json', 'application/problem+json', 'no-store'],
      ['errors/404.html', HTML_TYPE, 'no-store'],
    ]);
    // Each page is its plan's: the title is in the page's <title>.
    for (const plan of all.plans.slice(0, 3))
      expect(text(result, `plans/${plan.id}.html`)).toContain(`<link rel="canonical" href="${plan.webUrl}">`);
    expect(text(result, 'errors/404.html')).toContain('Plan not found');
  });

  it('builds no pages when they live on a website elsewhere, and points webUrl there', async () => {
    const result = await buildCatalog(
      new FileSource(fixture('plans.json')),
      options({ links: { ...DEFAULT_LINKS, webBaseUrl: 'https://www.example.com/training' } }),
    );
    expect(result.objects.filter((f) => f.key.startsWith('plans/'))).toEqual([]);
    const plan = Catalog.parse(JSON.parse(text(result, 'catalog.json'))).plans[0];
    expect(plan?.webUrl).toBe(`https://www.example.com/training/plans/${plan?.id}`);
    // The not-found page still answers every page path of the service.
    expect(result.root.map((f) => f.key)).toEqual(['errors/500.json', 'errors/404.html']);
  });

  it('stores variants that decode to the very bytes of the object, brotli at quality 11 and gzip at level 9', async () => {
    const result = await buildCatalog(new FileSource(fixture('plans.json')), options());
    const body = (key: string) => result.objects.find((f) => f.key === key)?.body ?? Buffer.alloc(0);
    for (const key of ['catalog.json', 'catalog-running.json', 'openapi.yaml']) {
      expect(brotliDecompressSync(body(`${key}.br`)).equals(body(key)), key).toBe(true);
      expect(gunzipSync(body(`${key}.gz`)).equals(body(key)), key).toBe(true);
      const q11 = brotliCompressSync(body(key), {
        params: {
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_QUALITY]: 11,
          [constants.BROTLI_PARAM_LGWIN]: 24,
          [constants.BROTLI_PARAM_SIZE_HINT]: body(key).length,
        },
      });
      expect(body(`${key}.br`).equals(q11), `${key}.br is brotli q11`).toBe(true);
      expect(
        body(`${key}.gz`)
          .subarray(10)
          .equals(gzipSync(body(key), { level: 9 }).subarray(10)),
        `${key}.gz`,
      ).toBe(true);
    }
  });

  it('lists every object in the manifest with its size, digests and encoding', async () => {
    const result = await buildCatalog(new FileSource(fixture('plans.json')), options());
    const manifest = JSON.parse(text(result, 'manifest.json'));
    expect(manifest).toEqual(JSON.parse(JSON.stringify(result.manifest)));
    expect(manifest).toMatchObject({
      buildId: result.buildId,
      generatedAt: '2026-11-21T08:00:00.000Z',
      counts: result.counts,
      plans: result.counts.running + result.counts.strength,
      plansHash: result.plansHash,
      source: fixture('plans.json'),
      tool: { name: 'training-plan-catalog', version: pkg.version },
    });
    const isPage = (key: string) => key.startsWith('plans/');
    const served = result.objects.filter((f) => f.key !== 'manifest.json' && !isPage(f.key));
    expect(Object.keys(manifest.objects)).toEqual(served.map((f) => f.key));
    // The pages by plan id, each with the MD5 of its bytes (hex), the name it is kept under: S3's ETag.
    const pages = result.objects.filter((f) => isPage(f.key));
    expect(pages).toHaveLength(manifest.plans);
    expect(manifest.pages).toEqual(
      Object.fromEntries(
        pages.map((f) => [
          f.key.slice('plans/'.length, -'.html'.length),
          createHash('md5').update(f.body).digest('hex'),
        ]),
      ),
    );
    for (const object of served) {
      expect(manifest.objects[object.key]).toEqual({
        size: object.body.length,
        sha256: createHash('sha256').update(object.body).digest('hex'),
        md5: createHash('md5').update(object.body).digest('hex'),
        contentType: object.contentType,
        ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
      });
    }
    expect(Object.keys(manifest.root)).toEqual(['errors/500.json', 'errors/404.html']);
  });

  it('writes catalogs that are valid against the model and split by discipline', async () => {
    const result = await buildCatalog(new FileSource(fixture('plans.json')), options());
    const all = Catalog.parse(JSON.parse(text(result, 'catalog.json')));
    const split = perDiscipline((d) => Catalog.parse(JSON.parse(text(result, `catalog-${d}.json`))));
    expect(all.plans.length).toBeGreaterThanOrEqual(40);
    for (const d of DISCIPLINES)
      expect(
        split[d].plans.every((p) => p.discipline === d),
        d,
      ).toBe(true);
    expect(DISCIPLINES.flatMap((d) => split[d].plans)).toEqual(all.plans);
    expect(result.counts).toEqual(perDiscipline((d) => split[d].plans.length));
    expect(new Set([all, ...Object.values(split)].map((catalog) => catalog.generatedAt))).toEqual(
      new Set(['2026-11-21T08:00:00.000Z']),
    );
    expect(result.skipped).toEqual({ unpublished: 3, unapproved: 2 });
    expect(result.total).toBe(all.plans.length + 5);
  });

  it('gives byte-identical plans and the same plans hash across two builds of the same rows', async () => {
    const first = await buildCatalog(new FileSource(fixture('plans.json')), options());
    const second = await buildCatalog(
      new FileSource(fixture('plans.json')),
      options({ now: new Date('2027-01-01T00:00:00.000Z') }),
    );
    const plansOf = (r: typeof first) => text(r, 'catalog.json').replace(/^\{"generatedAt":"[^"]*",/, '');
    expect(plansOf(second)).toBe(plansOf(first));
    expect(text(second, 'catalog.json')).not.toBe(text(first, 'catalog.json'));
    expect(second.plansHash).toBe(first.plansHash);
  });

  it('changes the plans hash when any plan changes', async () => {
    const rows = JSON.parse(readFileSync(fixture('plans.json'), 'utf8')) as Record<string, unknown>[];
    const first = await buildCatalog(memorySource(rows), options());
    const changed = rows.map((r, i) => (i === 0 ? { ...r, weeks_count: 99 } : r));
    expect((await buildCatalog(memorySource(changed), options())).plansHash).not.toBe(first.plansHash);
  });

  it('serves an openapi.yaml whose server is the configured base URL', async () => {
    const result = await buildCatalog(
      new FileSource(fixture('plans.json')),
      options({ links: { baseUrl: 'https://plans.example.com', appScheme: 'tp' } }),
    );
    const document = parse(text(result, 'openapi.yaml')) as { openapi: string; servers: { url: string }[] };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers.map((s) => s.url)).toEqual(['https://plans.example.com']);
    const plan = JSON.parse(text(result, 'catalog.json')).plans[0];
    expect(plan.webUrl).toBe(`https://plans.example.com/plans/${plan.id}`);
    expect(plan.appUrl).toBe(`tp://plan/${plan.id}`);
  });

  it('writes the 500 page as an RFC 9457 problem document', async () => {
    const result = await buildCatalog(memorySource([]), options());
    expect(JSON.parse(text(result, 'errors/500.json'))).toEqual({
      type: PROBLEMS.internal.type,
      title: 'Internal Server Error',
      status: 500,
      detail: PROBLEMS.internal.detail,
    });
  });
});

describe("a build's inputs, decided before its costly part", () => {
  const prepared = (overrides: Partial<BuildOptions> = {}) =>
    prepareBuild(new FileSource(fixture('plans.json')), options(overrides));

  it('change with the base URL, the web base URL, the app scheme, the tool version or the openapi template', async () => {
    const base = await prepared();
    const upgraded = await asVersion('99.0.0', () => prepared());
    const variants = await Promise.all([
      prepared({ links: { ...DEFAULT_LINKS, baseUrl: 'https://plans.example.com' } }),
      prepared({ links: { ...DEFAULT_LINKS, webBaseUrl: 'https://www.example.com' } }),
      prepared({ links: { ...DEFAULT_LINKS, appScheme: 'otherapp' } }),
      upgraded,
      prepared({ openapiTemplate: `${openapiTemplate}\n# another template\n` }),
    ]);
    const hashes = new Set([base, ...variants].map((build) => build.inputsHash));
    expect(hashes.size).toBe(6);
    expect(variants[3]?.inputs.tool).toBe('training-plan-catalog@99.0.0');
    expect(variants[3]?.plansHash).toBe(base.plansHash);
  });

  it('stay the same for the same rows at another time, and name the page renderer and the encodings', async () => {
    const first = await prepared();
    const later = await prepared({ now: new Date('2027-01-01T00:00:00.000Z') });
    expect(later.generatedAt).not.toBe(first.generatedAt);
    expect(later.inputsHash).toBe(first.inputsHash);
    expect(first.inputs).toMatchObject({
      plansHash: first.plansHash,
      baseUrl: DEFAULT_LINKS.baseUrl,
      webBaseUrl: null,
      appScheme: DEFAULT_LINKS.appScheme,
      pages: PAGE_RENDERER,
      encodings: ENCODING_POLICY,
    });
    const withoutPages = await prepared({
      links: { ...DEFAULT_LINKS, webBaseUrl: 'https://www.example.com' },
    });
    expect(withoutPages.inputs.pages).toBeNull();
  });

  it('are recorded in the manifest with their hash', async () => {
    const result = await buildCatalog(new FileSource(fixture('plans.json')), options());
    const manifest = JSON.parse(text(result, 'manifest.json'));
    expect(manifest.inputs).toEqual(result.inputs);
    expect(manifest.inputsHash).toBe(result.inputsHash);
    // The JSON of the fields in this order: a live build published before keeps its hash.
    const fields = [
      'plansHash',
      'baseUrl',
      'webBaseUrl',
      'appScheme',
      'tool',
      'openapi',
      'root',
      'pages',
      'encodings',
    ];
    const json = JSON.stringify(manifest.inputs, fields);
    expect(createHash('sha256').update(json).digest('hex')).toBe(result.inputsHash);
  });

  it('keep no page in memory: a page is rendered again, byte for byte, each time it is read', async () => {
    const result = await buildCatalog(new FileSource(fixture('plans.json')), options());
    const page = result.objects.find((object) => object.key.startsWith('plans/'));
    const first = page?.body;
    expect(first).toBeDefined();
    expect(page?.body).not.toBe(first);
    expect(page?.body.equals(first as Buffer)).toBe(true);
    expect(
      createHash('md5')
        .update(first as Buffer)
        .digest('hex'),
    ).toBe(page?.md5);
  });
});

describe('invalid input', () => {
  const rows = JSON.parse(readFileSync(fixture('invalid/weeks-count-zero.json'), 'utf8')) as unknown[];

  it('fails by default, listing every invalid row', async () => {
    const bad = [
      ...rows,
      { ...(rows[1] as object), id: '9d3c1f52-2a9b-4d0e-8f61-3b5a9c2e4d77', level: 'pro' },
    ];
    const error = await buildCatalog(memorySource(bad), options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRowsError);
    expect((error as InvalidRowsError).lines()).toEqual([
      'row 2 (id "7d3c1f52-2a9b-4d0e-8f61-3b5a9c2e4d77"): weeks_count must be an integer ≥ 1 (got 0)',
      'row 3 (id "9d3c1f52-2a9b-4d0e-8f61-3b5a9c2e4d77"): level must be one of none, beginner, intermediate, advanced (or empty) (got "pro")',
      'row 3 (id "9d3c1f52-2a9b-4d0e-8f61-3b5a9c2e4d77"): weeks_count must be an integer ≥ 1 (got 0)',
    ]);
    expect((error as Error).message).toBe(
      `source memory: 2 invalid rows; nothing was written (${settingRef('skipInvalid')} publishes the valid rows)`,
    );
  });

  it('publishes the valid rows with --skip-invalid and returns the invalid ones as warnings', async () => {
    const result = await buildCatalog(memorySource(rows), options({ skipInvalid: true }));
    expect(result.counts).toEqual(planCounts({ running: 1 }));
    expect(result.warnings.map((w) => w.field)).toEqual(['weeks_count']);
  });

  it('names the source and the row when an element is not an object', async () => {
    const error = await buildCatalog(memorySource([{ published: false }], ['oops']), options()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SourceError);
    expect((error as Error).message).toBe('source memory: row 2 is not an object (got a string)');
  });

  it.each([
    ['broken/not-json.json', /is not valid JSON/],
    ['broken/not-an-array.json', /must be a JSON array of rows \(got object\)/],
    ['does-not-exist.json', /cannot be read \(no such file\)/],
    ['invalid', /cannot be read \(is a directory\)/],
  ])('refuses the file source %s with a reason naming it', async (name, reason) => {
    const error = await buildCatalog(new FileSource(fixture(name)), options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as Error).message).toContain(`source ${fixture(name)}: `);
    expect((error as Error).message).toMatch(reason);
  });

  it('bounds the file source by sourceMaxBytes, as the HTTP source: a file that never ends is refused at the limit', async () => {
    const limit = 1024 * 1024;
    const endless = await openSource('/dev/zero', { sourceMaxBytes: limit });
    const error = await buildCatalog(endless, options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as Error).message).toBe(
      `source /dev/zero: is larger than the limit of 1MiB (raise ${settingRef('sourceMaxBytes')})`,
    );
    // The fixtures are about 20 KB: a limit a byte short of their size refuses them, their size reads them.
    const size = (await stat(fixture('plans.json'))).size;
    const short = await openSource(fixture('plans.json'), { sourceMaxBytes: size - 1 });
    await expect(buildCatalog(short, options())).rejects.toThrow(/is larger than the limit of/);
    const exact = await openSource(fixture('plans.json'), { sourceMaxBytes: size });
    expect(totalPlans((await buildCatalog(exact, options())).counts)).toBeGreaterThan(0);
  });
});
