/**
 * Runs the request-case table against one implementation of the edge (the bundle in the local runtime, or
 * `catalog serve` over HTTP). Each answer is judged by gateway/judge.ts (status, the headers that must and must
 * not be there, the body, and the rules that hold for every answer), knowing everything of the test world.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_CASES, type RequestCase } from '../gateway/cases.ts';
import { judgeAnswer, type Known, variantKey } from '../gateway/judge.ts';
import { type ServeProcess, startServe } from './cli.ts';
import { type Answer, createTestWorld, resolveCase, type TestWorld } from './world.ts';

export type { Answer } from './world.ts';

export type Send = (request: ReturnType<typeof resolveCase>, store: 'plain' | 'cors') => Promise<Answer>;

export interface Implementation {
  send: Send;
  close(): Promise<void>;
}

/** What the judge knows of a test world, for a case run against the store it names. */
export function knownOf(world: TestWorld, testCase: RequestCase): Known {
  return {
    bodies: world.objects,
    etag: (object, encoding) => world.etags[variantKey(object, encoding)],
    // Every variant of an object is written with it, so it carries the object's date.
    modified: (object) => world.modified[object],
    secrets: Object.values(world.keys),
    cors: testCase.cors ?? null,
  };
}

/** Asserts one answer against its case and the rules every answer obeys (gateway/judge.ts). */
export function checkAnswer(testCase: RequestCase, answer: Answer, world: TestWorld): void {
  expect(judgeAnswer(testCase, answer, knownOf(world, testCase))).toEqual([]);
  // The local edge adds nothing of its own: no Server header, and none of the x-amz-* headers CloudFront adds.
  expect(answer.headers.server, 'no Server header').toBeUndefined();
  for (const name of Object.keys(answer.headers)) expect(name.startsWith('x-amz-'), `no ${name}`).toBe(false);
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
