/**
 * Runs the request-case table against one implementation of the edge (the bundle in the local runtime, or
 * `catalog serve` over HTTP). Each case asserts status, the headers that must and must not be there, and
 * the body; every answer is also checked for the rules that hold for all of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HEADER_VALUES,
  PAGE_HEADERS,
  PAGE_SECURITY_HEADERS,
  PROBLEMS,
  problemDocument,
} from '../contract/index.ts';
import { REQUEST_CASES, type RequestCase } from '../gateway/cases.ts';
import { decodedBody, type ServeProcess, startServe } from './cli.ts';
import { type Answer, createTestWorld, resolveCase, type TestWorld } from './world.ts';

export type { Answer } from './world.ts';

export type Send = (request: ReturnType<typeof resolveCase>, store: 'plain' | 'cors') => Promise<Answer>;

export interface Implementation {
  send: Send;
  close(): Promise<void>;
}

/** Asserts one answer against its case and the rules every answer obeys. */
export function checkAnswer(testCase: RequestCase, answer: Answer, world: TestWorld): void {
  const { headers } = answer;
  expect(answer.status, 'status').toBe(testCase.status);
  for (const [name, value] of Object.entries(testCase.headersPresent ?? {}))
    expect(headers[name], name).toBe(value);
  for (const name of testCase.headersAbsent ?? []) expect(headers[name], name).toBeUndefined();

  const body = decodedBody(answer);
  switch (testCase.body) {
    case 'empty':
      expect(body.length, 'body length').toBe(0);
      break;
    case 'all':
    case 'running':
    case 'strength':
    case 'openapi':
    case 'page':
    case 'notFoundPage':
      expect(body.equals(world.objects[testCase.body]), `body is ${testCase.body}`).toBe(true);
      break;
    default:
      expect(JSON.parse(body.toString('utf8'))).toEqual(JSON.parse(problemDocument(PROBLEMS[testCase.body])));
  }

  // Rules for every answer.
  for (const name of Object.keys(headers)) {
    expect(name.startsWith('x-amz-'), `no ${name}`).toBe(false);
    if (!testCase.cors) expect(name.startsWith('access-control-'), `no ${name} without CORS`).toBe(false);
  }
  expect(headers.server, 'no Server header').toBeUndefined();
  for (const secret of Object.values(world.keys))
    expect(body.toString('utf8').includes(secret), 'key echoed').toBe(false);
  if (testCase.cors && testCase.status !== 304)
    expect(headers['access-control-allow-origin']).toBe(testCase.cors);
  // The object served: a 304 or a HEAD names it, a 200 has it as its body.
  const object = testCase.status === 304 || testCase.body === 'empty' ? testCase.object : testCase.body;
  // A page, found or not, carries the pages' security headers (the not-found page: CloudFront's own answer).
  const isPage = testCase.rewrite !== undefined;
  if (isPage && testCase.status !== 304)
    for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS))
      expect(headers[name], name).toBe(value);
  if (!isPage) expect(headers['content-security-policy'], 'a CSP outside the pages').toBeUndefined();
  if (testCase.status === 404 && isPage) {
    expect(headers['content-type']).toBe(PAGE_HEADERS.html);
    expect(headers['cache-control']).toBe(HEADER_VALUES.noStore);
  } else if (testCase.status >= 400) {
    expect(headers['content-type']).toBe(HEADER_VALUES.problem);
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['cache-control']).toBe(HEADER_VALUES.noStore);
  }
  // Every 401 carries the challenge; no other answer does.
  if (testCase.status === 401) expect(headers['www-authenticate']).toBe(HEADER_VALUES.wwwAuthenticate);
  else expect(headers['www-authenticate'], 'WWW-Authenticate outside a 401').toBeUndefined();
  // What is served from the origin: the whole object, validators, and a Vary that names Accept-Encoding.
  const served = testCase.status === 200 || testCase.status === 304;
  if (served && object !== undefined && object !== 'openapi' && object !== 'page') {
    expect(headers.vary, 'Vary of the catalog').toBe(HEADER_VALUES.varyPlans);
    expect(headers['cache-control']).toBe(HEADER_VALUES.cacheable);
    expect(headers.etag).toMatch(/^(W\/)?"[0-9a-f]{32}"$/);
    expect(headers['last-modified']).toBe(world.modified[object as keyof TestWorld['modified']]);
  }
  if (served && (object === 'openapi' || object === 'page')) {
    expect(headers.vary, `Vary of ${object}`).toBe(HEADER_VALUES.varyEncoding);
    expect(headers['cache-control']).toBe(HEADER_VALUES.cacheable);
    expect(headers['last-modified']).toBe(world.modified[object]);
  }
  if (testCase.status === 200 && testCase.body === 'page') {
    expect(headers['content-type']).toBe(PAGE_HEADERS.html);
    // Untrusted text stays text: the page answer allows no script at all.
    expect(headers['content-security-policy']).toMatch(/^default-src 'none';/);
  }
  if (testCase.status === 200 && !['openapi', 'page', 'empty'].includes(testCase.body)) {
    expect(headers['content-type']).toBe(HEADER_VALUES.json);
    expect(headers['x-content-type-options']).toBe('nosniff');
  }
  if (testCase.status === 200 || testCase.status === 304) expect(headers['content-range']).toBeUndefined();
  if (testCase.status === 200)
    expect(headers['content-encoding'], 'the variant served').toBe(testCase.encoding);
  if (testCase.body === 'openapi') {
    expect(headers['content-type']).toBe(HEADER_VALUES.yaml);
    expect(headers['x-content-type-options']).toBe('nosniff');
  }
}

/** Declares one test per case of the table against the implementation `start` returns. */
export function describeCaseTable(label: string, start: (world: TestWorld) => Promise<Implementation>): void {
  describe(label, () => {
    let world: TestWorld;
    let implementation: Implementation;
    beforeAll(async () => {
      world = await createTestWorld();
      implementation = await start(world);
    });
    afterAll(async () => {
      await implementation?.close();
      await world?.remove();
    });

    it.each(REQUEST_CASES.map((c) => [`${c.status} ${c.name}`, c] as const))(
      '%s',
      async (_name, testCase) => {
        const answer = await implementation.send(
          resolveCase(testCase, world),
          testCase.cors ? 'cors' : 'plain',
        );
        checkAnswer(testCase, answer, world);
      },
    );
  });
}

/**
 * A test world and a `catalog serve` over it (plain store) for the suites of the enclosing `describe`: made
 * before them, stopped and removed after. Read `.world` and `.server` inside a test.
 */
export function useServedWorld(): { readonly world: TestWorld; readonly server: ServeProcess } {
  let world: TestWorld | undefined;
  let server: ServeProcess | undefined;
  beforeAll(async () => {
    world = await createTestWorld();
    server = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
  });
  afterAll(async () => {
    await server?.stop();
    await world?.remove();
  });
  return {
    get world() {
      if (!world) throw new Error('useServedWorld: read .world inside a test');
      return world;
    },
    get server() {
      if (!server) throw new Error('useServedWorld: read .server inside a test');
      return server;
    },
  };
}
