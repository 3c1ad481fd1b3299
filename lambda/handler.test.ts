/**
 * The builder Lambda against its peers: s3rver for the bucket, the KeyValueStore API's stand-in for the live
 * pointer, a recorder standing in for Secrets Manager (no local peer), and its bundle run as Lambda runs it.
 */
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderOpenApi } from '../builder/openapi.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { KVS_LIVE_BUILD, KVS_PIN } from '../contract/index.ts';
import { PublishRefusedError } from '../publish/errors.ts';
import {
  type RecordedRequest,
  type Recorder,
  S3RVER_CREDENTIALS,
  startRecorder,
  startS3,
  TEST_AWS_ENV,
  type TestS3,
} from '../testing/aws.ts';
import { ROOT, runProcess, scratchDir } from '../testing/cli.ts';
import { FakeKvs, kvsClientFor } from '../testing/kvs.ts';
import { bundleLambda } from '../tools/build-lambda.ts';
import { OPENAPI_MODULE, openapiModuleSource } from '../tools/openapi-module.ts';
import { createHandler, type LambdaClients } from './handler.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog-source-AbCdEf';
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const FIXTURES = join(ROOT, 'fixtures', 'plans.json');
const BASE_URL = 'https://plans.example.com';

let recorder: Recorder;
const kvs = new FakeKvs(KVS_ARN);
let kvsPort: number;
let s3: TestS3;
let clients: LambdaClients;
let scratch: { dir: string; remove: () => Promise<void> };
/** What the stand-in for Secrets Manager answers as the secret string. */
let secretString: string;

function answer(request: RecordedRequest) {
  if (request.headers['x-amz-target'] === 'secretsmanager.GetSecretValue')
    return {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify({ ARN: SECRET_ARN, Name: 'catalog-source', SecretString: secretString }),
    };
  return { status: 404, body: '' };
}

beforeAll(async () => {
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
    CATALOG_SOURCE: FIXTURES,
    ...extra,
  };
}

describe('the builder Lambda', () => {
  it('publishes from its environment, moving the live pointer, and logs one JSON line per run', async () => {
    const lines: string[] = [];
    const handler = createHandler({ env: environment(), clients, log: (line) => lines.push(line) });
    const first = await handler({});
    expect(first).toMatchObject({ result: 'published', plans: 44, previousBuildId: null });
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(first.buildId);
    const catalog = await s3.body(`builds/${first.buildId}/catalog.json`);
    expect(JSON.parse(catalog?.toString('utf8') ?? '{}').plans[0].webUrl).toMatch(
      /^https:\/\/plans\.example\.com\/plans\//,
    );
    const second = await handler({ source: 'aws.scheduler' });
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
  });

  it('throws on a refused run, logging the reason, and publishes with force from the event', async () => {
    const few = join(scratch.dir, 'few.json');
    const rows = JSON.parse(await readFile(FIXTURES, 'utf8')) as unknown[];
    await writeFile(few, JSON.stringify(rows.slice(0, 10)));
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    await createHandler({ env: environment(), clients, log })({});
    const shrunk = createHandler({ env: environment({ CATALOG_SOURCE: few }), clients, log });
    await expect(shrunk({})).rejects.toThrow(PublishRefusedError);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({
      level: 'error',
      error: 'PublishRefusedError',
      message: expect.stringMatching(
        /^refused: the new catalog has \d+ plans, fewer than 0.5 × the 44 plans of live build \S+ \(22\); an invocation with the event \{"force": true\} \(catalog rebuild --force\) publishes it anyway$/,
      ),
    });
    await expect(shrunk({ force: 'yes' })).rejects.toThrow('event force: must be true or false');
    expect(await shrunk({ force: true })).toMatchObject({ result: 'published' });
  });

  it('moves nothing while the pointer is pinned, and reports it as a successful run', async () => {
    const lines: string[] = [];
    const handler = createHandler({ env: environment(), clients, log: (line) => lines.push(line) });
    const first = await handler({});
    kvs.entries.set(
      KVS_PIN,
      JSON.stringify({
        build: first.buildId,
        at: '2026-03-01T00:00:00.000Z',
        by: 'rollback',
        reason: 'test',
      }),
    );
    const pinned = await handler({ force: true });
    expect(pinned).toMatchObject({
      result: 'skipped-pinned',
      reason: `pinned to ${first.buildId} since 2026-03-01T00:00:00.000Z by rollback; not published`,
    });
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(first.buildId);
  });

  it('reads the source from a Secrets Manager secret on every run and never logs it', async () => {
    const secretPath = join(scratch.dir, 'secret-location-7f3a.json');
    await copyFile(FIXTURES, secretPath);
    secretString = JSON.stringify({ source: secretPath });
    const lines: string[] = [];
    const env = environment({ CATALOG_SOURCE_SECRET_ARN: SECRET_ARN });
    delete env.CATALOG_SOURCE;
    const handler = createHandler({ env, clients, log: (line) => lines.push(line) });
    expect(await handler({})).toMatchObject({ result: 'published', plans: 44 });

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
    const lines: string[] = [];
    const handler = createHandler({
      env: { CATALOG_BUCKET: 'Bad_Bucket', CATALOG_SOURCE: 'postgres://u:pw@db/x', CATALOG_MIN_RATIO: '2' },
      clients,
      log: (line) => lines.push(line),
    });
    const expected =
      'CATALOG_BASE_URL: is required; CATALOG_BUCKET "Bad_Bucket": must be an S3 bucket name (3–63 of a-z, 0-9, . and -); CATALOG_MIN_RATIO "2": must be a number from 0 to 1; CATALOG_KVS_ARN: is required';
    await expect(handler({})).rejects.toThrow(expected);
    expect(lines[0]).not.toContain('pw');
    const both = createHandler({
      env: environment({ CATALOG_SOURCE_SECRET_ARN: SECRET_ARN }),
      clients,
      log: () => {},
    });
    await expect(both({})).rejects.toThrow('set exactly one of CATALOG_SOURCE and CATALOG_SOURCE_SECRET_ARN');
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
    await bundleLambda(ROOT, outfile);
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
    expect(lines).toHaveLength(2); // the handler's log line, then the script's output
    const summary = JSON.parse(lines[1] ?? '');
    expect(summary).toMatchObject({ result: 'published', plans: 44 });
    const yaml = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');
    expect((await s3.body(`builds/${summary.buildId}/openapi.yaml`))?.toString('utf8')).toBe(
      renderOpenApi(yaml, BASE_URL),
    );
    expect(kvs.entries.get(KVS_LIVE_BUILD)).toBe(summary.buildId);
  });
});
