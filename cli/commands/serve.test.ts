import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cannotListen } from '../../app/local.ts';
import { renderMessage } from '../../app/settings/index.ts';
import { fewPlansFile } from '../../testing/aws.ts';
import {
  CATALOG_BIN,
  cleanEnv,
  EMPTY_STORE,
  httpRequest,
  ROOT,
  runCatalog,
  type ServeProcess,
  startCatalog,
  startServe,
} from '../../testing/cli.ts';
import { freePort } from '../../testing/postgres.ts';
import { useScratchDir } from '../../testing/scratch.ts';

const READY = /Local stack ready on (http:\/\/\S+)/;

describe('catalog start (npm start)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-start-' });

  it('refuses a port in use with one clear line, before building or writing anything', async () => {
    const taken: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
    );
    try {
      const result = await runCatalog(['start', '--port', String(port)], { cwd: scratch.dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `catalog: 127.0.0.1:${port} is in use by another program (not this checkout's local stack); stop it, or start on another port: npm start -- --port 8790\n`,
      );
      await expect(stat(join(scratch.dir, '.catalog'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

/** An access-log line: a JSON record of a request. */
const isRecord = (line: string) => {
  try {
    return typeof (JSON.parse(line) as { status?: unknown }).status === 'number';
  } catch {
    return false;
  }
};

/**
 * One `catalog start` for the tests below, in the order written: each start builds, publishes and runs the
 * canary's full table, so they share one. It is the real process, as npm start runs it (its port from
 * CATALOG_PORT), with both of its streams kept as a terminal shows them; the kill -9 test ends it, and the start
 * that takes over from it is the one stopped last.
 */
describe('catalog start (npm start), one running stack', () => {
  const scratch = useScratchDir({ prefix: 'catalog-start-', each: false });
  let port: number;
  let child: ChildProcessByStdio<null, Readable, Readable>;
  let exited: Promise<number | null>;
  let started: number;
  /** Both streams' lines, with when each came (ms after the spawn). */
  const shown: { at: number; line: string }[] = [];
  /** The stderr lines alone. */
  const lines: string[] = [];
  let url: string;

  const until = async (found: () => boolean) => {
    for (let waited = 0; !found() && waited < 6_000; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(found()).toBe(true);
  };

  beforeAll(async () => {
    port = await freePort();
    child = spawn(process.execPath, [CATALOG_BIN, 'start'], {
      cwd: scratch.dir,
      env: cleanEnv({ CATALOG_PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Never outlive the test process, whatever happens to the tests.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        process.off('exit', killOnExit);
        resolve(code);
      }),
    );
    started = Date.now();
    for (const [stream, own] of [
      [child.stdout, null],
      [child.stderr, lines],
    ] as const) {
      let held = '';
      stream.setEncoding('utf8').on('data', (text: string) => {
        const parts = (held + text).split('\n');
        held = parts.pop() ?? '';
        for (const line of parts) {
          shown.push({ at: Date.now() - started, line });
          own?.push(line);
        }
      });
    }
    await until(() => lines.some((line) => READY.test(line)));
    url = READY.exec(lines.find((line) => READY.test(line)) ?? '')?.[1] ?? '';
  });
  /** The start that takes over from the killed one (below), running until its test stops it. */
  let next: ServeProcess | undefined;
  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await next?.stop();
  });

  it("keeps its terminal for the banner and the developer's requests: the canary's lines go to .catalog/access.log only", async () => {
    // The first 30 seconds, and at least until the canary's first run is over (its one line).
    await until(() => shown.some(({ line }) => /^canary\b.*\d+ of \d+ rows pass/.test(line)));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 30_000 - (Date.now() - started))));
    expect(shown.filter(({ line }) => isRecord(line))).toEqual([]);
    const banner = shown.map(({ line }) => line).join('\n');
    expect(banner).toMatch(/Local stack ready on http:\/\/127\.0\.0\.1:\d+/);
    expect(banner).toMatch(/curl -i -H 'X-Api-Key: tpc_/);
    const file = join(scratch.dir, '.catalog/access.log');
    const kept = (await readFile(file, 'utf8')).trim().split('\n').filter(isRecord);
    expect(kept.length).toBeGreaterThan(100);
    // The file holds the canary's requests, each under the monitoring partner (its marker).
    for (const line of kept) expect(JSON.parse(line).logData, line).toMatch(/^monitoring(\.|$)/);

    // The developer's own request: on the terminal, and in the file.
    const key = (await readFile(join(scratch.dir, '.catalog/dev-key'), 'utf8')).trim();
    const answer = await httpRequest(`http://127.0.0.1:${port}`, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Api-Key', key]],
    });
    expect(answer.status).toBe(200);
    await until(() => shown.some(({ line }) => isRecord(line)));
    expect(shown.filter(({ line }) => isRecord(line)).map(({ line }) => JSON.parse(line).logData)).toEqual([
      'dev',
    ]);
    const after = (await readFile(file, 'utf8')).trim().split('\n').filter(isRecord);
    expect(JSON.parse(after.at(-1) ?? '{}').logData).toBe('dev');
  });

  it('runs the canary against its own edge once it serves, one line on the terminal, its report in status', async () => {
    // The first run (the full table) starts once the edge serves; its one line comes when its report is stored.
    await until(() => lines.some((line) => line.startsWith('canary (')));
    const summary = lines.find((line) => line.startsWith('canary ('));
    expect(summary).toMatch(/^canary \(full, at catalog start\): (\d+) of \1 rows pass$/);
    // One line for the run on the terminal; its log line goes to the log file alone.
    expect(lines.filter((line) => line.startsWith('canary') || line.includes('conformance'))).toEqual([
      summary,
    ]);
    const logged = (await readFile(join(scratch.dir, '.catalog/access.log'), 'utf8')).split('\n');
    expect(
      logged.filter((line) => line.includes('"message":"conformance (full, at catalog start)')),
    ).toHaveLength(1);
    const status = await runCatalog(['status', '--json'], { cwd: scratch.dir });
    const report = JSON.parse(status.stdout);
    expect(report.conformance.probe).toBeNull();
    expect(report.conformance.full).toMatchObject({ silent: false, stopped: false, problem: null });
    expect(report.conformance.full.report).toMatchObject({
      beat: 'full',
      trigger: 'start',
      baseUrl: `http://127.0.0.1:${port}`,
      runner: { kind: 'local', pid: child.pid },
      periodSeconds: 3600,
      counts: { fail: 0, notRun: 0 },
    });
    expect(report.conformance.full.line).toMatch(/^(\d+) of \1 rows pass, .* \(at catalog start\)$/);
    // Its key is the monitoring partner's, saved beside the dev key, never printed.
    const key = (await readFile(join(scratch.dir, '.catalog/monitoring-key'), 'utf8')).trim();
    expect(key).toMatch(/^tpc_/);
    expect(shown.map(({ line }) => line).join('\n')).not.toContain(key);
  });

  it('serves on the port and host it is given (or CATALOG_PORT), and a second start leaves the first untouched', async () => {
    expect(url).toBe(`http://127.0.0.1:${port}`);
    const key = /dev key[^:]*: (tpc_\S+)/.exec(lines.join('\n'))?.[1] ?? '';
    const catalog = await httpRequest(url, {
      method: 'GET',
      target: '/api/plans?discipline=running',
      headers: [['X-Api-Key', key]],
    });
    expect(catalog.status).toBe(200);
    const plan = JSON.parse(catalog.body.toString('utf8')).plans[0];
    expect(plan.webUrl).toBe(`http://127.0.0.1:${port}/plans/${plan.id}`);
    // The banner names a plan's page, which opens without a key.
    const page = /a plan's page, for people \(no key\): (http:\/\/\S+)/.exec(lines.join('\n'))?.[1] ?? '';
    expect(page).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/plans/[0-9a-f-]{36}$`));
    expect((await httpRequest(url, { method: 'GET', target: new URL(page).pathname })).status).toBe(200);
    const builds = await readdir(join(scratch.dir, '.catalog/origin/builds'));
    expect(builds).toHaveLength(1);
    const store = await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8');

    // On its port or any other, a second start is told to use the first, or to stop it: not to try a port.
    const running = `catalog: the local stack is already running: process ${child.pid} serves http://127.0.0.1:${port} from .catalog/ (one local stack per checkout); use it at http://127.0.0.1:${port}, or stop it first (Ctrl-C where it runs, or kill ${child.pid}), then start again\n`;
    const second = await runCatalog(['start', '--port', String(port)], { cwd: scratch.dir });
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(running);
    expect(await readdir(join(scratch.dir, '.catalog/origin/builds'))).toEqual(builds);
    expect(await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8')).toBe(store);

    // On another port: the same .catalog/, so refused at once, before anything is built or written.
    const other = await runCatalog(['start', '--port', String(await freePort())], { cwd: scratch.dir });
    expect(other.code).toBe(1);
    expect(other.stderr).toBe(running);
    expect(other.stderr).not.toContain('another port');
    expect(await readdir(join(scratch.dir, '.catalog/origin/builds'))).toEqual(builds);
    expect(await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8')).toBe(store);
    const still = await httpRequest(url, {
      method: 'GET',
      target: '/api/plans?discipline=running',
      headers: [['X-Api-Key', key]],
    });
    expect(still.status).toBe(200);
  });

  it("serves the fixtures' covers itself: coverUrl on its own origin, the PNG from fixtures/covers, on the page too", async () => {
    const key = /dev key[^:]*: (tpc_\S+)/.exec(lines.join('\n'))?.[1] ?? '';
    const answer = await httpRequest(url, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Api-Key', key]],
    });
    const plans = JSON.parse(answer.body.toString('utf8')).plans as {
      webUrl: string;
      coverUrl: string | null;
    }[];
    const covered = plans.filter((plan) => plan.coverUrl !== null);
    expect(covered.length).toBeGreaterThanOrEqual(6);
    for (const plan of covered) {
      const cover = new URL(plan.coverUrl ?? '');
      expect(cover.origin).toBe(url);
      expect(cover.pathname).toMatch(/^\/_local\/covers\/[a-z-]+\.png$/);
      const image = await httpRequest(url, { method: 'GET', target: cover.pathname });
      expect(image.status, cover.pathname).toBe(200);
      expect(image.headers['content-type']).toBe('image/png');
      expect(
        image.body.equals(
          await readFile(join(ROOT, 'fixtures', 'covers', cover.pathname.split('/').pop() ?? '')),
        ),
      ).toBe(true);
      const page = await httpRequest(url, { method: 'GET', target: new URL(plan.webUrl).pathname });
      expect(page.body.toString('utf8')).toContain(`<img src="${plan.coverUrl}" alt=""`);
    }
    for (const target of [
      '/_local/covers/none.png',
      '/_local/covers/../kvs.json',
      '/_local/covers/%2e%2e%2fkvs.json',
    ])
      expect((await httpRequest(url, { method: 'GET', target })).status, target).toBe(404);
  });

  it('takes over the claim of a start that was killed (kill -9)', async () => {
    child.kill('SIGKILL');
    await exited;
    expect(await readFile(join(scratch.dir, '.catalog/stack.json'), 'utf8')).toContain(`"pid":${child.pid}`);
    const port = await freePort();
    // Its own process too: the canary's runner is gone once it stops (below).
    next = await startCatalog(['start', '--port', String(port)], {
      ready: READY,
      cwd: scratch.dir,
      process: true,
    });
    expect(next.url).toBe(`http://127.0.0.1:${port}`);
  });

  it('stopped (SIGTERM), exits 0, leaves no claim on the local stack, and status says the canary stopped with it', async () => {
    // Once its canary's first run has reported.
    await until(() => next?.lines.some((line) => line.startsWith('canary (')) === true);
    expect(await next?.stop()).toBe(0);
    next = undefined;
    await expect(stat(join(scratch.dir, '.catalog/stack.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    const stopped = await runCatalog(['status'], { cwd: scratch.dir });
    expect(stopped.stdout).toMatch(/rows pass, .* ago \(the canary stopped with catalog start\)/);
  });
});

describe('catalog start refuses words after it', () => {
  it('says that npm keeps the options before --, with the line to type instead', async () => {
    // `npm start --port 8790` runs `catalog start 8790`: npm took --port for itself.
    const result = await runCatalog(['start', '8790'], { env: { npm_config_port: '8790' } });
    expect(result).toMatchObject({
      code: 1,
      stderr:
        'catalog: start takes options only, not "8790": npm keeps the options before -- for itself, so write npm start -- --port 8790 (or catalog start --port 8790)\n',
    });
  });
});

describe('catalog serve refuses, before it listens, what it could not serve', () => {
  const scratch = useScratchDir({ prefix: 'catalog-serve-' });
  const storeIn = async (dir: string) => {
    const store = join(dir, 'kvs.json');
    await writeFile(store, EMPTY_STORE);
    return store;
  };

  it.each([
    [
      'an origin that does not exist',
      'none',
      "does not exist (the local stack's is .catalog/origin, which npm start creates); nothing was started",
    ],
    [
      'an origin that is a file',
      'kvs.json',
      'is not a directory (an origin is a directory, or s3://BUCKET); nothing was started',
    ],
  ])('%s', async (_label, name, reason) => {
    const store = await storeIn(scratch.dir);
    const origin = join(scratch.dir, name);
    // In-process, a serve that listened would have run to its stop and exited 0.
    const result = await runCatalog(['serve', '--origin', origin, '--store', store, '--port', '0']);
    expect(result).toMatchObject({ code: 1, stderr: `catalog: --origin ${origin}: ${reason}\n` });
    expect(result.stderr).not.toContain('listening');
  });

  it('a flat catalog build --out directory, whatever its store names, saying how to serve a build', async () => {
    // A few of the fixtures' rows: what is refused or served is the layout, whatever the plans.
    const source = await fewPlansFile();
    const flat = join(scratch.dir, 'flat');
    expect((await runCatalog(['build', '--out', flat, '--source', source])).code).toBe(0);
    const deployment = join(scratch.dir, 'new');
    const store = join(deployment, 'kvs.json');
    expect((await runCatalog(['keys', 'issue', '--partner', 'dev', '--store', store])).code).toBe(0);
    const published = await runCatalog([
      'publish',
      ...['--origin', join(deployment, 'origin'), '--store', store, '--source', source],
      ...['--base-url', 'http://127.0.0.1:8790'],
    ]);
    expect(published.code, published.stderr).toBe(0);
    for (const named of [store, await storeIn(scratch.dir)]) {
      const refused = await runCatalog(['serve', '--origin', flat, '--store', named, '--port', '0']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^catalog: --origin ${flat} is a flat build \\(catalog build --out\\), for reading, not a served layout: .*To serve a build, publish it: .*catalog publish --origin NEW/origin --store NEW/kvs.json --source FILE.*; nothing was started\n$`,
        ),
      );
    }
    // The way it names: the new deployment serves.
    const served = await startServe(['--origin', join(deployment, 'origin'), '--store', store]);
    try {
      const home = await httpRequest(served.url, { method: 'GET', target: '/' });
      expect(home.status).toBe(200);
    } finally {
      await served.stop();
    }
  });

  it('no store file', async () => {
    await mkdir(join(scratch.dir, 'origin'));
    const store = join(scratch.dir, 'none.json');
    const result = await runCatalog(['serve', '--origin', join(scratch.dir, 'origin'), '--store', store]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^catalog: store ${store} does not exist; check the path`));
  });

  it('warns, at start, of a store whose live build the origin does not hold', async () => {
    const origin = join(scratch.dir, 'origin');
    await mkdir(join(origin, 'builds'), { recursive: true });
    const store = join(scratch.dir, 'kvs.json');
    await writeFile(
      store,
      JSON.stringify({ data: [{ key: 'build:live', value: '20260101T000000Z-0000abcd' }] }),
    );
    const served = await startServe(['--origin', origin, '--store', store]);
    try {
      expect(served.lines).toContain(
        `catalog: warning: --store ${store} names the live build 20260101T000000Z-0000abcd, which --origin ${origin} does not hold: every catalog request gets the 500 page (catalog status --origin ${origin} --store ${store} says more)`,
      );
    } finally {
      await served.stop();
    }
  });

  it('a host it cannot listen on, saying why: not an IP address, or no address of this machine', async () => {
    const origin = join(scratch.dir, 'origin');
    await mkdir(origin, { recursive: true });
    const store = await storeIn(scratch.dir);
    const serve = (host: string) =>
      runCatalog(['serve', '--origin', origin, '--store', store, '--port', '0', '--host', host]);
    const machine = 'give an address of this machine, such as 127.0.0.1 (0.0.0.0: all of them)';
    expect(await serve('999.1.1.1')).toMatchObject({
      code: 1,
      stderr: `catalog: --host "999.1.1.1": cannot be listened on: it is not an IP address (an IPv4 address is four numbers from 0 to 255), nor a host name; ${machine}\n`,
    });
    // 192.0.2.1 is reserved for documentation (RFC 5737): no machine has it.
    expect((await serve('192.0.2.1')).stderr).toMatch(
      /^catalog: cannot listen on 192\.0\.2\.1:0: 192\.0\.2\.1 is no address of this machine \(EADDRNOTAVAIL\); give a --host this machine has, such as 127\.0\.0\.1 \(0\.0\.0\.0: all of them\)\n$/m,
    );
    // What a host name no resolver knows, or a port this process may not bind, is said as (no lookup, no bind here).
    const failed = (code: string, port = 8787) =>
      renderMessage(
        cannotListen('catalog.internal', port, Object.assign(new Error(code), { code }), 'in use').message,
        'cli',
      );
    expect(failed('ENOTFOUND')).toBe(
      'cannot listen on catalog.internal:8787: catalog.internal is not an IP address, and no host of that name is known (ENOTFOUND); give a --host this machine has, such as 127.0.0.1 (0.0.0.0: all of them)',
    );
    expect(failed('EACCES', 80)).toBe(
      'cannot listen on catalog.internal:80: this process may not use port 80 (EACCES: below 1024, a port needs privileges); give a --port from 1024',
    );
    expect(failed('EADDRINUSE')).toBe('in use');
  });

  it('a port in use, in one line', async () => {
    const taken: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
    );
    try {
      const origin = join(scratch.dir, 'origin');
      const store = await storeIn(scratch.dir);
      const published = await runCatalog([
        'publish',
        ...['--origin', origin, '--store', store, '--source', 'fixtures/plans.json'],
        ...['--base-url', 'http://127.0.0.1:8790'],
      ]);
      expect(published.code, published.stderr).toBe(0);
      const result = await runCatalog([
        'serve',
        '--origin',
        origin,
        '--store',
        store,
        '--port',
        String(port),
      ]);
      expect(result).toMatchObject({
        code: 1,
        stderr: `catalog: 127.0.0.1:${port} is in use (another catalog serve, npm start, or another program); stop it, or pass another --port\n`,
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
