/**
 * The builder Lambda against its peers: s3rver for the bucket, the KeyValueStore API's stand-in for the live
 * pointer, a recorder standing in for Secrets Manager (no local peer), a small edge on 127.0.0.1 serving the
 * live build from them (for the propagation check), and its bundle run as Lambda runs it.
 */
import { once } from 'node:events';
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderOpenApi } from '../builder/openapi.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import {
  DISCIPLINES,
  KVS_LIVE_BUILD,
  KVS_ORIGIN,
  KVS_PIN,
  SOURCE_UNSET,
  STATE_LAST_RUN,
} from '../contract/index.ts';
import { METRICS, METRICS_NAMESPACE, plansMetric } from '../contract/metrics.ts';
import { PublishRefusedError } from '../publish/errors.ts';
import {
  fewPlansFile,
  type RecordedRequest,
  type Recorder,
  S3RVER_CREDENTIALS,
  startRecorder,
  startS3,
  TEST_AWS_ENV,
  type TestS3,
} from '../testing/aws.ts';
import { ROOT, runProcess, scratchDir } from '../testing/cli.ts';
import { planCounts } from '../testing/counts.ts';
import { captureLogLines, type EmfCapture, parseEmf, startEmfCapture } from '../testing/emf.ts';
import { FakeKvs, kvsClientFor } from '../testing/kvs.ts';
import { publishSummaryOf } from '../testing/targets.ts';
import { bundleLambda } from '../tools/build-lambda.ts';
import { OPENAPI_MODULE, openapiModuleSource } from '../tools/openapi-module.ts';
import { LAMBDA_OUTFILE } from './bundling.ts';
import { createHandler, type HandlerOptions, type LambdaClients } from './handler.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog-source-AbCdEf';
const MONITORING_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog-monitoring-XyZ123';
const MONITORING_KEY = `tpc_${'m'.repeat(43)}`;
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const BASE_URL = 'https://plans.example.com';
const CONTACT_ADDRESS = 'https://partners.trainingplans.app/keys';

let recorder: Recorder;
const kvs = new FakeKvs(KVS_ARN);
let kvsPort: number;
let s3: TestS3;
let clients: LambdaClients;
/** The handler's clients for its settings: this test's, whatever the settings. */
const made = () => clients;
let scratch: { dir: string; remove: () => Promise<void> };
/** What the stand-in for Secrets Manager answers as the secret string. */
let secretString: string;
/** The EMF lines the handler's Powertools Metrics writes to stdout, per test. */
let emf: EmfCapture;
/** The handler's log lines (console.log, which goes to CloudWatch Logs on Lambda), per test. */
let lines: string[];

function answer(request: RecordedRequest) {
  if (request.headers['x-amz-target'] === 'secretsmanager.GetSecretValue') {
    const monitoring = (JSON.parse(request.body) as { SecretId?: string }).SecretId === MONITORING_ARN;
    return {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify(
        monitoring
          ? { ARN: MONITORING_ARN, Name: 'catalog-monitoring', SecretString: `${MONITORING_KEY}\n` }
          : { ARN: SECRET_ARN, Name: 'catalog-source', SecretString: secretString },
      ),
    };
  }
  return { status: 404, body: '' };
}

/** The source of the runs: a few plans of the fixtures (testing/aws.ts), 14: 10 running, 4 strength. */
let PLANS = '';

beforeAll(async () => {
  PLANS = await fewPlansFile();
  recorder = await startRecorder();
  recorder.answerWith(answer);
  await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
  kvsPort = (kvs.server.address() as { port: number }).port;
});
afterAll(async () => {
  await recorder.close();
  await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
});

beforeEach(async () => {
  emf = startEmfCapture();
  lines = captureLogLines();
  s3 = await startS3();
  scratch = await scratchDir('catalog-lambda-');
  recorder.requests.length = 0;
  kvs.entries = new Map();
  kvs.version = 1;
  kvs.requests = [];
  const secrets = new SecretsManagerClient({
    region: 'eu-west-1',
    endpoint: recorder.url,
    credentials: S3RVER_CREDENTIALS,
    maxAttempts: 1,
  });
  clients = { s3: s3.client, kvs: kvsClientFor(kvsPort), secrets };
});
afterEach(async () => {
  emf.stop();
  vi.restoreAllMocks();
  clients.secrets.destroy();
  clients.kvs.destroy();
  await s3.stop();
  await scratch.remove();
});

function environment(extra: Record<string, string> = {}): Record<string, string> {
  return {
    CATALOG_BUCKET: s3.bucket,
    CATALOG_KVS_ARN: KVS_ARN,
    CATALOG_BASE_URL: BASE_URL,
    CATALOG_CONTACT_ADDRESS: CONTACT_ADDRESS,
    CATALOG_SOURCE: PLANS,
    ...extra,
  };
}

describe('the builder Lambda', () => {
  it('refuses a store that serves another bucket: no upload, no record, no move, an error naming both', async () => {
    kvs.entries.set(KVS_ORIGIN, 's3://catalog-production');
    const handler = createHandler({ env: environment(), clients: made });
    await expect(handler({})).rejects.toThrow(
      `${KVS_ARN} and s3://${s3.bucket} are not one deployment: the store serves the origin "s3://catalog-production", not "s3://${s3.bucket}"; nothing was changed`,
    );
    expect(await s3.keys()).toEqual([]);
    expect(kvs.updates()).toEqual([]);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ level: 'error', error: 'DeploymentError' });
  });

  it('publishes from its environment, moving the live pointer, and logs one JSON line per run', async () => {
    const factory = vi.fn<HandlerOptions['clients']>(made);
    const handler = createHandler({ env: environment(), clients: factory });
    const first = publishSummaryOf(await handler({}));
    expect(first).toMatchObject({ result: 'published', plans: 14, previousBuildId: null });
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(first.buildId);
    const catalog = await s3.body(`builds/${first.buildId}/catalog.json`);
    expect(JSON.parse(catalog?.toString('utf8') ?? '{}').plans[0].webUrl).toMatch(
      /^https:\/\/plans\.example\.com\/plans\//,
    );
    const second = publishSummaryOf(await handler({ source: 'aws.scheduler' }));
    expect(second).toMatchObject({ result: 'skipped-identical', previousBuildId: first.buildId });
    expect(second.reason).toMatch(/an invocation with the event \{"force": true\}/);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      level: 'info',
      result: 'published',
      buildId: first.buildId,
    });
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ level: 'info', result: 'skipped-identical' });
    expect(kvs.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
    // The clients are made once, from the settings the environment gave, and serve the later run too.
    expect(factory).toHaveBeenCalledTimes(1);
    expect(factory.mock.calls[0]?.[0]).toMatchObject({ bucket: environment().CATALOG_BUCKET });
  });

  it('throws on a refused run, logging the reason, and publishes with force from the event', async () => {
    const few = join(scratch.dir, 'few.json');
    const rows = JSON.parse(await readFile(PLANS, 'utf8')) as unknown[];
    await writeFile(few, JSON.stringify(rows.slice(0, 3)));
    await createHandler({ env: environment(), clients: made })({});
    const shrunk = createHandler({ env: environment({ CATALOG_SOURCE: few }), clients: made });
    await expect(shrunk({})).rejects.toThrow(PublishRefusedError);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({
      level: 'error',
      error: 'PublishRefusedError',
      message: expect.stringMatching(
        /^refused: the new catalog has \d+ plans, fewer than 0.5 × the 14 plans of live build \S+ \(7\); an invocation with the event \{"force": true\} \(catalog rebuild --force\) publishes it anyway$/,
      ),
    });
    await expect(shrunk({ force: 'yes' })).rejects.toThrow('event force: must be true or false');
    expect(await shrunk({ force: true })).toMatchObject({ result: 'published' });
  });

  it('ends busy without an error when another run holds the run lock: nothing built, the run recorded', async () => {
    const { acquireRunLock } = await import('../publish/lock.ts');
    const { S3Origin } = await import('../publish/s3-origin.ts');
    const origin = new S3Origin(s3.client, s3.bucket);
    const other = await acquireRunLock(origin, 'catalog publish');
    if (!('held' in other)) throw new Error('the lock was taken');
    try {
      const handler = createHandler({ env: environment(), clients: made });
      const before = kvs.entries.get(KVS_LIVE_BUILD);
      const summary = await handler({});
      expect(summary).toMatchObject({ result: 'busy', holder: { by: 'catalog publish' } });
      expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(before);
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 'info', result: 'busy' });
      expect(JSON.parse((await s3.body(STATE_LAST_RUN))?.toString('utf8') ?? '{}')).toMatchObject({
        outcome: 'busy',
      });
    } finally {
      await other.held.release();
    }
  });

  it('moves nothing while the pointer is pinned, and reports it as a successful run', async () => {
    const handler = createHandler({ env: environment(), clients: made });
    const first = publishSummaryOf(await handler({}, { functionName: 'catalog-builder' }));
    // Its move is in the pointer's history at the origin, naming the function.
    const { readHistory } = await import('../publish/history.ts');
    const { S3Origin } = await import('../publish/s3-origin.ts');
    expect((await readHistory(new S3Origin(s3.client, s3.bucket), 5))[0]).toMatchObject({
      kind: 'publish',
      to: first.buildId,
      by: 'lambda catalog-builder',
    });
    kvs.entries.set(
      KVS_PIN,
      JSON.stringify({
        build: first.buildId,
        at: '2026-03-01T00:00:00.000Z',
        by: 'rollback',
        reason: 'test',
      }),
    );
    const pinned = publishSummaryOf(await handler({ force: true }));
    expect(pinned).toMatchObject({
      result: 'skipped-pinned',
      reason: `pinned to ${first.buildId} since 2026-03-01T00:00:00.000Z by rollback; not published: ${first.buildId} stays live until catalog unpin removes the pin, and the next publish after that goes live`,
    });
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(first.buildId);
    expect(JSON.parse((await s3.body(STATE_LAST_RUN))?.toString('utf8') ?? '{}')).toMatchObject({
      outcome: 'skipped-pinned',
      reason: pinned.reason,
    });
  });

  it('reads the source from a Secrets Manager secret on every run and never logs it', async () => {
    const secretPath = join(scratch.dir, 'secret-location-7f3a.json');
    await copyFile(PLANS, secretPath);
    secretString = JSON.stringify({ source: secretPath });
    const env = environment({ CATALOG_SOURCE_SECRET_ARN: SECRET_ARN });
    delete env.CATALOG_SOURCE;
    const handler = createHandler({ env, clients: made });
    expect(await handler({})).toMatchObject({ result: 'published', plans: 14 });

    secretString = join(scratch.dir, 'secret-location-7f3a-gone.json');
    const failure = await handler({}).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('<source from secret>');
    expect(failure?.message).not.toContain('secret-location');
    expect(failure?.stack).not.toContain('secret-location');
    const secretReads = recorder.requests.filter(
      (r) => r.headers['x-amz-target'] === 'secretsmanager.GetSecretValue',
    );
    expect(secretReads.map((r) => JSON.parse(r.body))).toEqual([
      { SecretId: SECRET_ARN },
      { SecretId: SECRET_ARN },
    ]);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ level: 'error', error: 'SourceError' });
    for (const line of lines) expect(line).not.toContain('secret-location');
  });

  it('fails naming every bad variable, without echoing the source', async () => {
    const handler = createHandler({
      env: { CATALOG_BUCKET: 'Bad_Bucket', CATALOG_SOURCE: 'postgres://u:pw@db/x', CATALOG_MIN_RATIO: '2' },
      clients: made,
    });
    const expected =
      'CATALOG_BASE_URL: is required; CATALOG_CONTACT_ADDRESS: is required; CATALOG_BUCKET "Bad_Bucket": must be an S3 bucket name (3–63 of a-z, 0-9, . and -); CATALOG_MIN_RATIO "2": must be a number from 0 to 1; CATALOG_KVS_ARN: is required';
    await expect(handler({})).rejects.toThrow(expected);
    expect(lines[0]).not.toContain('pw');
    const both = createHandler({
      env: environment({ CATALOG_SOURCE_SECRET_ARN: SECRET_ARN }),
      clients: made,
    });
    await expect(both({})).rejects.toThrow('set exactly one of CATALOG_SOURCE and CATALOG_SOURCE_SECRET_ARN');
  });
});

describe('what every run leaves: its record, its metrics', () => {
  /** The record at the bucket. */
  const record = async () => JSON.parse((await s3.body(STATE_LAST_RUN))?.toString('utf8') ?? 'null');

  it('on Lambda, metrics that carry the function’s name: two deployments in one region each have their own', async () => {
    const env = { ...environment(), AWS_LAMBDA_FUNCTION_NAME: 'CatalogStaging-BuilderB630A0FA-Ab12Cd34' };
    await createHandler({ env, clients: made })({});
    const line = parseEmf(emf.lines[0] ?? '');
    expect(line.dimensions).toEqual([['service', 'FunctionName']]);
    expect(line.members).toMatchObject({
      service: 'catalog',
      FunctionName: 'CatalogStaging-BuilderB630A0FA-Ab12Cd34',
    });
  });

  it('a publish: the record, and one EMF line with the run, its duration, plans, invalid rows and catalog age', async () => {
    const handler = createHandler({ env: environment(), clients: made });
    const summary = publishSummaryOf(await handler({}));
    expect(await record()).toMatchObject({ outcome: 'published', buildId: summary.buildId, plans: 14 });
    expect(emf.lines).toHaveLength(1);
    const line = parseEmf(emf.lines[0] ?? '');
    expect(line.namespace).toBe(METRICS_NAMESPACE);
    expect(line.dimensions).toEqual([['service']]);
    expect(line.members.service).toBe('catalog');
    const counts = planCounts({ running: 10, strength: 4 });
    const plans = Object.fromEntries(
      DISCIPLINES.map((d) => [METRICS[plansMetric(d)].name, { unit: 'Count', value: counts[d] }]),
    );
    expect(Object.keys(line.metrics).sort()).toEqual(
      ['BuildDuration', 'CatalogAge', 'InvalidRows', ...Object.keys(plans), 'RunSucceeded'].sort(),
    );
    expect(line.metrics).toMatchObject({
      RunSucceeded: { unit: 'Count', value: 1 },
      BuildDuration: { unit: 'Milliseconds' },
      ...plans,
      InvalidRows: { unit: 'Count', value: 0 },
      CatalogAge: { unit: 'Seconds' },
    });
    expect(line.metrics.BuildDuration?.value).toBeGreaterThan(0);
    // No monitoring key configured: the check is skipped, and both lines say why.
    const skipped = 'no monitoring key is configured (CATALOG_MONITORING_KEY_SECRET_ARN)';
    expect(line.members).toMatchObject({
      outcome: 'published',
      propagation: 'skipped',
      propagationDetail: skipped,
    });
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      propagation: { outcome: 'skipped', reason: skipped },
    });
  });

  it('a run whose source is missing: a failed record at the bucket, RunFailed, and the error thrown', async () => {
    const handler = createHandler({ env: environment(), clients: made });
    const first = publishSummaryOf(await handler({}));
    const gone = join(scratch.dir, 'gone.json');
    const failing = createHandler({ env: environment({ CATALOG_SOURCE: gone }), clients: made });
    await expect(failing({})).rejects.toThrow(/gone\.json/);
    expect(await record()).toMatchObject({
      outcome: 'failed',
      error: 'SourceError',
      buildId: null,
      reason: expect.stringContaining(gone),
      confirmed: { buildId: first.buildId },
    });
    const line = parseEmf(emf.lines[1] ?? '');
    expect(line.metrics).toMatchObject({ RunFailed: { value: 1 }, CatalogAge: { unit: 'Seconds' } });
    expect(line.metrics.RunSucceeded).toBeUndefined();
    expect(line.members.outcome).toBe('failed');
  });

  it('a source secret that cannot be read: recorded as a failed run, without the secret', async () => {
    secretString = '   ';
    const env = environment({ CATALOG_SOURCE_SECRET_ARN: SECRET_ARN });
    delete env.CATALOG_SOURCE;
    const handler = createHandler({ env, clients: made });
    await expect(handler({})).rejects.toThrow(`secret ${SECRET_ARN}: has no SecretString`);
    expect(await record()).toMatchObject({
      outcome: 'failed',
      error: 'ConfigError',
      reason: `secret ${SECRET_ARN}: has no SecretString`,
    });
    expect(parseEmf(emf.lines[0] ?? '').metrics.RunFailed?.value).toBe(1);
  });

  it('a source secret still holding the placeholder the stack created: recorded as not configured, no RunFailed, no error', async () => {
    secretString = SOURCE_UNSET;
    const env = environment({ CATALOG_SOURCE_SECRET_ARN: SECRET_ARN });
    delete env.CATALOG_SOURCE;
    const handler = createHandler({ env, clients: made });
    const summary = await handler({});
    const reason = `secret ${SECRET_ARN}: no source is set yet (the placeholder the stack created); put the source there: aws secretsmanager put-secret-value --secret-id ${SECRET_ARN} --secret-string 'postgres://…' (or '{"source":"https://…","token":"…"}')`;
    expect(summary).toEqual({ command: 'publish', result: 'not-configured', reason });
    expect(await record()).toMatchObject({
      outcome: 'not-configured',
      error: 'SourceNotConfiguredError',
      reason,
      buildId: null,
    });
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBeUndefined();
    const emitted = parseEmf(emf.lines[0] ?? '');
    expect(emitted.metrics.RunFailed).toBeUndefined();
    expect(emitted.metrics.RunSucceeded).toBeUndefined();
    expect(emitted.members.outcome).toBe('not-configured');
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      { level: 'warn', command: 'publish', result: 'not-configured', reason, durationMs: expect.any(Number) },
    ]);
  });

  it('after a pointer move, measures propagation through the edge with the monitoring key from its secret', async () => {
    // A small edge over the same peers: it serves the running catalog of the build the stand-in names live.
    const keys: (string | undefined)[] = [];
    const edge = http.createServer((req, res) => {
      keys.push(req.headers['x-api-key'] as string | undefined);
      const live = kvs.entries.get(KVS_LIVE_BUILD);
      void s3.body(`builds/${live}/catalog-running.json`).then((body) => {
        res.writeHead(body ? 200 : 500, { 'content-type': 'application/json' }).end(body ?? '{}');
      });
    });
    edge.listen(0, '127.0.0.1');
    await once(edge, 'listening');
    const local = `http://127.0.0.1:${(edge.address() as AddressInfo).port}`;
    try {
      const handler = createHandler({
        env: environment({
          CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING_ARN,
          CATALOG_PROPAGATION_INTERVAL: '50ms',
        }),
        clients: made,
      });
      // The base URL is https://plans.example.com: the check's requests go to the local edge instead.
      const direct = fetch;
      vi.stubGlobal('fetch', (url: string, init?: RequestInit) => direct(url.replace(BASE_URL, local), init));
      const summary = publishSummaryOf(await handler({}));
      expect(keys.length).toBeGreaterThan(0);
      expect(new Set(keys)).toEqual(new Set([MONITORING_KEY]));
      const logged = JSON.parse(lines[0] ?? '');
      expect(logged).toMatchObject({ result: 'published', propagation: { outcome: 'measured' } });
      const line = parseEmf(emf.lines[0] ?? '');
      expect(line.metrics.PropagationSeconds).toEqual({ unit: 'Seconds', value: logged.propagation.seconds });
      expect(line.members).toMatchObject({ propagation: 'measured', buildId: summary.buildId });
      for (const text of [...lines, ...emf.lines]) expect(text).not.toContain(MONITORING_KEY);
      const reads = recorder.requests.filter(
        (r) => r.headers['x-amz-target'] === 'secretsmanager.GetSecretValue',
      );
      expect(reads.map((r) => JSON.parse(r.body))).toEqual([{ SecretId: MONITORING_ARN }]);

      // Nothing published: nothing to measure, and the key is not read.
      expect((await handler({})).result).toBe('skipped-identical');
      expect(JSON.parse(lines[1] ?? '')).toMatchObject({
        propagation: { outcome: 'skipped', reason: 'nothing was published (skipped-identical)' },
      });
    } finally {
      vi.unstubAllGlobals();
      edge.closeAllConnections();
      await new Promise<void>((resolve) => edge.close(() => resolve()));
    }
  });

  it('skips the check when the function has no time left for it', async () => {
    const handler = createHandler({
      env: environment({ CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING_ARN }),
      clients: made,
    });
    await handler({}, { getRemainingTimeInMillis: () => 5_000 });
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      propagation: { outcome: 'skipped', reason: 'no time left for it before the run times out' },
    });
  });
});

describe('the Lambda bundle', () => {
  it('carries the current openapi.yaml (run npm run build after editing openapi.yaml)', async () => {
    const yaml = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');
    expect(OPENAPI_TEMPLATE, `${OPENAPI_MODULE} is stale`).toBe(yaml);
    expect(await readFile(join(ROOT, OPENAPI_MODULE), 'utf8')).toBe(openapiModuleSource(yaml));
  });

  it('is one self-contained file that publishes with the endpoint variables, openapi.yaml included', async () => {
    const outfile = join(scratch.dir, 'index.mjs');
    await bundleLambda(ROOT);
    await copyFile(join(ROOT, LAMBDA_OUTFILE), outfile);
    expect(await readdir(scratch.dir)).toEqual(['index.mjs']);
    // The KeyValueStore client puts the account id in front of the endpoint's host: the script resolves that
    // name to the stand-in on 127.0.0.1, as a test harness (not the bundle) may.
    const script = [
      "import dns from 'node:dns';",
      'const lookup = dns.lookup;',
      "dns.lookup = (host, ...rest) => lookup(host.endsWith('.kvs.test') ? '127.0.0.1' : host, ...rest);",
      "const { handler } = await import('./index.mjs');",
      'process.stdout.write(JSON.stringify(await handler({})));',
    ].join('\n');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      ...TEST_AWS_ENV,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${kvsPort}`,
      CATALOG_S3_PATH_STYLE: '1',
      CATALOG_MAX_ATTEMPTS: '1',
      ...environment(),
    };
    const { code, stdout, stderr } = await runProcess(
      process.execPath,
      ['--input-type=module', '-e', script],
      {
        cwd: scratch.dir,
        env,
      },
    );
    expect(code, stderr).toBe(0);
    const lines = stdout.trim().split('\n');
    // The run's metrics as one EMF line (Powertools, bundled), the handler's log line, the script's output.
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ level: 'info', result: 'published' });
    const metrics = parseEmf(lines[0] ?? '');
    expect(metrics).toMatchObject({ namespace: METRICS_NAMESPACE, dimensions: [['service']] });
    expect(metrics.metrics).toMatchObject({ RunSucceeded: { value: 1 }, PlansRunning: { value: 10 } });
    const summary = JSON.parse(lines[2] ?? '');
    expect(summary).toMatchObject({ result: 'published', plans: 14 });
    const yaml = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');
    expect((await s3.body(`builds/${summary.buildId}/openapi.yaml`))?.toString('utf8')).toBe(
      renderOpenApi(yaml, BASE_URL, CONTACT_ADDRESS),
    );
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(summary.buildId);
  });
});
