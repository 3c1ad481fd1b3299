/**
 * One name for a deployment: `--deployment NAME` (or CATALOG_DEPLOYMENT) gives every target from the stack's
 * outputs, read with CloudFormation's DescribeStacks (a recorder stands in for that API, which has no local
 * peer; the requests it received are asserted exactly), against s3rver and the KeyValueStore stand-in. And with
 * no deployment and no target at all, the commands act on the local stack in the working directory.
 */

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CanaryReport, canaryReportObject } from '../../app/canary.ts';
import { LOCAL_STACK } from '../../app/paths.ts';
import { KVS_LIVE_BUILD } from '../../contract/index.ts';
import {
  describeStacksAnswer,
  fewPlansFile,
  type RecordedRequest,
  type Recorder,
  startRecorder,
  startS3,
  TEST_AWS_ENV,
  type TestS3,
} from '../../testing/aws.ts';
import { makeStore, runCatalog, withoutTarget } from '../../testing/cli.ts';
import { type ScratchCheckout, scratchCheckout } from '../../testing/infra/checkout.ts';
import { FakeKvs, resolveKvsTestHost } from '../../testing/kvs.ts';
import { useScratchDir } from '../../testing/scratch.ts';

const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
/** The source the commands publish: a few plans of the fixtures (testing/aws.ts). */
let SOURCE = '';
beforeAll(async () => {
  SOURCE = await fewPlansFile();
});
const API_URL = 'https://d111111abcdef8.cloudfront.net';
const FUNCTION = 'staging-builder';
const LOG_GROUP = '/aws/vendedlogs/staging/usage';

/** The stack a DescribeStacks asked for, and the region it was signed for. */
const described = (request: RecordedRequest) => ({
  body: request.body,
  region: /Credential=[^/]+\/\d{8}\/([^/]+)\/cloudformation\//.exec(
    String(request.headers.authorization),
  )?.[1],
});

/** The deployments the scratch checkout the commands run in declares besides the repository's. */
const DECLARED = {
  staging: { deployment: 'staging', region: 'eu-west-1', contactAddress: 'api-keys@trainingplans.app' },
  retired: { deployment: 'retired', region: 'eu-west-1', contactAddress: 'api-keys@trainingplans.app' },
};

describe('--deployment NAME: every target from the stack outputs (CloudFormation stand-in, s3rver, the KVS stand-in)', () => {
  let checkout: ScratchCheckout;
  let cwd: string;
  let s3: TestS3;
  let cloudFormation: Recorder;
  let aws: Recorder;
  const kvs = new FakeKvs(ARN);
  let undoDns: () => void;
  /** Whether the stack has a canary (its output CanaryFunctionName). */
  let withCanary = true;
  beforeAll(async () => {
    // A checkout that declares the deployments named here, as the commands' working directory.
    checkout = await scratchCheckout(DECLARED);
    cwd = process.cwd();
    process.chdir(checkout.dir);
    undoDns = resolveKvsTestHost();
    [s3, cloudFormation, aws] = await Promise.all([
      startS3('staging-origin'),
      startRecorder(),
      startRecorder(),
    ]);
    await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
    cloudFormation.answerWith((request) => {
      const stack = new URLSearchParams(request.body).get('StackName') ?? '';
      if (stack === 'staging')
        return describeStacksAnswer(stack, {
          ApiUrl: API_URL,
          BucketName: s3.bucket,
          KeyValueStoreArn: ARN,
          BuilderFunctionName: FUNCTION,
          ViewerRequestFunctionName: 'staging-viewer-request',
          UsageLogGroupName: LOG_GROUP,
          ...(withCanary ? { CanaryFunctionName: 'staging-canary' } : {}),
        });
      return describeStacksAnswer(stack);
    });
    aws.answerWith((request) => {
      const json = { 'content-type': 'application/x-amz-json-1.1' };
      if (request.url.endsWith('/invocations'))
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            command: 'publish',
            result: 'skipped-identical',
            buildId: kvs.entries.get(KVS_LIVE_BUILD),
          }),
        };
      if (request.headers['x-amz-target'] === 'Logs_20140328.StartQuery')
        return { status: 200, headers: json, body: '{"queryId":"q-1"}' };
      return { status: 200, headers: json, body: '{"status":"Complete","results":[]}' };
    });
  });
  afterAll(async () => {
    process.chdir(cwd);
    undoDns();
    await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
    await Promise.all([s3.stop(), cloudFormation.close(), aws.close(), checkout.remove()]);
  });
  beforeEach(() => {
    cloudFormation.requests.length = 0;
    aws.requests.length = 0;
  });
  const env = (extra: Record<string, string> = {}) => ({
    ...TEST_AWS_ENV,
    AWS_REGION: 'eu-west-1',
    AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_LAMBDA: aws.url,
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: aws.url,
    AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
    CATALOG_S3_PATH_STYLE: '1',
    ...extra,
  });

  it('publishes to the stack’s bucket and store with its ApiUrl as the base URL, after one exact DescribeStacks', async () => {
    const result = await runCatalog(['publish', '--deployment', 'staging', '--source', SOURCE], {
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    // Said first: what it acts on, by the deployment's name and where.
    expect(result.stderr.split('\n')[0]).toBe(
      `publish acts on deployment staging (bucket ${s3.bucket}, store ${ARN}, in eu-west-1)`,
    );
    const { buildId } = JSON.parse(result.stdout) as { buildId: string };
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(buildId);
    const catalog = JSON.parse(String(await s3.body(`builds/${buildId}/catalog.json`))) as {
      plans: { webUrl: string }[];
    };
    expect(catalog.plans[0]?.webUrl.startsWith(`${API_URL}/plans/`)).toBe(true);
    expect(cloudFormation.requests.map(described)).toEqual([
      { body: 'Action=DescribeStacks&Version=2010-05-15&StackName=staging', region: 'eu-west-1' },
    ]);
    expect(cloudFormation.requests[0]).toMatchObject({ method: 'POST', url: '/' });
  });

  it('from CATALOG_DEPLOYMENT: keys, cors, status, history, builds and rebuild act on the same deployment', async () => {
    const deployment = env({ CATALOG_DEPLOYMENT: 'staging' });
    const issued = await runCatalog(['keys', 'issue', '--partner', 'acme'], { env: deployment });
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stderr).toContain(`in ${ARN}`);
    expect(issued.stderr.split('\n')[0]).toBe(
      `keys issue acts on deployment staging (store ${ARN}, in eu-west-1)`,
    );
    const cors = await runCatalog(['cors', 'set', 'https://app.example.com'], { env: deployment });
    expect(cors.code).toBe(0);
    expect(cors.stderr.split('\n')[0]).toBe(
      `cors set acts on deployment staging (store ${ARN}, in eu-west-1)`,
    );
    expect(kvs.entries.get('cors:origin')).toBe('https://app.example.com');
    // catalog check, not told an origin, judges CORS against the one the deployment's store holds now (nothing
    // answers at this address: the report still says what it was to be judged against).
    const checked = await runCatalog(['check', '--json', '--base-url', 'http://127.0.0.1:9'], {
      env: { ...deployment, CATALOG_CHECK_KEY: issued.stdout.trim() },
    });
    expect(checked.code, checked.stderr).toBe(2);
    expect(JSON.parse(checked.stdout)).toMatchObject({ reachable: false, cors: 'https://app.example.com' });
    // The deployed canary's last report, as it stores it in the bucket: a failing row, a minute ago.
    const started = new Date(Date.now() - 61_000);
    const report: CanaryReport = {
      beat: 'full',
      trigger: 'schedule',
      baseUrl: API_URL,
      started: started.toISOString(),
      finished: new Date(started.getTime() + 1_000).toISOString(),
      durationMs: 1_000,
      periodSeconds: 3600,
      runner: { kind: 'lambda', name: 'staging-Canary' },
      cors: 'https://app.example.com',
      reachable: true,
      keyRefused: false,
      deadlineReached: false,
      counts: { pass: 146, fail: 1, skip: 6, warn: 0, notRun: 0 },
      rows: 153,
      requests: 139,
      failing: [
        { name: 'a plan page', request: 'GET /plans/{plan}', lines: ['status: expected 200, got 403'] },
      ],
      diagnosis: null,
    };
    const stored = canaryReportObject(report);
    await s3.seed({ [stored.key]: Buffer.concat(stored.chunks).toString('utf8') });
    const status = await runCatalog(['status', '--json'], { env: deployment });
    expect(JSON.parse(status.stdout)).toMatchObject({
      origin: `s3://${s3.bucket}`,
      store: ARN,
      conformance: { probe: null, full: { report, silent: false, stopped: false, problem: null } },
    });
    const shown = await runCatalog(['status'], { env: deployment });
    expect(shown.stdout).toMatch(
      /CONFORMANCE \(FULL\) +146 of 147 rows pass, failing: "a plan page", 1m \d+s ago/,
    );
    expect(shown.stdout).toMatch(/CONFORMANCE \(PROBE\) +no report of the probe beat yet/);
    expect(JSON.stringify(JSON.parse(status.stdout).problems)).toContain(
      'conformance (full): 146 of 147 rows pass',
    );
    // The canary turned off in the deployment: its last report is shown, no longer judged.
    withCanary = false;
    try {
      const off = JSON.parse((await runCatalog(['status', '--json'], { env: deployment })).stdout);
      expect(off.conformance.full).toMatchObject({ stopped: true, silent: false });
      expect(off.conformance.full.line).toMatch(/\(the deployment has no canary now: its last report\)$/);
      expect(JSON.stringify(off.problems)).not.toContain('conformance');
    } finally {
      withCanary = true;
    }
    for (const command of ['history', 'builds']) {
      const listed = await runCatalog([command], { env: deployment });
      expect(listed.code, `${command}: ${listed.stderr}`).toBe(0);
      expect(listed.stdout).toContain(kvs.entries.get(KVS_LIVE_BUILD));
    }
    const rebuild = await runCatalog(['rebuild'], { env: deployment });
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect(rebuild.stderr).toBe(
      `rebuild acts on deployment staging (builder function ${FUNCTION}, in eu-west-1)\n`,
    );
    expect(aws.requests.map((request) => request.url)).toEqual([
      `/2015-03-31/functions/${FUNCTION}/invocations`,
    ]);
  });

  it('usage reads the log group from the stack’s outputs and queries it in us-east-1, where it is', async () => {
    const result = await runCatalog(['usage', '--deployment', 'staging', '--json'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(cloudFormation.requests.map(described)).toEqual([
      { body: 'Action=DescribeStacks&Version=2010-05-15&StackName=staging', region: 'eu-west-1' },
    ]);
    const start = aws.requests.find((r) => r.headers['x-amz-target'] === 'Logs_20140328.StartQuery');
    expect(JSON.parse(start?.body ?? '{}')).toMatchObject({ logGroupName: LOG_GROUP });
    expect(String(start?.headers.authorization)).toContain('/us-east-1/logs/aws4_request');
  });

  it('an explicit flag still wins, and a bucket of another deployment is refused when the pointer would move', async () => {
    const live = kvs.entries.get(KVS_LIVE_BUILD);
    const result = await runCatalog(
      ['publish', '--deployment', 'staging', '--source', SOURCE, '--bucket', 'production-origin'],
      { env: env() },
    );
    expect(result.code).toBe(1);
    expect(withoutTarget(result.stderr)).toBe(
      `catalog: ${ARN} and s3://production-origin are not one deployment: the store serves the origin "s3://staging-origin", not "s3://production-origin"; nothing was changed\n`,
    );
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(live);
  });

  it('names a declared deployment that has no stack in its region, in one line', async () => {
    const result = await runCatalog(['status', '--deployment', 'retired'], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'catalog: --deployment "retired": there is no stack retired in eu-west-1 (the region infra/deployments/retired.json declares: not deployed yet, or destroyed)\n',
    );
  });

  it('status advises the deployment’s own builder, by its name, to repair a live build', async () => {
    const published = await runCatalog(
      ['publish', '--deployment', 'staging', '--source', SOURCE, '--force'],
      {
        env: env(),
      },
    );
    expect(published.code, published.stderr).toBe(0);
    const live = kvs.entries.get(KVS_LIVE_BUILD);
    const key = `builds/${live}/catalog.json`;
    const body = String(await s3.body(key));
    await s3.seed({ [key]: `${body} ` });
    try {
      const result = await runCatalog(['status', '--deployment', 'staging'], { env: env() });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        '; run catalog rebuild --force --deployment staging (a fresh build, every page written again), or catalog rollback --deployment staging',
      );
    } finally {
      await s3.seed({ [key]: body });
    }
  });

  it('refuses a deployment the checkout does not declare, naming the one probably meant, before asking AWS', async () => {
    const before = cloudFormation.requests.length;
    for (const name of ['stagign', 'Staging']) {
      const result = await runCatalog(['builds', '--deployment', name], { env: env() });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `catalog: --deployment "${name}": there is no infra/deployments/${name}.json; did you mean staging? (declared in infra/deployments/: TrainingPlanCatalog, retired, staging; a new deployment is a new file there)\n`,
      );
    }
    expect(cloudFormation.requests.length).toBe(before);
  });
});

describe('no deployment and no target: the local stack of the working directory', () => {
  const scratch = useScratchDir({ prefix: 'catalog-local-deployment-', each: true });
  let cwd: string;
  beforeEach(() => {
    cwd = process.cwd();
    process.chdir(scratch.dir);
    // As after a first npm start, which makes the store.
    makeStore(join(scratch.dir, LOCAL_STACK.store));
  });
  afterEach(() => process.chdir(cwd));
  const run = async (args: string[]) => {
    const result = await runCatalog(args, { env: {} });
    expect(result.code, `catalog ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result;
  };

  it('publish, status, history, builds, rollback, unpin, keys and cors work with no target flag', async () => {
    const first = JSON.parse((await run(['publish', '--source', SOURCE])).stdout) as { buildId: string };
    const catalog = JSON.parse(
      await readFile(join(scratch.dir, '.catalog/origin/builds', first.buildId, 'catalog.json'), 'utf8'),
    ) as { plans: { webUrl: string }[] };
    expect(catalog.plans[0]?.webUrl.startsWith('http://127.0.0.1:8787/plans/')).toBe(true);
    // While a local stack runs (this process stands for it), publishing links to the address it serves.
    await writeFile(
      join(scratch.dir, '.catalog/stack.json'),
      JSON.stringify({ pid: process.pid, url: 'http://127.0.0.1:8799', since: new Date().toISOString() }),
    );
    const second = JSON.parse((await run(['publish', '--source', SOURCE])).stdout) as { buildId: string };
    const linked = await readFile(
      join(scratch.dir, '.catalog/origin/builds', second.buildId, 'catalog.json'),
      'utf8',
    );
    expect(JSON.parse(linked).plans[0].webUrl).toMatch(/^http:\/\/127\.0\.0\.1:8799\/plans\//);
    await run(['keys', 'issue', '--partner', 'acme']);
    expect((await run(['keys', 'list'])).stdout).toContain('acme');
    await run(['cors', 'set', 'https://app.example.com']);
    expect((await run(['cors', 'show'])).stdout).toBe('https://app.example.com\n');
    expect((await run(['status', '--json'])).stdout).toContain(`"buildId":"${second.buildId}"`);
    expect((await run(['history'])).stdout).toContain(second.buildId);
    expect((await run(['builds'])).stdout).toContain(first.buildId);
    expect(JSON.parse((await run(['rollback'])).stdout)).toMatchObject({ buildId: first.buildId });
    expect(JSON.parse((await run(['unpin'])).stdout)).toMatchObject({ unpinned: { build: first.buildId } });
    const store = await readFile(join(scratch.dir, '.catalog/kvs.json'), 'utf8');
    expect(store).toContain('"build:origin"');
  });

  it('every command that changes state says first that it acts on the local stack', async () => {
    const local = 'acts on the local stack in .catalog/';
    const both = `${local} (origin .catalog/origin, store .catalog/kvs.json)`;
    const first = async (args: string[]) => (await run(args)).stderr.split('\n')[0];
    expect(await first(['publish', '--source', SOURCE])).toBe(`publish ${both}`);
    expect(await first(['publish', '--source', SOURCE, '--force'])).toBe(`publish ${both}`);
    expect(await first(['rollback'])).toBe(`rollback ${both}`);
    expect(await first(['unpin'])).toBe(`unpin ${both}`);
    const store = `${local} (store .catalog/kvs.json)`;
    expect(await first(['keys', 'issue', '--partner', 'acme'])).toBe(`keys issue ${store}`);
    expect(await first(['keys', 'rotate', '--partner', 'acme', '--grace', '1d'])).toBe(
      `keys rotate ${store}`,
    );
    expect(await first(['keys', 'revoke', '--partner', 'acme'])).toBe(`keys revoke ${store}`);
    expect(await first(['cors', 'set', 'https://app.example.com'])).toBe(`cors set ${store}`);
    expect(await first(['cors', 'clear'])).toBe(`cors clear ${store}`);
    // What only reads says nothing of the kind.
    expect((await run(['history'])).stderr).toBe('');
  });

  it('says plainly when AWS settings are in the environment but the local stack is what it acts on', async () => {
    expect((await run(['publish', '--source', SOURCE])).code).toBe(0);
    expect((await run(['publish', '--source', SOURCE, '--force'])).code).toBe(0);
    const result = await runCatalog(['rollback'], {
      env: {
        AWS_PROFILE: 'production',
        AWS_SECRET_ACCESS_KEY: 'not-shown',
        CATALOG_FUNCTION_NAME: 'prod-builder',
      },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n').slice(0, 2)).toEqual([
      'rollback acts on the local stack in .catalog/ (origin .catalog/origin, store .catalog/kvs.json)',
      'catalog: warning: AWS settings are in the environment (AWS_PROFILE, AWS_SECRET_ACCESS_KEY, CATALOG_FUNCTION_NAME), but this acts on the local stack in .catalog/, not on AWS; to act on a deployment, give --deployment NAME (or CATALOG_DEPLOYMENT)',
    ]);
    expect(result.stderr).not.toContain('not-shown');
  });
});

describe('a command that acts on a deployment only, given no target', () => {
  it('rebuild and verify-function say first to name the deployment, listing those the checkout declares', async () => {
    const said = async (args: string[]) => {
      const result = await runCatalog(args, { env: {} });
      expect(result.code).toBe(1);
      return result.stderr;
    };
    const name =
      '--deployment NAME or CATALOG_DEPLOYMENT (declared in infra/deployments/: TrainingPlanCatalog)';
    expect(await said(['rebuild'])).toBe(
      `catalog: rebuild acts on a deployment, and none is named: give ${name}, or else --function\n`,
    );
    expect(await said(['verify-function'])).toBe(
      `catalog: verify-function acts on a deployment, and none is named: give ${name}, or else --name\n`,
    );
  });
});
