import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Catalog, TITLE_MAX_LENGTH } from '../../builder/model.ts';
import { DISCIPLINES } from '../../contract/index.ts';
import { httpRequest, ROOT, runCatalog, startServe } from '../../testing/cli.ts';
import { planCounts, planCountsText } from '../../testing/counts.ts';
import { useScratchDir } from '../../testing/scratch.ts';

describe('catalog build', () => {
  const scratch = useScratchDir();

  const read = (name: string) => readFile(join(scratch.dir, name), 'utf8');

  it('writes one build flat: the three catalogs, openapi.yaml, their variants, a page per plan, the error pages and the manifest', async () => {
    const result = await runCatalog(['build', '--out', scratch.dir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const files = (await readdir(scratch.dir, { recursive: true })).map(String).sort();
    const pages = files.filter((name) => name.startsWith('plans/'));
    const visible = files.filter((name) => !name.startsWith('.meta') && !name.startsWith('plans'));
    expect(visible).toEqual(
      [
        ...['catalog.json', ...DISCIPLINES.map((d) => `catalog-${d}.json`)].flatMap((name) => [
          name,
          `${name}.br`,
          `${name}.gz`,
        ]),
        'errors',
        'errors/404.html',
        'errors/500.json',
        'manifest.json',
        'openapi.yaml',
        'openapi.yaml.br',
        'openapi.yaml.gz',
      ].sort(),
    );
    // Nothing is kept beside a file: its type and encoding follow from its name (contract/objects.ts).
    expect(files.filter((name) => name.startsWith('.'))).toEqual([]);
    expect(brotliDecompressSync(await readFile(join(scratch.dir, 'catalog.json.br'))).toString()).toBe(
      await read('catalog.json'),
    );
    expect(gunzipSync(await readFile(join(scratch.dir, 'catalog.json.gz'))).toString()).toBe(
      await read('catalog.json'),
    );
    const manifest = JSON.parse(await read('manifest.json'));
    expect(manifest).toMatchObject({ plans: 44, counts: planCounts({ running: 22, strength: 22 }) });
    expect(Object.keys(manifest.objects).sort()).toEqual(
      visible.filter(
        (name) => !['errors', 'errors/404.html', 'errors/500.json', 'manifest.json'].includes(name),
      ),
    );
    expect(
      Object.keys(manifest.pages)
        .map((id) => `plans/${id}.html`)
        .sort(),
    ).toEqual(pages.filter((name) => name !== 'plans'));
    expect(Object.keys(manifest.root)).toEqual(['errors/500.json', 'errors/404.html']);
    const all = Catalog.parse(JSON.parse(await read('catalog.json')));
    const running = Catalog.parse(JSON.parse(await read('catalog-running.json')));
    const strength = Catalog.parse(JSON.parse(await read('catalog-strength.json')));
    expect(all.plans).toHaveLength(44);
    expect(running.plans.length + strength.plans.length).toBe(44);
    expect(pages.filter((name) => name !== 'plans').sort()).toEqual(
      all.plans.map((plan) => `plans/${plan.id}.html`).sort(),
    );
    expect(all.plans[0]?.webUrl).toMatch(/^http:\/\/127\.0\.0\.1:8787\/plans\/[0-9a-f-]{36}$/);
    expect(all.plans[0]?.appUrl).toMatch(/^trainingplans:\/\/plan\/[0-9a-f-]{36}$/);
    expect(await read('catalog.json')).not.toContain('\n');
    expect(JSON.parse(await read('errors/500.json'))).toMatchObject({ status: 500 });
    expect(result.stderr).toContain(
      `built 44 plans (${planCountsText({ running: 22, strength: 22 })}) from 49 rows into`,
    );
    expect(result.stderr).toContain('skipped: 3 not published, 2 published but not approved, 0 invalid');
  });

  it('takes the base URL and app scheme from the environment, and a flag over the environment', async () => {
    const env = {
      CATALOG_BASE_URL: 'https://env.example.com/',
      CATALOG_APP_SCHEME: 'envapp',
      CATALOG_OUT: scratch.dir,
    };
    expect((await runCatalog(['build', '--app-scheme', 'flagapp'], { env })).code).toBe(0);
    const plan = JSON.parse(await read('catalog.json')).plans[0];
    expect(plan.webUrl).toBe(`https://env.example.com/plans/${plan.id}`);
    expect(plan.appUrl).toBe(`flagapp://plan/${plan.id}`);
  });

  it('points webUrl at a website elsewhere with --web-base-url, and then builds no pages', async () => {
    const result = await runCatalog([
      'build',
      '--out',
      scratch.dir,
      '--web-base-url',
      'https://www.example.com/training/',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const plan = JSON.parse(await read('catalog.json')).plans[0];
    expect(plan.webUrl).toBe(`https://www.example.com/training/plans/${plan.id}`);
    expect(await readdir(scratch.dir)).not.toContain('plans');
    // openapi.yaml still names the service itself.
    expect(await read('openapi.yaml')).toContain('http://127.0.0.1:8787');
  });

  it.each([
    [
      ['--base-url', 'https://x.example.com/api'],
      '--base-url "https://x.example.com/api": must be http(s)://host[:port]',
    ],
    [
      ['--base-url', 'ftp://x.example.com'],
      '--base-url "ftp://x.example.com": must be http(s)://host[:port]',
    ],
    [['--app-scheme', '9app'], '--app-scheme "9app": must be an RFC 3986 scheme name'],
    [
      ['--web-base-url', 'https://www.example.com/?x=1'],
      '--web-base-url "https://www.example.com/?x=1": must be http(s)://host[:port][/path] with no query or fragment',
    ],
    [['--source', ' '], '--source " ": must not be empty'],
  ])('refuses %j naming the flag, the value and the rule', async (args, message) => {
    const result = await runCatalog(['build', '--out', scratch.dir, ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`catalog: ${message}`);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await readdir(scratch.dir)).toEqual([]);
  });

  it('names the environment variable when the bad value came from it', async () => {
    const result = await runCatalog(['build', '--out', scratch.dir], {
      env: { CATALOG_BASE_URL: 'not a url' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('catalog: CATALOG_BASE_URL "not a url": must be');
  });

  it('fails on invalid rows, lists each one and writes nothing', async () => {
    const result = await runCatalog([
      'build',
      '--out',
      scratch.dir,
      '--source',
      'fixtures/invalid/cover-url-not-https.json',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'invalid row 2 (id "7d3c1f52-2a9b-4d0e-8f61-3b5a9c2e4d77"): cover_url must be an absolute https: URL or empty (got "http://images.example/cover.jpg")',
    );
    expect(result.stderr).toMatch(
      /catalog: source fixtures\/invalid\/cover-url-not-https.json: 1 invalid row; nothing was written/,
    );
    expect(await readdir(scratch.dir)).toEqual([]);
  });

  it('publishes the valid rows with --skip-invalid (or CATALOG_SKIP_INVALID=1) and warns', async () => {
    for (const [args, env] of [
      [['--skip-invalid'], {}],
      [[], { CATALOG_SKIP_INVALID: '1' }],
    ] as const) {
      const result = await runCatalog(
        ['build', '--out', scratch.dir, '--source', 'fixtures/invalid/level-unknown.json', ...args],
        {
          env,
        },
      );
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(
        'warning: invalid row 2 (id "7d3c1f52-2a9b-4d0e-8f61-3b5a9c2e4d77"): level must be one of',
      );
      expect(JSON.parse(await read('catalog.json')).plans).toHaveLength(1);
    }
  });

  it('reports a 70,000-character title as an invalid row, builds the rest with --skip-invalid, and serves it', async () => {
    type Row = { id: string; title: string; published: boolean; approved: boolean };
    const rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as Row[];
    const [long, atLimit] = rows.filter((row) => row.published && row.approved);
    if (!long || !atLimit) throw new Error('the fixtures have published, approved rows');
    long.title = 'a'.repeat(70_000);
    atLimit.title = 'T'.repeat(TITLE_MAX_LENGTH);
    const source = join(scratch.dir, 'long-title.json');
    await writeFile(source, JSON.stringify(rows));
    const out = join(scratch.dir, 'out');
    const line = `row ${rows.indexOf(long) + 1} (id "${long.id}"): title must be at most ${TITLE_MAX_LENGTH} characters, not 70000 (got "${'a'.repeat(76)}...)`;

    const failed = await runCatalog(['build', '--out', out, '--source', source]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `invalid ${line}\ncatalog: source ${source}: 1 invalid row; nothing was written (--skip-invalid publishes the valid rows)\n`,
    );

    const built = await runCatalog(['build', '--out', out, '--source', source, '--skip-invalid']);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).toContain(`warning: invalid ${line}\n`);
    // Served as a build is: published to a local deployment of its own.
    const store = join(scratch.dir, 'kvs.json');
    const key = (await runCatalog(['keys', 'issue', '--partner', 'p', '--store', store])).stdout.trim();
    const origin = join(scratch.dir, 'origin');
    const target = ['--origin', origin, '--store', store, '--base-url', 'http://127.0.0.1:8787'];
    const published = await runCatalog(['publish', ...target, '--source', source, '--skip-invalid']);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stderr).toContain(`warning: invalid ${line}\n`);
    const server = await startServe(['--origin', origin, '--store', store]);
    try {
      const answer = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(answer.status).toBe(200);
      const served = Catalog.parse(JSON.parse(answer.body.toString('utf8')));
      expect(served.plans).toHaveLength(43);
      expect(served.plans.map((plan) => plan.id)).not.toContain(long.id);
      expect(served.plans.find((plan) => plan.id === atLimit.id)?.title).toBe(atLimit.title);
      const page = await httpRequest(server.url, { method: 'GET', target: `/plans/${atLimit.id}` });
      expect(page.status).toBe(200);
      expect(page.body.toString('utf8')).toContain(`<h1 dir="auto">${atLimit.title}</h1>`);
    } finally {
      await server.stop();
    }
  });

  it('keeps the previous output when a later build fails', async () => {
    expect((await runCatalog(['build', '--out', scratch.dir])).code).toBe(0);
    const before = await read('catalog.json');
    for (const source of [
      'fixtures/broken/not-json.json',
      'fixtures/invalid/id-duplicate.json',
      'missing.json',
    ]) {
      const result = await runCatalog(['build', '--out', scratch.dir, '--source', source]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`source ${source}`);
    }
    expect(await read('catalog.json')).toBe(before);
  });

  it('keeps the previous output when writing fails midway', async () => {
    expect((await runCatalog(['build', '--out', scratch.dir])).code).toBe(0);
    const before = await read('catalog.json');
    const { rm } = await import('node:fs/promises');
    await rm(join(scratch.dir, 'errors'), { recursive: true });
    await writeFile(join(scratch.dir, 'errors'), 'a file where the errors folder should be');
    const result = await runCatalog(['build', '--out', scratch.dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^catalog: cannot write .*the previous output is untouched\n$/);
    expect(await read('catalog.json')).toBe(before);
    expect((await readdir(scratch.dir)).filter((name) => name.includes('.tmp-'))).toEqual([]);
  });

  it('explains itself with --help', async () => {
    const result = await runCatalog(['build', '--help']);
    expect(result.code).toBe(0);
    for (const flag of [
      '--source',
      '--out',
      '--base-url',
      '--app-scheme',
      '--skip-invalid',
      'CATALOG_BASE_URL',
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });

  it('rejects an unknown option', async () => {
    const result = await runCatalog(['build', '--out', scratch.dir, '--sauce', 'x']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("unknown option '--sauce'");
  });
});

describe('catalog build never writes where a live build is served', () => {
  const scratch = useScratchDir({ prefix: 'catalog-build-out-' });
  const source = join(ROOT, 'fixtures', 'plans.json');

  it('with no --out, writes a new scratch directory and names it, never .catalog/origin', async () => {
    // In a checkout of its own (its working directory), whose .catalog/ it must not touch.
    const result = await runCatalog(['build', '--source', source], { cwd: scratch.dir });
    expect(result.code, result.stderr).toBe(0);
    const out = /into (\S+)\n/.exec(result.stderr)?.[1] ?? '';
    expect(out).toMatch(/catalog-build-/);
    expect(result.stderr).toContain('(no --out: a new scratch directory; catalog publish puts a build live)');
    try {
      expect(await readdir(out)).toContain('catalog.json');
      await expect(stat(join(scratch.dir, '.catalog'))).rejects.toMatchObject({ code: 'ENOENT' });
      const json = await runCatalog(['build', '--source', source, '--json'], { cwd: scratch.dir });
      const other = JSON.parse(json.stdout).out as string;
      expect(other).not.toBe(out);
      expect(await readdir(other)).toContain('catalog.json');
      await rm(other, { recursive: true, force: true });
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('refuses an --out that holds builds, the local stack origin, or the origin its store records', async () => {
    const refused = (out: string, why: string) =>
      `catalog: --out ${out}: ${why}; a build written there would overwrite objects a live build serves. Give another directory (or none: a new scratch directory), and put a build live with catalog publish; nothing was written\n`;
    await mkdir(join(scratch.dir, 'published', 'builds'), { recursive: true });
    const holding = await runCatalog(['build', '--source', source, '--out', 'published'], {
      cwd: scratch.dir,
    });
    expect([holding.code, holding.stderr]).toEqual([
      1,
      refused('published', 'is an origin that holds builds (builds/)'),
    ]);
    // The local stack's origin, before any publish made it.
    const local = await runCatalog(['build', '--source', source, '--out', '.catalog/origin'], {
      cwd: scratch.dir,
    });
    expect([local.code, local.stderr]).toEqual([
      1,
      refused('.catalog/origin', "is the local stack's origin (.catalog/origin)"),
    ]);
    // The origin the local stack's store records, under another name.
    await mkdir(join(scratch.dir, '.catalog'), { recursive: true });
    await writeFile(
      join(scratch.dir, '.catalog', 'kvs.json'),
      JSON.stringify({ data: [{ key: 'build:origin', value: '../served' }] }),
    );
    const bound = await runCatalog(['build', '--source', source, '--out', './served/'], {
      cwd: scratch.dir,
    });
    expect(bound.code).toBe(1);
    expect(bound.stderr).toMatch(/^catalog: --out \.\/served\/: is the local stack's origin \(.*served\); /);
    await expect(stat(join(scratch.dir, 'served'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(join(scratch.dir, 'published'))).toEqual(['builds']);
  });
});
