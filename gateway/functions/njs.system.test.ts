/**
 * Runs both built functions under Debian's njs — a second, stricter JavaScript engine — on the events of the
 * request-case table, and checks that njs and the local runtime give exactly the same results, which are the
 * ones the table expects. `.ci/run` installs njs; this suite runs in `npm run test:system`.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryOrigin } from '../../publish/dir-origin.ts';
import { builtFunctionCode, createTestWorld, resolveCase, type TestWorld } from '../../testing/world.ts';
import { REQUEST_CASES, type RequestCase, viewerRequestOutcome } from '../cases.ts';
import { viewerRequestEvent, viewerResponseEvent } from '../local/event.ts';
import { EdgeOrigin } from '../local/origin.ts';
import { loadFunction } from '../local/sandbox.ts';
import { WatchedKeyValueStore } from '../local/store.ts';
import type { CloudFrontEvent, CloudFrontRequest, CloudFrontResponse } from './event.ts';

const run = promisify(execFile);

/**
 * The `cloudfront` module for njs: a KeyValueStore over fixed data, rejecting missing keys like the real one,
 * and `logCustomData`, which keeps the value for the driver (`__log`).
 */
function cloudfrontStub(entries: Map<string, string>): string {
  return `var DATA = ${JSON.stringify(Object.fromEntries(entries))};
var LOG = { value: null };
export default { __log: LOG, logCustomData: function (v) { LOG.value = String(v); }, kvs: function () { return {
  get: function (k) { return Object.prototype.hasOwnProperty.call(DATA, k) ? Promise.resolve(DATA[k]) : Promise.reject(new Error('key not found')); },
  exists: function (k) { return Promise.resolve(Object.prototype.hasOwnProperty.call(DATA, k)); }
}; } };
`;
}

/**
 * Runs a bundle under njs on each event, in order; returns what each call resolved to (or its error) and what
 * it recorded with `cf.logCustomData` (null: nothing).
 */
async function runUnderNjs(
  dir: string,
  bundle: string,
  events: CloudFrontEvent[],
  store: Map<string, string>,
) {
  const stubs = join(dir, `stubs-${Math.random().toString(36).slice(2)}`);
  await mkdir(stubs);
  await writeFile(join(stubs, 'cloudfront'), cloudfrontStub(store));
  // The driver shares the bundle's top-level scope (as nothing does on CloudFront): its names start with __,
  // which the minifier never gives.
  const script = join(dir, `drive-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(
    script,
    `${bundle}
import __cf from 'cloudfront';
var __events = ${JSON.stringify(events)};
var __at = 0;
function __print(text) {
  for (var i = 0; i < text.length; i += 500) console.log((i + 500 < text.length ? '+' : '=') + text.slice(i, i + 500));
}
function __next() {
  if (__at >= __events.length) return;
  __cf.__log.value = null;
  handler(__events[__at++]).then(function (r) { __print(JSON.stringify({ r: r, log: __cf.__log.value })); __next(); },
    function (e) { __print(JSON.stringify({ r: { njsError: String(e) }, log: null })); __next(); });
}
__next();
`,
  );
  const { stdout } = await run('njs', ['-t', 'module', '-p', stubs, script], { maxBuffer: 64 * 1024 * 1024 });
  // njs's console.log cuts a line at 2,048 bytes: each result comes in lines of 500 characters at most (JSON
  // has no raw line break), each marked `+` (more follows) or `=` (the last).
  const lines: { r: Record<string, unknown>; log: string | null }[] = [];
  let result = '';
  for (const line of stdout.trim().split('\n')) {
    result += line.slice(1);
    if (!line.startsWith('=')) continue;
    lines.push(JSON.parse(result));
    result = '';
  }
  return { results: lines.map((line) => line.r), logs: lines.map((line) => line.log) };
}

describe('the built functions under njs', () => {
  let world: TestWorld;
  const bundles: Record<string, string> = {};
  const stores: Record<'plain' | 'cors', Map<string, string>> = { plain: new Map(), cors: new Map() };
  beforeAll(async () => {
    world = await createTestWorld();
    for (const name of ['viewer-request', 'viewer-response'] as const) {
      bundles[name] = await builtFunctionCode(name);
    }
    stores.plain = new Map(
      JSON.parse(await readFile(world.stores.plain, 'utf8')).data.map((e: { key: string; value: string }) => [
        e.key,
        e.value,
      ]),
    );
    stores.cors = new Map(
      JSON.parse(await readFile(world.stores.cors, 'utf8')).data.map((e: { key: string; value: string }) => [
        e.key,
        e.value,
      ]),
    );
  });
  afterAll(() => world?.remove());

  /** The cases of one store, with their viewer-request events. */
  function eventsFor(store: 'plain' | 'cors') {
    const cases = REQUEST_CASES.filter((c) => (c.cors ? 'cors' : 'plain') === store);
    const events = cases.map((c, i) => {
      const r = resolveCase(c, world);
      return viewerRequestEvent(
        { method: r.method, target: r.target, rawHeaders: r.headers.flat(), remoteAddress: '203.0.113.9' },
        `req-${i}`,
      );
    });
    return { cases, events };
  }

  for (const store of ['plain', 'cors'] as const) {
    it(`viewer-request gives the table's outcomes, exactly as the local runtime (${store} store)`, async () => {
      const { cases, events } = eventsFor(store);
      const kvs = new WatchedKeyValueStore(world.stores[store]);
      await kvs.load();
      const sandbox = loadFunction(bundles['viewer-request'] as string, { kvs });
      const expected = await Promise.all(events.map((e) => sandbox.runLogged(e)));
      const { results: actual, logs } = await runUnderNjs(
        world.dir,
        bundles['viewer-request'] as string,
        events,
        stores[store],
      );
      expect(actual).toHaveLength(events.length);
      cases.forEach((testCase, i) => {
        const got = actual[i] as Record<string, unknown>;
        expect(got.njsError, testCase.name).toBeUndefined();
        expect(got, testCase.name).toEqual(JSON.parse(JSON.stringify(expected[i]?.result)));
        // What it recorded for the access log: the table's value, as in the local runtime.
        expect(logs[i], `${testCase.name}: recorded value`).toBe(testCase.logData);
        expect(expected[i]?.logData, `${testCase.name}: recorded value, local runtime`).toBe(
          testCase.logData,
        );
        const outcome = viewerRequestOutcome(testCase);
        if ('status' in outcome) expect(got.statusCode, testCase.name).toBe(outcome.status);
        // A page's live copy is at the origin's root; every other object is the live build's.
        else
          expect((got as unknown as CloudFrontRequest).uri, testCase.name).toBe(
            `${testCase.rewrite ? '' : `/builds/${world.buildId}`}${outcome.uri}`,
          );
      });
    });

    it(`viewer-response sets the same headers under njs as in the local runtime, shown the request as sent or as rewritten (${store} store)`, async () => {
      const { cases, events } = eventsFor(store);
      const kvs = new WatchedKeyValueStore(world.stores[store]);
      await kvs.load();
      const request = loadFunction(bundles['viewer-request'] as string, { kvs });
      const response = loadFunction(bundles['viewer-response'] as string, { kvs });
      const origin = new EdgeOrigin(new DirectoryOrigin(world.originDir));
      // For each case that reaches an object: its event showing the viewer's request, and showing the rewrite.
      const passed: { testCase: RequestCase; asSent: CloudFrontEvent; asRewritten: CloudFrontEvent }[] = [];
      for (const [i, event] of events.entries()) {
        const result = await request.run(event);
        if ('statusCode' in result) continue;
        const object = await origin.get(result.uri.slice(1));
        if (!object) continue; // CloudFront's error response: no function runs
        const originResponse = (): CloudFrontResponse => ({
          statusCode: 200,
          statusDescription: 'OK',
          headers: {
            // The type the builder stored with the object, as S3 sends it.
            'content-type': { value: object.contentType },
            etag: { value: `"${i}"` },
            server: { value: 'AmazonS3' },
            'x-amz-request-id': { value: 'ABC' },
            'x-amz-meta-plans-hash': { value: 'f00' },
            'access-control-allow-origin': { value: '*' },
          },
        });
        passed.push({
          testCase: cases[i] as RequestCase,
          asSent: viewerResponseEvent(event, originResponse()),
          asRewritten: viewerResponseEvent({ ...event, request: result }, originResponse()),
        });
      }
      expect(passed.length).toBeGreaterThan(cases.length / 5);
      const shapes = ['asSent', 'asRewritten'] as const;
      const results = {} as Record<(typeof shapes)[number], Record<string, unknown>[]>;
      for (const shape of shapes) {
        const shown = passed.map((p) => p[shape]);
        const expected = await Promise.all(shown.map((e) => response.run(e)));
        const { results: actual } = await runUnderNjs(
          world.dir,
          bundles['viewer-response'] as string,
          shown,
          stores[store],
        );
        expect(actual, shape).toEqual(JSON.parse(JSON.stringify(expected)));
        results[shape] = actual;
      }
      // What the viewer sees does not depend on which request the function is shown.
      expect(results.asSent).toEqual(results.asRewritten);
      passed.forEach(({ testCase }, i) => {
        const headers = (results.asSent[i] as { headers: Record<string, { value: string }> }).headers;
        expect(headers.server).toBeUndefined();
        expect(Object.keys(headers).some((h) => h.startsWith('x-amz-'))).toBe(false);
        expect(headers['x-content-type-options']?.value).toBe('nosniff');
        if (store === 'plain') expect(headers['access-control-allow-origin']).toBeUndefined();
        if (testCase.status === 200)
          for (const name of ['content-type', 'vary', 'cache-control'])
            if (testCase.headersPresent?.[name] !== undefined)
              expect(headers[name]?.value, `${testCase.name}: ${name}`).toBe(testCase.headersPresent[name]);
      });
    });
  }
});
