import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryOrigin } from '../../publish/dir-origin.ts';
import { describeCaseTable, type Implementation } from '../../testing/cases.suite.ts';
import {
  builtFunctionCode,
  createTestWorld,
  edgeFor,
  type TestWorld,
  toAnswer,
} from '../../testing/world.ts';
import { Edge } from './edge.ts';
import { viewerRequestEvent } from './event.ts';
import { EdgeOrigin } from './origin.ts';
import { loadFunction } from './sandbox.ts';
import { WatchedKeyValueStore } from './store.ts';

/** Sends a case's request to the edge of its store, as the HTTP server would (no body on HEAD). */
const sender =
  (edges: Record<'plain' | 'cors', Edge>): Implementation['send'] =>
  async (request, store) => {
    const response = await edges[store].handle({
      method: request.method,
      target: request.target,
      rawHeaders: request.headers.flat(),
      remoteAddress: '127.0.0.1',
    });
    return toAnswer(request.method === 'HEAD' ? { ...response, body: Buffer.alloc(0) } : response);
  };

for (const shown of ['as-sent', 'as-rewritten'] as const) {
  describeCaseTable(
    `the request-case table against the bundles in the local runtime (viewer-response shown the request ${shown})`,
    async (world) => ({
      send: sender({
        plain: await edgeFor(world, 'plain', shown),
        cors: await edgeFor(world, 'cors', shown),
      }),
      close: async () => {},
    }),
  );
}

/**
 * The viewer-request bundle on a runtime without `cf.logCustomData` (new in 2026: an edge location may not have
 * it yet): before the bundle's code runs, the method is deleted from the `cf` the bundle imports.
 */
function withoutLogCustomData(bundle: string): string {
  const withPrologue = bundle.replace(
    /^(import ([\w$]+) ?from ?"cloudfront";\n)/,
    '$1delete $2.logCustomData;\n',
  );
  expect(withPrologue).not.toBe(bundle);
  return withPrologue;
}

describeCaseTable(
  'the request-case table on a runtime without cf.logCustomData: the same answers, nothing recorded',
  async (world) => ({
    send: sender({
      plain: await edgeFor(world, 'plain', undefined, withoutLogCustomData),
      cors: await edgeFor(world, 'cors', undefined, withoutLogCustomData),
    }),
    close: async () => {},
  }),
  false,
);

describe('Range at the local edge', () => {
  let world: TestWorld;
  let passThrough: Edge;
  let built: Edge;
  beforeAll(async () => {
    world = await createTestWorld();
    built = await edgeFor(world, 'plain');
    // Functions that let every request through to the live catalog.json, Range included: what CloudFront would then do.
    const kvs = new WatchedKeyValueStore(world.stores.plain);
    passThrough = new Edge({
      viewerRequest: loadFunction(
        `function handler(event) { event.request.uri = "/builds/${world.buildId}/catalog.json"; return event.request; }`,
        { kvs },
      ),
      viewerResponse: loadFunction('function handler(event) { return event.response; }', { kvs }),
      origin: new EdgeOrigin(new DirectoryOrigin(world.originDir)),
    });
  });
  afterAll(() => world.remove());

  const get = (edge: Edge, headers: string[]) =>
    edge.handle({ method: 'GET', target: '/api/plans', rawHeaders: headers, remoteAddress: '127.0.0.1' });

  it('answers 206 with the slice when a function lets Range through, as CloudFront does', async () => {
    const length = world.objects.all.length;
    const first = await get(passThrough, ['Range', 'bytes=0-9']);
    expect(first.status).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-9/${length}`);
    expect(first.body.equals(world.objects.all.subarray(0, 10))).toBe(true);
    const last = await get(passThrough, ['Range', 'bytes=-5']);
    expect(last.status).toBe(206);
    expect(last.body.equals(world.objects.all.subarray(length - 5))).toBe(true);
    expect((await get(passThrough, ['Range', `bytes=${length}-`])).status).toBe(416);
    expect((await get(passThrough, ['Range', 'bytes=0-9', 'If-Range', '"other"'])).status).toBe(200);
  });

  it('gets the whole catalog through the built functions, which drop Range and If-Range', async () => {
    const answer = await get(built, ['X-Api-Key', world.keys.valid, 'Range', 'bytes=0-9']);
    expect(answer.status).toBe(200);
    expect(answer.body.equals(world.objects.all)).toBe(true);
    const kvs = new WatchedKeyValueStore(world.stores.plain);
    await kvs.load();
    const code = await builtFunctionCode('viewer-request');
    const request = await loadFunction(code, { kvs }).run(
      viewerRequestEvent(
        {
          method: 'GET',
          target: '/openapi.yaml',
          rawHeaders: ['Range', 'bytes=0-9', 'If-Range', '"x"'],
          remoteAddress: '127.0.0.1',
        },
        'range',
      ),
    );
    expect('uri' in request && request.uri).toBe(`/builds/${world.buildId}/openapi.yaml`);
    expect(Object.keys(request.headers)).not.toContain('range');
    expect(Object.keys(request.headers)).not.toContain('if-range');
  });
});

describe("the canary's marker at the local edge", () => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createTestWorld();
  });
  afterAll(() => world.remove());

  it('never goes on with the request it marks, nor does the key, whichever request is passed on', async () => {
    const kvs = new WatchedKeyValueStore(world.stores.plain);
    await kvs.load();
    const viewerRequest = loadFunction(await builtFunctionCode('viewer-request'), { kvs });
    const passedOn = [];
    for (const [target, headers] of [
      ['/api/plans', ['X-Api-Key', world.keys.monitoring]],
      ['/openapi.yaml', []],
      ['/plans/920c4400-79a6-5b26-9ac7-4c18aea7632c', []],
    ] as const) {
      const { result, logData } = await viewerRequest.runLogged(
        viewerRequestEvent(
          {
            method: 'GET',
            target,
            rawHeaders: [...headers, 'X-Catalog-Canary', world.keys.monitoring, 'Accept', '*/*'],
            remoteAddress: '127.0.0.1',
          },
          'marker',
        ),
      );
      expect('uri' in result, target).toBe(true);
      passedOn.push({ headers: Object.keys(result.headers).sort(), logData });
    }
    expect(passedOn).toEqual([
      { headers: ['accept'], logData: 'monitoring' },
      { headers: ['accept'], logData: 'monitoring' },
      { headers: ['accept'], logData: 'monitoring.page' },
    ]);
  });
});
