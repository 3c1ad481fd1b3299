/**
 * The canary Lambda against the local edge running the real bundles over the fixtures (the request-case table
 * and the catalog rows of catalog check), its reports written to s3rver, a recorder standing in for Secrets
 * Manager and a stand-in for the KeyValueStore API (neither has a local peer), its metrics read from the EMF
 * lines Powertools writes. Both beats, healthy first, then one fault at a time: the row that names it fails, and
 * only what follows from it.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CanaryReport, parseCanaryReport } from '../app/canary.ts';
import { blackBoxCases } from '../app/check-rows.ts';
import { publish } from '../app/run.ts';
import { parseSettings } from '../app/settings/index.ts';
import {
  type CanaryBeat,
  catalogFile,
  DISCIPLINES,
  KVS_CORS_ORIGIN,
  KVS_LIVE_BUILD,
  STATE_CANARY,
} from '../contract/index.ts';
import {
  CANARY_METRICS,
  METRICS_BEAT_DIMENSION,
  METRICS_FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
} from '../contract/metrics.ts';
import { PARTNER_ORIGIN } from '../gateway/cases.ts';
import { Edge } from '../gateway/local/edge.ts';
import { EdgeOrigin } from '../gateway/local/origin.ts';
import { loadFunction, VIEWER_RESPONSE_RUNTIME } from '../gateway/local/sandbox.ts';
import { createEdgeServer, listen, shutdown } from '../gateway/local/server.ts';
import { WatchedKeyValueStore } from '../gateway/local/store.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { hashKey, storeKeyOf } from '../keys/keys.ts';
import { issueKey } from '../keys/manage.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import {
  type RecordedRequest,
  type Recorder,
  S3RVER_CREDENTIALS,
  startRecorder,
  startS3,
  type TestS3,
} from '../testing/aws.ts';
import { ROOT } from '../testing/cli.ts';
import { captureLogLines, type EmfCapture, parseEmf, startEmfCapture } from '../testing/emf.ts';
import { FakeKvs, kvsClientFor } from '../testing/kvs.ts';
import { freePort, refusedPort } from '../testing/postgres.ts';
import { builtFunctionCode, createTestWorld, type TestWorld } from '../testing/world.ts';
import { type CanaryClients, createCanaryHandler } from './canary.ts';

const MONITORING_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog-monitoring-XyZ123';
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
/** The rows of the table about CORS itself (preflights, origins). */
const CORS_ROWS = new Set(blackBoxCases().flatMap((c) => (c.cors === undefined ? [] : [c.name])));

let world: TestWorld;
let port: number;
let monitoringKey: string;
let recorder: Recorder;
let s3: TestS3;
let secrets: SecretsManagerClient;
let emf: EmfCapture;
let lines: string[];
/** The KeyValueStore API's stand-in: the store the deployed canary reads the CORS origin from. */
let kvs: FakeKvs;
let kvsPort: number;

function answer(request: RecordedRequest) {
  if (request.headers['x-amz-target'] === 'secretsmanager.GetSecretValue')
    return {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify({
        ARN: MONITORING_ARN,
        Name: 'catalog-monitoring',
        SecretString: `${monitoringKey}\n`,
      }),
    };
  return { status: 404, body: '' };
}

beforeAll(async () => {
  port = await freePort();
  world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
  // The monitoring partner's key, in the store that holds the CORS origin the canary is told.
  monitoringKey = (
    await issueKey(new FileKeyValueStore(world.stores.cors), { partner: 'monitoring', now: new Date() })
  ).key;
  recorder = await startRecorder();
  recorder.answerWith(answer);
  kvs = new FakeKvs(KVS_ARN);
  await new Promise<void>((done) => kvs.server.listen(0, '127.0.0.1', done));
  kvsPort = (kvs.server.address() as { port: number }).port;
});
afterAll(async () => {
  await recorder?.close();
  await new Promise((done) => kvs?.server.close(done));
  await world?.remove();
});

beforeEach(async () => {
  emf = startEmfCapture();
  lines = captureLogLines();
  s3 = await startS3();
  recorder.requests.length = 0;
  kvs.requests.length = 0;
  kvs.entries = new Map([[KVS_CORS_ORIGIN, PARTNER_ORIGIN]]);
  secrets = new SecretsManagerClient({
    region: 'eu-west-1',
    endpoint: recorder.url,
    credentials: S3RVER_CREDENTIALS,
    maxAttempts: 1,
  });
});
afterEach(async () => {
  emf.stop();
  vi.restoreAllMocks();
  secrets.destroy();
  await s3.stop();
});

/** The local edge on the world's port: the built bundles over `store`, `viewerResponse` as given. */
async function startEdge(options: { store?: string; viewerResponse?: (bundle: string) => string } = {}) {
  const kvs = new WatchedKeyValueStore(options.store ?? world.stores.cors);
  await kvs.load();
  const response = await builtFunctionCode('viewer-response');
  const edge = new Edge({
    viewerRequest: loadFunction(await builtFunctionCode('viewer-request'), { kvs }),
    viewerResponse: loadFunction(options.viewerResponse?.(response) ?? response, {
      kvs,
      ...VIEWER_RESPONSE_RUNTIME,
    }),
    origin: new EdgeOrigin(new DirectoryOrigin(world.originDir)),
  });
  const statuses: number[] = [];
  const http = createEdgeServer({
    edge,
    log: (entry) => statuses.push((entry as { status: number }).status),
  });
  await listen(http, port, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, statuses, close: () => shutdown(http) };
}

/** How a test invokes the canary: the beat (the full table unless told), its environment, its store client. */
interface Invocation {
  readonly beat?: CanaryBeat;
  readonly env?: Record<string, string>;
  readonly kvsPort?: number;
}

/** One invocation of the canary against `baseUrl`, as the scheduler makes it: its reports, and the stored ones. */
async function invoke(
  baseUrl: string,
  { beat = 'full', env = {}, kvsPort: port = kvsPort }: Invocation = {},
) {
  const handler = createCanaryHandler({
    env: {
      CATALOG_BASE_URL: baseUrl,
      CATALOG_BUCKET: s3.bucket,
      CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING_ARN,
      CATALOG_KVS_ARN: KVS_ARN,
      AWS_LAMBDA_FUNCTION_NAME: 'catalog-canary',
      ...env,
    },
    clients: (): CanaryClients => ({ s3: s3.client, secrets, kvs: kvsClientFor(port) }),
  });
  const reports = await handler(
    { beat },
    { functionName: 'catalog-canary', getRemainingTimeInMillis: () => 60_000 },
  );
  return reports;
}

/** The report of `beat` stored in the bucket. */
async function storedReport(beat: CanaryBeat): Promise<CanaryReport> {
  const body = await s3.body(STATE_CANARY[beat]);
  if (!body) throw new Error(`no ${STATE_CANARY[beat]} written`);
  const stored = parseCanaryReport(body, beat);
  if (!('report' in stored)) throw new Error(stored.problem);
  return stored.report;
}

/** One run of the full table against `baseUrl`: its report, and the one stored. */
async function runCanary(baseUrl: string, env: Record<string, string> = {}) {
  const reports = await invoke(baseUrl, { env });
  expect(reports.map((report) => report.beat)).toEqual(['full']);
  const report = reports[0] as CanaryReport;
  return { report, stored: await storedReport('full') };
}

const failing = (report: CanaryReport) => report.failing.map((row) => row.name);
/** The run's metrics, by name, from the one EMF line it wrote. */
function metrics() {
  expect(emf.lines).toHaveLength(1);
  const record = parseEmf(emf.lines[0] ?? '');
  expect(record.namespace).toBe(METRICS_NAMESPACE);
  return Object.fromEntries(Object.entries(record.metrics).map(([name, { value }]) => [name, value]));
}

/** A store file in the world's folder: the CORS store's entries, then `change`; its path. */
async function storeWith(name: string, change: (entries: Map<string, string>) => unknown): Promise<string> {
  const path = join(world.dir, name);
  const entries = await new FileKeyValueStore(world.stores.cors).read();
  await new FileKeyValueStore(path, { create: true }).update((target) => {
    for (const [k, v] of entries) target.set(k, v);
    change(target);
  });
  return path;
}

describe('the canary Lambda against the local edge: the full table', () => {
  it('healthy: every row passes; the report stored (never served), the metrics, the secret and the origin read once', async () => {
    const edge = await startEdge();
    try {
      const started = performance.now();
      const { report, stored } = await runCanary(edge.url);
      console.info(`canary run against the local edge: ${Math.round(performance.now() - started)} ms`);
      expect(stored).toEqual(report);
      expect(report).toMatchObject({
        reachable: true,
        keyRefused: false,
        deadlineReached: false,
        diagnosis: null,
      });
      // Every row but the one that would put the key in a URL (access logs keep URLs): that one is skipped.
      expect(report.counts).toMatchObject({ fail: 0, notRun: 0, skip: 1 });
      expect(report.counts.pass + report.counts.warn).toBe(report.rows - 1);
      expect(report.cors).toBe(PARTNER_ORIGIN);
      expect(report.runner).toEqual({ kind: 'lambda', name: 'catalog-canary' });
      expect(report).toMatchObject({ beat: 'full', trigger: 'schedule', periodSeconds: 3600 });
      // The one request to Secrets Manager: that secret, nothing else.
      expect(recorder.requests.map((r) => [r.headers['x-amz-target'], JSON.parse(r.body)])).toEqual([
        ['secretsmanager.GetSecretValue', { SecretId: MONITORING_ARN }],
      ]);
      // The one request to the store: GetKey of the CORS origin, nothing listed.
      expect(kvs.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET /key-value-stores/${encodeURIComponent(KVS_ARN)}/keys/${encodeURIComponent(KVS_CORS_ORIGIN)}`,
      ]);
      const record = parseEmf(emf.lines[0] ?? '');
      expect(record.members).toMatchObject({
        [METRICS_BEAT_DIMENSION]: 'full',
        [METRICS_FUNCTION_DIMENSION]: 'catalog-canary',
      });
      expect(record.dimensions).toEqual([['service', METRICS_FUNCTION_DIMENSION, METRICS_BEAT_DIMENSION]]);
      expect(metrics()).toEqual({
        [CANARY_METRICS.failedRows.name]: 0,
        [CANARY_METRICS.rowsNotRun.name]: 0,
        [CANARY_METRICS.unreachable.name]: 0,
        [CANARY_METRICS.runDuration.name]: report.durationMs,
      });
      // One log line for the run, no row failed; the key nowhere.
      expect(lines.map((line) => JSON.parse(line).message)).toEqual([
        `conformance (full): ${report.rows - report.counts.skip} of ${report.rows - report.counts.skip} rows pass`,
      ]);
      // Every run sends the same requests and gets the same answers: with no partner traffic, the 4xx rate the
      // 4xx anomaly alarm judges per 5-minute period (one run each, infra/canary.test.ts) is the same number.
      const first = [...edge.statuses].sort();
      edge.statuses.length = 0;
      emf.lines.length = 0;
      await runCanary(edge.url);
      expect([...edge.statuses].sort()).toEqual(first);
      const refused = first.filter((status) => status >= 400 && status < 500).length;
      console.info(`canary requests per run: ${first.length}, of them 4xx: ${refused}`);
      // The report is at the origin under state/, which the edge never serves.
      const served = await fetch(`${edge.url}/${STATE_CANARY.full}`, {
        headers: { 'x-api-key': monitoringKey },
      });
      expect(served.status).toBe(404);
      expect(JSON.stringify(report) + lines.join('') + emf.lines.join('')).not.toContain(monitoringKey);
    } finally {
      await edge.close();
    }
  });

  it('an edge answering with another CORS origin than the store holds: rows fail on that header alone, with the likely cause', async () => {
    const changed = await storeWith('kvs-cors-changed.json', (target) =>
      target.set(KVS_CORS_ORIGIN, 'https://elsewhere.example'),
    );
    const edge = await startEdge({ store: changed });
    try {
      const { report } = await runCanary(edge.url);
      expect(report.counts.fail).toBeGreaterThan(0);
      // Every answer names the CORS origin: each row fails on that header, and on nothing else.
      expect(
        report.failing
          .flatMap((row) => row.lines)
          .filter(
            (line) =>
              !line.startsWith(
                'access-control-allow-origin: expected "https://partner.example", got "https://elsewhere.example"',
              ),
          ),
      ).toEqual([]);
      expect([...CORS_ROWS].filter((name) => failing(report).includes(name)).length).toBeGreaterThan(0);
      expect(report.diagnosis).toMatch(/^likely cause of the CORS failures: /);
      expect(metrics()[CANARY_METRICS.failedRows.name]).toBe(report.counts.fail);
      // One structured line per failed row: its name, what it expected, what came.
      const rowLines = lines
        .map((line) => JSON.parse(line))
        .filter((line) => line.message === 'conformance row failed');
      expect(rowLines.map((line) => line.row)).toEqual(failing(report));
      expect(rowLines[0]?.problems.join(' ')).toMatch(/expected .*got/);
    } finally {
      await edge.close();
      await rm(changed, { force: true });
    }
  });

  it("the monitoring key revoked: one diagnosis, the canary's key is refused, not a failure per row", async () => {
    const revoked = await storeWith('kvs-revoked.json', (target) =>
      target.delete(storeKeyOf(hashKey(monitoringKey))),
    );
    const edge = await startEdge({ store: revoked });
    try {
      const { report } = await runCanary(edge.url);
      expect(failing(report)).toEqual(['the whole catalog']);
      expect(report.keyRefused).toBe(true);
      expect(report.diagnosis).toMatch(/^the canary's key is refused \(401 to its first request\)/);
      expect(report.counts.notRun).toBeGreaterThan(0);
    } finally {
      await edge.close();
      await rm(revoked, { force: true });
    }
  });

  it('a viewer-response bundle that drops X-Content-Type-Options: the response headers policy still sets it', async () => {
    // The distribution's response headers policy sets nosniff on every answer (gateway/distribution.ts), after
    // the function, as the local edge does: the rows that judge nosniff still pass. Vary, which only the
    // function sets, dropped too, fails the rows that name it: the run does see the bundle.
    const dropping = (bundle: string) => `${bundle}
var builtHandler = handler;
handler = async function (event) { var response = await builtHandler(event); delete response.headers['x-content-type-options']; delete response.headers.vary; return response; };`;
    const edge = await startEdge({ viewerResponse: dropping });
    try {
      const { report } = await runCanary(edge.url);
      const problems = report.failing.flatMap((row) => row.lines);
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.filter((line) => !line.startsWith('vary: '))).toEqual([]);
      expect(failing(report)).toContain('the whole catalog');
    } finally {
      await edge.close();
    }
  });

  it('a live catalog object deleted from the origin: the rows that read it fail, the others pass', async () => {
    const file = join(world.buildDir, catalogFile('running'));
    const kept = await readFile(file);
    await rm(file);
    const edge = await startEdge();
    try {
      const { report } = await runCanary(edge.url);
      expect(report.counts.fail).toBeGreaterThan(0);
      // Exactly the rows that ask for the running catalog uncompressed: each got the 500, nothing else failed.
      expect(failing(report)).toContain('running plans');
      for (const row of report.failing) {
        expect(row.request, row.name).toMatch(/^GET \/api\/plans\?.*running/);
        expect(row.lines, row.name).toEqual([
          'status: expected 200, got 500 (tag:training-plan-catalog,2026:problem:internal-error)',
        ]);
      }
      expect(report.counts.pass).toBeGreaterThan(report.counts.fail);
    } finally {
      await edge.close();
      await writeFile(file, kept);
    }
  });

  it('a deployment that trickles bytes: the run ends by its deadline, with a report of the rows not run', async () => {
    let answered = 0;
    const trickling = createServer((_request, response) => {
      answered += 1;
      if (answered === 1) return void response.writeHead(404, { 'content-length': '0' }).end();
      response.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => response.write(' '), 200);
      response.on('close', () => clearInterval(timer));
    });
    await listen(trickling, 0, '127.0.0.1');
    try {
      const address = trickling.address() as { port: number };
      const { report, stored } = await runCanary(`http://127.0.0.1:${address.port}`, {
        CATALOG_CHECK_DEADLINE: '3s',
        CATALOG_CHECK_TIMEOUT: '60s',
      });
      expect(stored).toEqual(report);
      expect(report.deadlineReached).toBe(true);
      expect(report.counts.notRun).toBeGreaterThan(0);
      expect(report.counts.pass).toBe(0);
      expect(report.durationMs).toBeLessThan(3000 + 1000);
      expect(report.diagnosis).toMatch(/^CATALOG_CHECK_DEADLINE 3s passed after \d+ of \d+ rows/);
      expect(metrics()[CANARY_METRICS.rowsNotRun.name]).toBe(report.counts.notRun);
    } finally {
      await shutdown(trickling);
    }
  });
});

describe('the canary Lambda reads the CORS origin from the store at each run (no redeploy for catalog cors set)', () => {
  it('judges CORS against what the store holds at each run: an origin, then none', async () => {
    const withOrigin = await startEdge();
    try {
      const { report } = await runCanary(withOrigin.url);
      expect(report).toMatchObject({ cors: PARTNER_ORIGIN, counts: { fail: 0, notRun: 0 } });
    } finally {
      await withOrigin.close();
    }
    // catalog cors clear: the store holds no origin, the edge answers without one; no deploy in between.
    kvs.entries.delete(KVS_CORS_ORIGIN);
    const cleared = await storeWith('kvs-cors-cleared.json', (target) => target.delete(KVS_CORS_ORIGIN));
    const without = await startEdge({ store: cleared });
    try {
      const { report } = await runCanary(without.url);
      expect(report).toMatchObject({ cors: 'off', counts: { fail: 0, notRun: 0 } });
      // The CORS rows that need an origin are skipped, saying so; none fails.
      expect(report.counts.skip).toBe(CORS_ROWS.size + 1);
    } finally {
      await without.close();
      await rm(cleared, { force: true });
    }
    // Each run asked the store for that one entry, once.
    const get = `GET /key-value-stores/${encodeURIComponent(KVS_ARN)}/keys/${encodeURIComponent(KVS_CORS_ORIGIN)}`;
    expect(kvs.requests.map((r) => `${r.method} ${r.path}`)).toEqual([get, get]);
    // Signed as a call to the store's API (SigV4A, the store's service), as the real one must be.
    expect(String(kvs.requests[0]?.headers.authorization)).toMatch(
      /^AWS4-ECDSA-P256-SHA256 Credential=.*\/cloudfront-keyvaluestore\/aws4_request/,
    );
  });

  it('fails the run, saying why, when the store cannot be read: nothing is proved', async () => {
    const edge = await startEdge();
    try {
      const [report] = await invoke(edge.url, { beat: 'probe', kvsPort: await refusedPort() });
      expect(report).toMatchObject({
        beat: 'probe',
        reachable: true,
        counts: { pass: 0, notRun: report?.rows },
      });
      expect(report?.diagnosis).toMatch(/^the CORS origin could not be read from the key-value store: /);
      expect(await storedReport('probe')).toEqual(report);
      expect(metrics()[CANARY_METRICS.rowsNotRun.name]).toBe(report?.rows);
      expect(edge.statuses).toEqual([]);
    } finally {
      await edge.close();
    }
  });
});

describe('the canary Lambda against the local edge: the probe', () => {
  const probe = async (baseUrl: string) => {
    const reports = await invoke(baseUrl, { beat: 'probe' });
    expect(reports[0]?.beat).toBe('probe');
    return reports;
  };
  const READS = DISCIPLINES.map((discipline) => `${discipline} plans in brotli, 304 while unchanged`);

  it('healthy: reads each catalog in brotli, then 304s; its report keeps what it saw; the full table is not run', async () => {
    const edge = await startEdge();
    try {
      const [first, ...more] = await probe(edge.url);
      expect(more).toEqual([]);
      expect(first).toMatchObject({
        trigger: 'schedule',
        periodSeconds: 300,
        counts: { pass: DISCIPLINES.length + 3, fail: 0, skip: 0, notRun: 0 },
        requests: DISCIPLINES.length + 2,
        diagnosis: null,
      });
      expect(Object.keys(first?.seen ?? {}).sort()).toEqual([...DISCIPLINES].sort());
      expect(await storedReport('probe')).toEqual(first);
      expect(await s3.body(STATE_CANARY.full)).toBeNull();
      const record = parseEmf(emf.lines[0] ?? '');
      expect(record.members[METRICS_BEAT_DIMENSION]).toBe('probe');
      expect(lines.map((line) => JSON.parse(line).message)).toEqual([
        `conformance (probe): ${DISCIPLINES.length + 3} of ${DISCIPLINES.length + 3} rows pass`,
      ]);
      expect(edge.statuses).toEqual([...DISCIPLINES.map(() => 200), 401, 204]);

      // The next probe reads the last one's report: unchanged catalogs cost a 304 each.
      edge.statuses.length = 0;
      const [second] = await probe(edge.url);
      expect(second).toMatchObject({ counts: { fail: 0, notRun: 0 }, seen: first?.seen });
      expect(edge.statuses).toEqual([...DISCIPLINES.map(() => 304), 401, 204]);
    } finally {
      await edge.close();
    }
  });

  it('the monitoring key revoked: the first read fails, one diagnosis, the other read not sent', async () => {
    const revoked = await storeWith('kvs-revoked-probe.json', (target) =>
      target.delete(storeKeyOf(hashKey(monitoringKey))),
    );
    const edge = await startEdge({ store: revoked });
    try {
      const [report] = await probe(edge.url);
      expect(report?.keyRefused).toBe(true);
      expect(report && failing(report)).toEqual([READS[0]]);
      expect(report?.failing[0]?.lines).toEqual([
        'status: expected 200, got 401 (tag:training-plan-catalog,2026:problem:unauthorized)',
      ]);
      expect(report?.diagnosis).toMatch(/^the canary's key is refused \(401 to its first request\)/);
      expect(report?.counts.notRun).toBe(DISCIPLINES.length - 1);
    } finally {
      await edge.close();
      await rm(revoked, { force: true });
    }
  });

  it('the live catalog missing (the live pointer names a build the origin does not hold): both reads fail', async () => {
    const missing = await storeWith('kvs-missing-build.json', (target) =>
      target.set(KVS_LIVE_BUILD, '20260101T000000Z-0000beef'),
    );
    const edge = await startEdge({ store: missing });
    try {
      const [report] = await probe(edge.url);
      expect(report && failing(report)).toEqual(READS);
      for (const row of report?.failing ?? [])
        expect(row.lines).toEqual([
          'status: expected 200, got 500 (tag:training-plan-catalog,2026:problem:internal-error)',
        ]);
      expect(metrics()[CANARY_METRICS.failedRows.name]).toBe(DISCIPLINES.length);
    } finally {
      await edge.close();
      await rm(missing, { force: true });
    }
  });

  it('a success header lost (a viewer-response bundle that drops Vary): both reads fail on it, on a 200 and on a 304', async () => {
    const healthy = await startEdge();
    try {
      await probe(healthy.url);
    } finally {
      await healthy.close();
    }
    const dropping = (bundle: string) => `${bundle}
var builtHandler = handler;
handler = async function (event) { var response = await builtHandler(event); delete response.headers.vary; return response; };`;
    const edge = await startEdge({ viewerResponse: dropping });
    try {
      const [report] = await probe(edge.url);
      expect(edge.statuses.slice(0, DISCIPLINES.length)).toEqual(DISCIPLINES.map(() => 304));
      expect(report && failing(report)).toEqual(READS);
      for (const row of report?.failing ?? [])
        expect(row.lines).toEqual(['vary: expected "X-Api-Key, Accept-Encoding", got none']);
    } finally {
      await edge.close();
    }
  });

  it('the live build changed since the last probe: the full table runs in the same invocation', async () => {
    const edge = await startEdge();
    try {
      await probe(edge.url);
    } finally {
      await edge.close();
    }
    // A publish to the origin moves the live pointer of a copy of the store to a new build.
    const moved = await storeWith('kvs-moved.json', () => {});
    await publish(
      {
        ...parseSettings('build', () => undefined, String),
        baseUrl: `http://127.0.0.1:${port}`,
        source: join(ROOT, 'fixtures/plans.json'),
        allowEmpty: false,
        minRatio: 0,
        keepBuilds: 20,
      },
      { origin: new DirectoryOrigin(world.originDir), kvs: new FileKeyValueStore(moved) },
      { now: new Date(), force: true, report: () => {} },
    );
    const after = await startEdge({ store: moved });
    emf.lines.length = 0;
    lines.length = 0;
    try {
      const reports = await probe(after.url);
      expect(reports.map((report) => [report.beat, report.trigger])).toEqual([
        ['probe', 'schedule'],
        ['full', 'live-build-changed'],
      ]);
      expect(reports.map((report) => report.counts.fail)).toEqual([0, 0]);
      expect(await storedReport('full')).toEqual(reports[1]);
      // Each run's metrics, each under its beat.
      expect(emf.lines.map((line) => parseEmf(line).members[METRICS_BEAT_DIMENSION])).toEqual([
        'probe',
        'full',
      ]);
      expect(lines.map((line) => JSON.parse(line).message)).toEqual([
        expect.stringMatching(/^conformance \(probe\): /),
        expect.stringMatching(/^conformance \(full, the live build changed\): (\d+) of \1 rows pass$/),
      ]);
    } finally {
      await after.close();
      await rm(moved, { force: true });
    }
  });

  it('refuses an event that names no beat it knows, before doing anything', async () => {
    const handler = createCanaryHandler({
      env: {},
      clients: () => {
        throw new Error('no client is made');
      },
    });
    await expect(handler({ beat: 'hourly' })).rejects.toThrow(
      /^the canary's event \{"beat":"hourly"\} is not \{"beat":"probe"\|"full","trigger":…\}/,
    );
  });
});
