/**
 * `kill -9` at every point of a publish (with its prune) and of a rollback, on both origins: a real process
 * (testing/kill-runner.ts, the application layer's own steps) kills itself just before its first write, its
 * second, … up to the run that ends whole. After each kill the catalogs the edge serves all come from the build
 * the pointer names; after the next run (an unchanged one, the repair `catalog status` recommends) every catalog
 * and every `webUrl` of the live build answers 200 with that build's content, each live page the bytes its
 * manifest names, nothing is left damaged, and no temporary file remains. Runs in `npm run test:system`.
 *
 * Sized to hold on a busy machine: the deployment each kill point starts from (two publishes) is made once per
 * test and copied back before each point, and the runner is bundled once per file (a process of it then starts in
 * about a fifth of the CPU that loading its TypeScript costs). A test has no fixed limit: each point must end
 * within a multiple of the time the test's first point (the whole run) took on this machine, at this load
 * (testing/pace.ts).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveLocal } from '../app/local.ts';
import { publish } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { Catalog } from '../builder/model.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { serializeKvsFile } from '../keys/kvs-file.ts';
import { CloudFrontKeyValueStore } from '../keys/kvs-store.ts';
import { issueKey } from '../keys/manage.ts';
import { fewRows, startS3, TEST_AWS_ENV, type TestS3 } from '../testing/aws.ts';
import { httpRequest, ROOT, servedGeneratedAt } from '../testing/cli.ts';
import type { Run } from '../testing/kill-runner.ts';
import { FakeKvs, kvsClientFor, resolveKvsTestHost } from '../testing/kvs.ts';
import { FIRST_UNIT_BOUND_MS, NO_FIXED_LIMIT, paced, within } from '../testing/pace.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { buildKey } from './core.ts';
import { DirectoryOrigin } from './dir-origin.ts';
import { readPointer } from './pointer.ts';
import { S3Origin } from './s3-origin.ts';
import { type PublishTarget, readLive } from './steps.ts';

const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const scratch = useScratchDir({ prefix: 'catalog-kill-', each: true });
const kvs = new FakeKvs(ARN);
let undoDns: () => void;
/** The sources: A, A with one title changed (A2), and B: A2 with plan 0 removed, 2 and 3 retitled, one added. */
const sources = { a: '', a2: '', b: '' };
/** testing/kill-runner.ts and everything it imports, packages too, in one file (next to node_modules). */
const runnerFile = join(ROOT, 'node_modules', '.cache', `kill-runner-${process.pid}.mjs`);
/** One s3rver for the file: each kill point starts from a copy of its bucket. */
let s3: TestS3;
beforeAll(async () => {
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['testing/kill-runner.ts'],
    outfile: runnerFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The CommonJS packages in the bundle require Node's own modules.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  s3 = await startS3();
  undoDns = resolveKvsTestHost();
  await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
  const rows = (await fewRows()) as { id: string; title: string }[];
  const retitle = (list: typeof rows, indexes: number[], tag: string) =>
    list.map((row, index) => (indexes.includes(index) ? { ...row, title: `${row.title} ${tag}` } : row));
  const a2 = retitle(rows, [5], '(second edition)');
  const b = [
    ...retitle(a2, [2, 3], '(new edition)').slice(1),
    { ...(rows[5] as (typeof rows)[number]), id: '0a1b2c3d-0000-4000-8000-000000000001', title: 'Added' },
  ];
  const dir = join(ROOT, 'node_modules', '.cache');
  for (const [name, list] of Object.entries({ a: rows, a2, b })) {
    const file = join(dir, `kill-source-${process.pid}-${name}.json`);
    await writeFile(file, JSON.stringify(list));
    sources[name as keyof typeof sources] = file;
  }
});
afterAll(async () => {
  undoDns();
  await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
  await s3.stop();
  await rm(runnerFile, { force: true });
});

type Kind = 'a directory' | 's3rver';

interface Deployment {
  readonly target: PublishTarget;
  /** How the runner reaches it. */
  readonly where: Pick<Run, 'origin' | 'store'>;
  /** Puts the deployment back as it was when it was made. */
  restore(): Promise<void>;
}

/**
 * A deployment of `kind` set up by `setup` once: the test's origin directory and store file, or the file's
 * s3rver bucket and the KeyValueStore stand-in. Each kill point restores it, so each starts from the same state.
 */
async function deployment(kind: Kind, setup: (target: PublishTarget) => Promise<void>): Promise<Deployment> {
  if (kind === 'a directory') {
    const store = join(scratch.dir, 'deployment', 'kvs.json');
    const origin = join(scratch.dir, 'deployment', 'origin');
    const target = {
      origin: new DirectoryOrigin(origin),
      kvs: new FileKeyValueStore(store, { create: true }),
    };
    await setup(target);
    await cp(join(scratch.dir, 'deployment'), join(scratch.dir, 'made'), { recursive: true });
    return {
      target,
      where: { origin: { dir: origin }, store: { file: store } },
      async restore() {
        await rm(join(scratch.dir, 'deployment'), { recursive: true, force: true });
        await cp(join(scratch.dir, 'made'), join(scratch.dir, 'deployment'), { recursive: true });
      },
    };
  }
  await new S3Origin(s3.client, s3.bucket).deletePrefix('');
  kvs.entries = new Map();
  kvs.version = 1;
  const port = (kvs.server.address() as { port: number }).port;
  const target = {
    origin: new S3Origin(s3.client, s3.bucket),
    kvs: new CloudFrontKeyValueStore(kvsClientFor(port), ARN),
  };
  await setup(target);
  const bucket = await s3.snapshot();
  const [entries, version] = [new Map(kvs.entries), kvs.version];
  return {
    target,
    where: { origin: { endpoint: s3.endpoint, bucket: s3.bucket }, store: { port, arn: ARN } },
    async restore() {
      await bucket.restore();
      kvs.entries = new Map(entries);
      kvs.version = version;
    },
  };
}

const START = Date.parse('2026-03-01T10:00:00.000Z');
/** The time of a deployment's Nth run (the setup's two publishes, the runner's, the repair): a minute apart. */
const minute = (n: number) => new Date(START + n * 60_000);
/** A publish of `source` in this process at `now`. */
async function publishIn(
  target: PublishTarget,
  source: string,
  now: Date,
  keepBuilds = defaultOf('keepBuilds'),
) {
  return publish(
    {
      ...parseSettings('build', () => undefined, String),
      source,
      baseUrl: 'https://plans.example.com',
      allowEmpty: false,
      minRatio: 0,
      keepBuilds,
    },
    target,
    { now, force: false, report: () => {}, recover: false },
  );
}

/**
 * Runs the bundled testing/kill-runner.ts at the deployment's third minute; resolves whether it ran to its end
 * (false: it killed itself) and its writes. A runner still running after `bound` ms is stopped (SIGTERM) and fails
 * the test.
 */
function runner(run: Omit<Run, 'now'>, bound: number): Promise<{ whole: boolean; writes: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [runnerFile, JSON.stringify({ ...run, now: minute(3).toISOString() })],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...TEST_AWS_ENV },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: bound,
        killSignal: 'SIGTERM',
      },
    );
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const lines = Buffer.concat(stdout).toString('utf8').split('\n').filter(Boolean);
      const whole = lines.at(-1) === 'done';
      if (signal === 'SIGTERM')
        reject(new Error(`the runner was still running after ${bound} ms (${lines.length} writes named)`));
      else if (!whole && signal !== 'SIGKILL')
        reject(new Error(`the runner failed (${code}): ${Buffer.concat(stderr).toString('utf8')}`));
      else resolve({ whole, writes: whole ? lines.slice(0, -1) : lines });
    });
  });
}

/**
 * What partners see through the local edge over the target: every catalog and encoding's generatedAt, and (unless
 * `withPages` is false) the status and MD5 (hex, a page's digest) of every `webUrl` page of the live catalog.
 */
async function served(kind: Kind, target: PublishTarget, withPages = true) {
  const store = join(scratch.dir, 'edge-kvs.json');
  await writeFile(store, serializeKvsFile(await target.kvs.read()));
  const { key } = await issueKey(new FileKeyValueStore(store), { partner: 'acme', now: new Date() });
  const previous = { ...process.env };
  Object.assign(process.env, TEST_AWS_ENV);
  const edge = await serveLocal(
    kind === 's3rver'
      ? { origin: `s3://${s3.bucket}`, endpoint: s3.endpoint, store, port: 0, host: '127.0.0.1' }
      : { origin: join(scratch.dir, 'deployment', 'origin'), store, port: 0, host: '127.0.0.1' },
    () => {},
  );
  try {
    const generatedAt = [...(await servedGeneratedAt(edge.url, key))];
    const catalog = await httpRequest(edge.url, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Api-Key', key]],
    });
    const pages = new Map<string, [number, string]>();
    if (catalog.status === 200 && withPages)
      for (const plan of Catalog.parse(JSON.parse(catalog.body.toString('utf8'))).plans) {
        const page = await httpRequest(edge.url, { method: 'GET', target: new URL(plan.webUrl).pathname });
        pages.set(plan.id, [page.status, createHash('md5').update(page.body).digest('hex')]);
      }
    return { generatedAt, status: catalog.status, pages };
  } finally {
    await edge.close();
    process.env = previous;
  }
}

/** Everything the live build promises holds: its catalogs, its pages as its manifest names them, nothing else. */
async function expectWhole(kind: Kind, target: PublishTarget, point: string) {
  const { live } = await readPointer(target.kvs);
  const read = await readLive(target.origin, live);
  if (read.live.kind !== 'build') throw new Error(`${point}: nothing live (${JSON.stringify(read.live)})`);
  const { manifest, damage, pageDamage } = read.live;
  expect([damage, pageDamage], point).toEqual([[], []]);
  // And by the bytes themselves, read and hashed here: each of the live build's objects is what its manifest says.
  for (const [key, { md5 }] of Object.entries(manifest.objects))
    expect((await target.origin.get(buildKey(live ?? '', key)))?.md5, `${point}: ${key}`).toBe(md5);
  const seen = await served(kind, target);
  expect(seen.status, point).toBe(200);
  expect(seen.generatedAt, point).toEqual([manifest.generatedAt]);
  expect(
    Object.fromEntries(
      [...seen.pages].map(([id, [status, digest]]) => [id, status === 200 ? digest : status]),
    ),
    point,
  ).toEqual(manifest.pages);
  if (kind === 'a directory')
    expect(await readdir(join(scratch.dir, 'deployment', 'origin', '.tmp')), point).toEqual([]);
}

/**
 * Runs the run whole, then kills it before each of its writes in turn, each on the deployment `setup` made
 * (restored for each point), and checks every outcome; resolves the points, the whole run last.
 */
async function everyPoint(
  kind: Kind,
  op: Run['op'],
  setup: (target: PublishTarget) => Promise<void>,
  run: Omit<Run, 'now' | 'killAt' | 'origin' | 'store' | 'op'>,
): Promise<string[]> {
  const { target, where, restore } = await deployment(kind, setup);
  /** One point: the run killed before write `killAt` (null: run whole), what the edge then serves, the repair. */
  const point = async (killAt: number | null, bound: number) => {
    await restore();
    const { whole, writes } = await runner({ ...run, ...where, op, killAt }, bound);
    const name = whole ? `${op} run whole` : `${op} killed before write ${killAt}: ${writes.at(-1)}`;
    // Killed anywhere, the catalogs served all come from one build, the one the pointer names.
    const now = await served(kind, target, false);
    expect(now.status, name).toBe(200);
    expect(now.generatedAt, name).toHaveLength(1);
    // The next run (unchanged, as the schedule runs it) leaves everything whole.
    await publishIn(target, sources.b, minute(4));
    await expectWhole(kind, target, name);
    return { name, whole, writes };
  };
  // The whole run first: it names every write, and its time on this machine bounds each later point's.
  const { result: first, bound } = await paced(`${op} run whole`, () => point(null, FIRST_UNIT_BOUND_MS));
  expect(first.whole, 'the run without a kill point ran whole').toBe(true);
  const points: string[] = [];
  for (let killAt = 1; killAt <= first.writes.length; killAt += 1) {
    const { name } = await within(bound, `${op} killed before write ${killAt}`, () => point(killAt, bound));
    points.push(name);
  }
  return [...points, first.name];
}

describe.each(['a directory', 's3rver'] as const)('kill -9 at every write, on %s', (kind) => {
  it(
    'of a publish that adds, changes and removes pages, then prunes a build and its pages',
    async () => {
      const points = await everyPoint(
        kind,
        'publish',
        async (target) => {
          await publishIn(target, sources.a, minute(1));
          await publishIn(target, sources.a2, minute(2));
        },
        { source: sources.b, keep: 1 },
      );
      // The run lock, the build, its pages, their live copies, the pointer, the history, the record, the prune.
      expect(points.length).toBeGreaterThan(20);
      expect(points.some((point) => point.includes(': update '))).toBe(true);
      expect(points.some((point) => /: delete builds\//.test(point))).toBe(true);
    },
    NO_FIXED_LIMIT,
  );

  it(
    'of a rollback that copies changed pages back and deletes added ones',
    async () => {
      const points = await everyPoint(
        kind,
        'rollback',
        async (target) => {
          await publishIn(target, sources.a2, minute(1));
          await publishIn(target, sources.b, minute(2));
        },
        { source: sources.b, keep: 20 },
      );
      expect(points.some((point) => / copy pages\//.test(point))).toBe(true);
      expect(points.some((point) => point.includes(': update '))).toBe(true);
    },
    NO_FIXED_LIMIT,
  );
});

afterAll(() => Promise.all(Object.values(sources).map((file) => rm(file, { force: true }))));
