/**
 * `kill -9` at every point of a publish (with its prune) and of a rollback, on both origins: a real process
 * (testing/kill-runner.ts, the application layer's own steps) kills itself just before its first write, its
 * second, … up to the run that ends whole. After each kill the catalogs the edge serves all come from the build
 * the pointer names; after the next run (an unchanged one, the repair `catalog status` recommends) every catalog
 * and every `webUrl` of the live build answers 200 with that build's content, each live page the bytes its
 * manifest names, nothing is left damaged, and no temporary file remains. Runs in `npm run test:system`.
 */
import { createHash } from 'node:crypto';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
import { httpRequest, ROOT, runProcess, servedGeneratedAt } from '../testing/cli.ts';
import type { Run } from '../testing/kill-runner.ts';
import { FakeKvs, kvsClientFor, resolveKvsTestHost } from '../testing/kvs.ts';
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
beforeAll(async () => {
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
});

type Kind = 'a directory' | 's3rver';

/** A fresh deployment of `kind` in the test's scratch directory: the target, and how the runner reaches it. */
async function deployment(kind: Kind): Promise<{
  target: PublishTarget;
  where: Pick<Run, 'origin' | 'store'>;
  s3?: TestS3;
}> {
  if (kind === 'a directory') {
    const store = join(scratch.dir, 'kvs.json');
    const origin = join(scratch.dir, 'origin');
    return {
      target: { origin: new DirectoryOrigin(origin), kvs: new FileKeyValueStore(store, { create: true }) },
      where: { origin: { dir: origin }, store: { file: store } },
    };
  }
  const s3 = await startS3();
  kvs.entries = new Map();
  kvs.version = 1;
  const port = (kvs.server.address() as { port: number }).port;
  return {
    target: {
      origin: new S3Origin(s3.client, s3.bucket),
      kvs: new CloudFrontKeyValueStore(kvsClientFor(port), ARN),
    },
    where: { origin: { endpoint: s3.endpoint, bucket: s3.bucket }, store: { port, arn: ARN } },
    s3,
  };
}

let clock = Date.parse('2026-03-01T10:00:00.000Z');
/** A publish of `source` in this process, a minute after the last run. */
async function publishIn(target: PublishTarget, source: string, keepBuilds = defaultOf('keepBuilds')) {
  clock += 60_000;
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
    { now: new Date(clock), force: false, report: () => {}, recover: false },
  );
}

/** Runs testing/kill-runner.ts; resolves whether it ran to its end (false: it killed itself) and its writes. */
async function runner(run: Omit<Run, 'now'>): Promise<{ whole: boolean; writes: string[] }> {
  clock += 60_000;
  const result = await runProcess(
    process.execPath,
    [
      '--import',
      'tsx',
      'testing/kill-runner.ts',
      JSON.stringify({ ...run, now: new Date(clock).toISOString() }),
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...TEST_AWS_ENV } },
  );
  const lines = result.stdout.split('\n').filter(Boolean);
  const whole = lines.at(-1) === 'done';
  if (!whole && result.code !== null) throw new Error(`the runner failed: ${result.stderr}`);
  return { whole, writes: whole ? lines.slice(0, -1) : lines };
}

/**
 * What partners see through the local edge over the target: every catalog and encoding's generatedAt, and the
 * status and MD5 (hex, a page's digest) of every `webUrl` page of the live catalog.
 */
async function served(kind: Kind, target: PublishTarget, s3: TestS3 | undefined) {
  const store = join(scratch.dir, 'edge-kvs.json');
  await writeFile(store, serializeKvsFile(await target.kvs.read()));
  const { key } = await issueKey(new FileKeyValueStore(store), { partner: 'acme', now: new Date() });
  const previous = { ...process.env };
  Object.assign(process.env, TEST_AWS_ENV);
  const edge = await serveLocal(
    kind === 's3rver' && s3
      ? { origin: `s3://${s3.bucket}`, endpoint: s3.endpoint, store, port: 0, host: '127.0.0.1' }
      : { origin: join(scratch.dir, 'origin'), store, port: 0, host: '127.0.0.1' },
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
    if (catalog.status === 200)
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
async function expectWhole(kind: Kind, target: PublishTarget, s3: TestS3 | undefined, point: string) {
  const { live } = await readPointer(target.kvs);
  const read = await readLive(target.origin, live);
  if (read.live.kind !== 'build') throw new Error(`${point}: nothing live (${JSON.stringify(read.live)})`);
  const { manifest, damage, pageDamage } = read.live;
  expect([damage, pageDamage], point).toEqual([[], []]);
  // And by the bytes themselves, read and hashed here: each of the live build's objects is what its manifest says.
  for (const [key, { md5 }] of Object.entries(manifest.objects))
    expect((await target.origin.get(buildKey(live ?? '', key)))?.md5, `${point}: ${key}`).toBe(md5);
  const seen = await served(kind, target, s3);
  expect(seen.status, point).toBe(200);
  expect(seen.generatedAt, point).toEqual([manifest.generatedAt]);
  expect(
    Object.fromEntries(
      [...seen.pages].map(([id, [status, digest]]) => [id, status === 200 ? digest : status]),
    ),
    point,
  ).toEqual(manifest.pages);
  if (kind === 'a directory') expect(await readdir(join(scratch.dir, 'origin', '.tmp')), point).toEqual([]);
}

/** Kills the run before each of its writes in turn, on a fresh deployment each time, and checks every outcome. */
async function everyPoint(
  kind: Kind,
  op: Run['op'],
  setup: (target: PublishTarget) => Promise<void>,
  run: Omit<Run, 'now' | 'killAt' | 'origin' | 'store' | 'op'>,
): Promise<string[]> {
  const points: string[] = [];
  for (let killAt = 1; ; killAt += 1) {
    const { target, where, s3 } = await deployment(kind);
    try {
      await setup(target);
      const { whole, writes } = await runner({ ...run, ...where, op, killAt });
      const point = whole ? `${op} run whole` : `${op} killed before write ${killAt}: ${writes.at(-1)}`;
      points.push(point);
      // Killed anywhere, the catalogs served all come from one build, the one the pointer names.
      const now = await served(kind, target, s3);
      expect(now.status, point).toBe(200);
      expect(now.generatedAt, point).toHaveLength(1);
      // The next run (unchanged, as the schedule runs it) leaves everything whole.
      await publishIn(target, sources.b);
      await expectWhole(kind, target, s3, point);
      if (whole) return points;
    } finally {
      await s3?.stop();
    }
  }
}

describe.each(['a directory', 's3rver'] as const)('kill -9 at every write, on %s', (kind) => {
  it('of a publish that adds, changes and removes pages, then prunes a build and its pages', async () => {
    const points = await everyPoint(
      kind,
      'publish',
      async (target) => {
        await publishIn(target, sources.a);
        await publishIn(target, sources.a2);
      },
      { source: sources.b, keep: 1 },
    );
    // The run lock, the build, its pages, their live copies, the pointer, the history, the record, the prune.
    expect(points.length).toBeGreaterThan(20);
    expect(points.some((point) => point.includes(': update '))).toBe(true);
    expect(points.some((point) => /: delete builds\//.test(point))).toBe(true);
  });

  it('of a rollback that copies changed pages back and deletes added ones', async () => {
    const points = await everyPoint(
      kind,
      'rollback',
      async (target) => {
        await publishIn(target, sources.a2);
        await publishIn(target, sources.b);
      },
      { source: sources.b, keep: 20 },
    );
    expect(points.some((point) => / copy pages\//.test(point))).toBe(true);
    expect(points.some((point) => point.includes(': update '))).toBe(true);
  });
});

afterAll(() => Promise.all(Object.values(sources).map((file) => rm(file, { force: true }))));
