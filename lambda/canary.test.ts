/**
 * The canary Lambda against the local edge running the real bundles over the fixtures (the request-case table
 * and the catalog rows of catalog check), its report written to s3rver, a recorder standing in for Secrets
 * Manager (no local peer), its metrics read from the EMF lines Powertools writes. Healthy first, then one
 * fault at a time: the row that names it fails, and only what follows from it.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CanaryReport, parseCanaryReport } from '../app/canary.ts';
import { blackBoxCases } from '../app/check-rows.ts';
import { catalogFile, KVS_CORS_ORIGIN, STATE_CANARY } from '../contract/index.ts';
import { CANARY_METRICS, METRICS_NAMESPACE } from '../contract/metrics.ts';
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
import { captureLogLines, type EmfCapture, parseEmf, startEmfCapture } from '../testing/emf.ts';
import { freePort } from '../testing/postgres.ts';
import { builtFunctionCode, createTestWorld, type TestWorld } from '../testing/world.ts';
import { type CanaryClients, createCanaryHandler } from './canary.ts';

const MONITORING_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog-monitoring-XyZ123';
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
});
afterAll(async () => {
  await recorder?.close();
  await world?.remove();
});

beforeEach(async () => {
  emf = startEmfCapture();
  lines = captureLogLines();
  s3 = await startS3();
  recorder.requests.length = 0;
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

/** One run of the canary against `baseUrl`, as the scheduler invokes it: its report, and the one stored. */
async function runCanary(baseUrl: string, extra: Record<string, string> = {}) {
  const env = {
    CATALOG_BASE_URL: baseUrl,
    CATALOG_BUCKET: s3.bucket,
    CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING_ARN,
    CATALOG_CORS_ORIGIN: PARTNER_ORIGIN,
    AWS_LAMBDA_FUNCTION_NAME: 'catalog-canary',
    ...extra,
  };
  const clients = (): CanaryClients => ({ s3: s3.client, secrets });
  const handler = createCanaryHandler({ env, clients });
  const report = await handler(
    {},
    { functionName: 'catalog-canary', getRemainingTimeInMillis: () => 60_000 },
  );
  const body = await s3.body(STATE_CANARY);
  if (!body) throw new Error(`no ${STATE_CANARY} written`);
  const stored = parseCanaryReport(body);
  if (!('report' in stored)) throw new Error(stored.problem);
  return { report, stored: stored.report };
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

describe('the canary Lambda against the local edge', () => {
  it('healthy: every row passes; the report stored (never served), the metrics, the secret read once', async () => {
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
      // The one request to Secrets Manager: that secret, nothing else.
      expect(recorder.requests.map((r) => [r.headers['x-amz-target'], JSON.parse(r.body)])).toEqual([
        ['secretsmanager.GetSecretValue', { SecretId: MONITORING_ARN }],
      ]);
      expect(metrics()).toEqual({
        [CANARY_METRICS.failedRows.name]: 0,
        [CANARY_METRICS.rowsNotRun.name]: 0,
        [CANARY_METRICS.unreachable.name]: 0,
        [CANARY_METRICS.runDuration.name]: report.durationMs,
      });
      // One log line for the run, no row failed; the key nowhere.
      expect(lines.map((line) => JSON.parse(line).message)).toEqual([
        `conformance: ${report.rows - report.counts.skip} of ${report.rows - report.counts.skip} rows pass`,
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
      const served = await fetch(`${edge.url}/${STATE_CANARY}`, { headers: { 'x-api-key': monitoringKey } });
      expect(served.status).toBe(404);
      expect(JSON.stringify(report) + lines.join('') + emf.lines.join('')).not.toContain(monitoringKey);
    } finally {
      await edge.close();
    }
  });

  it('the CORS origin changed in the store: rows fail on the CORS header alone, with the likely cause', async () => {
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
      expect(report.diagnosis).toMatch(/^the canary's key is refused \(401 to the whole catalog\)/);
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
