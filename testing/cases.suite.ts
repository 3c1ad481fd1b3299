/**
 * Runs the request-case table against one implementation of the edge (the bundle in the local runtime, or
 * `catalog serve` over HTTP). Each answer is judged by gateway/judge.ts (status, the headers that must and must
 * not be there, the body, and the rules that hold for every answer), knowing everything of the test world.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planPageKey } from '../contract/index.ts';
import { PAGE_PLAN_ID, REQUEST_CASES, type RequestCase } from '../gateway/cases.ts';
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
    // Each stored variant carries the date it was written; a page has one, whatever the encoding (the
    // distribution compresses it). The world knows the date of one page: a case that reads another plan's page
    // (written a moment apart) is not compared.
    modified: (object, encoding) =>
      object === 'page'
        ? testCase.rewrite === `/${planPageKey(PAGE_PLAN_ID)}`
          ? world.modified.page
          : undefined
        : world.modified[variantKey(object, encoding)],
    secrets: Object.values(world.keys),
    cors: testCase.cors ?? null,
  };
}

/**
 * Asserts one answer against its case and the rules every answer obeys (gateway/judge.ts), and that it
 * recorded the case's `viewer-request-log-data`, or nothing where the runtime cannot record (`recorded: false`).
 */
export function checkAnswer(testCase: RequestCase, answer: Answer, world: TestWorld, recorded = true): void {
  expect(judgeAnswer(testCase, answer, knownOf(world, testCase))).toEqual([]);
  // Every engine shows what viewer-request recorded for the access log (docs/decisions.md#usage).
  expect(answer.logData, 'the recorded viewer-request-log-data').toBe(recorded ? testCase.logData : null);
  // The local edge adds nothing of its own: no Server header, and none of the x-amz-* headers CloudFront adds.
  expect(answer.headers.server, 'no Server header').toBeUndefined();
  for (const name of Object.keys(answer.headers)) expect(name.startsWith('x-amz-'), `no ${name}`).toBe(false);
}

/**
 * Declares one test per case of the table against the implementation `start` returns; `recorded: false` for
 * one whose runtime cannot record `viewer-request-log-data` (the answers stay the same).
 */
export function describeCaseTable(
  label: string,
  start: (world: TestWorld) => Promise<Implementation>,
  recorded = true,
): void {
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
        checkAnswer(testCase, answer, world, recorded);
      },
    );
  });
}

/**
 * The next access-log entry (a JSON line with a `status`) after the first `seen` of `lines`, waiting up to
 * five seconds for it: a server writes it once the answer is out. Returns it and how many lines it consumed.
 */
export async function nextAccessLogEntry(
  lines: readonly string[],
  seen: number,
): Promise<{ entry: { logData?: unknown; status?: unknown }; seen: number }> {
  const deadline = Date.now() + 5_000;
  let at = seen;
  for (;;) {
    while (at < lines.length) {
      const line = lines[at++] as string;
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { logData?: unknown; status?: unknown };
      if (typeof entry.status === 'number') return { entry, seen: at };
    }
    if (Date.now() > deadline) throw new Error(`no access-log line after line ${seen}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A test world and a `catalog serve` over it (plain store; its own process with `process`) for the suites of
 * the enclosing `describe`: made before them, stopped and removed after. Read `.world` and `.server` inside a test.
 */
export function useServedWorld(options: { process?: boolean } = {}): {
  readonly world: TestWorld;
  readonly server: ServeProcess;
} {
  let world: TestWorld | undefined;
  let server: ServeProcess | undefined;
  beforeAll(async () => {
    world = await createTestWorld();
    server = await startServe(['--origin', world.originDir, '--store', world.stores.plain], options);
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
