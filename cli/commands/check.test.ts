/**
 * `catalog check` against real local edges: `catalog serve` on the fixtures (every row passes), and edges
 * broken on purpose, where the row that covers the breakage must fail and say what it expected and got.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../app/check.ts';
import { blackBoxCases, checkSteps } from '../../app/check-rows.ts';
import { buildObject, type Manifest, manifestEntry } from '../../builder/build.ts';
import {
  BUILDS_PREFIX,
  catalogFile,
  DISCIPLINES,
  HEADER_VALUES,
  MANIFEST,
  ORIGIN_FILES,
} from '../../contract/index.ts';
import { PAGE_PLAN_ID, PARTNER_ORIGIN } from '../../gateway/cases.ts';
import { Edge } from '../../gateway/local/edge.ts';
import { EdgeOrigin } from '../../gateway/local/origin.ts';
import { loadFunction } from '../../gateway/local/sandbox.ts';
import { createEdgeServer, listen, shutdown } from '../../gateway/local/server.ts';
import { WatchedKeyValueStore } from '../../gateway/local/store.ts';
import { generateKey } from '../../keys/keys.ts';
import { DirectoryOrigin } from '../../publish/dir-origin.ts';
import { objectToWrite } from '../../publish/origin.ts';
import { ROOT, runCatalog, type ServeProcess, startServe } from '../../testing/cli.ts';
import { freePort, refusedPort } from '../../testing/postgres.ts';
import { builtFunctionCode, createTestWorld, type TestWorld } from '../../testing/world.ts';

/** The port this file's edges are served on, one after another: one address, so its worlds are one build. */
let filePort: Promise<number> | undefined;

/** A world whose catalog links to the address it is going to be served on. */
async function servedWorld() {
  filePort ??= freePort();
  const port = await filePort;
  const world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
  return { port, world };
}

const check = (url: string, key: string, ...args: string[]) =>
  runCatalog(['check', '--base-url', url, ...args], { env: { CATALOG_CHECK_KEY: key } });

const report = (stdout: string) => JSON.parse(stdout) as CheckReport;
const row = (parsed: CheckReport, name: string) => {
  const found = parsed.rows.find((r) => r.name === name);
  if (!found) throw new Error(`no row "${name}"`);
  return found;
};
const failed = (parsed: CheckReport) => parsed.rows.filter((r) => r.verdict === 'fail').map((r) => r.name);

/** The black-box cases that need a CORS origin set. */
const CORS_CASES = blackBoxCases().filter((c) => c.cors !== undefined);

describe('catalog check against catalog serve on the fixtures', () => {
  let world: TestWorld;
  let server: ServeProcess;
  let url: string;
  let firstPlan: string;
  beforeAll(async () => {
    const served = await servedWorld();
    world = served.world;
    server = await startServe([
      '--origin',
      world.originDir,
      '--store',
      world.stores.plain,
      '--port',
      String(served.port),
    ]);
    url = server.url;
    firstPlan = (JSON.parse(world.objects.all.toString('utf8')) as { plans: { id: string }[] }).plans[0]
      ?.id as string;
  });
  afterAll(async () => {
    await server?.stop();
    await world?.remove();
  });

  it('passes every row with CORS off, skipping only the rows that need an origin, and says why', async () => {
    const result = await check(url, world.keys.valid, '--cors-origin', 'off');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    const rows = lines.filter((line) => /^(PASS|FAIL|SKIP|WARN) /.test(line));
    expect(rows.filter((line) => !line.startsWith('PASS'))).toEqual(
      CORS_CASES.map((c) =>
        expect.stringMatching(new RegExp(`^SKIP  ${c.name}.*--cors-origin says CORS is off`)),
      ),
    );
    expect(result.stdout).toContain(
      `${url}: ${rows.length - CORS_CASES.length} passed, 0 failed, ${CORS_CASES.length} skipped, 0 warnings`,
    );
    // The pages are checked with the deployment's first plan, not the fixtures' page plan.
    expect(firstPlan).not.toBe(PAGE_PLAN_ID);
    expect(result.stdout).toContain(`plan pages: ${firstPlan} (the catalog's first plan)`);
    expect(result.stdout).toMatch(
      new RegExp(
        `^PASS  a percent-encoded id +GET /plans/%${firstPlan.charCodeAt(0).toString(16).toUpperCase()}${firstPlan.slice(1)}$`,
        'm',
      ),
    );
  });

  it('runs one row per black-box case of the table and one per catalog check, the key nowhere', async () => {
    const result = await check(url, world.keys.valid, '--cors-origin', 'off', '--json');
    expect(result.code).toBe(0);
    const parsed = report(result.stdout);
    expect(
      parsed.rows
        .filter((r) => r.source === 'case')
        .map((r) => r.name)
        .sort(),
    ).toEqual(
      blackBoxCases()
        .map((c) => c.name)
        .sort(),
    );
    // Five rows of the whole catalog, one per discipline's, the encodings' and openapi.yaml's.
    expect(parsed.rows.filter((r) => r.source === 'catalog').map((r) => r.verdict)).toEqual(
      Array(5 + DISCIPLINES.length + 2).fill('pass'),
    );
    expect(parsed).toMatchObject({
      baseUrl: url,
      cors: 'off',
      reachable: true,
      keyRefused: false,
      exitCode: 0,
    });
    // The forged key is in no output either: the request shows its placeholder.
    expect(row(parsed, 'a forged key with the right shape').request).toBe('GET /api/plans');
    expect(row(parsed, 'the key in the query string').request).toBe('GET /api/plans?api_key={valid}');
    expect(result.stdout + result.stderr).not.toContain(world.keys.valid);
  });

  it('without --cors-origin reads nothing about CORS: skips its rows and says to give it', async () => {
    const result = await check(url, world.keys.valid, '--json');
    expect(result.code).toBe(0);
    const parsed = report(result.stdout);
    expect(parsed.cors).toBe('unchecked');
    expect(parsed.rows.filter((r) => r.verdict === 'skip').map((r) => [r.name, r.lines])).toEqual(
      CORS_CASES.map((c) => [
        c.name,
        ['CORS not checked: give --cors-origin (the origin the operator set, or off)'],
      ]),
    );
  });

  it('with the origin the operator set, runs and passes every CORS row; claiming CORS off then fails', async () => {
    const origin = 'https://app.partner.example';
    expect(origin).not.toBe(PARTNER_ORIGIN);
    const set = await runCatalog(['cors', 'set', origin, '--store', world.stores.plain]);
    expect(set.code, set.stderr).toBe(0);
    try {
      await sleep(300); // catalog serve reads the store file again on change
      const on = await check(url, world.keys.valid, '--cors-origin', origin, '--json');
      expect(on.code, on.stdout).toBe(0);
      const parsed = report(on.stdout);
      expect(parsed.counts).toMatchObject({ fail: 0, skip: 0 });
      expect(row(parsed, 'OPTIONS preflight with CORS').verdict).toBe('pass');

      const off = await check(url, world.keys.valid, '--cors-origin', 'off', '--json');
      expect(off.code).toBe(1);
      expect(row(report(off.stdout), 'the whole catalog').lines).toEqual([
        `access-control-allow-origin: expected none (no CORS origin is set), got "${origin}"`,
      ]);
      expect(report(off.stdout).corsCause).toMatch(
        new RegExp(`^the deployment's CORS origin is "${origin}", while --cors-origin says off \\(`),
      );
    } finally {
      const clear = await runCatalog(['cors', 'clear', '--store', world.stores.plain]);
      expect(clear.code, clear.stderr).toBe(0);
      await sleep(300);
    }
  });

  it('says once what every CORS row failing the same way likely means: here, CORS is off', async () => {
    const result = await check(url, world.keys.valid, '--cors-origin', 'https://x.example');
    expect(result.code).toBe(1);
    const failing = result.stdout.match(/^FAIL /gm)?.length ?? 0;
    expect(failing).toBeGreaterThan(100);
    const cause = `the deployment has no CORS origin set, while --cors-origin says https://x.example (every one of the ${failing} rows failing on Access-Control-Allow-Origin got none): catalog cors show where its keys are says which is meant; a change takes about a minute to reach the edge`;
    expect(result.stdout.split('\n').filter((line) => line.includes('likely cause'))).toEqual([
      `likely cause of the CORS failures: ${cause}`,
    ]);
    expect(result.stderr).toMatch(new RegExp(`^catalog: ${failing} of \\d+ rows failed against ${url} \\(`));
    expect(result.stderr).toContain(`(likely cause: ${cause}): "the whole catalog", `);
  });

  it('warns, without failing, when the catalog is older than --max-age', async () => {
    // Older than a second, as the world was built (it may have been built a while ago, for an earlier world).
    const { generatedAt } = JSON.parse(world.objects.all.toString('utf8')) as { generatedAt: string };
    await sleep(Math.max(0, 1100 - (Date.now() - Date.parse(generatedAt))));
    const result = await check(url, world.keys.valid, '--cors-origin', 'off', '--max-age', '1s');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^WARN {2}the whole catalog: generatedAt within --max-age \(else a warning\) +GET \/api\/plans\n {6}generatedAt \S+ is \d+s old, more than --max-age 1s/m,
    );
    expect(result.stdout).toContain(`0 failed, ${CORS_CASES.length} skipped, 1 warning of`);
  });

  it('exits 1 and says so when the key is refused, never showing the key', async () => {
    const key = generateKey();
    const result = await check(url, key, '--cors-origin', 'off');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL {2}the whole catalog +GET \/api\/plans\n {6}status: expected 200, got 401 \(tag:training-plan-catalog,2026:problem:unauthorized\)$/m,
    );
    expect(result.stdout).toContain('CATALOG_CHECK_KEY was refused (401)');
    // One diagnosis, not a failure per row: the rows that would send the refused key again are not sent.
    const parsed = report((await check(url, key, '--cors-origin', 'off', '--json')).stdout);
    const notRun = parsed.rows.filter((r) => r.verdict === 'not-run');
    expect(failed(parsed)).toEqual(['the whole catalog']);
    expect(notRun.length).toBeGreaterThan(0);
    expect(new Set(notRun.flatMap((r) => r.lines))).toEqual(
      new Set(['not sent: the key was refused by the first answer (401), see the first row']),
    );
    expect(result.stderr).toBe(
      `catalog: 1 of ${parsed.rows.length} rows failed against ${url} (CATALOG_CHECK_KEY was refused): "the whole catalog"; ${notRun.length} not run (the key was refused)\n`,
    );
    expect(result.stdout + result.stderr).not.toContain(key);
  });
});

describe('catalog check refuses what it cannot use', () => {
  it('exits 2 when the service cannot be reached at all', async () => {
    const url = `http://127.0.0.1:${await refusedPort()}`;
    const result = await check(url, generateKey(), '--timeout', '2s');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^catalog: ${url} cannot be reached: no answer: cannot reach the service \\(connection refused`,
      ),
    );
    expect(result.stdout).toContain('0 passed, 1 failed, 0 skipped, 0 warnings of 1 rows');
  });

  it('names a missing key, a key of the wrong shape (not shown) and a bad --cors-origin', async () => {
    const none = await runCatalog(['check', '--base-url', 'https://catalog.example.com']);
    expect(none).toMatchObject({ code: 1, stderr: 'catalog: CATALOG_CHECK_KEY: is required\n' });
    const bad = await runCatalog(
      ['check', '--base-url', 'https://catalog.example.com', '--cors-origin', 'https://a.example/'],
      {
        env: { CATALOG_CHECK_KEY: 'tpc_short-secret' },
      },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'catalog: CATALOG_CHECK_KEY: is not an API key (tpc_ and 43 base64url characters); the value is not shown; --cors-origin "https://a.example/": must not end with a slash: https://a.example (or off: no CORS origin is set)\n',
    );
    const url = await runCatalog(['check', '--base-url', 'https://catalog.example.com/api'], {
      env: { CATALOG_CHECK_KEY: generateKey() },
    });
    expect(url.stderr).toMatch(
      /^catalog: --base-url "https:\/\/catalog.example.com\/api": must be http\(s\):\/\/host\[:port\]/,
    );
  });

  it.each([
    ['http://user:s3cretPW@127.0.0.1:1', 'http://user:***@127.0.0.1:1'],
    ['http:\\\\user:s3cretPW@127.0.0.1:1', 'http:\\\\user:***@127.0.0.1:1'],
  ])('refuses --base-url %s without echoing its password', async (given, shown) => {
    const refused = await runCatalog(['check', '--base-url', given], {
      env: { CATALOG_CHECK_KEY: generateKey() },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `catalog: --base-url ${JSON.stringify(shown)}: must be http(s)://host[:port] with no path, query or fragment\n`,
    );
    const fromEnv = await runCatalog(['check'], {
      env: { CATALOG_CHECK_KEY: generateKey(), CATALOG_BASE_URL: given },
    });
    expect(fromEnv.stderr).toContain(`CATALOG_BASE_URL ${JSON.stringify(shown)}`);
    expect(fromEnv.stderr).not.toContain('s3cretPW');
  });
});

describe('catalog check against broken edges: the row that covers the breakage fails', () => {
  it('an edge whose viewer-response function drops Vary', async () => {
    const { port, world } = await servedWorld();
    const kvs = new WatchedKeyValueStore(world.stores.plain);
    await kvs.load();
    const code = (name: string) => readFile(join(ROOT, 'dist/gateway', `${name}.js`), 'utf8');
    // The built bundle, with its handler wrapped to remove the header from whatever it answers.
    const dropsVary = `${await code('viewer-response')}
var builtHandler = handler;
handler = async function (event) { var response = await builtHandler(event); delete response.headers.vary; return response; };`;
    const edge = new Edge({
      viewerRequest: loadFunction(await builtFunctionCode('viewer-request'), { kvs }),
      viewerResponse: loadFunction(dropsVary, { kvs }),
      origin: new EdgeOrigin(new DirectoryOrigin(world.originDir)),
    });
    const http = createEdgeServer({ edge, log: () => {} });
    await listen(http, port, '127.0.0.1');
    try {
      const result = await check(
        `http://127.0.0.1:${port}`,
        world.keys.valid,
        '--cors-origin',
        'off',
        '--json',
      );
      expect(result.code).toBe(1);
      const parsed = report(result.stdout);
      expect(row(parsed, 'the whole catalog')).toMatchObject({
        verdict: 'fail',
        lines: ['vary: expected "X-Api-Key, Accept-Encoding", got none'],
      });
      expect(row(parsed, 'openapi.yaml').lines).toEqual(['vary: expected "Accept-Encoding", got none']);
      expect(row(parsed, 'a plan page').lines).toEqual(['vary: expected "Accept-Encoding", got none']);
      // What the function generates itself, and what no Vary is promised on, still passes.
      for (const name of ['no key', 'HEAD', 'an unknown value', 'a plan that is in no catalog'])
        expect(row(parsed, name).verdict, name).toBe('pass');
      expect(result.stderr).toMatch(
        /^catalog: \d+ of \d+ rows failed against .*: "the whole catalog", "running plans", /,
      );
    } finally {
      await shutdown(http);
      await world.remove();
    }
  });

  it('a build whose catalogs have two plans out of order (the manifest agreeing)', async () => {
    const { port, world } = await servedWorld();
    const origin = new DirectoryOrigin(world.originDir);
    const manifest = JSON.parse(await readFile(join(world.buildDir, MANIFEST), 'utf8')) as Manifest;
    const objects = { ...manifest.objects };
    let swapped: string[] = [];
    for (const file of [ORIGIN_FILES.all, catalogFile('running')]) {
      const catalog = JSON.parse(await readFile(join(world.buildDir, file), 'utf8')) as {
        plans: { title: string; discipline: string }[];
      };
      const at = catalog.plans.findIndex((plan) => plan.discipline === 'running');
      const [a, b] = [catalog.plans[at], catalog.plans[at + 1]] as [
        { title: string; discipline: string },
        { title: string; discipline: string },
      ];
      catalog.plans.splice(at, 2, b, a);
      swapped = [b.title, a.title];
      const body = Buffer.from(JSON.stringify(catalog));
      for (const object of [
        buildObject(file, [body], { contentType: HEADER_VALUES.json }),
        buildObject(`${file}.br`, [brotliCompressSync(body)], {
          contentType: HEADER_VALUES.json,
          contentEncoding: 'br',
        }),
        buildObject(`${file}.gz`, [gzipSync(body)], {
          contentType: HEADER_VALUES.json,
          contentEncoding: 'gzip',
        }),
      ]) {
        await origin.put(objectToWrite(object, `builds/${world.buildId}/${object.key}`), { overwrite: true });
        objects[object.key] = manifestEntry(object);
      }
      if (file === ORIGIN_FILES.all) {
        const plansHash = createHash('sha256').update(JSON.stringify(catalog.plans)).digest('hex');
        const text = `${JSON.stringify({ ...manifest, plansHash, objects }, null, 2)}\n`;
        const written = buildObject(MANIFEST, [Buffer.from(text)], { contentType: HEADER_VALUES.json });
        await origin.put(objectToWrite(written, `builds/${world.buildId}/${MANIFEST}`), { overwrite: true });
      }
    }
    const server = await startServe([
      '--origin',
      world.originDir,
      '--store',
      world.stores.plain,
      '--port',
      String(port),
    ]);
    try {
      const result = await check(server.url, world.keys.valid, '--cors-origin', 'off', '--json');
      expect(result.code).toBe(1);
      const parsed = report(result.stdout);
      expect(failed(parsed)).toEqual(['the whole catalog: ordered by discipline, then title, then id']);
      const [line] = row(parsed, failed(parsed)[0] as string).lines;
      expect(line).toMatch(
        new RegExp(
          `^plans\\[0\\] \\(running, "${swapped[0]}", [0-9a-f-]{36}\\) comes before plans\\[1\\] \\(running, "${swapped[1]}", [0-9a-f-]{36}\\)$`,
        ),
      );
    } finally {
      await server.stop();
      await world.remove();
    }
  });

  it('an origin whose brotli catalog decodes to other bytes', async () => {
    const { port, world } = await servedWorld();
    const key = `${BUILDS_PREFIX}${world.buildId}/${ORIGIN_FILES.all}.br`;
    const title = (JSON.parse(world.objects.all.toString('utf8')) as { plans: { title: string }[] }).plans[0]
      ?.title as string;
    const other = Buffer.from(world.objects.all.toString('utf8').replace('"title":"', '"title":"Not '));
    await new DirectoryOrigin(world.originDir).put(
      objectToWrite(
        buildObject(key, [brotliCompressSync(other)], {
          contentType: HEADER_VALUES.json,
          contentEncoding: 'br',
        }),
        key,
      ),
      { overwrite: true },
    );
    const server = await startServe([
      '--origin',
      world.originDir,
      '--store',
      world.stores.plain,
      '--port',
      String(port),
    ]);
    try {
      const result = await check(server.url, world.keys.valid, '--cors-origin', 'off', '--json');
      expect(result.code).toBe(1);
      const parsed = report(result.stdout);
      expect(failed(parsed)).toEqual([
        'every catalog: gzip and br decode to the identity bytes',
        'the whole catalog in brotli',
      ]);
      expect(row(parsed, 'every catalog: gzip and br decode to the identity bytes').lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^the whole catalog in br: decodes to other bytes than identity \\(\\d+ bytes against \\d+, first difference at byte \\d+: …[^…]*"title":"Not ${title}",[^…]*… where …[^…]*"title":"${title}",[^…]*… was expected\\)$`,
          ),
        ),
      ]);
      expect(row(parsed, 'the whole catalog in brotli').lines).toEqual([
        expect.stringMatching(/^body: decoded from br, is not the whole catalog \(/),
      ]);
    } finally {
      await server.stop();
      await world.remove();
    }
  });
});

/**
 * A hostile deployment on 127.0.0.1: `answer` answers every request. Bodies are streamed from one small
 * buffer, so the test holds none of what it sends. `released` resolves once the client has closed every
 * connection it opened: a check that left one open (a trickle still coming, a body still being sent) never
 * resolves it, as its process would never end.
 */
async function hostileServer(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  const http = createServer(answer);
  const closed: Promise<void>[] = [];
  http.on('connection', (socket: Socket) => {
    closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
  });
  const { port } = await listen(http, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    released: async () => {
      await Promise.all(closed);
    },
    close: () => shutdown(http),
  };
}

/** `times` copies of `chunk`, as a stream into `response` (which may be cut off by the client). */
const sendRepeated = (response: ServerResponse, chunk: Buffer, times: number) =>
  pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < times; i += 1) yield chunk;
      })(),
    ),
    response,
  ).catch(() => {});

const notFound = (response: ServerResponse) => void response.writeHead(404, { 'content-length': '0' }).end();

describe('catalog check against a hostile deployment: every answer has a deadline and a size bound', () => {
  /**
   * The check (in this process: exit code, stdout and stderr as its process's), which must leave nothing open:
   * it ends only once the deployment has seen every connection it opened closed.
   */
  const checkRun = async (server: { url: string; released(): Promise<void> }, ...args: string[]) => {
    const result = await check(server.url, generateKey(), '--cors-origin', 'off', '--json', ...args);
    await server.released();
    return result;
  };

  it('a body sent a byte at a time fails its row at --timeout, however often the bytes come', async () => {
    let everything = false;
    const trickle = (response: ServerResponse) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // Far more often than the timeout: no pause in the body is ever as long as it.
      const timer = setInterval(() => response.write(' '), 200);
      response.on('close', () => clearInterval(timer));
    };
    const trickled = ['/openapi.yml', '/openapi.yaml/'];
    const server = await hostileServer((request, response) =>
      everything || trickled.includes(request.url ?? '') ? trickle(response) : notFound(response),
    );
    try {
      const result = await checkRun(server, '--timeout', '1s');
      expect(result.code, result.stderr).toBe(1);
      const timedOut = report(result.stdout).rows.filter((r) =>
        isDeepStrictEqual(r.lines, ['no complete answer within --timeout 1s']),
      );
      expect(timedOut.map((r) => r.request)).toEqual(trickled.map((path) => `GET ${path}`));

      // When the very first answer never completes, the check stops there.
      everything = true;
      const first = await checkRun(server, '--timeout', '1s');
      expect(first.code).toBe(2);
      expect(first.stderr).toBe(
        `catalog: ${server.url} cannot be reached: no complete answer within --timeout 1s\n`,
      );
    } finally {
      await server.close();
    }
  });

  it('a deployment that trickles every answer after the first ends by --deadline, listing the rows not run', async () => {
    let answered = 0;
    const server = await hostileServer((_request, response) => {
      answered += 1;
      if (answered === 1) return notFound(response);
      response.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => response.write(' '), 200);
      response.on('close', () => clearInterval(timer));
    });
    try {
      const started = performance.now();
      // Each answer's own deadline is far away: only the run's deadline can end it.
      const result = await checkRun(server, '--timeout', '60s', '--deadline', '3s');
      const elapsed = performance.now() - started;
      expect(result.code, result.stderr).toBe(1);
      const parsed = report(result.stdout);
      const notRun = parsed.rows.filter((r) => r.verdict === 'not-run');
      expect(parsed.rows.filter((r) => r.verdict === 'pass')).toHaveLength(0);
      expect(notRun.length).toBe(parsed.rows.length - parsed.counts.fail - parsed.counts.skip);
      expect(notRun[0]?.lines).toEqual(['not run: --deadline 3s passed while its answer came']);
      expect(notRun.at(-1)?.lines).toEqual(['not run: --deadline 3s passed before it']);
      expect(parsed.deadline).toEqual({ ms: 3000, reached: true });
      expect(result.stderr).toMatch(new RegExp(`; ${notRun.length} not run \\(--deadline 3s passed\\)\n$`));
      // The bound the run promises: its deadline, plus a second.
      expect(parsed.durationMs).toBeLessThan(3000 + 1000);
      console.log(
        `check --deadline 3s against a trickling server: run ${parsed.durationMs} ms, all connections closed after ${Math.round(elapsed)} ms`,
      );
    } finally {
      await server.close();
    }
  });

  it('a body larger than any catalog fails its row, saying so, without being read to its end', async () => {
    const megabyte = Buffer.alloc(1024 * 1024, 0x20);
    let answered = 0;
    const server = await hostileServer((_request, response) => {
      answered += 1;
      if (answered > 1) return notFound(response);
      response.writeHead(200, { 'content-type': 'application/json' });
      void sendRepeated(response, megabyte, 100);
    });
    try {
      const result = await checkRun(server);
      expect(result.code, result.stderr).toBe(1);
      const parsed = report(result.stdout);
      expect(parsed.rows[0]).toMatchObject({
        name: 'the whole catalog',
        verdict: 'fail',
        lines: ['the answer is larger than 64 MiB, far more than any catalog: not read further'],
      });
      // The deployment answered: the check goes on, to every row.
      expect(parsed.reachable).toBe(true);
      expect(parsed.rows.length).toBe(checkSteps().length);
    } finally {
      await server.close();
    }
  });

  it('a gzip bomb fails its row, saying what it decodes to, and is decoded no further', async () => {
    // 16 MiB of zeros in 16 KB of gzip; 64 members of it decode to 1 GiB.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    const server = await hostileServer((request, response) => {
      if (request.headers['accept-encoding'] !== 'gzip') return notFound(response);
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      void sendRepeated(response, member, 64);
    });
    try {
      const result = await checkRun(server);
      expect(result.code, result.stderr).toBe(1);
      expect(row(report(result.stdout), 'Accept-Encoding gzip').lines).toContain(
        'body: cannot be decoded as gzip (it decodes to more than 64 MiB, far more than any catalog)',
      );
    } finally {
      await server.close();
    }
  });
});
