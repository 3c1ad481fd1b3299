/**
 * The deploy's release step (lambda/release.ts, app/release.ts) against stand-ins for CloudFront's functions API
 * (testing/cloudfront.ts: each stage runs a real built bundle in the local runtime) and the KeyValueStore API
 * (testing/kvs.ts), through the production clients: the exact requests of a first deploy, of a deploy that
 * changes no code, of a case that fails, of throttling, of a store write TestFunction sees late, and of publishing
 * held.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RELEASE_PARTNER } from '../app/release.ts';
import { KVS_CORS_ORIGIN } from '../contract/index.ts';
import { REQUEST_CASES, viewerRequestOutcome, withinBuild } from '../gateway/cases.ts';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse } from '../gateway/functions/event.ts';
import {
  type KeyValueReader,
  loadFunction,
  type SandboxedFunction,
  VIEWER_RESPONSE_RUNTIME,
} from '../gateway/local/sandbox.ts';
import { TEST_AWS_ENV } from '../testing/aws.ts';
import { FakeCloudFront } from '../testing/cloudfront.ts';
import { FakeKvs, resolveKvsTestHost } from '../testing/kvs.ts';
import { builtFunctionCode } from '../testing/world.ts';
import { createReleaseHandler, releaseClients } from './release.ts';

const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const REQUEST = 'TrainingPlanCatalog-viewer-request';
const RESPONSE = 'TrainingPlanCatalog-viewer-response';
const KEY = /tpc_[A-Za-z0-9_-]{43}/;
/** The table's served cases: the viewer-response function's (what reaches the origin and comes back below 400). */
const SERVED = REQUEST_CASES.filter(
  (c) => (c.status === 200 || c.status === 304) && 'uri' in viewerRequestOutcome(c),
).length;

let kvs: FakeKvs;
let cloudfront: FakeCloudFront;
let undoDns: () => void;
let code: { request: string; response: string };
let lines: Record<string, unknown>[];
/** What the functions read from the store: the stand-in's entries, unless a test makes it lag. */
let visible: (key: string) => string | undefined;

const reader: KeyValueReader = { refresh: () => undefined, peek: (key) => visible(key) };
const load = (source: string, response = false) =>
  loadFunction(source, { kvs: reader, ...(response ? VIEWER_RESPONSE_RUNTIME : {}) });

/** A function whose results `change` rewrites: a deployed change that breaks a case. */
function broken(
  fn: SandboxedFunction,
  change: (event: CloudFrontEvent, result: CloudFrontRequest | CloudFrontResponse) => void,
): SandboxedFunction {
  const runLogged = async (event: CloudFrontEvent) => {
    const run = await fn.runLogged(event);
    change(event, run.result);
    return run;
  };
  return { run: async (event) => (await runLogged(event)).result, runLogged };
}

/** What a function's LIVE stage runs: nothing yet (a first create), DEVELOPMENT's code, or older code. */
type Live = 'none' | 'same' | 'older';

/**
 * Both functions, their DEVELOPMENT stage the built bundles (or `development`), LIVE as `live` says (for both,
 * or for each: a test of one function leaves the other's LIVE as DEVELOPMENT, so its table is not run).
 */
function deploy(options: {
  live: Live | { request: Live; response: Live };
  development?: { request?: SandboxedFunction; response?: SandboxedFunction };
}) {
  const modes =
    typeof options.live === 'string' ? { request: options.live, response: options.live } : options.live;
  const stage = (source: string, fn: SandboxedFunction) => ({ code: source, fn });
  const request = stage(code.request, options.development?.request ?? load(code.request));
  const response = stage(code.response, options.development?.response ?? load(code.response, true));
  const live = (mode: Live, current: typeof request, older: string, response_ = false) =>
    mode === 'none'
      ? null
      : mode === 'same'
        ? { ...current, fn: load(current.code, response_) }
        : stage(older, load(current.code, response_));
  cloudfront.define(REQUEST, {
    development: request,
    live: live(modes.request, request, `${code.request}\n// the code partners are served`),
  });
  cloudfront.define(RESPONSE, {
    development: response,
    live: live(modes.response, response, `${code.response}\n// the code partners are served`, true),
  });
}

const handler = (publish = true) => {
  const run = createReleaseHandler({
    clients: releaseClients,
    log: (line) => lines.push(JSON.parse(JSON.stringify(line))),
    release: { keyWaitMs: 2_000, keyProbeMs: 50 },
  });
  return (requestType: 'Create' | 'Update' | 'Delete' = 'Update') =>
    run({
      RequestType: requestType,
      PhysicalResourceId: 'gateway-functions-release',
      ResourceProperties: {
        ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:framework-onEvent',
        Functions: [
          { Name: REQUEST, Kind: 'viewer-request', CodeSha256: 'a'.repeat(64) },
          { Name: RESPONSE, Kind: 'viewer-response', CodeSha256: 'b'.repeat(64) },
        ],
        KeyValueStoreArn: KVS_ARN,
        Publish: String(publish),
      },
    });
};

beforeAll(async () => {
  code = {
    request: await builtFunctionCode('viewer-request'),
    response: await builtFunctionCode('viewer-response'),
  };
  undoDns = resolveKvsTestHost();
  kvs = new FakeKvs(KVS_ARN);
  await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
  cloudfront = new FakeCloudFront();
  const url = await cloudfront.start();
  const kvsPort = (kvs.server.address() as { port: number }).port;
  for (const [name, value] of Object.entries({
    ...TEST_AWS_ENV,
    AWS_ENDPOINT_URL_CLOUDFRONT: url,
    AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${kvsPort}`,
    AWS_EC2_METADATA_DISABLED: 'true',
  }))
    vi.stubEnv(name, value);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  undoDns?.();
  await cloudfront?.stop();
  await new Promise((resolve) => kvs?.server.close(resolve));
});
beforeEach(() => {
  lines = [];
  cloudfront.recorded.length = 0;
  cloudfront.throttle = 0;
  kvs.requests = [];
  kvs.entries = new Map([
    [
      'key:0000000000000000000000000000000000000000000000000000000000000000',
      '{"partner":"acme","created":"2026-01-01T00:00:00.000Z"}',
    ],
    [KVS_CORS_ORIGIN, 'https://app.partner.example'],
  ]);
  visible = (key) => kvs.entries.get(key);
});
afterEach(() => {
  // The release's keys never outlive it, and no key is ever logged.
  expect([...kvs.entries.values()].filter((value) => value.includes(RELEASE_PARTNER))).toEqual([]);
  expect(JSON.stringify(lines)).not.toMatch(KEY);
});

describe('the release step of a deploy', () => {
  it('a first deploy (no LIVE yet): tests every case of both functions in DEVELOPMENT, then publishes each with its DEVELOPMENT ETag', async () => {
    deploy({ live: 'none' });
    const etags = {
      request: cloudfront.functions.get(REQUEST)?.development.etag,
      response: cloudfront.functions.get(RESPONSE)?.development.etag,
    };
    const answer = await handler()('Create');
    expect(answer).toEqual({
      PhysicalResourceId: 'gateway-functions-release',
      Data: { ViewerRequest: 'published', ViewerResponse: 'published' },
    });

    // The viewer-request function: one probe for the release's key, then every case of the table, in DEVELOPMENT
    // (there is no LIVE to ask), with DEVELOPMENT's ETag.
    const requestTests = cloudfront.calls('TestFunction', REQUEST);
    expect(requestTests).toHaveLength(REQUEST_CASES.length + 1);
    for (const call of requestTests)
      expect([call.stage, call.ifMatch]).toEqual(['DEVELOPMENT', etags.request]);
    // The viewer-response function: each served case once, as the origin answered it.
    const responseTests = cloudfront.calls('TestFunction', RESPONSE);
    expect(responseTests).toHaveLength(SERVED);
    for (const call of responseTests) {
      expect([call.stage, call.ifMatch]).toEqual(['DEVELOPMENT', etags.response]);
      expect(call.event).toMatchObject({
        context: { eventType: 'viewer-response' },
        response: { statusCode: 200 },
      });
    }
    // One publish each, with the ETag of what was tested; LIVE now runs it.
    expect(cloudfront.calls('PublishFunction').map((call) => [call.name, call.ifMatch])).toEqual([
      [REQUEST, etags.request],
      [RESPONSE, etags.response],
    ]);
    expect(cloudfront.functions.get(REQUEST)?.live?.code).toBe(code.request);
    expect(cloudfront.functions.get(RESPONSE)?.live?.code).toBe(code.response);

    // The store: one write adding the release's four keys (three valid, one expired), one removing them.
    expect(kvs.calls().filter((call) => call === 'update')).toHaveLength(2);
    const [added, removed] = kvs.updates() as {
      Puts?: { Key: string; Value: string }[];
      Deletes?: { Key: string }[];
    }[];
    expect(added?.Puts?.map((put) => JSON.parse(put.Value).partner)).toEqual(Array(4).fill(RELEASE_PARTNER));
    expect(added?.Deletes).toBeUndefined();
    expect(removed?.Deletes?.map((d) => d.Key).sort()).toEqual(added?.Puts?.map((put) => put.Key).sort());
    const expiries = added?.Puts?.map((put) => Date.parse(JSON.parse(put.Value).expires) - Date.now()) ?? [];
    expect(expiries.filter((ms) => ms < 0)).toHaveLength(1);
    for (const ms of expiries) expect(ms).toBeLessThanOrEqual(30 * 60_000);
    expect(lines.at(-1)).toMatchObject({ message: 'release done', keys: 'removed' });
  });

  it('a deploy that changes no function code: four reads a function, no test, no publish, no store write', async () => {
    deploy({ live: 'same' });
    const answer = await handler()('Update');
    expect(answer.Data).toEqual({ ViewerRequest: 'unchanged', ViewerResponse: 'unchanged' });
    expect(cloudfront.recorded.map((r) => `${r.action} ${r.name} ${r.stage}`).sort()).toEqual(
      [REQUEST, RESPONSE]
        .flatMap((name) =>
          ['DescribeFunction', 'GetFunction'].flatMap((action) =>
            ['DEVELOPMENT', 'LIVE'].map((stage) => `${action} ${name} ${stage}`),
          ),
        )
        .sort(),
    );
    expect(kvs.requests).toEqual([]);
  });

  it('fails, publishing nothing, when one case fails: the error names the case and what came back', async () => {
    // The new viewer-request code "forgets" to rewrite the whole catalog.
    const request = broken(load(code.request), (event, result) => {
      const headers = Object.keys(event.request.headers);
      if ('uri' in result && withinBuild(result.uri) === '/catalog.json' && headers.join() === 'x-api-key')
        result.uri = '/api/plans';
    });
    // The viewer-response function unchanged: its table is not what this test is about.
    deploy({ live: { request: 'older', response: 'same' }, development: { request } });
    const live = {
      request: cloudfront.functions.get(REQUEST)?.live,
      response: cloudfront.functions.get(RESPONSE)?.live,
    };
    const error = await handler()('Update').catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^\\d+ of ${REQUEST_CASES.length} cases failed against ${REQUEST} \\(DEVELOPMENT\\): "the whole catalog" \\(GET /api/plans: expected → /catalog\\.json, got → /api/plans\\)`,
      ),
    );
    expect((error as Error).message).toMatch(
      /; nothing was published \(LIVE keeps the code partners are served\)$/,
    );
    expect(cloudfront.calls('PublishFunction')).toEqual([]);
    expect(cloudfront.functions.get(REQUEST)?.live).toBe(live.request);
    expect(cloudfront.functions.get(RESPONSE)?.live).toBe(live.response);
    // The probe asked LIVE (known code), the table DEVELOPMENT.
    expect(cloudfront.calls('TestFunction', REQUEST)[0]?.stage).toBe('LIVE');
    // The log has the failed case, with what came back, and the refusal.
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: 'release case failed',
        function: REQUEST,
        case: 'the whole catalog',
        expected: '→ /catalog.json',
        got: '→ /api/plans',
      }),
    );
    expect(lines.at(-1)).toMatchObject({
      level: 'error',
      message: expect.stringMatching(/^release refused: /),
    });
  });

  it('fails when the new viewer-response function leaves an origin header, naming the case', async () => {
    const response = broken(load(code.response, true), (_event, result) => {
      if ('statusCode' in result) result.headers.server = { value: 'AmazonS3' };
    });
    // The viewer-request function unchanged: only the viewer-response's table runs.
    deploy({ live: { request: 'same', response: 'older' }, development: { response } });
    const error = await handler()('Update').catch((e: Error) => e);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^${SERVED} of ${SERVED} cases failed against ${RESPONSE} \\(DEVELOPMENT\\): "openapi.yaml" \\(GET /openapi.yaml: expected openapi headers, CORS https://app\\.partner\\.example, got server: the origin's, still there\\)`,
      ),
    );
    expect(cloudfront.calls('PublishFunction')).toEqual([]);
  });

  it('retries TestFunction when CloudFront throttles it, and still runs each case once', async () => {
    // The viewer-request function changed (its probe and its table), the viewer-response's not.
    deploy({ live: { request: 'older', response: 'same' } });
    cloudfront.throttle = 1;
    await handler()('Update');
    const tests = cloudfront.calls('TestFunction');
    // One answered with the throttling error, then every call once: the probe and each case of the table.
    expect(tests).toHaveLength(1 + 1 + REQUEST_CASES.length);
    expect(tests.every((call) => call.name === REQUEST)).toBe(true);
    expect(cloudfront.calls('PublishFunction').map((call) => call.name)).toEqual([REQUEST]);
  });

  it('asks again until TestFunction sees the keys it added to the store, then runs the table', async () => {
    deploy({ live: { request: 'older', response: 'same' } });
    // The store's write reaches TestFunction after its third call.
    visible = (key) => (cloudfront.calls('TestFunction').length > 3 ? kvs.entries.get(key) : undefined);
    await handler()('Update');
    const tests = cloudfront.calls('TestFunction', REQUEST);
    expect(tests.slice(0, 4).map((call) => call.stage)).toEqual(['LIVE', 'LIVE', 'LIVE', 'LIVE']);
    expect(tests).toHaveLength(4 + REQUEST_CASES.length);
    expect(lines).toContainEqual(expect.objectContaining({ message: 'release keys', seen: true }));
  });

  it('with publishing off, holds a changed function in DEVELOPMENT (nothing tested), and still publishes a first create', async () => {
    deploy({ live: 'older' });
    expect((await handler(false)('Update')).Data).toEqual({ ViewerRequest: 'held', ViewerResponse: 'held' });
    expect(cloudfront.calls('TestFunction')).toEqual([]);
    expect(cloudfront.calls('PublishFunction')).toEqual([]);
    // A stack's first create: neither function was ever published.
    deploy({ live: 'none' });
    expect((await handler(false)('Create')).Data).toEqual({
      ViewerRequest: 'published',
      ViewerResponse: 'published',
    });
    expect(
      cloudfront
        .calls('PublishFunction')
        .map((call) => call.name)
        .sort(),
    ).toEqual([REQUEST, RESPONSE].sort());
  });

  it('does nothing on delete, and refuses properties that are not the stack’s', async () => {
    deploy({ live: 'none' });
    expect(await handler()('Delete')).toEqual({ PhysicalResourceId: 'gateway-functions-release' });
    expect(cloudfront.recorded).toEqual([]);
    const run = createReleaseHandler({ clients: releaseClients, log: () => {} });
    await expect(
      run({
        RequestType: 'Update',
        ResourceProperties: { Functions: [], KeyValueStoreArn: KVS_ARN, Publish: 'yes' },
      }),
    ).rejects.toThrow(/^the release's properties are not the stack's/);
  });
});
