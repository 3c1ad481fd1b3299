import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  invalidationAnswer,
  isUploadOf,
  type Recorder,
  startCutProxy,
  startRecorder,
  startS3,
  TEST_AWS_ENV,
  type TestS3,
} from '../testing/aws.ts';
import { httpRequest, ROOT, runCatalog, scratchDir, startServe } from '../testing/cli.ts';
import { INVALIDATED_MARKER, LIVE_KEYS } from './core.ts';

const DISTRIBUTION = 'E2TESTDIST';

let recorder: Recorder;
beforeAll(async () => {
  recorder = await startRecorder();
});
afterAll(() => recorder.close());

let s3: TestS3;
let scratch: { dir: string; remove: () => Promise<void> };
beforeEach(async () => {
  s3 = await startS3();
  scratch = await scratchDir('catalog-publish-cli-');
  recorder.requests.length = 0;
  recorder.answerWith((request) => invalidationAnswer(request, recorder.requests.length));
});
afterEach(async () => {
  await s3.stop();
  await scratch.remove();
});

/** The environment of a `catalog` child that publishes into the test S3 and CloudFront. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...TEST_AWS_ENV,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_CLOUDFRONT: recorder.url,
    CATALOG_S3_PATH_STYLE: '1',
    CATALOG_BUCKET: s3.bucket,
    CATALOG_DISTRIBUTION_ID: DISTRIBUTION,
    CATALOG_MAX_ATTEMPTS: '2',
    CATALOG_SOURCE: join(ROOT, 'fixtures', 'plans.json'),
    CATALOG_BASE_URL: 'https://plans.example.com',
    ...extra,
  };
}

/** A source file holding the first `count` rows of the fixtures. */
async function fewerRows(count: number): Promise<string> {
  const rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as unknown[];
  const path = join(scratch.dir, `rows-${count}.json`);
  await writeFile(path, JSON.stringify(rows.slice(0, count)));
  return path;
}

function summaryOf(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}

describe('catalog publish', () => {
  it('publishes with its settings from the environment and prints one JSON summary line', async () => {
    const result = await runCatalog(['publish'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result.stdout);
    expect(summary).toMatchObject({
      command: 'publish',
      result: 'uploaded',
      counts: { running: 22, strength: 22 },
      invalidationId: 'I1',
    });
    expect(await s3.keys()).toEqual([...LIVE_KEYS, INVALIDATED_MARKER].sort());
    expect(recorder.invalidations()).toEqual([
      {
        distributionId: DISTRIBUTION,
        paths: ['/api/plans', '/catalog*', '/openapi.yaml'],
        callerReference: `publish-${summary.buildId}`,
      },
    ]);

    const again = await runCatalog(['publish'], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again.stdout)).toMatchObject({ result: 'skipped', invalidationId: null });
    expect(recorder.invalidations()).toHaveLength(1);
  });

  it('takes a flag over its environment variable', async () => {
    const result = await runCatalog(['publish', '--bucket', s3.bucket], {
      env: env({ CATALOG_BUCKET: 'some-other-bucket' }),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(await s3.keys()).toContain('catalog.json');
  });

  it('refuses a shrunken catalog with a one-line reason naming the numbers', async () => {
    expect((await runCatalog(['publish'], { env: env() })).code).toBe(0);
    const before = (await s3.body('catalog.json'))?.toString('utf8');
    const result = await runCatalog(['publish', '--source', await fewerRows(10)], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^catalog: refused: the new catalog has \d+ plans, fewer than 0\.5 × the 44 plans of live build \S+ \(22\); --force publishes it anyway\n$/,
    );
    expect((await s3.body('catalog.json'))?.toString('utf8')).toBe(before);
    expect(recorder.invalidations()).toHaveLength(1);
  });

  it('refuses an empty catalog unless --allow-empty', async () => {
    const empty = join(ROOT, 'fixtures', 'empty.json');
    const refused = await runCatalog(['publish', '--source', empty], { env: env() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'catalog: refused: the new catalog has 0 plans; --allow-empty publishes an empty catalog\n',
    );
    const allowed = await runCatalog(['publish', '--source', empty, '--allow-empty'], { env: env() });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(summaryOf(allowed.stdout)).toMatchObject({ result: 'uploaded', plans: 0 });
  });

  it.each([
    [['--min-ratio', '2'], 'catalog: --min-ratio "2": must be a number from 0 to 1'],
    [['--keep', '0'], 'catalog: --keep "0": must be a whole number from 1 to 1000'],
    [['--bucket', 'Not_A_Bucket'], 'catalog: --bucket "Not_A_Bucket": must be an S3 bucket name'],
  ])('refuses %j naming the flag, the value and the rule', async (args, message) => {
    const result = await runCatalog(['publish', ...args], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(await s3.keys()).toEqual([]);
  });

  it('names the missing source, base URL, bucket and distribution: publishing has no local defaults', async () => {
    const result = await runCatalog(['publish'], { env: { ...TEST_AWS_ENV } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'catalog: --source: is required; --base-url: is required; --bucket: is required; --distribution: is required\n',
    );
    expect(await s3.keys()).toEqual([]);
  });

  it('refuses a base URL that is not https, from the flag or the environment', async () => {
    const flag = await runCatalog(['publish', '--base-url', 'http://127.0.0.1:8787'], { env: env() });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe(
      'catalog: --base-url "http://127.0.0.1:8787": must be https:// (partners render webUrl as a link; the distribution serves HTTPS only)\n',
    );
    const variable = await runCatalog(['publish'], {
      env: env({ CATALOG_BASE_URL: 'http://plans.example.com' }),
    });
    expect(variable.stderr).toMatch(
      /^catalog: CATALOG_BASE_URL "http:\/\/plans.example.com": must be https:\/\//,
    );
    expect(await s3.keys()).toEqual([]);
  });

  it('exits non-zero when the store stops after the first upload, invalidates nothing, and a re-run converges', async () => {
    const good = await runCatalog(['publish', '--source', await fewerRows(40)], { env: env() });
    expect(good.code, good.stderr).toBe(0);
    const goodBodies = await Promise.all(LIVE_KEYS.map((key) => s3.body(key)));
    const proxy = await startCutProxy(s3.endpoint, isUploadOf(s3.bucket, 'catalog-strength.json'));
    const failed = await runCatalog(['publish'], { env: env({ AWS_ENDPOINT_URL_S3: proxy.url }) });
    await proxy.close();
    expect(proxy.cut).toBe(true);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(
      /^catalog: uploading build \S+ to s3:\/\/catalog-origin failed at catalog-running\.json \(.*ECONNREFUSED.*\): written catalog-strength\.json; not written catalog-running\.json, catalog\.json, openapi\.yaml, errors\/500\.json; no invalidation was made; run publish again to converge\n$/,
    );
    expect(recorder.invalidations()).toHaveLength(1);
    const afterFailure = await Promise.all(LIVE_KEYS.map((key) => s3.body(key)));
    expect(afterFailure[0]?.equals(goodBodies[0] ?? Buffer.alloc(0))).toBe(false);
    for (const index of [1, 2, 3, 4])
      expect(afterFailure[index]?.equals(goodBodies[index] ?? Buffer.alloc(0))).toBe(true);

    const rerun = await runCatalog(['publish'], { env: env() });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun.stdout)).toMatchObject({ result: 'uploaded', plans: 44 });
    expect(recorder.invalidations()).toHaveLength(2);
  });
});

describe('AWS regions', () => {
  /** The region each recorded request was signed for (SigV4 credential scope). */
  const signedRegions = () =>
    recorder.requests.map(
      (request) => /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String(request.headers.authorization))?.[1],
    );
  const readOnly = (extra: Record<string, string>) =>
    runCatalog(['builds'], {
      env: {
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AWS_ENDPOINT_URL_S3: recorder.url,
        AWS_CONFIG_FILE: join(scratch.dir, 'no-config'),
        CATALOG_S3_PATH_STYLE: '1',
        CATALOG_BUCKET: 'catalog-origin',
        CATALOG_MAX_ATTEMPTS: '1',
        ...extra,
      },
    });

  it("follow the SDK's chain: AWS_REGION, else the profile's region, else --region when given", async () => {
    recorder.answerWith(() => ({ status: 404, body: '' }));
    await readOnly({ AWS_REGION: 'eu-west-1' });
    expect(new Set(signedRegions())).toEqual(new Set(['eu-west-1']));

    recorder.requests.length = 0;
    const config = join(scratch.dir, 'aws-config');
    await writeFile(config, '[default]\nregion = ap-southeast-2\n');
    await readOnly({ AWS_CONFIG_FILE: config });
    expect(new Set(signedRegions())).toEqual(new Set(['ap-southeast-2']));

    recorder.requests.length = 0;
    await runCatalog(['builds', '--region', 'sa-east-1'], {
      env: {
        ...TEST_AWS_ENV,
        AWS_ENDPOINT_URL_S3: recorder.url,
        CATALOG_S3_PATH_STYLE: '1',
        CATALOG_BUCKET: 'b-1',
      },
    });
    expect(new Set(signedRegions())).toEqual(new Set(['sa-east-1']));
  });

  it('name a missing region clearly', async () => {
    const result = await readOnly({});
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^catalog: .*no AWS region: set AWS_REGION, a profile region or --region/);
  });

  it('sign CloudFront for us-east-1 whatever the region of the rest', async () => {
    const published = await runCatalog(['publish'], { env: env({ AWS_REGION: 'eu-west-1' }) });
    expect(published.code, published.stderr).toBe(0);
    const invalidation = recorder.requests.find((request) => request.url.endsWith('/invalidation'));
    expect(/Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String(invalidation?.headers.authorization))?.[1]).toBe(
      'us-east-1',
    );
  });
});

describe('catalog builds and catalog rollback', () => {
  it('lists the history and restores the previous build', async () => {
    const first = await runCatalog(['publish', '--source', await fewerRows(40)], { env: env() });
    const firstId = summaryOf(first.stdout).buildId as string;
    const firstBody = await s3.body('catalog.json');
    const second = await runCatalog(['publish'], { env: env() });
    const secondId = summaryOf(second.stdout).buildId as string;

    const listed = await runCatalog(['builds'], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^BUILD\s+GENERATED AT\s+RUNNING\s+STRENGTH\s+NOTE$/);
    expect(lines[1]).toMatch(new RegExp(`^${secondId}\\s+\\S+Z\\s+22\\s+22\\s+live, not archived yet$`));
    expect(lines[2]).toMatch(new RegExp(`^${firstId}\\s+\\S+Z\\s+\\d+\\s+\\d+$`));
    expect(lines).toHaveLength(3);

    const rolled = await runCatalog(['rollback'], { env: env() });
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(summaryOf(rolled.stdout)).toMatchObject({
      command: 'rollback',
      buildId: firstId,
      previousBuildId: secondId,
    });
    expect((await s3.body('catalog.json'))?.equals(firstBody ?? Buffer.alloc(0))).toBe(true);
    expect(recorder.invalidations().at(-1)?.callerReference).toMatch(
      new RegExp(`^rollback-${firstId}-\\d{8}T\\d{9}Z$`),
    );

    const unknown = await runCatalog(['rollback', '--to', 'nonsense'], { env: env() });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('catalog: --to "nonsense": must be a build id (see catalog builds)\n');
  });
});

describe('catalog rebuild', () => {
  const invocations = () => recorder.requests.filter((request) => request.url.endsWith('/invocations'));
  const lambdaEnv = () => ({ ...TEST_AWS_ENV, AWS_ENDPOINT_URL_LAMBDA: recorder.url });

  it('invokes the builder synchronously and prints its summary', async () => {
    const summary = {
      command: 'publish',
      result: 'uploaded',
      buildId: '20260301T100000000Z-abcdef',
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
    expect(result.stderr).toBe(
      'catalog: function catalog-builder failed (Unhandled): PublishRefusedError: refused: the new catalog has 0 plans\n',
    );
  });

  it('exits non-zero when the function answered no summary', async () => {
    recorder.answerWith(() => ({ status: 200, body: '{"ok":false}' }));
    const result = await runCatalog(['rebuild', '--function', 'catalog-builder'], { env: lambdaEnv() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'catalog: function catalog-builder answered no publish summary: {"ok":false}\n',
    );
  });
});

describe('end to end', () => {
  it('serves the published catalog from the bucket through the local edge', async () => {
    const published = await runCatalog(['publish'], { env: env() });
    expect(published.code, published.stderr).toBe(0);
    const store = join(scratch.dir, 'kvs.json');
    const issued = await runCatalog(['keys', 'issue', '--partner', 'p', '--store', store]);
    expect(issued.code, issued.stderr).toBe(0);
    const key = issued.stdout.trim();
    const server = await startServe(
      ['--origin', `s3://${s3.bucket}`, '--endpoint', s3.endpoint, '--store', store],
      {
        env: { ...TEST_AWS_ENV },
      },
    );
    try {
      const all = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(all.status).toBe(200);
      expect(all.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(all.body.equals((await s3.body('catalog.json')) ?? Buffer.alloc(0))).toBe(true);
      expect(JSON.parse(all.body.toString('utf8')).plans).toHaveLength(44);
      const running = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans?discipline=running',
        headers: [['X-Api-Key', key]],
      });
      expect(running.body.equals((await s3.body('catalog-running.json')) ?? Buffer.alloc(0))).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
