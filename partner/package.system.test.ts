/**
 * The partner kit as a partner gets it, every command of its README run as written (README.md): the operator's
 * `npm pack ./partner` in the repository (its prepack compiles the kit and what it shares with the service into
 * dist/), then in an empty directory outside the repository the partner's `npm install` of the tarball (its
 * dependencies from the npm cache the repository's own install filled, `npm_config_prefer_offline`; the registry
 * only for what is missing), `npm ls`, both commands' `--version` and `--help`, `catalog-proxy` and
 * `catalog-check` against a real `catalog serve`, and the upgrade to a newer kit; a command the README gains
 * fails the last test until it is run here. Also the proxy started as a service manager would, and a strict
 * TypeScript file that imports the client, type-checked and run. So the package needs nothing of the
 * repository. A system test: packing, installing and type-checking take about 40 s.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, ROOT, runProcess, type ServeProcess, scratchDir, startServe } from '../testing/cli.ts';
import { freePort } from '../testing/postgres.ts';
import { until } from '../testing/until.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';

const KIT = join(ROOT, 'partner');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

/**
 * The environment of npm and of the installed programs: the test's, without what `npm run` exports about the
 * repository's own package (its prefix would point a nested npm at the repository) and without `CATALOG_*`;
 * npm takes what its cache holds before asking the registry, and neither audits nor asks for funding.
 */
function partnerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    NO_COLOR: '1',
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  for (const [name, value] of Object.entries(process.env)) {
    const npmOwn = /^npm_(package_|lifecycle_|config_(local_)?prefix$)/i.test(name);
    if (!npmOwn && !name.startsWith('CATALOG_') && !(name in env)) env[name] = value;
  }
  return { ...env, ...extra };
}

/** The shell commands of a README, in order: each line of its `sh` blocks, without its comment. */
function readmeCommands(readme: string): string[] {
  return [...readme.matchAll(/^\s*```sh\n([\s\S]*?)^\s*```/gm)].flatMap((block) =>
    (block[1] ?? '')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== ''),
  );
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

describe('the partner kit as an npm package, every command of its README run as written', () => {
  let world: TestWorld;
  let serve: ServeProcess;
  let scratch: { dir: string; remove: () => Promise<void> };
  /** The empty directory the tarball is installed into: a partner's project. */
  let project: string;
  let readme: string;
  let version: string;
  /** The tarball `npm pack ./partner` wrote, moved out of the repository. */
  let tarball: string;
  /** The README's commands run so far. */
  const ran = new Set<string>();
  /** What the README's `export` lines set, for the commands after them. */
  const exported: Record<string, string> = {};

  /**
   * A README command as this test runs it: its example service address is the local stack's, its key the
   * world's, and `/var/lib/catalog/` is in the scratch directory; nothing else changes.
   */
  const filled = (command: string) =>
    command
      .replaceAll('https://catalog.example.com', serve.url)
      .replaceAll('tpc_…', world.keys.valid)
      .replaceAll('/var/lib/catalog/', `${scratch.dir}/var/lib/catalog/`);

  /** Runs the README's `command` (it must be one) with `sh` in `cwd`, after the exports before it. */
  const sh = (command: string, cwd = project) => {
    expect(readmeCommands(readme), 'a command of the README').toContain(command);
    ran.add(command);
    const exportLine = /^export (\w+)=(.*)$/.exec(filled(command));
    if (exportLine) {
      exported[exportLine[1] as string] = exportLine[2] as string;
      return Promise.resolve({ code: 0, stdout: '', stderr: '' });
    }
    return runProcess('sh', ['-c', filled(command)], { cwd, env: partnerEnv(exported) });
  };

  /**
   * A proxy process started by `file args` in the partner's project (in a process group of its own with `group`:
   * `sh` and `npx` stopped with the proxy they start), once it listens and serves a first copy: its address,
   * what it wrote on stderr, and `stop`, which sends SIGTERM and resolves with the exit code.
   */
  async function runningProxy(
    file: string,
    args: readonly string[],
    options: { readonly env: NodeJS.ProcessEnv; readonly group?: boolean },
  ) {
    const child = spawn(file, args, {
      cwd: project,
      env: options.env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: options.group === true,
    });
    const signal = (name: NodeJS.Signals) =>
      options.group ? process.kill(-(child.pid as number), name) : child.kill(name);
    const killOnExit = () => signal('SIGKILL');
    process.once('exit', killOnExit);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // A program that cannot be started (not installed) ends the wait below, saying why.
    child.once('error', (error) => {
      stderr += `${error.message}\n`;
    });
    const exited = once(child, 'exit');
    const stop = async () => {
      if (child.exitCode === null) signal('SIGTERM');
      const [code] = await exited;
      process.off('exit', killOnExit);
      return code as number | null;
    };
    const url = await until(
      () =>
        /catalog-proxy: listening on (http:\/\/\S+)/.exec(stderr)?.[1] ??
        (child.exitCode !== null || child.pid === undefined),
      'the proxy to listen',
    );
    if (typeof url !== 'string') {
      process.off('exit', killOnExit);
      throw new Error(`the proxy did not start: ${stderr}`);
    }
    await until(
      async () => (await httpRequest(url, { method: 'GET', target: '/healthz' })).status === 200,
      'the first copy',
    );
    return { url, stderr: () => stderr, stop };
  }

  beforeAll(async () => {
    readme = await readFile(join(KIT, 'README.md'), 'utf8');
    version = (JSON.parse(await readFile(join(KIT, 'package.json'), 'utf8')) as { version: string }).version;
    const port = await freePort();
    world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
    const origin = ['--origin', world.originDir, '--store', world.stores.plain];
    serve = await startServe([...origin, '--port', String(port)]);
    scratch = await scratchDir('catalog-partner-package-');
    project = join(scratch.dir, 'project');
    await mkdir(join(project, 'vendor'), { recursive: true });
  });
  afterAll(async () => {
    await serve?.stop();
    await scratch?.remove();
    await world?.remove();
  });

  it('packs with `npm pack ./partner` in the repository: the compiled kit, its declarations and the modules of the service it runs, nothing else, with its dependencies pinned to what the repository tests', async () => {
    const result = await sh('npm pack ./partner', ROOT);
    expect(result.code, result.stderr).toBe(0);
    const filename = result.stdout.trim().split('\n').at(-1) ?? '';
    expect(filename).toBe(`training-plan-catalog-partner-${version}.tgz`);
    tarball = join(scratch.dir, filename);
    // Out of the repository (scratch space may be another filesystem: a copy, then the original removed).
    await copyFile(join(ROOT, filename), tarball);
    await rm(join(ROOT, filename));
    const listed = await runProcess('tar', ['-tzf', tarball], { cwd: scratch.dir, env: partnerEnv() });
    const files = listed.stdout.trim().split('\n').sort();
    expect(
      files.filter(
        (file) =>
          !/^package\/dist\/(partner|contract|app|builder|gateway|keys|files)\/[a-z-]+(\.generated)?\.(js|d\.ts)$/.test(
            file,
          ),
      ),
    ).toEqual(['package/README.md', 'package/package.json']);
    expect(files).toEqual(
      expect.arrayContaining(
        [
          'partner/index.js',
          'partner/index.d.ts',
          'partner/main.js',
          'partner/check-main.js',
          'contract/disciplines.js',
          'app/check.js',
          'partner/schema.js',
          'files/atomic-write.js',
        ].map((file) => `package/dist/${file}`),
      ),
    );
    // About 110 kB, as the README says.
    expect((await stat(tarball)).size / 1000).toBeGreaterThan(80);
    expect((await stat(tarball)).size / 1000).toBeLessThan(140);
    // prepack's build is removed again (postpack): the repository's tree is as it was.
    await expect(stat(join(KIT, 'dist'))).rejects.toThrow(/ENOENT/);

    const manifest = JSON.parse(await readFile(join(KIT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      bin: Record<string, string>;
    };
    for (const [name, pinned] of Object.entries(manifest.dependencies)) {
      const installed = JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
      expect(pinned, name).toBe(installed.version);
    }
    expect(Object.keys(manifest.bin).sort()).toEqual(['catalog-check', 'catalog-proxy']);
  });

  it('installs with the README’s npm install into an empty directory; npm ls and each command say its version, and --help its options', async () => {
    await writeFile(join(project, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    await copyFile(tarball, join(project, 'vendor', `training-plan-catalog-partner-${version}.tgz`));
    const installed = await sh(`npm install ./vendor/training-plan-catalog-partner-${version}.tgz`);
    expect(installed.code, installed.stderr).toBe(0);

    const listed = await sh('npm ls @training-plan-catalog/partner');
    expect(listed.stdout).toContain(`@training-plan-catalog/partner@${version}`);
    expect((await sh('npx catalog-proxy --version')).stdout).toBe(`${version}\n`);
    for (const command of ['catalog-proxy', 'catalog-check']) {
      const help = await sh(`npx ${command} --help`);
      expect([help.code, help.stderr]).toEqual([0, '']);
      expect(help.stdout).toMatch(
        new RegExp(
          `^Usage: ${command} \\[options\\]\n[\\s\\S]*--upstream <url>[\\s\\S]*Environment:\n  CATALOG_PARTNER_KEY`,
        ),
      );
    }
  });

  it('runs the README’s catalog-proxy with the key it exports against the local stack, and stops on SIGTERM', async () => {
    const start = readmeCommands(readme).find((command) =>
      command.startsWith('npx catalog-proxy --upstream'),
    );
    expect(start).toBeDefined();
    // The export before it in the README.
    await sh('export CATALOG_PARTNER_KEY=tpc_…');
    ran.add(start as string);
    const proxy = await runningProxy('sh', ['-c', filled(start as string)], {
      env: partnerEnv(exported),
      group: true,
    });
    try {
      expect((await httpRequest(proxy.url, { method: 'GET', target: '/plans.json' })).body).toEqual(
        world.objects.all,
      );
      // The copy is saved where --cache-file says.
      expect(
        JSON.parse(await readFile(join(scratch.dir, 'var/lib/catalog/cache.json'), 'utf8')),
      ).toMatchObject({ body: world.objects.all.toString() });
    } finally {
      await proxy.stop();
    }
    expect(proxy.stderr()).not.toContain(world.keys.valid);
  });

  it('runs node_modules/.bin/catalog-proxy as a service manager would: SIGTERM reaches it, exit 0', async () => {
    const key = world.keys.valid;
    const proxy = await runningProxy(
      join(project, 'node_modules/.bin/catalog-proxy'),
      ['--upstream', serve.url, '--port', '0', '--cache-file', 'cache.json'],
      { env: partnerEnv({ CATALOG_PARTNER_KEY: key }) },
    );
    let code: number | null = null;
    try {
      const running = await httpRequest(proxy.url, {
        method: 'GET',
        target: '/plans.json?discipline=running',
      });
      expect(running.body).toEqual(world.objects.running);
    } finally {
      code = await proxy.stop();
    }
    expect(code, proxy.stderr()).toBe(0);
    expect(proxy.stderr()).not.toContain(key);
  });

  it('checks the service with the README’s catalog-check and the key it exports: every row passes, the key is never printed', async () => {
    await sh('export CATALOG_PARTNER_KEY=tpc_…');
    const checked = await sh('npx catalog-check --upstream https://catalog.example.com');
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const rows = checked.stdout.split('\n').filter((line) => /^(PASS|FAIL|SKIP|WARN|NOT RUN) /.test(line));
    expect(rows.length).toBeGreaterThan(100);
    expect(rows.filter((line) => !line.startsWith('PASS'))).toEqual([]);
    expect(checked.stdout + checked.stderr).not.toContain(world.keys.valid);
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

    const output = await runProcess(bin('tsx'), ['partner.ts', serve.url, world.keys.valid], {
      cwd: project,
      env: partnerEnv(),
    });
    expect(output.code, output.stderr).toBe(0);
    const catalog = JSON.parse(world.objects.all.toString()) as { plans: unknown[] };
    expect(JSON.parse(output.stdout)).toEqual({
      checks: [[false, false], true, true, true, 'walking'],
      disciplines: ['running', 'strength'],
      plans: catalog.plans.length,
      valid: true,
      labels: ['Outdoor', 'Workouts'],
      again: 'not-modified',
    });
  });

  it('upgrades with the README’s npm install of a newer kit: npm ls and the commands say the new version', async () => {
    const next = readmeCommands(readme).find(
      (command) => command.startsWith('npm install ./vendor/') && !command.includes(`-${version}.tgz`),
    );
    const newer = /-(\d+\.\d+\.\d+)\.tgz$/.exec(next ?? '')?.[1] ?? '';
    expect(newer).not.toBe(version);
    // The same kit under the newer version, as the operator's next pack would name it.
    const unpacked = join(scratch.dir, 'newer');
    await mkdir(unpacked);
    expect(
      (await runProcess('tar', ['-xzf', tarball, '-C', unpacked], { cwd: unpacked, env: partnerEnv() })).code,
    ).toBe(0);
    const manifestPath = join(unpacked, 'package', 'package.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { version: string };
    await writeFile(manifestPath, JSON.stringify({ ...manifest, version: newer }, null, 2));
    const file = join(project, 'vendor', `training-plan-catalog-partner-${newer}.tgz`);
    expect(
      (
        await runProcess('tar', ['-czf', file, '-C', unpacked, 'package'], {
          cwd: unpacked,
          env: partnerEnv(),
        })
      ).code,
    ).toBe(0);

    const upgraded = await sh(next as string);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect((await sh('npm ls @training-plan-catalog/partner')).stdout).toContain(
      `@training-plan-catalog/partner@${newer}`,
    );
    expect((await sh('npx catalog-proxy --version')).stdout).toBe(`${newer}\n`);
    const dependencies = (
      JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies;
    expect(dependencies['@training-plan-catalog/partner']).toBe(
      `file:vendor/training-plan-catalog-partner-${newer}.tgz`,
    );
  });

  it('has run every command of the README', () => {
    expect([...ran].sort()).toEqual([...new Set(readmeCommands(readme))].sort());
  });
});
