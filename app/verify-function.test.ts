/**
 * The pure core of `catalog verify-function` and of the deploy's release step: planning the table's cases with
 * keys (and the viewer-response function's events), reading TestFunction's output, judging and reporting. The
 * command against a TestFunction stand-in: cli/commands/verify-function.test.ts; the release step:
 * lambda/release.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CATALOG_HEADERS, OPENAPI_HEADERS, PAGE_SERVED_HEADERS } from '../contract/index.ts';
import { REQUEST_CASES, type RequestCase } from '../gateway/cases.ts';
import type { CloudFrontResponse } from '../gateway/functions/event.ts';
import { KEY_PATTERN } from '../keys/keys.ts';
import {
  failedCases,
  formatReport,
  judge,
  judgeResponse,
  observe,
  PLACEHOLDER_ETAG,
  planCases,
  planResponseCases,
  summarize,
  type VerifyReport,
} from './verify-function.ts';

const KEY_A = `tpc_${'A'.repeat(43)}`;
const KEY_B = `tpc_${'B'.repeat(43)}`;
const EXPIRED = `tpc_${'E'.repeat(43)}`;
const REVOKED = `tpc_${'R'.repeat(43)}`;

const byName = (name: string) => {
  const found = REQUEST_CASES.find((c) => c.name === name);
  if (!found) throw new Error(`no case ${name}`);
  return found;
};

describe('planCases', () => {
  it('fills every placeholder with the keys given, and sends each case as a test event', () => {
    const planned = planCases(REQUEST_CASES, {
      valid: [KEY_A, KEY_B],
      expired: EXPIRED,
      revoked: REVOKED,
    });
    expect(planned.every((p) => 'event' in p)).toBe(true);
    const headersOf = (name: string) => {
      const p = planned.find((x) => x.testCase.name === name);
      if (!p || !('event' in p)) throw new Error(name);
      return p.event.request.headers;
    };
    expect(headersOf('two X-Api-Key headers, both valid')['x-api-key']).toEqual({
      value: KEY_A,
      multiValue: [{ value: KEY_A }, { value: KEY_B }],
    });
    expect(headersOf('an expired key')['x-api-key']).toEqual({ value: EXPIRED });
    expect(headersOf('a revoked key')['x-api-key']).toEqual({ value: REVOKED });
    const forged = headersOf('a forged key with the right shape')['x-api-key']?.value ?? '';
    expect(forged).toMatch(KEY_PATTERN);
    expect([KEY_A, KEY_B, EXPIRED, REVOKED]).not.toContain(forged);
    expect(headersOf('a matching If-None-Match')['if-none-match']).toEqual({ value: PLACEHOLDER_ETAG });
    expect(JSON.stringify(planned.map((p) => ('event' in p ? p.event : null)))).not.toMatch(
      /\{(valid|other|expiring|expired|revoked|forged|etag:[a-z]+)\}/,
    );
  });

  it('builds events as TestFunction takes them: no distribution or request id, lowercase names, raw query', () => {
    const [planned] = planCases([byName('a percent-encoded name')], { valid: [KEY_A] });
    expect(planned && 'event' in planned ? planned.event : null).toEqual({
      version: '1.0',
      context: { eventType: 'viewer-request' },
      viewer: { ip: '203.0.113.9' },
      request: {
        method: 'GET',
        uri: '/api/plans',
        querystring: { '%64iscipline': { value: 'running' } },
        headers: { 'x-api-key': { value: KEY_A } },
        cookies: {},
      },
    });
  });

  it('skips the cases whose key is missing, saying which variable to set', () => {
    const planned = planCases(REQUEST_CASES, { valid: [] });
    const skipped = (name: string) => {
      const p = planned.find((x) => x.testCase.name === name);
      return p && 'skip' in p ? p.skip : undefined;
    };
    expect(skipped('the whole catalog')).toBe('needs a valid key (CATALOG_VERIFY_KEYS)');
    expect(skipped('an expired key')).toBe('needs an expired key (CATALOG_VERIFY_EXPIRED_KEY)');
    expect(skipped('a revoked key')).toBe('needs a revoked key (CATALOG_VERIFY_REVOKED_KEY)');
    expect(skipped('no key')).toBeUndefined();
    expect(skipped('a forged key with the right shape')).toBeUndefined();
    expect(skipped('an index file at the root')).toBe('needs a valid key (CATALOG_VERIFY_KEYS)');
  });

  it('notes the stand-ins it uses for {other} and {expiring}', () => {
    const planned = planCases([byName('a key of another partner'), byName('a key that expires later')], {
      valid: [KEY_A],
    });
    expect(planned.map((p) => ('notes' in p ? p.notes : []))).toEqual([
      ['{other} is the first key (give a second in CATALOG_VERIFY_KEYS to vary it)'],
      ['{expiring} is the first key (any valid key gives this outcome)'],
    ]);
  });
});

describe('observe and judge', () => {
  const okCase = byName('the whole catalog');
  const notFoundCase = byName('an index file at the root');

  it('reads a generated response and a passed-on request, wrapped or bare', () => {
    expect(observe({ FunctionOutput: '{"response":{"statusCode":404,"headers":{}}}' })).toEqual({
      status: 404,
    });
    expect(observe({ FunctionOutput: '{"request":{"uri":"/catalog.json","method":"GET"}}' })).toEqual({
      uri: '/catalog.json',
    });
    expect(observe({ FunctionOutput: '{"statusCode":"401"}' })).toEqual({ status: 401 });
    expect(observe({ FunctionOutput: '{"uri":"/openapi.yaml"}' })).toEqual({ uri: '/openapi.yaml' });
  });

  it('reports a runtime error, a missing or unreadable output', () => {
    expect(observe({ FunctionErrorMessage: 'TypeError: x is undefined', FunctionOutput: '' })).toEqual({
      error: 'the function failed: TypeError: x is undefined',
    });
    expect(observe({})).toEqual({ error: 'TestFunction returned no FunctionOutput' });
    expect(observe({ FunctionOutput: 'nope' })).toEqual({ error: 'FunctionOutput is not JSON: nope' });
    expect(observe({ FunctionOutput: '{"request":{}}' })).toMatchObject({
      error: expect.stringMatching(/^FunctionOutput is neither a response nor a request/),
    });
  });

  it('passes only the exact status or URI of the table', () => {
    const request = (uri: string) => ({
      FunctionOutput: JSON.stringify({ request: { uri } }),
      ComputeUtilization: '21',
    });
    expect(judge(okCase, request('/catalog.json'))).toMatchObject({
      verdict: 'pass',
      actual: '→ /catalog.json',
      computeUtilization: 21,
    });
    expect(judge(okCase, request('/catalog-running.json'))).toMatchObject({
      verdict: 'fail',
      expected: '→ /catalog.json',
      actual: '→ /catalog-running.json',
    });
    expect(judge(okCase, { FunctionOutput: '{"response":{"statusCode":401}}' })).toMatchObject({
      verdict: 'fail',
    });
    expect(judge(notFoundCase, { FunctionOutput: '{"response":{"statusCode":404}}' }).verdict).toBe('pass');
    expect(judge(notFoundCase, { FunctionOutput: '{"request":{"uri":"/"}}' }).verdict).toBe('fail');
    expect(judge(notFoundCase, { FunctionErrorMessage: 'boom' })).toMatchObject({
      verdict: 'fail',
      actual: 'the function failed: boom',
      computeUtilization: null,
    });
  });
});

describe('report', () => {
  const testCase: RequestCase = byName('the key in the query string');
  const report = (utilizations: number[]): VerifyReport => ({
    name: 'Catalog-viewer-request',
    kind: 'viewer-request',
    stage: 'LIVE',
    etag: 'E1',
    runtime: 'cloudfront-js-2.0',
    keyValueStores: ['arn:aws:cloudfront::123456789012:key-value-store/x'],
    cases: utilizations.map((cu, i) =>
      judge(
        { ...testCase, name: `case ${i}` },
        {
          FunctionOutput: `{"response":{"statusCode":${i === 0 ? 200 : 401}}}`,
          ComputeUtilization: String(cu),
        },
      ),
    ),
  });

  it('counts the verdicts and gives the median and maximum compute utilization', () => {
    expect(summarize(report([30, 10, 20, 50]))).toEqual({
      passed: 3,
      failed: 1,
      skipped: 0,
      maxUtilization: 50,
      medianUtilization: 30,
    });
  });

  it('names the failed cases in one line, the first five with what came back', () => {
    const many = { ...report([1, 2, 3, 4, 5, 6, 7]), name: 'X-viewer-request' };
    const failing = {
      ...many,
      cases: many.cases.map((c) => ({ ...c, verdict: 'fail' as const, expected: '401', actual: '200' })),
    };
    expect(failedCases(failing)).toBe(
      `7 of 7 cases failed against X-viewer-request (LIVE): ${[0, 1, 2, 3, 4]
        .map((i) => `"case ${i}" (GET /api/plans?api_key={valid}: expected 401, got 200)`)
        .join(', ')}, and 2 more`,
    );
  });

  it('prints one line per case with the placeholders, never a key, and warns over the throttling limit', () => {
    const text = formatReport(report([12, 75]));
    expect(text).toContain('FAIL  case 0  GET /api/plans?api_key={valid}  expected 401, got 200  cu 12');
    expect(text).toContain('PASS  case 1  GET /api/plans?api_key={valid}  401  cu 75');
    expect(text).toContain('1 passed, 1 failed, 0 skipped of 2 cases; compute utilization median 75, max 75');
    expect(text).toContain('warning: a case used 75% of the compute budget');
    expect(formatReport(report([12]))).not.toContain('warning');
  });
});

describe('the viewer-response function', () => {
  const planned = planResponseCases(REQUEST_CASES);
  const plannedNamed = (name: string) => {
    const found = planned.find((p) => p.testCase.name === name);
    if (!found || !('event' in found)) throw new Error(`not planned: ${name}`);
    return found.event;
  };

  it("gets each of the table's served cases, the origin's answer as S3 gives it, and never a key it was given", () => {
    // Served: what reaches the origin and comes back below 400; no problem answer, no missing page.
    expect(planned.map((p) => p.testCase.name)).toContain('the whole catalog');
    expect(planned.map((p) => p.testCase.name)).toContain('a matching If-None-Match');
    expect(planned.map((p) => p.testCase.name)).not.toContain('no key');
    expect(planned.map((p) => p.testCase.name)).not.toContain('a plan that is in no catalog');
    expect(planned.every((p) => 'event' in p && p.event.context.eventType === 'viewer-response')).toBe(true);
    const headers = (name: string) =>
      Object.fromEntries(
        Object.entries((plannedNamed(name).response as CloudFrontResponse).headers).map(([k, v]) => [
          k,
          v.value,
        ]),
      );
    expect(headers('the whole catalog')).toMatchObject({
      'content-type': CATALOG_HEADERS['content-type'],
      server: 'AmazonS3',
      'x-amz-request-id': expect.any(String),
      'access-control-allow-origin': '*',
    });
    expect(headers('the whole catalog in brotli')['content-encoding']).toBe('br');
    expect(headers('openapi.yaml')['content-type']).toBe(OPENAPI_HEADERS['content-type']);
    expect(headers('a plan page')['content-type']).toBe(PAGE_SERVED_HEADERS['content-type']);
    // The viewer's request, its key a forged one.
    const key = plannedNamed('the whole catalog').request.headers['x-api-key']?.value ?? '';
    expect(key).toMatch(KEY_PATTERN);
    expect(key).not.toBe(KEY_A);
  });

  const output = (headers: Record<string, string>) => ({
    FunctionOutput: JSON.stringify({
      response: {
        statusCode: 200,
        headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { value }])),
      },
    }),
    ComputeUtilization: '9',
  });
  const catalogCase = byName('the whole catalog');

  it('passes exactly the headers of the kind of answer, the stored encoding kept, with the store’s CORS origin', () => {
    const good = { ...CATALOG_HEADERS, etag: '"x"', 'access-control-allow-origin': 'https://a.example' };
    expect(judgeResponse(catalogCase, output(good), 'https://a.example')).toMatchObject({
      verdict: 'pass',
      computeUtilization: 9,
    });
    // Without a known origin, CORS is not judged.
    expect(judgeResponse(catalogCase, output(good), undefined).verdict).toBe('pass');
    const brotli = byName('the whole catalog in brotli');
    expect(
      judgeResponse(brotli, output({ ...CATALOG_HEADERS, 'content-encoding': 'br' }), null).verdict,
    ).toBe('pass');
  });

  it('fails a missing or wrong header, an S3 header left, and a CORS origin the store does not hold', () => {
    const { vary: _vary, ...withoutVary } = CATALOG_HEADERS;
    expect(judgeResponse(catalogCase, output(withoutVary), null)).toMatchObject({
      verdict: 'fail',
      actual: 'vary: expected "X-Api-Key, Accept-Encoding", got none',
    });
    expect(
      judgeResponse(catalogCase, output({ ...CATALOG_HEADERS, 'x-amz-request-id': 'r' }), null).actual,
    ).toBe("x-amz-request-id: the origin's, still there");
    expect(
      judgeResponse(catalogCase, output({ ...CATALOG_HEADERS, 'access-control-allow-origin': '*' }), null)
        .actual,
    ).toBe('access-control-allow-origin: expected none, got "*"');
    expect(judgeResponse(catalogCase, output(OPENAPI_HEADERS), null).verdict).toBe('fail');
    expect(judgeResponse(catalogCase, { FunctionErrorMessage: 'boom' }, null)).toMatchObject({
      verdict: 'fail',
      actual: 'the function failed: boom',
    });
  });
});
