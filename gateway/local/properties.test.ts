import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestWorld, edgeFor, type TestWorld } from '../../testing/world.ts';
import type { Edge } from './edge.ts';

const CONTRACT_STATUSES = new Set([200, 204, 304, 400, 401, 404, 405]);

describe('the gateway under random requests', () => {
  let world: TestWorld;
  let edges: { plain: Edge; cors: Edge };
  beforeAll(async () => {
    world = await createTestWorld();
    edges = { plain: await edgeFor(world, 'plain'), cors: await edgeFor(world, 'cors') };
  });
  afterAll(() => world.remove());

  const keyNames = ['valid', 'other', 'expiring', 'expired', 'revoked', 'forged'] as const;
  const validKeyNames = new Set(['valid', 'other', 'expiring']);

  const pathChar = fc.constantFrom(...'/apilnsAPILN.%0123456789-_;?~ '.split(''), 'é', '\u0000');
  const path = fc.oneof(
    fc.constantFrom(
      '/api/plans',
      '/openapi.yaml',
      '/api/plans/',
      '/catalog.json',
      '/',
      '//api/plans',
      '/API/plans',
    ),
    fc.string({ unit: pathChar, maxLength: 20 }).map((p) => `/${p.replaceAll('?', '')}`),
  );
  const queryPart = fc.oneof(
    fc.constantFrom(
      'discipline=running',
      'discipline=strength',
      'discipline=',
      'discipline',
      'Discipline=x',
      '%64iscipline=running',
      'discipline=%ZZ',
      'a=b',
    ),
    fc
      .tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }))
      .map(([n, v]) => `${encodeURIComponent(n)}=${v.replace(/[&#]/g, '')}`),
  );
  const query = fc
    .array(queryPart, { maxLength: 4 })
    .map((parts) => (parts.length ? `?${parts.join('&')}` : ''));
  const keyHeaders = fc.array(fc.oneof(fc.constantFrom(...keyNames), fc.string({ maxLength: 50 })), {
    maxLength: 3,
  });
  const request = fc.record({
    method: fc.constantFrom('GET', 'GET', 'GET', 'OPTIONS', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'),
    path,
    query,
    keys: keyHeaders,
    ifNoneMatch: fc.option(fc.constantFrom('*', '"x"', 'W/"y"'), { nil: undefined }),
    acceptEncoding: fc.option(fc.constantFrom('gzip', 'br', 'gzip, br', 'identity', '*;q=0'), {
      nil: undefined,
    }),
    cors: fc.boolean(),
  });

  it('answers only the contract statuses, never a 5xx, never a catalog without exactly one valid key', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const rawHeaders: string[] = [];
        for (const k of r.keys) {
          rawHeaders.push(
            'X-Api-Key',
            Object.hasOwn(world.keys, k) ? world.keys[k as keyof typeof world.keys] : k,
          );
        }
        if (r.ifNoneMatch) rawHeaders.push('If-None-Match', r.ifNoneMatch);
        if (r.acceptEncoding) rawHeaders.push('Accept-Encoding', r.acceptEncoding);
        const answer = await edges[r.cors ? 'cors' : 'plain'].handle({
          method: r.method,
          target: r.path + r.query,
          rawHeaders,
          remoteAddress: '127.0.0.1',
        });
        expect(CONTRACT_STATUSES.has(answer.status), `status ${answer.status} (${answer.error ?? ''})`).toBe(
          true,
        );
        if (r.path === '/api/plans' && (answer.status === 200 || answer.status === 304)) {
          expect(r.method).toBe('GET');
          expect(r.keys).toHaveLength(1);
          expect(validKeyNames.has(r.keys[0] as string)).toBe(true);
        }
        // Without a key, only openapi.yaml and the home page (`/`, for people) answer 200.
        if (answer.status === 200 && r.path !== '/openapi.yaml' && r.path !== '/')
          expect(r.path).toBe('/api/plans');
        for (const key of Object.values(world.keys)) expect(answer.body.includes(key)).toBe(false);
      }),
      { numRuns: 1500 },
    );
  });
});

/**
 * Every name `Object.prototype` carries (and `__proto__`), sent as a query name, a header name and a cookie
 * name: the gateway must treat them as ordinary names. Field maps built on plain objects let `__proto__` reach
 * `Object.prototype` (after which every valid key got 401) and let `constructor`, `toString`, `valueOf` hang
 * growing arrays on built-in functions.
 */
describe('the gateway under requests naming Object.prototype properties', () => {
  let world: TestWorld;
  let edge: Edge;
  beforeAll(async () => {
    world = await createTestWorld();
    edge = await edgeFor(world, 'plain');
  });
  afterAll(() => world.remove());

  const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];
  const PLACES = ['query', 'header', 'cookie'] as const;

  /** A request whose query, headers and cookies repeat the given names `times` times. */
  function request(
    target: string,
    names: readonly { name: string; place: (typeof PLACES)[number] }[],
    times: number,
    key?: string,
  ) {
    const query: string[] = [];
    const cookies: string[] = [];
    const rawHeaders: string[] = key === undefined ? [] : ['X-Api-Key', key];
    for (let i = 0; i < times; i += 1) {
      for (const { name, place } of names) {
        if (place === 'query') query.push(`${name}=v${i}`);
        else if (place === 'cookie') cookies.push(`${name}=v${i}`);
        else rawHeaders.push(name, `v${i}`);
      }
    }
    if (cookies.length > 0) rawHeaders.push('Cookie', cookies.join('; '));
    return {
      method: 'GET',
      target: query.length > 0 ? `${target}?${query.join('&')}` : target,
      rawHeaders,
      remoteAddress: '127.0.0.1',
    };
  }

  /** The exact headers of a plain 200 (no Accept-Encoding, so no compression). */
  async function expectCleanAnswers(): Promise<void> {
    const plans = await edge.handle(request('/api/plans', [], 0, world.keys.valid));
    expect(plans.status, plans.error).toBe(200);
    expect(plans.body.equals(world.objects.all)).toBe(true);
    expect(Object.keys(plans.headers).sort()).toEqual([
      'cache-control',
      'content-type',
      'etag',
      'last-modified',
      'vary',
      'x-content-type-options',
    ]);
    for (const value of Object.values(plans.headers)) expect(typeof value).toBe('string');
    expect(plans.headers.vary).toBe('X-Api-Key, Accept-Encoding');
    const openapi = await edge.handle(request('/openapi.yaml', [], 0));
    expect(openapi.status).toBe(200);
    expect(openapi.body.equals(world.objects.openapi)).toBe(true);
    expect(openapi.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(Number.isNaN(Date.parse(String(openapi.headers['last-modified'])))).toBe(false);
    expect(String(openapi.headers['last-modified'])).toMatch(/GMT$/);
  }

  it('keeps every valid key working and every answer clean after any of those names in any place', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const name = fc.record({ name: fc.constantFrom(...NAMES), place: fc.constantFrom(...PLACES) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(name, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('/api/plans', '/openapi.yaml', '/x'),
        fc.boolean(),
        async (names, times, path, withKey) => {
          const answer = await edge.handle(
            request(path, names, times, withKey ? world.keys.valid : undefined),
          );
          // The names are unknown parameters, headers and cookies: the answer is the one without them.
          const expected = path === '/x' ? 404 : path === '/openapi.yaml' || withKey ? 200 : 401;
          expect(answer.status, answer.error).toBe(expected);
          await expectCleanAnswers();
        },
      ),
      { numRuns: 300 },
    );
    // Every name on its own, in every place, once more: nothing leaks into the host realm.
    for (const one of NAMES) {
      for (const place of PLACES) await edge.handle(request('/x', [{ name: one, place }], 2));
    }
    await expectCleanAnswers();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    for (const builtIn of [Object, Function, Object.prototype.toString, Object.prototype.valueOf]) {
      expect(Object.hasOwn(builtIn, 'multiValue'), String(builtIn.name)).toBe(false);
    }
  });

  it('keeps memory flat under thousands of those names, as under ordinary ones', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const flood = async (names: readonly string[]) => {
      const places = names.flatMap((n) => PLACES.map((place) => ({ name: n, place })));
      for (let i = 0; i < 300; i += 1) await edge.handle(request('/api/plans', places, 50, world.keys.valid));
    };
    const prototypeNames = ['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty'];
    const ordinaryNames = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
    await flood(ordinaryNames); // warm up caches and compiled code
    const start = heap();
    await flood(ordinaryNames);
    const ordinary = heap() - start;
    const middle = heap();
    await flood(prototypeNames);
    const prototype = heap() - middle;
    // 300 requests × 750 fields each: kept, that is tens of MB; not kept, noise.
    const MiB = 1024 * 1024;
    expect(prototype, `ordinary names: +${ordinary} bytes`).toBeLessThan(Math.max(3 * ordinary, 0) + 4 * MiB);
  });
});
