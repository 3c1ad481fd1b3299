/**
 * `catalog status` as a monitor runs it: real `catalog` processes on a local origin directory and store file
 * (the same code as S3 and KeyValueStore, which app/status.test.ts runs on s3rver and the KVS stand-in), after
 * real `catalog publish` runs; and the record those runs leave, which the edge never serves.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hostname } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { StatusReport } from '../../app/status.ts';
import { CATALOGS } from '../../contract/index.ts';
import { fewPlansFile } from '../../testing/aws.ts';
import {
  httpRequest,
  localTargetEnv,
  makeStore,
  runCatalog,
  spawnCatalog,
  startServe,
  withoutTarget,
} from '../../testing/cli.ts';
import { planCountsText } from '../../testing/counts.ts';
import { refusedPort } from '../../testing/postgres.ts';
import { useScratchDir } from '../../testing/scratch.ts';

const scratch = useScratchDir({ prefix: 'catalog-status-cli-' });

/** The source the commands publish: a few plans of the fixtures (testing/aws.ts), 14: 10 running, 4 strength. */
let PLANS = '';
beforeAll(async () => {
  PLANS = await fewPlansFile();
});

/** The environment of a `catalog` child working on the scratch origin and store, with those plans. */
const env = (extra: Record<string, string> = {}) =>
  localTargetEnv(scratch.dir, { CATALOG_SOURCE: PLANS, ...extra });

/** Publishes those plans; with `key`, issues partner acme a key first, as a deployment has one. */
async function publishPlans(key = true): Promise<string> {
  if (key) expect((await runCatalog(['keys', 'issue', '--partner', 'acme'], { env: env() })).code).toBe(0);
  const published = await runCatalog(['publish'], { env: env() });
  expect(published.code, published.stderr).toBe(0);
  return String((JSON.parse(published.stdout) as { buildId: string }).buildId);
}

async function statusJson(
  args: string[] = [],
): Promise<{ code: number | null; report: StatusReport; stderr: string }> {
  const result = await runCatalog(['status', '--json', ...args], { env: env() });
  expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  return { code: result.code, report: StatusReport.parse(JSON.parse(result.stdout)), stderr: result.stderr };
}

/** The words of a command line as a POSIX shell splits them, for the quoting status writes ('…', '\\''). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/(?:[^\s']+|'[^']*')+/g)].map((match) =>
    match[0].replace(/'([^']*)'/g, '$1').replace(/\\'/g, "'"),
  );
}

describe('catalog status', () => {
  it('exits 0 and prints the table after a publish: live build, age, plans, objects, pin, last run, keys, CORS', async () => {
    const buildId = await publishPlans();
    const result = await runCatalog(['status'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const rows = Object.fromEntries(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => /^(\S+(?: \S+)?)\s{2,}(.*)$/.exec(line)?.slice(1) ?? [line, '']),
    );
    expect(rows).toMatchObject({
      'LIVE BUILD': buildId,
      PLANS: `14 (${planCountsText({ running: 10, strength: 4 })})`,
      PINNED: 'no',
      KEYS: 'acme 1',
      'CORS ORIGIN': 'none (CORS off)',
      STATUS: 'healthy',
    });
    expect(result.stdout).toMatch(/^GENERATED\s+\S+Z \(\d+s ago\)$/m);
    expect(result.stdout).toMatch(/^CONFIRMED\s+\S+Z \(\d+s ago\)$/m);
    expect(result.stdout).toMatch(/^OBJECTS\s+all \d+ match the manifest$/m);
    expect(result.stdout).toMatch(
      new RegExp(`^LAST RUN\\s+published at \\S+Z: published build ${buildId} \\(14 plans\\)`, 'm'),
    );
  });

  it('after a run whose source is down: the record says failed and why, and status exits 1 saying it', async () => {
    const buildId = await publishPlans();
    const source = `http://127.0.0.1:${await refusedPort()}/plans.json`;
    const failed = await runCatalog(['publish', '--source', source, '--source-retries', '0'], { env: env() });
    expect(failed.code).toBe(1);
    expect(withoutTarget(failed.stderr)).toMatch(
      /^catalog: source http:\/\/127\.0\.0\.1:\d+\/plans\.json: .*connection refused/,
    );

    const record = JSON.parse(await readFile(join(scratch.dir, 'origin', 'state', 'last-run.json'), 'utf8'));
    expect(record).toMatchObject({ outcome: 'failed', error: 'SourceError', buildId: null });
    expect(record.reason).toBe(
      withoutTarget(failed.stderr)
        .replace(/^catalog: /, '')
        .trim(),
    );

    const human = await runCatalog(['status'], { env: env() });
    expect(human.code).toBe(1);
    expect(human.stderr).toBe(
      `catalog: degraded: the last run (finished ${record.finished}) failed: ${record.reason}\n`,
    );
    const { code, report } = await statusJson();
    expect(code).toBe(1);
    expect(report).toMatchObject({ health: 'degraded', live: { buildId }, lastRun: { outcome: 'failed' } });
  });

  it('exits 1 with no usable key, since every partner request would get 401', async () => {
    await publishPlans(false);
    const result = await runCatalog(['status'], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `catalog: degraded: no usable API key in ${join(scratch.dir, 'kvs.json')}: every partner request gets 401; issue one: catalog keys issue --partner LABEL\n`,
    );
  });

  it('does not forget a failed run when a busy one follows, and counts a publish killed with kill -9 as failed', async () => {
    await publishPlans();
    const failed = await runCatalog(['publish', '--source', join(scratch.dir, 'gone.json')], { env: env() });
    expect(failed.code).toBe(1);
    const recordPath = join(scratch.dir, 'origin', 'state', 'last-run.json');
    const failure = JSON.parse(await readFile(recordPath, 'utf8'));

    // A real publish takes the run lock, then waits for a source that never answers; a second is busy.
    let asked: () => void = () => {};
    const reached = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const sockets = new Set<Socket>();
    const source: Server = createServer(() => asked());
    source.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    const port = (source.address() as { port: number }).port;
    const stalled = spawnCatalog(
      ['publish', '--source', `http://127.0.0.1:${port}/plans.json`, '--source-headers-timeout', '60s'],
      { env: env() },
    );
    const killed = new Promise<NodeJS.Signals | null>((resolve) =>
      stalled.once('exit', (_code, signal) => resolve(signal)),
    );
    try {
      await reached;
      const busy = await runCatalog(['publish'], { env: env() });
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/busy: another run holds the run lock/);
      stalled.kill('SIGKILL');
      expect(await killed).toBe('SIGKILL');
    } finally {
      stalled.kill('SIGKILL');
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => source.close(resolve));
    }
    const last = JSON.parse(await readFile(recordPath, 'utf8'));
    expect(last.outcome).toBe('busy');
    const lock = JSON.parse(await readFile(join(scratch.dir, 'origin', 'state', 'run-lock.json'), 'utf8'));

    const status = await runCatalog(['status'], { env: env() });
    expect(status.code).toBe(1);
    const reasons = status.stderr.replace(/^catalog: degraded: /, '').trimEnd();
    expect(reasons).toBe(
      [
        `the run that finished ${failure.finished} failed: ${failure.reason}; no run has succeeded since (the last, busy, finished ${last.finished})`,
        `a run never finished: catalog publish (pid ${stalled.pid} on ${hostname()}, since ${lock.since}, lock until ${lock.expires}) has exited without recording how it ended (killed, or out of time); it counts as failed until a run succeeds`,
      ].join('; '),
    );
  });

  it('exits 1 when the catalog is older than --max-age (25h by default), naming the flag', async () => {
    const buildId = await publishPlans();
    // Make the catalog two days old: its manifest and the run that confirmed it.
    const twoDaysAgo = new Date(Date.now() - 48 * 3_600_000).toISOString();
    const manifestPath = join(scratch.dir, 'origin', 'builds', buildId, 'manifest.json');
    const recordPath = join(scratch.dir, 'origin', 'state', 'last-run.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    await writeFile(manifestPath, JSON.stringify({ ...manifest, generatedAt: twoDaysAgo }));
    const record = JSON.parse(await readFile(recordPath, 'utf8'));
    await writeFile(recordPath, JSON.stringify({ ...record, confirmed: { at: twoDaysAgo, buildId } }));

    const result = await runCatalog(['status'], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `catalog: degraded: the catalog was last built or confirmed against the source 2d 0h ago (${twoDaysAgo}), more than --max-age 1d 1h\n`,
    );
    const relaxed = await runCatalog(['status', '--max-age', '3d'], { env: env() });
    expect(relaxed.code, relaxed.stderr).toBe(0);
  });

  it('exits 2 naming a live object that was deleted', async () => {
    const buildId = await publishPlans();
    await unlink(join(scratch.dir, 'origin', 'builds', buildId, 'catalog-running.json.gz'));
    const { code, report, stderr } = await statusJson();
    expect(code).toBe(2);
    expect(report.live.objects?.damaged).toEqual(['catalog-running.json.gz is missing']);
    expect(stderr).toBe(
      `catalog: broken: live build ${buildId} at ${join(scratch.dir, 'origin')} does not match its manifest: catalog-running.json.gz is missing; run catalog publish --source ${PLANS} --base-url https://plans.example.com --force (a fresh build, every page written again), or catalog rollback\n`,
    );
  });

  it('advises a repair that runs as printed: with the source the last run read, and the target as given', async () => {
    const origin = join(scratch.dir, 'my origin');
    const store = join(scratch.dir, 'kvs.json');
    makeStore(store);
    const target = ['--origin', origin, '--store', store];
    // Given as flags, in another working directory than the commands' (the source as a relative path).
    const published = await runCatalog(
      [
        'publish',
        ...target,
        '--source',
        relative(process.cwd(), PLANS),
        '--base-url',
        'http://127.0.0.1:8791',
      ],
      { env: {} },
    );
    expect(published.code, published.stderr).toBe(0);
    const { buildId } = JSON.parse(published.stdout) as { buildId: string };
    await unlink(join(origin, 'builds', buildId, 'catalog-running.json.gz'));
    const status = await runCatalog(['status', ...target], { env: {} });
    expect(status.code).toBe(2);
    const advice = /; run (catalog publish .*?) \(a fresh build/.exec(status.stderr)?.[1] ?? '';
    expect(advice).toBe(
      `catalog publish --source ${PLANS} --base-url http://127.0.0.1:8791 --force --origin '${origin}' --store ${store}`,
    );
    const repaired = await runCatalog(shellWords(advice).slice(1), { env: {} });
    expect(repaired.code, repaired.stderr).toBe(0);
    // Whole again, but with no key: that advice runs too, once the reader names the partner.
    const keyless = await runCatalog(['status', ...target], { env: {} });
    expect(keyless.code).toBe(1);
    const issue = /; issue one: (catalog keys issue .*)$/m.exec(keyless.stderr)?.[1] ?? '';
    expect(issue).toBe(`catalog keys issue --partner LABEL --store ${store}`);
    const issued = await runCatalog(shellWords(issue.replace('LABEL', 'acme')).slice(1), { env: {} });
    expect(issued.code, issued.stderr).toBe(0);
    expect(await runCatalog(['status', ...target], { env: {} })).toMatchObject({ code: 0, stderr: '' });
  });

  it('says what to add to a source whose secrets the record does not keep: a secret query value, its token', async () => {
    const server = createServer((request, response) => {
      const allowed = request.headers.authorization === 'Bearer tok-s3cret';
      response.writeHead(allowed ? 200 : 401, { 'content-type': 'application/json' });
      response.end(allowed ? readFileSync(PLANS) : '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const source = `http://127.0.0.1:${port}/plans.json?sig=abc123`;
      const withToken = env({ CATALOG_SOURCE: source, CATALOG_SOURCE_TOKEN: 'tok-s3cret' });
      const published = await runCatalog(['publish'], { env: withToken });
      expect(published.code, published.stderr).toBe(0);
      const { buildId } = JSON.parse(published.stdout) as { buildId: string };
      await unlink(join(scratch.dir, 'origin', 'builds', buildId, 'catalog-running.json.gz'));
      const { stderr } = await statusJson();
      expect(stderr).toContain(
        `; run catalog publish --source 'http://127.0.0.1:${port}/plans.json?sig=***' --base-url https://plans.example.com --force (with the secrets the record does not keep in place of ***; with the source's token in CATALOG_SOURCE_TOKEN) (a fresh build`,
      );
      const record = await readFile(join(scratch.dir, 'origin', 'state', 'last-run.json'), 'utf8');
      expect(`${stderr}${record}`).not.toMatch(/s3cret|abc123/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each([
    ['../..', '"../.."'],
    ['../..\nstill one line', '"../..\\nstill one line"'],
  ])('exits 2 in one line when build:live is %j, which the edge answers with 500', async (value, shown) => {
    await publishPlans();
    const key = (await runCatalog(['keys', 'issue', '--partner', 'p'], { env: env() })).stdout.trim();
    const storePath = join(scratch.dir, 'kvs.json');
    const store = JSON.parse(await readFile(storePath, 'utf8')) as { data: { key: string; value: string }[] };
    for (const entry of store.data) if (entry.key === 'build:live') entry.value = value;
    await writeFile(storePath, JSON.stringify(store));

    const server = await startServe(['--origin', join(scratch.dir, 'origin'), '--store', storePath]);
    try {
      const answer = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(answer.status).toBe(500);
    } finally {
      await server.stop();
    }

    const message = `broken: build:live names ${shown}, which the edge cannot serve (not a build id): every catalog request gets 500; run catalog rollback (back to the build live before it, or --to another complete one), or catalog publish --source ${PLANS} --base-url https://plans.example.com --recover`;
    const human = await runCatalog(['status'], { env: env() });
    expect(human.code).toBe(2);
    expect(human.stderr).toBe(`catalog: ${message}\n`);
    expect(human.stdout).toMatch(
      new RegExp(`^LIVE BUILD\\s+${shown.replace(/[.\\]/g, '\\$&')} \\(the edge cannot serve it\\)$`, 'm'),
    );
    const { code, report, stderr } = await statusJson();
    expect(code).toBe(2);
    expect(stderr).toBe(human.stderr);
    expect(report).toMatchObject({ health: 'broken', live: { state: 'unreadable', buildId: value } });
    expect(report.problems).toEqual([{ level: 'broken', message: message.replace(/^broken: /, '') }]);
  });

  it('exits 2 when a live object of a local origin was changed to bytes of the same size', async () => {
    const buildId = await publishPlans();
    const path = join(scratch.dir, 'origin', 'builds', buildId, 'openapi.yaml');
    const before = await readFile(path, 'utf8');
    await writeFile(path, before.replace('Training Plan Catalog API', 'Training Plan Catalog XPI'));
    const { code, report, stderr } = await statusJson();
    expect(code).toBe(2);
    expect(report.live.objects?.damaged).toEqual([
      expect.stringMatching(/^openapi\.yaml has other bytes \(MD5 [0-9a-f]{32}\)$/),
    ]);
    expect(stderr).toMatch(
      /^catalog: broken: live build \S+ at .* does not match its manifest: openapi\.yaml has other bytes/,
    );
  });

  it('exits 2 when a page differs from the live build: its bytes edited, missing, or of a plan it does not hold', async () => {
    const buildId = await publishPlans();
    const pages = join(scratch.dir, 'origin', 'plans');
    const [changed, missing] = (await readdir(pages)).sort();
    const page = await readFile(join(pages, changed as string), 'utf8');
    await writeFile(join(pages, changed as string), page.replace('<title>', '<titlE>'));
    await rm(join(pages, missing as string));
    await writeFile(join(pages, '00000000-0000-4000-8000-000000000000.html'), page);
    const { code, report, stderr } = await statusJson();
    expect(code).toBe(2);
    // Each catalog and openapi.yaml with its two variants, and the bytes of a page per plan.
    expect(report.live.objects?.expected).toBe(3 * (CATALOGS.length + 1) + 14);
    // A page never replaced is kept nowhere but live: the edited and the deleted ones' bytes are gone.
    const lost = (file: string | undefined) =>
      new RegExp(
        `^the page of ${file?.replace('.html', '')} \\([0-9a-f]{32}\\) is neither live nor at pages/[0-9a-f]{32}\\.html$`,
      );
    expect(report.live.objects?.damaged).toEqual(
      expect.arrayContaining([expect.stringMatching(lost(changed)), expect.stringMatching(lost(missing))]),
    );
    expect(report.live.objects?.damaged).toHaveLength(2);
    expect(report.live.pages).toEqual({
      expected: 14,
      damaged: [
        `plans/${changed} is not the build’s page`,
        `plans/${missing} is missing`,
        'plans/00000000-0000-4000-8000-000000000000.html is not a page of the build',
      ],
    });
    expect(stderr).toMatch(
      new RegExp(
        `^catalog: broken: live build ${buildId} at .* does not match its manifest: the page of \\S+ \\([0-9a-f]{32}\\) is neither live nor at pages/\\S+; .*; the live pages at .* are not build ${buildId}'s: plans/${changed} is not the build’s page; `,
      ),
    );
    // The repairs it names put everything right: a forced publish writes every page again.
    const repaired = await runCatalog(['publish', '--force'], { env: env() });
    expect(repaired.code, repaired.stderr).toBe(0);
    expect((await statusJson()).report.problems).toEqual([]);
  });

  it('exits 2 when nothing is live', async () => {
    const result = await runCatalog(['status'], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^catalog: broken: no live build: build:live is not set in /);
  });

  it('refuses a bad --max-age and a missing target with one line', async () => {
    const bad = await runCatalog(['status', '--max-age', 'soon'], { env: env() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'catalog: --max-age "soon": must be a number and a unit ms, s, m, h or d, such as 30s or 7d\n',
    );
    const half = await runCatalog(['status', '--origin', scratch.dir], { env: {} });
    expect(half.stderr).toBe('catalog: --store: is required with --origin\n');
  });
});

describe("the last run's record at the edge", () => {
  it('is never served: /state/last-run.json is 404 with or without a key, while the catalog is 200', async () => {
    await publishPlans();
    // The record is there at the origin's root…
    const record = await readFile(join(scratch.dir, 'origin', 'state', 'last-run.json'), 'utf8');
    expect(JSON.parse(record)).toMatchObject({ outcome: 'published' });
    const key = (await runCatalog(['keys', 'issue', '--partner', 'p'], { env: env() })).stdout.trim();
    const server = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
    try {
      // …and no request reaches it.
      for (const headers of [[], [['X-Api-Key', key] as const]]) {
        const answer = await httpRequest(server.url, {
          method: 'GET',
          target: '/state/last-run.json',
          headers,
        });
        expect(answer.status).toBe(404);
        expect(answer.body.toString('utf8')).not.toContain('outcome');
      }
      const plans = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(plans.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
