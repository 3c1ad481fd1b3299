/**
 * `catalog publish`, `builds`, `rollback`, `unpin` and `rebuild` as an operator runs them: real processes, on
 * a local origin directory and store file (the same code path as S3 and KeyValueStore, which publish.test.ts
 * and the Lambda's tests run in-process), plus a recorder standing in for the APIs with no local peer.
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DISCIPLINES, type Discipline, MANIFEST } from '../contract/index.ts';
import { fewPlansFile, fewRows, type Recorder, startRecorder, TEST_AWS_ENV } from '../testing/aws.ts';
import {
  CATALOG_BIN,
  type CliResult,
  httpRequest,
  localTargetEnv,
  outputOf,
  ROOT,
  runCatalog,
  startCatalog,
  startServe,
  withoutTarget,
} from '../testing/cli.ts';
import { planCounts } from '../testing/counts.ts';
import { freePort } from '../testing/postgres.ts';
import { useScratchDir } from '../testing/scratch.ts';
import { expireRunLock } from '../testing/targets.ts';
import { until } from '../testing/until.ts';

const scratch = useScratchDir({ prefix: 'catalog-publish-cli-' });

/** The source the commands publish: a few plans of the fixtures (testing/aws.ts), 14: 10 running, 4 strength. */
let PLANS = '';
beforeAll(async () => {
  PLANS = await fewPlansFile();
});

/** The environment of a `catalog` child that publishes those plans into the scratch origin and store. */
const env = (extra: Record<string, string> = {}) =>
  localTargetEnv(scratch.dir, { CATALOG_SOURCE: PLANS, ...extra });

/** A source file holding the first `count` of those rows (`count` plans, up to 14). */
async function fewerRows(count: number): Promise<string> {
  const rows = await fewRows();
  const path = join(scratch.dir, `rows-${count}.json`);
  await writeFile(path, JSON.stringify(rows.slice(0, count)));
  return path;
}

function summaryOf(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}

/** The live pointer in the store file. */
async function pointer(): Promise<{ live?: string; pin?: string }> {
  const { data } = JSON.parse(await readFile(join(scratch.dir, 'kvs.json'), 'utf8')) as {
    data: { key: string; value: string }[];
  };
  const live = data.find((entry) => entry.key === 'build:live')?.value;
  const pin = data.find((entry) => entry.key === 'build:pin')?.value;
  return { ...(live ? { live } : {}), ...(pin ? { pin } : {}) };
}

describe('catalog publish', () => {
  it('publishes with its settings from the environment and prints one JSON summary line; again, it skips', async () => {
    const result = await runCatalog(['publish'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result.stdout);
    expect(summary).toMatchObject({
      command: 'publish',
      result: 'published',
      counts: planCounts({ running: 10, strength: 4 }),
    });
    expect(await pointer()).toEqual({ live: summary.buildId });
    const again = await runCatalog(['publish'], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    // It reports the live build, not the one it made in memory and never wrote.
    expect(summaryOf(again.stdout)).toMatchObject({
      result: 'skipped-identical',
      previousBuildId: summary.buildId,
      buildId: summary.buildId,
      generatedAt: summary.generatedAt,
    });
    expect(withoutTarget(again.stderr)).toMatch(
      /^skipped-identical: identical to live build \S+ \(plans [0-9a-f]{12}…, inputs [0-9a-f]{12}…\); --force publishes it anyway\n$/,
    );
  });

  it('takes a flag over its environment variable', async () => {
    const result = await runCatalog(['publish', '--origin', join(scratch.dir, 'other')], {
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    const manifest = await readFile(
      join(scratch.dir, 'other', 'builds', String(summaryOf(result.stdout).buildId), 'manifest.json'),
      'utf8',
    );
    expect(JSON.parse(manifest)).toMatchObject({ plans: 14 });
  });

  it('refuses a shrunken catalog with a one-line reason naming the numbers, and an empty one unless --allow-empty', async () => {
    const first = await runCatalog(['publish'], { env: env() });
    const result = await runCatalog(['publish', '--source', await fewerRows(3)], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(withoutTarget(result.stderr)).toMatch(
      /^catalog: refused: the new catalog has \d+ plans, fewer than 0\.5 × the 14 plans of live build \S+ \(7\); --force publishes it anyway\n$/,
    );
    const empty = join(ROOT, 'fixtures', 'empty.json');
    const refused = await runCatalog(['publish', '--source', empty, '--force'], { env: env() });
    expect(withoutTarget(refused.stderr)).toBe(
      'catalog: refused: the new catalog has 0 plans (live build ' +
        `${summaryOf(first.stdout).buildId} has 14); --allow-empty publishes an empty catalog\n`,
    );
    expect(await pointer()).toEqual({ live: summaryOf(first.stdout).buildId });
    const allowed = await runCatalog(['publish', '--source', empty, '--allow-empty', '--force'], {
      env: env(),
    });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(summaryOf(allowed.stdout)).toMatchObject({ result: 'published', plans: 0 });
  });

  it.each([
    [['--min-ratio', '2'], 'catalog: --min-ratio "2": must be a number from 0 to 1'],
    [['--keep', '0'], 'catalog: --keep "0": must be a whole number from 1 to 1000'],
    [['--bucket', 'Not_A_Bucket'], 'catalog: --bucket "Not_A_Bucket": must be an S3 bucket name'],
  ])('refuses %j naming the flag, the value and the rule', async (args, message) => {
    const result = await runCatalog(['publish', ...args], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(await pointer()).toEqual({});
  });

  it('documents its exit codes in --help: 0, 1, and 3 when a pin held the pointer', async () => {
    const help = await runCatalog(['publish', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'Exit 0 published or identical to the live build, 1 failed, refused, or busy (another run holds the run lock at the origin; nothing done), 3 pinned by a rollback (nothing moved; catalog unpin, then publish again).',
    );
  });

  it('names the missing source and base URL: publishing to AWS has no defaults for them', async () => {
    const arn = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
    const result = await runCatalog(['publish', '--bucket', 'catalog-origin', '--kvs-arn', arn], {
      env: { ...TEST_AWS_ENV },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('catalog: --source: is required; --base-url: is required\n');
  });

  it('names what is missing of a target', async () => {
    const source = {
      CATALOG_SOURCE: env().CATALOG_SOURCE as string,
      CATALOG_BASE_URL: 'https://plans.example.com',
    };
    expect((await runCatalog(['publish', '--bucket', 'catalog-origin'], { env: source })).stderr).toBe(
      'catalog: --kvs-arn: is required with --bucket\n',
    );
    expect((await runCatalog(['publish', '--origin', scratch.dir], { env: source })).stderr).toBe(
      'catalog: --store: is required with --origin\n',
    );
    expect((await runCatalog(['publish', '--bucket', 'catalog-origin'], { env: env() })).stderr).toBe(
      'catalog: give one target, not both: --bucket with --kvs-arn (AWS), or --origin with --store (a local origin)\n',
    );
  });

  it('refuses a base URL that is not https, from the flag or the environment, unless local and loopback', async () => {
    const variable = await runCatalog(['publish'], {
      env: env({ CATALOG_BASE_URL: 'http://plans.example.com' }),
    });
    expect(variable.code).toBe(1);
    expect(variable.stderr).toBe(
      'catalog: CATALOG_BASE_URL "http://plans.example.com": must be https:// (partners render webUrl as a link; the distribution serves HTTPS only), or http:// on a loopback host (127.0.0.1, [::1], localhost) when publishing to a local origin\n',
    );
    const web = await runCatalog(['publish', '--web-base-url', 'http://www.example.com'], { env: env() });
    expect(web.stderr).toBe(
      'catalog: --web-base-url "http://www.example.com": must be https:// (partners render webUrl as a link), or http:// on a loopback host (127.0.0.1, [::1], localhost) when publishing to a local origin\n',
    );
    const aws = {
      ...TEST_AWS_ENV,
      CATALOG_SOURCE: env().CATALOG_SOURCE as string,
      CATALOG_BUCKET: 'catalog-origin',
      CATALOG_KVS_ARN:
        'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0',
    };
    const flag = await runCatalog(['publish', '--base-url', 'http://127.0.0.1:8787'], { env: aws });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe(
      'catalog: --base-url "http://127.0.0.1:8787": must be https:// (partners render webUrl as a link; the distribution serves HTTPS only); http:// on a loopback host is only for a local origin (--origin with --store)\n',
    );
    expect(await pointer()).toEqual({});
  });

  it('publishes to a local origin with an http:// loopback base URL, where catalog serve answers webUrl', async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const published = await runCatalog(['publish', '--base-url', baseUrl], { env: env() });
    expect(published.code, published.stderr).toBe(0);
    const catalog = JSON.parse(
      await readFile(
        join(scratch.dir, 'origin', 'builds', String(summaryOf(published.stdout).buildId), 'catalog.json'),
        'utf8',
      ),
    ) as { plans: { id: string; webUrl: string }[] };
    const plan = catalog.plans[0];
    expect(plan?.webUrl).toBe(`${baseUrl}/plans/${plan?.id}`);
    for (const host of ['[::1]', 'localhost']) {
      const other = await runCatalog(['publish', '--force', '--base-url', `http://${host}:${port}`], {
        env: env(),
      });
      expect(other.code, other.stderr).toBe(0);
    }
    const server = await startCatalog(
      [
        'serve',
        '--port',
        String(port),
        '--origin',
        join(scratch.dir, 'origin'),
        '--store',
        join(scratch.dir, 'kvs.json'),
      ],
      { ready: /listening on (http:\/\/\S+)/ },
    );
    try {
      expect(server.url).toBe(baseUrl);
      const page = await httpRequest(server.url, {
        method: 'GET',
        target: new URL(plan?.webUrl ?? '').pathname,
      });
      expect(page.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('catalog builds, rollback and unpin', () => {
  it('list the builds, roll back by pinning the earlier one, hold it through a publish, and unpin', async () => {
    const first = summaryOf(
      (await runCatalog(['publish', '--source', await fewerRows(10)], { env: env() })).stdout,
    );
    const second = summaryOf((await runCatalog(['publish'], { env: env() })).stdout);

    const listed = await runCatalog(['builds'], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    // A column of plans per discipline.
    const columns = (cell: (d: Discipline) => string | number) => DISCIPLINES.map(cell).join('\\s+');
    const counts = planCounts({ running: 10, strength: 4 });
    expect(lines[0]).toMatch(
      new RegExp(`^BUILD\\s+GENERATED AT\\s+${columns((d) => d.toUpperCase())}\\s+NOTE$`),
    );
    expect(lines[1]).toMatch(
      new RegExp(`^${second.buildId}\\s+\\S+Z\\s+${columns((d) => counts[d])}\\s+live$`),
    );
    expect(lines[2]).toMatch(
      new RegExp(`^${first.buildId}\\s+\\S+Z\\s+${columns(() => '\\d+')}\\s+was live$`),
    );
    expect(lines).toHaveLength(3);

    const rolled = await runCatalog(['rollback'], { env: env() });
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(summaryOf(rolled.stdout)).toMatchObject({
      command: 'rollback',
      buildId: first.buildId,
      previousBuildId: second.buildId,
    });
    expect(withoutTarget(rolled.stderr)).toBe(
      `${first.buildId} is live and pinned: publishing moves nothing until catalog unpin\n`,
    );
    expect((await runCatalog(['builds'], { env: env() })).stdout).toMatch(
      new RegExp(`${first.buildId}.*live, pinned`),
    );

    const held = await runCatalog(['publish', '--source', await fewerRows(15)], { env: env() });
    expect(held.code, held.stderr).toBe(3);
    expect(summaryOf(held.stdout)).toMatchObject({ result: 'skipped-pinned' });
    expect(withoutTarget(held.stderr)).toMatch(
      new RegExp(
        `^skipped-pinned: pinned to ${first.buildId} since \\S+ by rollback; not published: ${first.buildId} stays live until catalog unpin removes the pin, and the next publish after that goes live\\n$`,
      ),
    );
    expect((await pointer()).live).toBe(first.buildId);
    const record = JSON.parse(await readFile(join(scratch.dir, 'origin', 'state', 'last-run.json'), 'utf8'));
    expect(record).toMatchObject({
      outcome: 'skipped-pinned',
      reason: withoutTarget(held.stderr).slice('skipped-pinned: '.length, -1),
    });

    const unpinned = await runCatalog(['unpin'], { env: env() });
    expect(summaryOf(unpinned.stdout)).toMatchObject({
      command: 'unpin',
      unpinned: { build: first.buildId },
    });
    const after = await runCatalog(['publish', '--source', await fewerRows(15)], { env: env() });
    expect(summaryOf(after.stdout)).toMatchObject({ result: 'published' });
    expect(await pointer()).toEqual({ live: summaryOf(after.stdout).buildId });

    const unknown = await runCatalog(['rollback', '--to', 'nonsense'], { env: env() });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('catalog: --to "nonsense": must be a build id (see catalog builds)\n');
  });

  it('refuse a live build of a layout this tool does not read, naming why, and list it as incomplete', async () => {
    const published = await runCatalog(['publish'], { env: env() });
    expect(published.code, published.stderr).toBe(0);
    const { buildId } = summaryOf(published.stdout);
    // The manifest of a layout never deployed (its page map in shards): not guessed at.
    const path = join(scratch.dir, 'origin', 'builds', String(buildId), 'manifest.json');
    const { pages: _, ...older } = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    await writeFile(path, JSON.stringify({ ...older, pageShards: ['0'.repeat(32)] }));
    const refused = await runCatalog(['publish', '--force'], { env: env() });
    expect(refused.code).toBe(1);
    expect(withoutTarget(refused.stderr)).toBe(
      `catalog: ${join(scratch.dir, 'kvs.json')}: its live build ${buildId} cannot be read: builds/${buildId}/manifest.json is not a manifest this tool reads (pages: Invalid input: expected record, received undefined) (the edge cannot serve it); nothing was changed (catalog rollback --to a build makes it live; --recover publishes a fresh build in its place)\n`,
    );
    const listed = await runCatalog(['builds'], { env: env() });
    expect(listed.stdout).toMatch(new RegExp(`^${buildId} +- +- +- +live, incomplete$`, 'm'));
  });
});

/** Starts `catalog publish` as its own process (so it can be paused), with the scratch target's environment. */
function publishProcess(extra: Record<string, string>) {
  const child = spawn(process.execPath, [CATALOG_BIN, 'publish'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env(extra),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = outputOf(child);
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout: output.stdout(), stderr: output.stderr() })),
  );
  return { child, done };
}

describe('two publishes at once, the later build winning, then a rollback', () => {
  it('goes back to the build live before the winner, never to the build of the publish that lost', async () => {
    const v1 = summaryOf(
      (await runCatalog(['publish', '--source', await fewerRows(10)], { env: env() })).stdout,
    );

    // The store's lock is held, as by another publish moving the pointer: v2's publish reads the pointer
    // (v1), uploads its build (the manifest last) and verifies it, then waits at its move. It is paused once its
    // build is whole while v3's publish runs from start to end, then resumed: v3 moved the pointer from v1
    // first, and v2 loses.
    const release = await lock(join(scratch.dir, 'kvs.json'), { realpath: false });
    const v2 = publishProcess({ CATALOG_SOURCE: await fewerRows(11) });
    const builds = join(scratch.dir, 'origin', 'builds');
    const whole = async () =>
      (await readdir(builds)).some((id) => id !== v1.buildId && existsSync(join(builds, id, MANIFEST)));
    try {
      await until(whole, 'the second publish to have written its build');
      v2.child.kill('SIGSTOP');
    } finally {
      await release();
    }
    const [v2Build] = (await readdir(join(scratch.dir, 'origin', 'builds'))).filter(
      (id) => id !== v1.buildId,
    );
    // v2 holds the run lock, and stalls past its expiry (stopped, here): the lock is left as time leaves it,
    // expired, so v3 takes it over and races v2 to the pointer, which the conditional move settles.
    expect(await expireRunLock(join(scratch.dir, 'origin')), 'the run lock v2 holds').toBe(true);
    // Build ids sort by their second: v3's must be newer than v2's, as a later start gives.
    await until(
      async () => new Date().toISOString().slice(0, 19).replace(/[-:]/g, '') > (v2Build ?? '').slice(0, 15),
      'the next second',
    );
    const v3run = await runCatalog(['publish', '--source', await fewerRows(12)], { env: env() });
    v2.child.kill('SIGCONT');
    const v2run = await v2.done;
    expect(v3run.code, v3run.stderr).toBe(0);
    expect(v3run.stderr).toMatch(
      /took over the run lock of catalog publish \(pid \d+ on .*\), which had expired/,
    );
    const v3 = summaryOf(v3run.stdout);
    expect(v3).toMatchObject({ result: 'published', previousBuildId: v1.buildId });
    expect(v2run.code).toBe(1);
    expect(v2run.stderr).toContain(
      `the live build moved from ${v1.buildId} to ${v3.buildId} while this publish ran; ${v3.buildId} stays live`,
    );
    expect(String(v2Build) > String(v1.buildId) && String(v2Build) < String(v3.buildId)).toBe(true);

    const listed = await runCatalog(['builds'], { env: env() });
    const notes = Object.fromEntries(
      listed.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => {
          const cells = line.split(/\s{2,}/);
          return [cells[0], cells[2 + DISCIPLINES.length] ?? ''];
        }),
    );
    expect(notes).toEqual({
      [String(v3.buildId)]: 'live',
      [String(v2Build)]: '',
      [String(v1.buildId)]: 'was live',
    });

    const rolled = await runCatalog(['rollback'], { env: env() });
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(summaryOf(rolled.stdout)).toMatchObject({ buildId: v1.buildId, previousBuildId: v3.buildId });

    const history = await runCatalog(['history'], { env: env() });
    expect(history.code, history.stderr).toBe(0);
    const moves = history.stdout.trim().split('\n');
    expect(moves[0]).toMatch(/^AT\s+KIND\s+FROM\s+TO\s+BY\s+REASON$/);
    expect(moves.slice(1).map((line) => line.split(/\s+/).slice(1, 5))).toEqual([
      ['rollback', v3.buildId, v1.buildId, expect.stringMatching(/^\S+@\S+$/)],
      ['publish', v1.buildId, v3.buildId, expect.stringMatching(/^\S+@\S+$/)],
      ['publish', '-', v1.buildId, expect.stringMatching(/^\S+@\S+$/)],
    ]);
    const json = await runCatalog(['history', '--json', '--limit', '1'], { env: env() });
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        kind: 'rollback',
        from: v3.buildId,
        to: v1.buildId,
        reason: `rolled back from ${v3.buildId}`,
      }),
    ]);

    // What partners get is v1's catalog, in every encoding.
    const key = (await runCatalog(['keys', 'issue', '--partner', 'p'], { env: env() })).stdout.trim();
    const server = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
    try {
      const { servedGeneratedAt } = await import('../testing/cli.ts');
      expect([...(await servedGeneratedAt(server.url, key))]).toEqual([v1.generatedAt]);
    } finally {
      await server.stop();
    }
  });
});

describe('the published catalog end to end', () => {
  it('is what catalog serve answers over the same origin and store', async () => {
    const published = summaryOf((await runCatalog(['publish'], { env: env() })).stdout);
    const issued = await runCatalog(['keys', 'issue', '--partner', 'p'], { env: env() });
    const key = issued.stdout.trim();
    const server = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
    try {
      const all = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(all.status).toBe(200);
      const body = await readFile(
        join(scratch.dir, 'origin', 'builds', String(published.buildId), 'catalog.json'),
      );
      expect(all.body.equals(body)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});

describe('AWS regions', () => {
  let recorder: Recorder;
  beforeAll(async () => {
    recorder = await startRecorder();
  });
  afterAll(() => recorder.close());
  beforeEach(() => {
    recorder.requests.length = 0;
    recorder.answerWith(() => ({ status: 404, body: '' }));
  });

  /** The regions the recorded S3 requests were signed for (SigV4 credential scope). */
  const signedRegions = () =>
    new Set(
      recorder.requests.map(
        (request) => /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String(request.headers.authorization))?.[1],
      ),
    );
  const listBuilds = (extra: Record<string, string>, args: string[] = []) =>
    runCatalog(['builds', ...args], {
      env: {
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AWS_ENDPOINT_URL_S3: recorder.url,
        AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: 'http://127.0.0.1:9',
        AWS_CONFIG_FILE: join(scratch.dir, 'no-config'),
        CATALOG_S3_PATH_STYLE: '1',
        CATALOG_BUCKET: 'catalog-origin',
        CATALOG_KVS_ARN:
          'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0',
        CATALOG_MAX_ATTEMPTS: '1',
        ...extra,
      },
    });

  it("follow the SDK's chain for S3: AWS_REGION, else the profile's region, else --region", async () => {
    await listBuilds({ AWS_REGION: 'eu-west-1' });
    expect(signedRegions()).toEqual(new Set(['eu-west-1']));
    recorder.requests.length = 0;
    const config = join(scratch.dir, 'aws-config');
    await writeFile(config, '[default]\nregion = ap-southeast-2\n');
    await listBuilds({ AWS_CONFIG_FILE: config });
    expect(signedRegions()).toEqual(new Set(['ap-southeast-2']));
    recorder.requests.length = 0;
    await listBuilds({ AWS_REGION: 'eu-west-1' }, ['--region', 'sa-east-1']);
    expect(signedRegions()).toEqual(new Set(['sa-east-1']));
  });

  it('name a missing region clearly', async () => {
    const result = await listBuilds({});
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^catalog: .*no AWS region: set AWS_REGION, a profile region or --region/);
  });
});

describe('catalog rebuild', () => {
  let recorder: Recorder;
  beforeAll(async () => {
    recorder = await startRecorder();
  });
  afterAll(() => recorder.close());
  beforeEach(() => {
    recorder.requests.length = 0;
  });
  const invocations = () => recorder.requests.filter((request) => request.url.endsWith('/invocations'));
  const lambdaEnv = () => ({ ...TEST_AWS_ENV, AWS_ENDPOINT_URL_LAMBDA: recorder.url });

  it('invokes the builder synchronously and prints its summary', async () => {
    const summary = {
      command: 'publish',
      result: 'published',
      buildId: '20260301T100000Z-abcdef12',
      plans: 44,
    };
    recorder.answerWith(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(summary),
    }));
    const result = await runCatalog(['rebuild', '--function', 'catalog-builder'], { env: lambdaEnv() });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(summary);
    const forced = await runCatalog(['rebuild', '--force'], {
      env: { ...lambdaEnv(), CATALOG_FUNCTION_NAME: 'catalog-builder' },
    });
    expect(forced.code, forced.stderr).toBe(0);
    expect(
      invocations().map((request) => [request.url, request.headers['x-amz-invocation-type'], request.body]),
    ).toEqual([
      ['/2015-03-31/functions/catalog-builder/invocations', 'RequestResponse', '{}'],
      ['/2015-03-31/functions/catalog-builder/invocations', 'RequestResponse', '{"force":true}'],
    ]);
  });

  it('exits non-zero when the function errored', async () => {
    recorder.answerWith(() => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled' },
      body: JSON.stringify({
        errorType: 'PublishRefusedError',
        errorMessage: 'refused: the new catalog has 0 plans',
      }),
    }));
    const result = await runCatalog(['rebuild', '--function', 'catalog-builder'], { env: lambdaEnv() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(withoutTarget(result.stderr)).toBe(
      'catalog: function catalog-builder failed (Unhandled): PublishRefusedError: refused: the new catalog has 0 plans\n',
    );
  });

  it.each([
    [
      'not-configured',
      'secret arn:…: no source is set yet (the placeholder the stack created); put the source there: …',
    ],
    [
      'busy',
      'busy: another run holds the run lock at s3://b: lambda (pid 8 on h, since …); this run did nothing',
    ],
  ])('exits 1 with the reason when the builder did nothing: %s', async (result, reason) => {
    recorder.answerWith(() => ({
      status: 200,
      body: JSON.stringify({ command: 'publish', result, reason }),
    }));
    const run = await runCatalog(['rebuild', '--function', 'catalog-builder'], { env: lambdaEnv() });
    const answered = { ...run, stderr: withoutTarget(run.stderr) };
    expect(answered).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `catalog: function catalog-builder did nothing (${result}): ${reason}\n`,
    });
  });

  it('exits non-zero when the function answered no summary', async () => {
    recorder.answerWith(() => ({ status: 200, body: '{"ok":false}' }));
    const result = await runCatalog(['rebuild', '--function', 'catalog-builder'], { env: lambdaEnv() });
    expect(result.code).toBe(1);
    expect(withoutTarget(result.stderr)).toBe(
      'catalog: function catalog-builder answered no publish summary: {"ok":false}\n',
    );
  });
});
