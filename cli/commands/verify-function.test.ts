/**
 * `catalog verify-function` end to end: the real command against a local stand-in for CloudFront's API
 * (testing/cloudfront.ts), which records every DescribeFunction and TestFunction request and answers
 * TestFunction by running the real built bundle in the local runtime on the event it received.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REQUEST_CASES, viewerRequestOutcome, withinBuild } from '../../gateway/cases.ts';
import { viewerRequestEvent } from '../../gateway/local/event.ts';
import { loadFunction } from '../../gateway/local/sandbox.ts';
import { WatchedKeyValueStore } from '../../gateway/local/store.ts';
import { PLACEHOLDER_ETAG } from '../../infra/verify-function.ts';
import { runCatalog } from '../../testing/cli.ts';
import { FakeCloudFront, TEST_FUNCTION_ETAG, TEST_FUNCTION_NAME } from '../../testing/cloudfront.ts';
import { builtFunctionCode, createTestWorld, type TestWorld } from '../../testing/world.ts';

const FUNCTION_NAME = TEST_FUNCTION_NAME;
const ETAG = TEST_FUNCTION_ETAG;
const KEY = /tpc_[A-Za-z0-9_-]{43}/g;

describe('catalog verify-function against a local TestFunction API', () => {
  let world: TestWorld;
  let api: FakeCloudFront;
  let env: Record<string, string>;

  beforeAll(async () => {
    world = await createTestWorld();
    const kvs = new WatchedKeyValueStore(world.stores.plain);
    await kvs.load();
    const code = await builtFunctionCode('viewer-request');
    api = new FakeCloudFront(loadFunction(code, { kvs }));
    env = {
      AWS_ENDPOINT_URL_CLOUDFRONT: await api.start(),
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
  });
  afterAll(async () => {
    await api?.stop();
    await world?.remove();
  });
  beforeEach(() => {
    api.recorded.length = 0;
    api.tamper = (r) => r;
  });

  /** Every key of the world as the command's flags. */
  const allKeys = () => [
    '--key',
    world.keys.valid,
    '--key',
    world.keys.other,
    '--expired-key',
    world.keys.expired,
    '--revoked-key',
    world.keys.revoked,
  ];

  it("passes every case, sends the table's events with the function's ETag, and reports the compute utilization", async () => {
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME, ...allKeys()], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const describe = api.recorded.filter((r) => r.path.endsWith('/describe'));
    expect(describe).toEqual([expect.objectContaining({ method: 'GET', stage: 'LIVE' })]);
    const tests = api.recorded.filter((r) => r.path.endsWith('/test'));
    expect(tests).toHaveLength(REQUEST_CASES.length);
    for (const request of tests) {
      expect(request.method).toBe('POST');
      expect(request.ifMatch).toBe(ETAG);
      expect(request.stage).toBe('LIVE');
    }

    // The events are the table's: built here from the cases with the same keys, independently of the command.
    const known: Record<string, string> = {
      valid: world.keys.valid,
      expiring: world.keys.valid,
      other: world.keys.other,
      expired: world.keys.expired,
      revoked: world.keys.revoked,
    };
    const forged = new Set<string>();
    const fill = (text: string) =>
      text.replace(/\{(etag:)?([a-z]+)\}/g, (m, etag: string | undefined, name: string) =>
        etag ? PLACEHOLDER_ETAG : (known[name] ?? (name === 'forged' ? 'FORGED' : m)),
      );
    const expectedEvents = REQUEST_CASES.map((c) => {
      const event = viewerRequestEvent(
        {
          method: c.method,
          target: fill(c.target),
          rawHeaders: (c.headers ?? []).flatMap(([n, v]) => [n, fill(v)]),
          remoteAddress: '203.0.113.9',
        },
        'x',
      );
      return JSON.stringify({ ...event, context: { eventType: 'viewer-request' } });
    });
    const expected = [...expectedEvents].sort();
    const knownKeys = new Set(Object.values(known));
    const sent = tests
      .map((r) =>
        JSON.stringify(r.event).replace(KEY, (key) => {
          if (knownKeys.has(key)) return key;
          forged.add(key);
          return 'FORGED';
        }),
      )
      .sort();
    expect(sent).toEqual(expected);
    expect(forged.size).toBe(1);

    // What the function recorded for the access log on each event: the table's value (the command gives
    // `{expiring}` the valid key, acme's).
    const recordedFor = new Map<string, string | null>();
    REQUEST_CASES.forEach((c, i) => {
      const logData = c.headers?.some(([, v]) => v === '{expiring}') ? 'acme' : c.logData;
      const event = expectedEvents[i] as string;
      if (recordedFor.has(event)) expect(recordedFor.get(event), c.name).toBe(logData);
      recordedFor.set(event, logData);
    });
    for (const request of tests) {
      const event = JSON.stringify(request.event).replace(KEY, (key) =>
        knownKeys.has(key) ? key : 'FORGED',
      );
      expect(recordedFor.has(event)).toBe(true);
      expect(request.logData, event).toBe(recordedFor.get(event));
    }

    const lines = result.stdout.trim().split('\n');
    for (const testCase of REQUEST_CASES) {
      const line = lines.find((l) => l.includes(`  ${testCase.name}  `) && l.startsWith('PASS'));
      expect(line, testCase.name).toBeDefined();
      expect(line).toContain('cu 14');
    }
    expect(result.stdout).toMatch(
      new RegExp(
        `^${REQUEST_CASES.length} passed, 0 failed, 0 skipped of ${REQUEST_CASES.length} cases; compute utilization median 14, max 14`,
        'm',
      ),
    );
    expect(result.stdout).toContain(
      `${FUNCTION_NAME} (LIVE, ETag ${ETAG}, cloudfront-js-2.0, key value store arn:aws:cloudfront::`,
    );
    // No key is ever printed.
    expect(result.stdout.match(KEY)).toBeNull();
  });

  it('fails with a clear report when the function answers one case differently', async () => {
    const victim = REQUEST_CASES.find((c) => c.name === 'the whole catalog');
    expect(victim && viewerRequestOutcome(victim)).toEqual({ uri: '/catalog.json' });
    // The deployed function "forgets" to rewrite the whole catalog: it passes /api/plans on unchanged.
    api.tamper = (r) =>
      'uri' in r && withinBuild(r.uri) === '/catalog.json' ? { ...r, uri: '/api/plans' } : r;
    const result = await runCatalog(
      ['verify-function', '--name', FUNCTION_NAME, ...allKeys(), '--stage', 'development'],
      {
        env,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL {2}the whole catalog +GET \/api\/plans {2}expected → \/catalog\.json, got → \/api\/plans {2}cu 14$/m,
    );
    const failing = result.stdout.split('\n').filter((l) => l.startsWith('FAIL'));
    // Every case served from /catalog.json fails, nothing else.
    const served = REQUEST_CASES.filter(
      (c) => JSON.stringify(viewerRequestOutcome(c)) === '{"uri":"/catalog.json"}',
    );
    expect(failing).toHaveLength(served.length);
    expect(result.stderr).toMatch(
      new RegExp(
        `^catalog: ${served.length} of ${REQUEST_CASES.length} cases failed against ${FUNCTION_NAME} \\(DEVELOPMENT\\): "the whole catalog", `,
      ),
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(api.recorded.every((r) => r.stage === 'DEVELOPMENT')).toBe(true);
  });

  it('fails when the function answers with a status where the table expects another', async () => {
    api.tamper = (r) => ('statusCode' in r && r.statusCode === 405 ? { ...r, statusCode: 403 } : r);
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME, ...allKeys()], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}POST +POST \/api\/plans {2}expected 405, got 403/m);
  });

  it('skips the cases whose keys were not given, and says which flag they need', async () => {
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME], {
      env: { ...env, CATALOG_VERIFY_KEYS: world.keys.valid },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^SKIP {2}a revoked key +GET \/api\/plans {2}needs a revoked key \(--revoked-key\)$/m,
    );
    expect(result.stdout).toMatch(
      /^SKIP {2}an expired key +GET \/api\/plans {2}needs an expired key \(--expired-key\)$/m,
    );
    expect(result.stdout).toMatch(/^PASS {2}a key of another partner .*\{other\} is the first --key/m);
    const skipped = result.stdout.split('\n').filter((l) => l.startsWith('SKIP')).length;
    expect(skipped).toBe(REQUEST_CASES.filter((c) => /\{(expired|revoked)\}/.test(JSON.stringify(c))).length);
    expect(api.recorded.filter((r) => r.path.endsWith('/test'))).toHaveLength(REQUEST_CASES.length - skipped);
  });

  it('fails naming the function when it does not exist', async () => {
    const result = await runCatalog(['verify-function', '--name', 'nope'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('catalog: no CloudFront function "nope" in stage LIVE\n');
  });

  it('fails on a malformed key without echoing it, before any request', async () => {
    const result = await runCatalog(
      ['verify-function', '--name', FUNCTION_NAME, '--key', 'tpc_short-secret'],
      { env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'catalog: --key #1: is not an API key (tpc_ and 43 base64url characters); the value is not shown\n',
    );
    expect(api.recorded).toHaveLength(0);
  });

  it('fails naming the flag and value for a bad stage or a missing name', async () => {
    const stage = await runCatalog(['verify-function', '--name', FUNCTION_NAME, '--stage', 'prod'], { env });
    expect(stage.code).toBe(1);
    expect(stage.stderr).toBe('catalog: --stage "prod": must be DEVELOPMENT or LIVE\n');
    const name = await runCatalog(['verify-function'], { env });
    expect(name.code).toBe(1);
    // With no target either: the deployment is what to name first.
    expect(name.stderr).toBe(
      'catalog: verify-function acts on a deployment, and none is named: give --deployment NAME or CATALOG_DEPLOYMENT (declared in infra/deployments/: TrainingPlanCatalog), or else --name\n',
    );
  });
});
