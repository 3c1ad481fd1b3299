/**
 * The partner kit as a partner gets it (README.md "Get the kit"): `npm pack` in partner/ (its prepack compiles
 * the kit and what it shares with the service into dist/), the tarball installed with npm into an empty
 * directory outside the repository (its dependencies from the npm cache the repository's own install filled,
 * the registry only for what is missing), then the installed `catalog-proxy` run against a real `catalog
 * serve`, and a strict TypeScript file that imports the client type-checked and run against it. So the package
 * needs nothing of the repository. A system test: packing, installing and type-checking take about 15 s.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, ROOT, runProcess, type ServeProcess, scratchDir, startServe } from '../testing/cli.ts';
import { until } from '../testing/until.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';

const KIT = join(ROOT, 'partner');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

/**
 * The environment of npm and of the installed programs: the test's, without what `npm run` exports about the
 * repository's own package (its prefix would point a nested npm at the repository) and without `CATALOG_*`.
 */
function partnerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
  for (const [name, value] of Object.entries(process.env)) {
    const npmOwn = /^npm_(package_|lifecycle_|config_(local_)?prefix$)/i.test(name);
    if (!npmOwn && !name.startsWith('CATALOG_')) env[name] = value;
  }
  return { ...env, ...extra };
}

/** What `npm pack --json` says of the tarball it wrote. */
interface Packed {
  readonly filename: string;
  readonly size: number;
  readonly files: readonly { readonly path: string }[];
}

/** The partner's file: what a partner's server writes against the kit. Type-checked strictly, then run. */
const PARTNER_FILE = `
import {
  Catalog,
  CatalogClient,
  type ChangesPage,
  type components,
  DISCIPLINES,
  type Discipline,
  type Plan,
} from '@training-plan-catalog/partner';

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type IsAny<T> = 0 extends 1 & T ? true : false;

// The types are the kit's, not any: the disciplines the service declares, the plans of the OpenAPI document.
const typed: [IsAny<Plan>, IsAny<CatalogClient>] = [false, false];
const disciplines: Exact<Discipline, 'running' | 'strength'> = true;
const plans: Exact<Plan, components['schemas']['Plan']> = true;
const pages: Exact<ChangesPage['changes'][number]['sequence'], number> = true;
// @ts-expect-error: the service has no such discipline
const walking: Discipline = 'walking';

const [upstream = '', key = ''] = process.argv.slice(2);
const client = new CatalogClient({ upstream, key, timeouts: { totalMs: 10_000 } });
const first = await client.fetch();
if (first.kind !== 'fetched') throw new Error(\`the catalog could not be fetched: \${JSON.stringify(first)}\`);
const again = await client.fetch(first.etag);
await client.close();
console.log(JSON.stringify({
  checks: [typed, disciplines, plans, pages, walking],
  disciplines: DISCIPLINES,
  plans: first.catalog.plans.length,
  valid: Catalog.safeParse(JSON.parse(first.body)).success,
  labels: [...new Set(first.catalog.plans.map((plan) => plan.disciplineLabel))].sort(),
  again: again.kind,
}));
`;

/** The partner's tsconfig: the repository's strictness, Node's own module resolution, declarations checked too. */
const PARTNER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: false,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
  },
  files: ['partner.ts'],
};

describe('the partner kit as an npm package', () => {
  let world: TestWorld;
  let serve: ServeProcess;
  let scratch: { dir: string; remove: () => Promise<void> };
  /** The empty directory the tarball is installed into: a partner's project. */
  let project: string;
  let packed: Packed;

  beforeAll(async () => {
    world = await createTestWorld();
    serve = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    scratch = await scratchDir('catalog-partner-package-');
    project = join(scratch.dir, 'project');
    await mkdir(project);
  });
  afterAll(async () => {
    await serve?.stop();
    await scratch?.remove();
    await world?.remove();
  });

  it('packs the compiled kit and its declarations, nothing else, with its dependencies pinned to what the repository tests', async () => {
    const result = await runProcess('npm', ['pack', '--json', '--pack-destination', scratch.dir], {
      cwd: KIT,
      env: partnerEnv(),
    });
    expect(result.code, result.stderr).toBe(0);
    [packed] = JSON.parse(result.stdout) as [Packed];
    const files = packed.files.map((file) => file.path).sort();
    expect(files.filter((file) => !/^dist\/(partner|files)\/[a-z-]+\.(js|d\.ts)$/.test(file))).toEqual([
      'README.md',
      'package.json',
    ]);
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/partner/index.js',
        'dist/partner/index.d.ts',
        'dist/partner/main.js',
        'dist/partner/schema.js',
        'dist/files/atomic-write.js',
      ]),
    );
    // prepack's build is removed again (postpack): the repository's tree is as it was.
    await expect(stat(join(KIT, 'dist'))).rejects.toThrow(/ENOENT/);

    const manifest = JSON.parse(await readFile(join(KIT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const [name, version] of Object.entries(manifest.dependencies)) {
      const installed = JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
      expect(version, name).toBe(installed.version);
    }
  });

  it('installs into an empty directory and runs the proxy, catalog-proxy, against the local stack', async () => {
    await writeFile(join(project, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    const installed = await runProcess(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(scratch.dir, packed.filename)],
      { cwd: project, env: partnerEnv() },
    );
    expect(installed.code, installed.stderr).toBe(0);

    const key = world.keys.valid;
    // The program npm linked for the package's bin (what `npx catalog-proxy` runs), as its own process.
    const proxy = spawn(
      join(project, 'node_modules/.bin/catalog-proxy'),
      ['--upstream', serve.url, '--port', '0', '--cache-file', 'cache.json'],
      { cwd: project, env: partnerEnv({ CATALOG_PARTNER_KEY: key }), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const killOnExit = () => proxy.kill('SIGKILL');
    process.once('exit', killOnExit);
    let stderr = '';
    proxy.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = once(proxy, 'exit');
    try {
      const url = await until(
        () => /catalog-proxy: listening on (http:\/\/\S+)/.exec(stderr)?.[1] ?? proxy.exitCode !== null,
        'the proxy to listen',
      );
      expect(url, stderr).toMatch(/^http:/);
      const base = String(url);
      await until(
        async () => (await httpRequest(base, { method: 'GET', target: '/healthz' })).status === 200,
        'the first copy',
      );
      expect((await httpRequest(base, { method: 'GET', target: '/plans.json' })).body).toEqual(
        world.objects.all,
      );
      const running = await httpRequest(base, { method: 'GET', target: '/plans.json?discipline=running' });
      expect(running.body).toEqual(world.objects.running);
      // The copy is saved where --cache-file says, in the partner's directory.
      expect(JSON.parse(await readFile(join(project, 'cache.json'), 'utf8'))).toMatchObject({
        body: world.objects.all.toString(),
      });
    } finally {
      proxy.kill('SIGTERM');
      const [code] = await exited;
      process.off('exit', killOnExit);
      expect(code, stderr).toBe(0);
    }
    expect(stderr).not.toContain(key);
  });

  it('lets a strict TypeScript project import the client with its types, and run it against the local stack', async () => {
    await writeFile(join(project, 'partner.ts'), PARTNER_FILE);
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(PARTNER_TSCONFIG));
    const checked = await runProcess(bin('tsc'), ['-p', 'tsconfig.json'], {
      cwd: project,
      env: partnerEnv(),
    });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);

    const ran = await runProcess(bin('tsx'), ['partner.ts', serve.url, world.keys.valid], {
      cwd: project,
      env: partnerEnv(),
    });
    expect(ran.code, ran.stderr).toBe(0);
    const catalog = JSON.parse(world.objects.all.toString()) as { plans: unknown[] };
    expect(JSON.parse(ran.stdout)).toEqual({
      checks: [[false, false], true, true, true, 'walking'],
      disciplines: ['running', 'strength'],
      plans: catalog.plans.length,
      valid: true,
      labels: ['Outdoor', 'Workouts'],
      again: 'not-modified',
    });
  });
});
