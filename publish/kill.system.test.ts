/**
 * A publish killed (`kill -9`) at any point leaves the live catalog and its pages served. A real `catalog publish`
 * process writes to s3rver through a proxy that holds one request unanswered — the pack of the new pages, the
 * manifest, the second live page, the deletion of removed plans' pages after the pointer moved, the pointer's
 * history — and is killed there. Then, through the local edge over the bucket and the store: every catalog in
 * every encoding comes from the build the pointer names, and every `webUrl` of it answers its page; and a second
 * publish completes, leaving the live pages exactly the live build's. Runs in `npm run test:system`.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serveLocal } from '../app/local.ts';
import { Catalog } from '../builder/model.ts';
import { KVS_LIVE_BUILD, STATE_RUN_LOCK } from '../contract/index.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { serializeKvsFile } from '../keys/kvs-file.ts';
import { issueKey } from '../keys/manage.ts';
import { startHoldingProxy, startS3, TEST_AWS_ENV, type TestS3, testS3Client } from '../testing/aws.ts';
import { CATALOG_BIN, httpRequest, ROOT, runProcess, servedGeneratedAt } from '../testing/cli.ts';
import { FakeKvs, RESOLVE_KVS_TEST_HOST, resolveKvsTestHost } from '../testing/kvs.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { readLive } from './publish.ts';
import { S3Origin } from './s3-origin.ts';

const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const scratch = useScratchDir({ prefix: 'catalog-kill-', each: false });
const kvs = new FakeKvs(ARN);
let undoDns: () => void;
let s3: TestS3;

beforeAll(async () => {
  undoDns = resolveKvsTestHost();
  await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  undoDns();
  await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
});
beforeEach(async () => {
  s3 = await startS3();
  kvs.entries = new Map();
  kvs.version = 1;
});
afterEach(() => s3.stop());

const env = (endpoint: string) => ({
  ...TEST_AWS_ENV,
  AWS_ENDPOINT_URL_S3: endpoint,
  AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
  CATALOG_S3_PATH_STYLE: '1',
  CATALOG_MAX_ATTEMPTS: '1',
});
const publishArgs = (source: string) => [
  'publish',
  '--source',
  source,
  '--base-url',
  'https://plans.example.com',
  '--bucket',
  'catalog-origin',
  '--kvs-arn',
  ARN,
];

/** Runs `catalog publish` as its own process to completion, straight to s3rver. */
const publish = (source: string) =>
  runProcess(process.execPath, ['--import', RESOLVE_KVS_TEST_HOST, CATALOG_BIN, ...publishArgs(source)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env(s3.endpoint) },
  });

/** The fixtures (A), and the same with plan 0 removed, plans 2 and 3 retitled and one plan added (B). */
async function sources(): Promise<{ a: string; b: string }> {
  const rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as {
    id: string;
    title: string;
  }[];
  const changed = rows
    .slice(1)
    .map((row, index) =>
      index === 1 || index === 2 ? { ...row, title: `${row.title} (new edition)` } : row,
    );
  changed.push({
    ...(rows[5] as (typeof rows)[number]),
    id: '0a1b2c3d-0000-4000-8000-000000000001',
    title: 'Added',
  });
  const [a, b] = [join(scratch.dir, 'a.json'), join(scratch.dir, 'b.json')];
  await writeFile(a, JSON.stringify(rows));
  await writeFile(b, JSON.stringify(changed));
  return { a, b };
}

/** Runs `catalog publish` as its own process through a proxy, and kills it (-9) once the proxy holds a request. */
async function publishKilledAt(
  source: string,
  holds: (method: string, key: string, copy: boolean) => boolean,
): Promise<string> {
  const proxy = await startHoldingProxy(s3.endpoint, (request) => {
    const key = decodeURIComponent((request.url ?? '').split('?')[0] ?? '').replace('/catalog-origin/', '');
    return holds(request.method ?? '', key, request.headers['x-amz-copy-source'] !== undefined);
  });
  const child = spawn(
    process.execPath,
    ['--import', RESOLVE_KVS_TEST_HOST, CATALOG_BIN, ...publishArgs(source)],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env(proxy.url) },
      stdio: 'ignore',
    },
  );
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const held = await Promise.race([proxy.held, exited.then((code) => `exited ${code} before the point`)]);
    child.kill('SIGKILL');
    await exited;
    return held;
  } finally {
    await proxy.close();
  }
}

/**
 * Through the local edge over the bucket and the store as they are: the generatedAt of every catalog answer, and
 * the status of every `webUrl` of the live catalog.
 */
async function served(): Promise<{ generatedAt: string[]; pages: Map<string, number> }> {
  const store = join(scratch.dir, 'kvs.json');
  await writeFile(store, serializeKvsFile(kvs.entries));
  const { key } = await issueKey(new FileKeyValueStore(store), { partner: 'acme', now: new Date() });
  const previous = { ...process.env };
  Object.assign(process.env, TEST_AWS_ENV);
  const edge = await serveLocal(
    { origin: 's3://catalog-origin', endpoint: s3.endpoint, store, port: 0, host: '127.0.0.1' },
    () => {},
  );
  try {
    const generatedAt = [...(await servedGeneratedAt(edge.url, key))];
    const catalog = await httpRequest(edge.url, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Api-Key', key]],
    });
    const pages = new Map<string, number>();
    for (const plan of Catalog.parse(JSON.parse(catalog.body.toString('utf8'))).plans) {
      const path = new URL(plan.webUrl).pathname;
      pages.set(path, (await httpRequest(edge.url, { method: 'GET', target: path })).status);
    }
    return { generatedAt, pages };
  } finally {
    await edge.close();
    process.env = previous;
  }
}

const POINTS: readonly [string, boolean, (method: string, key: string, copy: boolean) => boolean][] = [
  ['uploading the pack of the new pages', false, (method, key) => method === 'PUT' && key.endsWith('.pack')],
  ['writing the manifest', false, (method, key) => method === 'PUT' && key.endsWith('/manifest.json')],
  [
    'writing the second live page',
    false,
    (() => {
      let writes = 0;
      return (method: string, key: string) => method === 'PUT' && key.startsWith('plans/') && ++writes === 2;
    })(),
  ],
  [
    'deleting the pages of removed plans, the pointer moved',
    true,
    (method, key) => method === 'POST' && key === '',
  ],
  ['recording the move', true, (method, key) => method === 'PUT' && key.startsWith('state/history/')],
];

describe('a publish killed (-9) at any point', () => {
  it.each(POINTS)(
    'while %s: the live catalog and its pages are served, and the next publish completes',
    async (_, moved, holds) => {
      const { a, b } = await sources();
      const first = await publish(a);
      expect(first.code, first.stderr).toBe(0);
      const before = String(JSON.parse(first.stdout).generatedAt);
      const liveBefore = kvs.entries.get(KVS_LIVE_BUILD);

      const held = await publishKilledAt(b, holds);
      expect(held).toMatch(/^(PUT|POST) \//);
      expect(kvs.entries.get(KVS_LIVE_BUILD) !== liveBefore).toBe(moved);
      const killed = await served();
      expect(killed.generatedAt).toHaveLength(1);
      if (!moved) expect(killed.generatedAt).toEqual([before]);
      expect([...killed.pages.values()].every((status) => status === 200)).toBe(true);

      // The crashed run's lock expires (here at once), and the next run completes: the live pages are the live
      // build's, and only they.
      const client = testS3Client(s3.endpoint);
      await new S3Origin(client, s3.bucket).delete([STATE_RUN_LOCK]);
      const again = await publish(b);
      expect(again.code, again.stderr).toBe(0);
      const live = await readLive(new S3Origin(client, s3.bucket), kvs.entries.get(KVS_LIVE_BUILD) ?? null);
      client.destroy();
      expect(live).toMatchObject({ kind: 'build', damage: [] });
      const after = await served();
      expect(after.pages.size).toBe(44);
      expect(after.pages.get('/plans/0a1b2c3d-0000-4000-8000-000000000001')).toBe(200);
      expect([...after.pages.values()].every((status) => status === 200)).toBe(true);
    },
  );
});
