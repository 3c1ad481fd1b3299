import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LOCAL_CONTACT_ADDRESS } from '../app/settings/registry.ts';
import { renderOpenApi } from '../builder/openapi.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { KVS_LIVE_BUILD } from '../contract/index.ts';
import { httpRequest, type ServeProcess, startServe } from '../testing/cli.ts';
import { conformanceProblems, NOT_OPERATIONS, OPENAPI_DOCUMENT, operationsOf } from '../testing/openapi.ts';
import { createTestWorld, resolveCase, type TestWorld } from '../testing/world.ts';
import { PAGE_PLAN_ID, REQUEST_CASES } from './cases.ts';

/** The path a request names, as OpenAPI sees it (no query string). */
const pathOf = (target: string) => target.split('?')[0] ?? target;

/** Every method an HTTP client may send that the edge reads (a method it cannot parse gets the parser's 400). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

describe('every answer of catalog serve conforms to openapi.yaml', () => {
  let world: TestWorld;
  let servers: Record<'plain' | 'cors', ServeProcess>;
  beforeAll(async () => {
    world = await createTestWorld();
    servers = {
      plain: await startServe(['--origin', world.originDir, '--store', world.stores.plain]),
      cors: await startServe(['--origin', world.originDir, '--store', world.stores.cors]),
    };
  });
  afterAll(async () => {
    await Promise.all([servers?.plain.stop(), servers?.cors.stop()]);
    await world?.remove();
  });

  it.each(REQUEST_CASES.map((c) => [`${c.status} ${c.name}`, c] as const))('%s', async (_name, testCase) => {
    const request = resolveCase(testCase, world);
    const answer = await httpRequest(servers[testCase.cors ? 'cors' : 'plain'].url, request);
    expect(answer.status).toBe(testCase.status);
    expect(conformanceProblems(request.method, pathOf(request.target), answer)).toEqual([]);
  });

  // A plan page's path is requested with the id of a plan of the fixtures.
  const concrete = (template: string) => template.replace('{id}', PAGE_PLAN_ID);
  const refusals = Object.keys(OPENAPI_DOCUMENT.paths as object).flatMap((template) =>
    METHODS.filter(
      (method) =>
        !operationsOf(template).includes(method.toLowerCase()) &&
        !NOT_OPERATIONS.alsoAnswered.some((a) => a.path === template && a.method === method),
    ).map((method) => [`${method} ${template}`, method, concrete(template)] as const),
  );

  it('refuses, with 405, every method the document does not list for a path (besides the preflight)', () => {
    expect(refusals.map(([name]) => name).sort()).toEqual(
      [
        'DELETE /api/plans',
        'DELETE /openapi.yaml',
        'HEAD /api/plans',
        'HEAD /openapi.yaml',
        'PATCH /api/plans',
        'PATCH /openapi.yaml',
        'POST /api/plans',
        'POST /openapi.yaml',
        'PUT /api/plans',
        'PUT /openapi.yaml',
        'DELETE /',
        'OPTIONS /',
        'PATCH /',
        'POST /',
        'PUT /',
        'DELETE /plans/{id}',
        'OPTIONS /plans/{id}',
        'PATCH /plans/{id}',
        'POST /plans/{id}',
        'PUT /plans/{id}',
      ].sort(),
    );
  });

  it.each(refusals)('%s: 405 as the document describes it', async (_name, method, path) => {
    const answer = await httpRequest(servers.plain.url, {
      method,
      target: path,
      headers: [['X-Api-Key', world.keys.valid]],
    });
    expect(answer.status).toBe(405);
    expect(conformanceProblems(method, path, answer)).toEqual([]);
  });

  it('documents the 500 answer the edge gives when the live build names an object that is missing', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    // A store whose pointer names a build the origin does not hold: every catalog request misses at the origin.
    const dir = await mkdtemp(join(tmpdir(), 'catalog-openapi-'));
    const { readFile } = await import('node:fs/promises');
    const store = JSON.parse(await readFile(world.stores.plain, 'utf8'));
    const file = join(dir, 'store.json');
    const missing = '20260101T000000Z-0000abcd';
    const data = store.data.map((entry: { key: string; value: string }) =>
      entry.key === KVS_LIVE_BUILD ? { ...entry, value: missing } : entry,
    );
    await writeFile(file, JSON.stringify({ ...store, data }));
    const server = await startServe(['--origin', world.originDir, '--store', file]);
    try {
      const answer = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans?discipline=running',
        headers: [['X-Api-Key', world.keys.valid]],
      });
      expect(answer.status).toBe(500);
      expect(conformanceProblems('GET', '/api/plans', answer)).toEqual([]);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the conformance check', () => {
  const catalog = {
    status: 200,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'public, max-age=300',
      vary: 'X-Api-Key, Accept-Encoding',
      etag: '"x"',
      'x-content-type-options': 'nosniff',
    },
    body: Buffer.from('{"generatedAt":"2026-11-21T08:00:00.000Z","plans":[]}'),
  };
  const problem = (status: number, type: string, extra: Record<string, string> = {}) => ({
    status,
    headers: {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...extra,
    },
    body: Buffer.from(
      JSON.stringify({
        type: `tag:training-plan-catalog,2026:problem:${type}`,
        title: 't',
        status,
        detail: 'd',
      }),
    ),
  });

  it('accepts a conforming answer (the baseline of the cases below)', () => {
    expect(conformanceProblems('GET', '/api/plans', catalog)).toEqual([]);
    expect(
      conformanceProblems(
        'POST',
        '/api/plans',
        problem(405, 'method-not-allowed', { allow: 'GET, OPTIONS' }),
      ),
    ).toEqual([]);
  });

  it('notices a missing header, an invalid body and an undocumented status', () => {
    const broken = { ...catalog, headers: { 'content-type': catalog.headers['content-type'] } };
    const problems = conformanceProblems('GET', '/api/plans', {
      ...broken,
      body: Buffer.from('{"plans":[]}'),
    });
    expect(problems.join('\n')).toMatch(/required header Cache-Control is missing/);
    expect(problems.join('\n')).toMatch(/generatedAt/);
    expect(conformanceProblems('GET', '/api/plans', { ...catalog, status: 418 })).toEqual([
      'status 418 is not documented for GET /api/plans',
    ]);
  });

  it('notices JSON sent without its charset', () => {
    const bare = { ...catalog, headers: { ...catalog.headers, 'content-type': 'application/json' } };
    expect(conformanceProblems('GET', '/api/plans', bare).join('\n')).toMatch(
      /content type application\/json is not documented/,
    );
  });

  it('holds a refused method to the 405 the text describes, with the Allow of its path', () => {
    expect(conformanceProblems('POST', '/api/plans', catalog)).toEqual([
      'POST is refused on /api/plans, so only 405 may answer it (got 200)',
    ]);
    expect(
      conformanceProblems('DELETE', '/api/plans', problem(405, 'method-not-allowed', { allow: 'GET, HEAD' })),
    ).toEqual([expect.stringMatching(/^header Allow: /)]);
    expect(
      conformanceProblems(
        'POST',
        '/plans/0B6E8A8E-6C1E-4B8E-9A4E-6F7C3F1D2A10',
        problem(405, 'method-not-allowed', { allow: 'GET, HEAD' }),
      ),
    ).toEqual([]);
    expect(
      conformanceProblems(
        'OPTIONS',
        '/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
        problem(405, 'method-not-allowed', { allow: 'GET, OPTIONS' }),
      ),
    ).toEqual([expect.stringMatching(/^header Allow: /)]);
  });

  it('notices a CORS header on an answer the document says carries none', () => {
    const internal = problem(500, 'internal-error', { 'access-control-allow-origin': 'https://a.example' });
    expect(conformanceProblems('GET', '/api/plans', internal)).toEqual([
      'header access-control-allow-origin is sent but not documented for this answer',
    ]);
    const withCors = {
      ...catalog,
      headers: { ...catalog.headers, 'access-control-allow-origin': 'https://a.example' },
    };
    expect(conformanceProblems('GET', '/api/plans', withCors)).toEqual([]);
  });

  it('wants the HTML not-found page under /plans/ and a problem document elsewhere', () => {
    const page = {
      status: 404,
      headers: { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff' },
      body: Buffer.from('<!doctype html><title>Not found</title>'),
    };
    expect(conformanceProblems('GET', '/plans/', page)).toEqual([]);
    expect(conformanceProblems('GET', '/plans/a/b', page)).toEqual([]);
    expect(conformanceProblems('GET', '/plans/not-a-uuid', page)).toEqual([]);
    expect(conformanceProblems('GET', '/plans/a/b', problem(404, 'not-found'))).toEqual([
      expect.stringMatching(/^content type application\/problem\+json is not documented/),
    ]);
    expect(conformanceProblems('GET', '/catalog.json', page)).toContainEqual(
      expect.stringMatching(/^content type text\/html; charset=utf-8 is not documented/),
    );
  });

  it('finds every answer the table describes named in the document text', () => {
    const text = (OPENAPI_DOCUMENT.info as { description: string }).description;
    const named = [
      NOT_OPERATIONS.otherPath('/x'),
      NOT_OPERATIONS.otherPath('/plans/'),
      ...Object.values(NOT_OPERATIONS.refusedMethod),
      ...NOT_OPERATIONS.alsoAnswered.map((a) => a.response),
    ];
    for (const name of named) {
      expect(text).toContain(`#/components/responses/${name}`);
      expect((OPENAPI_DOCUMENT.components as { responses: object }).responses).toHaveProperty(name);
    }
  });
});

describe("the CDN's own error pages in openapi.yaml", () => {
  const responses = (OPENAPI_DOCUMENT.components as { responses: Record<string, Record<string, unknown>> })
    .responses;
  it.each(['InternalError', 'PlanPageNotFound'])(
    '%s declares no CORS header and says why: no code of the API runs on it',
    (name) => {
      const response = responses[name] ?? {};
      expect(
        Object.keys((response.headers ?? {}) as object).filter((h) => /^access-control-/i.test(h)),
      ).toEqual([]);
      expect(String(response.description)).toMatch(/no code of this API runs, so it carries no CORS header/);
    },
  );
});

describe('the served openapi.yaml', () => {
  it('lists exactly the operations the service performs', () => {
    const operations = Object.keys(OPENAPI_DOCUMENT.paths as object).flatMap((path) =>
      operationsOf(path).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /api/plans',
        'OPTIONS /api/plans',
        'GET /openapi.yaml',
        'GET /plans/{id}',
        'HEAD /plans/{id}',
        'GET /',
        'HEAD /',
      ].sort(),
    );
  });

  it('says where partners ask for a key: the deployment’s contact address, in its description and info.contact', () => {
    expect(OPENAPI_TEMPLATE).toContain('<CONTACT_ADDRESS>');
    for (const [address, contact] of [
      ['api-keys@trainingplans.app', { email: 'api-keys@trainingplans.app' }],
      ['https://partners.trainingplans.app/keys', { url: 'https://partners.trainingplans.app/keys' }],
    ] as const) {
      const served = renderOpenApi(OPENAPI_TEMPLATE, 'https://plans.example.com', address);
      const document = parse(served) as { info: { description: string; contact: unknown } };
      expect(document.info.description).toContain(`the operator on request through ${address};`);
      expect(document.info.contact).toEqual(contact);
      expect(served).not.toContain('<CONTACT_ADDRESS>');
    }
  });

  it('names the served base URL in its servers and in the URLs of its examples', () => {
    const served = renderOpenApi(OPENAPI_TEMPLATE, 'https://plans.example.com', LOCAL_CONTACT_ADDRESS);
    const document = parse(served) as { servers: { url: string }[] };
    expect(document.servers.map((s) => s.url)).toEqual(['https://plans.example.com']);
    expect(served).toContain('webUrl: https://plans.example.com/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10');
    expect(served).not.toContain('http://127.0.0.1:8787');
  });
});
