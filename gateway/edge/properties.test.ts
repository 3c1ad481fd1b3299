import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestWorld, edgeFor, type TestWorld } from '../testing.ts';
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
        if (answer.status === 200 && r.path !== '/openapi.yaml') expect(r.path).toBe('/api/plans');
        for (const key of Object.values(world.keys)) expect(answer.body.includes(key)).toBe(false);
      }),
      { numRuns: 1500 },
    );
  });
});
