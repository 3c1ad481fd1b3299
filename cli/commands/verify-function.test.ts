/**
 * `catalog verify-function`, `catalog publish-functions` and the functions' rows of `catalog status`, end to end:
 * the real commands against a local stand-in for CloudFront's API (testing/cloudfront.ts), which records every
 * request and answers TestFunction by running the real built bundles in the local runtime on the event it
 * received, and (for publish-functions) the KeyValueStore stand-in (testing/kvs.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RELEASE_PARTNER } from '../../app/release.ts';
import { StatusReport } from '../../app/status.ts';
import { PLACEHOLDER_ETAG } from '../../app/verify-function.ts';
import {
  MARKED_SUFFIX,
  REQUEST_CASES,
  type RequestCase,
  viewerRequestOutcome,
  withinBuild,
} from '../../gateway/cases.ts';
import { viewerRequestEvent } from '../../gateway/local/event.ts';
import { loadFunction, VIEWER_RESPONSE_RUNTIME } from '../../gateway/local/sandbox.ts';
import { WatchedKeyValueStore } from '../../gateway/local/store.ts';
import { TEST_AWS_ENV } from '../../testing/aws.ts';
import { localTargetEnv, runCatalog } from '../../testing/cli.ts';
import { FakeCloudFront, TEST_FUNCTION_ETAG, TEST_FUNCTION_NAME } from '../../testing/cloudfront.ts';
import { FakeKvs, resolveKvsTestHost } from '../../testing/kvs.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { builtFunctionCode, createTestWorld, type TestWorld } from '../../testing/world.ts';

const FUNCTION_NAME = TEST_FUNCTION_NAME;
const RESPONSE_NAME = 'TrainingPlanCatalog-viewer-response';
const ETAG = TEST_FUNCTION_ETAG;
const KEY = /tpc_[A-Za-z0-9_-]{43}/g;
/** The table's served cases: the viewer-response function's. */
const SERVED = REQUEST_CASES.filter(
  (c) => (c.status === 200 || c.status === 304) && 'uri' in viewerRequestOutcome(c),
);

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
    const response = await builtFunctionCode('viewer-response');
    const stage = { code: response, fn: loadFunction(response, { kvs, ...VIEWER_RESPONSE_RUNTIME }) };
    api.define(RESPONSE_NAME, { development: stage, live: stage });
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

  /** Every key of the world, in the command's variables (a key is never a flag). */
  const allKeys = () => ({
    CATALOG_VERIFY_KEYS: `${world.keys.valid},${world.keys.other}`,
    CATALOG_VERIFY_EXPIRED_KEY: world.keys.expired,
    CATALOG_VERIFY_REVOKED_KEY: world.keys.revoked,
  });

  it("passes every case, sends the table's events with the function's ETag, and reports the compute utilization", async () => {
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME], {
      env: { ...env, ...allKeys() },
    });
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
      monitoring: world.keys.valid,
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
    // `{expiring}` the valid key, acme's, and `{monitoring}` too: a marked case then records what the case it
    // marks does, the marker naming no one).
    const recordedFor = new Map<string, string | null>();
    const unmarked = (c: RequestCase) =>
      c.headers?.some(([, v]) => v === '{monitoring}')
        ? REQUEST_CASES.find((base) => `${base.name}${MARKED_SUFFIX}` === c.name)
        : c;
    REQUEST_CASES.forEach((c, i) => {
      expect(unmarked(c), c.name).toBeDefined();
      const base = unmarked(c) as RequestCase;
      const logData = base.headers?.some(([, v]) => v === '{expiring}') ? 'acme' : base.logData;
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
      `${FUNCTION_NAME} (viewer-request, LIVE, ETag ${ETAG}, cloudfront-js-2.0, key value store arn:aws:cloudfront::`,
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
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME, '--stage', 'development'], {
      env: { ...env, ...allKeys() },
    });
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
        `^catalog: ${served.length} of ${REQUEST_CASES.length} cases failed against ${FUNCTION_NAME} \\(DEVELOPMENT\\): "the whole catalog" \\(GET /api/plans: expected → /catalog\\.json, got → /api/plans\\), `,
      ),
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(api.recorded.every((r) => r.stage === 'DEVELOPMENT')).toBe(true);
  });

  it('fails when the function answers with a status where the table expects another', async () => {
    api.tamper = (r) => ('statusCode' in r && r.statusCode === 405 ? { ...r, statusCode: 403 } : r);
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME], {
      env: { ...env, ...allKeys() },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}POST +POST \/api\/plans {2}expected 405, got 403/m);
  });

  it('verifies the viewer-response function too when named: each served case, its headers and the CORS origin', async () => {
    const result = await runCatalog(
      ['verify-function', '--name', FUNCTION_NAME, '--response-name', RESPONSE_NAME, '--cors-origin', 'off'],
      { env: { ...env, ...allKeys() } },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const tests = api.calls('TestFunction', RESPONSE_NAME);
    expect(tests).toHaveLength(SERVED.length);
    expect(tests.every((call) => call.stage === 'LIVE')).toBe(true);
    expect(result.stdout).toMatch(
      /^PASS {2}the whole catalog +GET \/api\/plans {2}catalog headers, no CORS {2}cu 14$/m,
    );
    expect(result.stdout).toMatch(
      new RegExp(`^${SERVED.length} passed, 0 failed, 0 skipped of ${SERVED.length} cases`, 'm'),
    );
    // No key it was given went to the viewer-response function: it never reads one.
    const sent = JSON.stringify(tests.map((call) => call.event));
    for (const key of Object.values(allKeys()).flatMap((value) => value.split(',')))
      expect(sent).not.toContain(key);
  });

  it('fails the viewer-response function on the CORS origin the store does not hold', async () => {
    const result = await runCatalog(
      [
        'verify-function',
        '--name',
        FUNCTION_NAME,
        '--response-name',
        RESPONSE_NAME,
        '--cors-origin',
        'https://app.partner.example',
      ],
      { env: { ...env, ...allKeys() } },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^catalog: ${SERVED.length} of ${SERVED.length} cases failed against ${RESPONSE_NAME} \\(LIVE\\): "openapi.yaml" \\(GET /openapi.yaml: expected openapi headers, CORS https://app.partner.example, got access-control-allow-origin: expected "https://app.partner.example", got none\\)`,
      ),
    );
  });

  it('skips the cases whose keys were not given, and says which variable they need', async () => {
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME], {
      env: { ...env, CATALOG_VERIFY_KEYS: world.keys.valid },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^SKIP {2}a revoked key +GET \/api\/plans {2}needs a revoked key \(CATALOG_VERIFY_REVOKED_KEY\)$/m,
    );
    expect(result.stdout).toMatch(
      /^SKIP {2}an expired key +GET \/api\/plans {2}needs an expired key \(CATALOG_VERIFY_EXPIRED_KEY\)$/m,
    );
    expect(result.stdout).toMatch(/^PASS {2}a key of another partner .*\{other\} is the first key/m);
    const skipped = result.stdout.split('\n').filter((l) => l.startsWith('SKIP')).length;
    expect(skipped).toBe(REQUEST_CASES.filter((c) => /\{(expired|revoked)\}/.test(JSON.stringify(c))).length);
    expect(result.stdout).toMatch(
      /^PASS {2}no key, marked by the canary .*\{monitoring\} \(the canary's marker\)/m,
    );
    expect(api.recorded.filter((r) => r.path.endsWith('/test'))).toHaveLength(REQUEST_CASES.length - skipped);
  });

  it('fails naming the function when it does not exist', async () => {
    const result = await runCatalog(['verify-function', '--name', 'nope'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('catalog: no CloudFront function "nope" in stage LIVE\n');
  });

  it('refuses a key given as a flag (one shows in ps and shell history), before any request', async () => {
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME, '--key', world.keys.valid], {
      env,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("catalog: unknown option '--key' (add --help for usage)\n");
    expect(api.recorded).toHaveLength(0);
  });

  it('fails on a malformed key without echoing it, before any request', async () => {
    const result = await runCatalog(['verify-function', '--name', FUNCTION_NAME], {
      env: { ...env, CATALOG_VERIFY_KEYS: 'tpc_short-secret' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'catalog: CATALOG_VERIFY_KEYS: is not an API key (tpc_ and 43 base64url characters); the value is not shown\n',
    );
    expect(result.stderr).not.toContain('short-secret');
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

describe('catalog publish-functions and the functions in catalog status (CloudFront and KeyValueStore stand-ins)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-functions-' });
  const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
  const kvs = new FakeKvs(ARN);
  let api: FakeCloudFront;
  let undoDns: () => void;
  let env: Record<string, string>;
  let code: { request: string; response: string };
  const reader = { refresh: () => undefined, peek: (key: string) => kvs.entries.get(key) };

  beforeAll(async () => {
    undoDns = resolveKvsTestHost();
    await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
    api = new FakeCloudFront();
    code = {
      request: await builtFunctionCode('viewer-request'),
      response: await builtFunctionCode('viewer-response'),
    };
    env = {
      ...TEST_AWS_ENV,
      AWS_ENDPOINT_URL_CLOUDFRONT: await api.start(),
      AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
      AWS_EC2_METADATA_DISABLED: 'true',
    };
  });
  afterAll(async () => {
    undoDns?.();
    await api?.stop();
    await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
  });
  /** Both functions: DEVELOPMENT the built bundles, LIVE older code (or the same). */
  const deploy = (live: 'same' | 'older', request = loadFunction(code.request, { kvs: reader })) => {
    api.recorded.length = 0;
    const older = (source: string) => (live === 'same' ? source : `${source}\n// older`);
    api.define(FUNCTION_NAME, {
      development: { code: code.request, fn: request },
      live: { code: older(code.request), fn: loadFunction(code.request, { kvs: reader }) },
    });
    const response = loadFunction(code.response, { kvs: reader, ...VIEWER_RESPONSE_RUNTIME });
    api.define(RESPONSE_NAME, {
      development: { code: code.response, fn: response },
      live: { code: older(code.response), fn: response },
    });
  };
  const args = ['--name', FUNCTION_NAME, '--response-name', RESPONSE_NAME];

  it('publishes both functions once every case passes in DEVELOPMENT, with keys of its own it then removes', async () => {
    deploy('older');
    const developmentEtags = [FUNCTION_NAME, RESPONSE_NAME].map(
      (n) => api.functions.get(n)?.development.etag,
    );
    const result = await runCatalog(['publish-functions', ...args, '--kvs-arn', ARN], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(
      `publish-functions acts on ${FUNCTION_NAME} and ${RESPONSE_NAME} (keys added to and removed from ${ARN})\n`,
    );
    expect(result.stdout).toMatch(
      new RegExp(
        `^${FUNCTION_NAME} \\(viewer-request\\) published \\(ETag ${developmentEtags[0]}\\): ${REQUEST_CASES.length} passed, 0 skipped, 0 failed$`,
        'm',
      ),
    );
    expect(result.stdout).toMatch(new RegExp(`^${RESPONSE_NAME} \\(viewer-response\\) published `, 'm'));
    expect(api.calls('PublishFunction').map((call) => call.ifMatch)).toEqual(developmentEtags);
    expect([...kvs.entries.values()].some((value) => value.includes(RELEASE_PARTNER))).toBe(false);
    expect(result.stdout.match(KEY)).toBeNull();
  });

  it('exits 1 and publishes nothing when a case fails, with every case’s line and the failed ones named', async () => {
    const request = loadFunction(code.request, { kvs: reader });
    deploy('older', {
      run: request.run,
      runLogged: async (event) => {
        const run = await request.runLogged(event);
        if ('statusCode' in run.result && run.result.statusCode === 405) run.result.statusCode = 403;
        return run;
      },
    });
    const result = await runCatalog(['publish-functions', ...args, '--kvs-arn', ARN], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}POST +POST \/api\/plans {2}expected 405, got 403/m);
    expect(result.stderr.split('\n')[1]).toMatch(
      new RegExp(
        `^catalog: \\d+ of ${REQUEST_CASES.length} cases failed against ${FUNCTION_NAME} \\(DEVELOPMENT\\): "HEAD" \\(HEAD /api/plans: expected 405, got 403\\), .+; nothing was published \\(LIVE keeps the code partners are served\\)$`,
      ),
    );
    expect(api.calls('PublishFunction')).toEqual([]);
  });

  it('catalog status shows, per function, whether LIVE runs DEVELOPMENT’s code, without changing its health', async () => {
    deploy('same');
    api.define(RESPONSE_NAME, {
      development: { code: `${code.response}\n// newer`, fn: loadFunction(code.response, { kvs: reader }) },
      live: { code: code.response, fn: loadFunction(code.response, { kvs: reader }) },
    });
    const target = localTargetEnv(scratch.dir);
    const plain = await runCatalog(['status', '--json'], { env: { ...env, ...target } });
    const result = await runCatalog(['status', ...args], { env: { ...env, ...target } });
    expect(result.stdout).toMatch(
      new RegExp(`^VIEWER-REQUEST +${FUNCTION_NAME}: LIVE runs DEVELOPMENT's code$`, 'm'),
    );
    expect(result.stdout).toMatch(
      new RegExp(
        `^VIEWER-RESPONSE +${RESPONSE_NAME}: DEVELOPMENT differs from LIVE, held \\(catalog verify-function --stage DEVELOPMENT, then catalog publish-functions\\)$`,
        'm',
      ),
    );
    // Four reads a function, and nothing else of CloudFront.
    expect(api.recorded.map((r) => r.action).sort()).toEqual(
      [...Array(4).fill('DescribeFunction'), ...Array(4).fill('GetFunction')].sort(),
    );
    const json = await runCatalog(['status', '--json', ...args], { env: { ...env, ...target } });
    const report = StatusReport.parse(JSON.parse(json.stdout));
    expect(report.functions).toEqual([
      { name: FUNCTION_NAME, kind: 'viewer-request', stages: 'same', problem: null },
      { name: RESPONSE_NAME, kind: 'viewer-response', stages: 'differs', problem: null },
    ]);
    expect(report.health).toBe(StatusReport.parse(JSON.parse(plain.stdout)).health);
    expect(json.code).toBe(plain.code);
  });
});
