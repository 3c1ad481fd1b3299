/**
 * The rows of `catalog check` come from the request-case table: which cases are black-box checkable, how a
 * case is derived for a deployment (its plan, its origin, its placeholders), and the order the rows run in.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { ANSWER_HEADERS, DISCIPLINES } from '../contract/index.ts';
import {
  forOrigin,
  forPlan,
  notBlackBox,
  PAGE_PLAN_ID,
  PARTNER_ORIGIN,
  REQUEST_CASES,
  type RequestCase,
} from '../gateway/cases.ts';
import {
  blackBoxCases,
  type CheckRow,
  type CheckSettings,
  checkSteps,
  compressedFetch,
  corsCause,
  judgeCase,
  judgeProbeFreshness,
  judgeProbeRead,
  learnPagePlan,
  newLearned,
  plannedRequests,
  prepareCase,
  probeRequest,
  withoutKeys,
} from './check-rows.ts';

const PLAN = 'b0936f8b-64e6-530d-babf-3537672b1f83';
const SETTINGS: CheckSettings = {
  baseUrl: 'https://catalog.example.com',
  key: 'tpc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  forged: 'tpc_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
  cors: null,
  maxAgeMs: 25 * 3_600_000,
  now: new Date('2026-11-24T12:00:00.000Z'),
};
const named = (name: string): RequestCase => {
  const found = REQUEST_CASES.find((c) => c.name === name);
  if (!found) throw new Error(`no case "${name}"`);
  return found;
};

describe('the black-box subset of the request-case table', () => {
  it("leaves out exactly the cases that need the test world (its other keys, a plan of the fixtures) and the canary's marked ones", () => {
    const left = REQUEST_CASES.filter((c) => notBlackBox(c) !== undefined);
    for (const c of left)
      expect(JSON.stringify(c), c.name).toMatch(
        /\{(other|expiring|expired|revoked|monitoring)\}|CBB9BAA8-EE0D-5A5D-8CC0-41D6D9C2FE99|x-catalog-canary/i,
      );
    for (const c of blackBoxCases())
      expect(JSON.stringify([c.target, c.headers]), c.name).not.toMatch(
        /\{(other|expiring|expired|revoked|monitoring)\}|x-catalog-canary/i,
      );
    expect(notBlackBox(named('an expired key'))).toBe("needs the test world's {expired} key");
    // The check marks every request itself (its own key in the marker): a case's marker would be a second one.
    expect(notBlackBox(named('no key, marked by the canary ({valid})'))).toMatch(/^marks its request/);
    expect(left.length).toBeGreaterThan(0);
    expect(blackBoxCases().length).toBeGreaterThan(REQUEST_CASES.length * 0.8);
  });

  it('derives every case for another plan, leaving no id of the fixtures behind', () => {
    for (const testCase of blackBoxCases()) {
      const derived = forPlan(testCase, PLAN);
      expect(JSON.stringify(derived).toLowerCase(), testCase.name).not.toContain(PAGE_PLAN_ID.slice(1, -1));
    }
    expect(forPlan(named('a plan page with an upper-case id'), PLAN).target).toBe(
      `/plans/${PLAN.toUpperCase()}`,
    );
    expect(forPlan(named('a percent-encoded id'), PLAN).target).toBe(`/plans/%62${PLAN.slice(1)}`);
    expect(forPlan(named('a UUID one character short'), PLAN).target).toBe(`/plans/${PLAN.slice(0, -1)}`);
    expect(forPlan(named('a plan page'), PLAN).rewrite).toBe(`/plans/${PLAN}.html`);
  });

  it('refuses to derive a target it does not know how to', () => {
    const odd = { ...named('a plan page'), target: `/plans/x${PAGE_PLAN_ID.slice(1)}` };
    expect(() => forPlan(odd, PLAN)).toThrow('case "a plan page": cannot derive');
  });

  it("puts the operator's origin where the table names its partner origin", () => {
    const derived = forOrigin(named('OPTIONS preflight with CORS'), 'https://app.example');
    expect(derived.cors).toBe('https://app.example');
    expect(JSON.stringify(derived)).not.toContain(PARTNER_ORIGIN);
    expect(derived.headersPresent?.['access-control-allow-origin']).toBe('https://app.example');
    expect(derived.headers).toContainEqual(['Origin', 'https://app.example']);
  });
});

describe('the steps', () => {
  it('run every black-box case once, the plain GETs that teach the bodies first', () => {
    const steps = checkSteps();
    const cases = steps.flatMap((s) => (s.kind === 'case' ? [s.testCase.name] : []));
    expect([...cases].sort()).toEqual(
      blackBoxCases()
        .map((c) => c.name)
        .sort(),
    );
    expect(cases.slice(0, 4 + DISCIPLINES.length)).toEqual([
      'the whole catalog',
      ...DISCIPLINES.map((discipline) => `${discipline} plans`),
      'openapi.yaml',
      'a plan page',
      'a plan that is in no catalog',
    ]);
    expect(steps[1]).toMatchObject({ kind: 'catalog' });
  });
});

describe('preparing a case for a deployment', () => {
  const learned = newLearned();
  learned.bodies.all = Buffer.from(
    JSON.stringify({
      generatedAt: '2026-11-24T11:00:00.000Z',
      plans: [{ id: PLAN, webUrl: `${SETTINGS.baseUrl}/plans/${PLAN}` }],
    }),
  );

  it('fills the key, the forged key, and what earlier answers taught; skips what they did not', () => {
    const forged = prepareCase(named('a conditional GET with a forged key'), SETTINGS, newLearned());
    expect(forged).toEqual({ skip: 'needs the ETag of all, which no earlier answer gave' });
    const taught = newLearned();
    judgeCase(
      named('the whole catalog'),
      { status: 200, headers: { etag: '"0123456789abcdef0123456789abcdef"' }, body: Buffer.from('{}') },
      SETTINGS,
      taught,
    );
    const prepared = prepareCase(named('a conditional GET with a forged key'), SETTINGS, taught);
    expect(prepared).toMatchObject({
      request: {
        method: 'GET',
        target: '/api/plans',
        headers: [
          ['X-Api-Key', SETTINGS.forged],
          ['If-None-Match', '"0123456789abcdef0123456789abcdef"'],
        ],
      },
    });
    expect(prepareCase(named('the key in the query string'), SETTINGS, taught)).toMatchObject({
      request: { target: `/api/plans?api_key=${SETTINGS.key}` },
    });
  });

  it('on a schedule (keyInUrl false) sends no request whose URL carries the key, and skips nothing else for it', () => {
    const scheduled = { ...SETTINGS, keyInUrl: false };
    const taught = newLearned();
    const inUrl = blackBoxCases().filter((testCase) => testCase.target.includes('{valid}'));
    expect(inUrl.map((testCase) => testCase.name)).toEqual(['the key in the query string']);
    expect(prepareCase(named('the key in the query string'), scheduled, taught)).toEqual({
      skip: 'not sent on a schedule: its URL would carry the key into the access logs',
    });
    for (const testCase of blackBoxCases()) {
      const prepared = prepareCase(testCase, scheduled, taught);
      if ('request' in prepared) expect(prepared.request.target).not.toContain(SETTINGS.key);
    }
  });

  it('checks pages with the first plan only when its webUrl is on this deployment', () => {
    learnPagePlan(SETTINGS, learned);
    expect(learned.pagePlan).toEqual({ id: PLAN });
    expect(prepareCase(named('a plan page'), SETTINGS, learned)).toMatchObject({
      request: { target: `/plans/${PLAN}` },
    });
    const elsewhere = newLearned();
    elsewhere.bodies.all = Buffer.from(
      JSON.stringify({ plans: [{ id: PLAN, webUrl: `https://www.example.com/plans/${PLAN}` }] }),
    );
    learnPagePlan(SETTINGS, elsewhere);
    expect(prepareCase(named('a plan page'), SETTINGS, elsewhere)).toEqual({
      skip: `no plan page to check: the first plan's webUrl https://www.example.com/plans/${PLAN} is not https://catalog.example.com/plans/<id> (pages on a website elsewhere, or a catalog built for another address)`,
    });
    // A page path that expects the not-found page still runs.
    expect(prepareCase(named('a plan that is in no catalog'), SETTINGS, elsewhere)).toHaveProperty('request');
  });

  it('skips the CORS cases unless told the origin, and runs them with it', () => {
    const preflight = named('OPTIONS preflight with CORS');
    expect(prepareCase(preflight, { ...SETTINGS, cors: undefined }, learned)).toEqual({
      skip: 'CORS not checked: give \u2039setting:corsOrigin\u203a (the origin the operator set, or off)',
    });
    expect(prepareCase(preflight, SETTINGS, learned)).toEqual({
      skip: 'needs a CORS origin; \u2039setting:corsOrigin\u203a says CORS is off',
    });
    expect(prepareCase(preflight, { ...SETTINGS, cors: 'https://app.example' }, learned)).toMatchObject({
      testCase: { cors: 'https://app.example' },
    });
  });

  it('fails an answer whose body repeats a key it was sent', () => {
    const echoed = {
      status: 404,
      headers: { ...ANSWER_HEADERS.problem },
      body: Buffer.from(`{"detail":"no page for ${SETTINGS.key}"}`),
    };
    expect(judgeCase(named('an index file at the root'), echoed, SETTINGS, newLearned())).toContain(
      'body: repeats a key that was sent',
    );
  });

  it('never leaves a key in a report', () => {
    const scrubbed = withoutKeys({ lines: [`echoed ${SETTINGS.key} and ${SETTINGS.forged}`] }, SETTINGS);
    expect(scrubbed).toEqual({ lines: ['echoed {valid} and {forged}'] });
  });
});

describe('the likely cause of failing CORS rows', () => {
  const failing = (...lines: string[]): CheckRow => ({
    name: 'a row',
    source: 'case',
    request: 'GET /',
    verdict: 'fail',
    lines,
  });
  const missing = 'access-control-allow-origin: expected "https://x.example", got none';
  const rows = [failing(missing), failing('vary: expected "Accept-Encoding", got none', missing)];

  it('is said when every row failing on CORS got the same, and no answer carried the origin given', () => {
    expect(corsCause('https://x.example', rows, { corsSeen: false })).toBe(
      'the deployment has no CORS origin set, while \u2039setting:corsOrigin\u203a says https://x.example (every one of the 2 rows failing on Access-Control-Allow-Origin got none): catalog cors show where its keys are says which is meant; a change takes about a minute to reach the edge',
    );
    const other = failing(
      'access-control-allow-origin: expected none (no CORS origin is set), got "https://a.example"',
    );
    expect(corsCause(null, [other, other], { corsSeen: false })).toMatch(
      /^the deployment's CORS origin is "https:\/\/a.example", while \u2039setting:corsOrigin\u203a says off \(/,
    );
  });

  it('is not said when some answer carried the origin, the failures differ, or CORS was not judged', () => {
    expect(corsCause('https://x.example', rows, { corsSeen: true })).toBeNull();
    const other = failing(
      'access-control-allow-origin: expected "https://x.example", got "https://a.example"',
    );
    expect(corsCause('https://x.example', [...rows, other], { corsSeen: false })).toBeNull();
    expect(corsCause(undefined, rows, { corsSeen: false })).toBeNull();
    expect(
      corsCause('https://x.example', [failing('vary: expected "Accept-Encoding", got none')], {
        corsSeen: false,
      }),
    ).toBeNull();
  });
});

/** A catalog's 200 in brotli, with the headers the table promises. */
const brotliCatalog = (body: Buffer, etag: string) => ({
  status: 200,
  headers: { ...ANSWER_HEADERS.catalog, 'content-encoding': 'br', etag },
  body: brotliCompressSync(body),
});

describe('what the check fetches: each request once, large bodies compressed where the row allows', () => {
  it('fetches in brotli only the catalog rows whose subject is not the encoding, as that variant', () => {
    const converted = blackBoxCases().filter((c) => compressedFetch(c) !== undefined);
    for (const c of converted) {
      expect(c.status, c.name).toBe(200);
      expect(c.encoding, c.name).toBeUndefined();
      expect(JSON.stringify(c.headers ?? []).toLowerCase(), c.name).not.toContain('accept-encoding');
      expect(JSON.stringify([c.headersPresent, c.headersAbsent]), c.name).not.toContain('content-encoding');
      expect(compressedFetch(c)).toMatchObject({ encoding: 'br' });
      expect(compressedFetch(c)?.headers?.at(-1)).toEqual(['Accept-Encoding', 'br']);
    }
    const names = converted.map((c) => c.name);
    expect(names).toContain('a differently-cased name is an unknown parameter');
    expect(names).toContain('a Range request gets the whole catalog');
    // The plain GETs teach the identity bytes; the rows about the encoding ask for their own.
    for (const kept of [
      'the whole catalog',
      ...DISCIPLINES.map((discipline) => `${discipline} plans`),
      'Accept-Encoding no Accept-Encoding',
      'Accept-Encoding identity',
      'Accept-Encoding gzip',
      'the whole catalog in brotli',
    ])
      expect(names, kept).not.toContain(kept);
    // A validator the row sends is the variant's: the same question about the object it now fetches.
    expect(compressedFetch(named('a Range with If-Range gets the whole catalog'))?.headers).toContainEqual([
      'If-Range',
      `{etag:${DISCIPLINES[0]}.br}`,
    ]);
  });

  it('plans one request per distinct request, and counts the rows that share one', () => {
    const off = plannedRequests(SETTINGS);
    const on = plannedRequests({ ...SETTINGS, cors: PARTNER_ORIGIN });
    const cases = (cors: boolean) => blackBoxCases().filter((c) => cors || c.cors === undefined).length;
    // Every case and the encodings row's six requests (three catalogs, two encodings each).
    expect(off.rows).toBe(cases(false) + 6);
    expect(on.rows).toBe(cases(true) + 6);
    expect([...off.uses.values()].reduce((a, b) => a + b)).toBe(off.rows);
    // Shared: a catalog's plain GET and "no Accept-Encoding"; the encodings row and the cases asking for the
    // same encoding; with an origin, each CORS case that repeats another's request.
    const shared = (plan: typeof off) =>
      [...plan.uses.entries()].flatMap(([template, uses]) =>
        uses > 1 ? [[JSON.parse(template), uses]] : [],
      );
    expect(shared(off)).toHaveLength(4);
    expect(on.uses.size).toBeLessThan(off.uses.size + (on.rows - off.rows));
  });

  it('judges a row fetched compressed against what its variant decoded to before, not against identity', () => {
    const learned = newLearned();
    const identity = Buffer.from('{"generatedAt":"2026-11-24T11:00:00.000Z","plans":[]}');
    const other = Buffer.from('{"generatedAt":"2026-11-24T11:00:00.000Z","plans":[{}]}');
    learned.bodies.all = identity;
    const testCase = compressedFetch(named('an empty query string')) as RequestCase;
    const answer = (body: Buffer) => brotliCatalog(body, '"0123456789abcdef0123456789abcdef"');
    // No variant seen yet: against identity.
    expect(judgeCase(testCase, answer(other), SETTINGS, learned, true)).toEqual([
      expect.stringMatching(/^body: decoded from br, is not the whole catalog/),
    ]);
    // The brotli variant served those same other bytes before (the encodings row says so): not this row's fault.
    learned.variants.set('all.br', createHash('sha256').update(other).digest('hex'));
    expect(judgeCase(testCase, answer(other), SETTINGS, learned, true)).toEqual([]);
    // Neither those bytes nor identity: this answer is wrong.
    expect(judgeCase(testCase, answer(Buffer.from('{}')), SETTINGS, learned, true)).toEqual([
      expect.stringMatching(/^body: decoded from br, is not the whole catalog/),
    ]);
  });
});

describe("the probe's judgement", () => {
  const catalog = (discipline: string) =>
    Buffer.from(
      `{"generatedAt":"2026-11-24T11:00:00.000Z","plans":[{"id":"${PLAN}","discipline":"${discipline}"}]}`,
    );
  const served = (body: Buffer, etag = '"11111111111111111111111111111111"') => brotliCatalog(body, etag);
  const notModified = {
    status: 304,
    headers: {
      'cache-control': 'public, max-age=300',
      vary: 'X-Api-Key, Accept-Encoding',
      etag: '"11111111111111111111111111111111"',
    },
    body: Buffer.alloc(0),
  };
  const [discipline] = DISCIPLINES;
  const seen = { etag: '"11111111111111111111111111111111"', generatedAt: '2026-11-24T11:00:00.000Z' };

  it('reads in brotli, conditional on the ETag the last probe saw', () => {
    expect(probeRequest(discipline, SETTINGS, {})).toEqual({
      method: 'GET',
      target: `/api/plans?discipline=${discipline}`,
      headers: [
        ['X-Api-Key', SETTINGS.key],
        ['Accept-Encoding', 'br'],
      ],
    });
    expect(probeRequest(discipline, SETTINGS, { [discipline]: seen }).headers.at(-1)).toEqual([
      'If-None-Match',
      seen.etag,
    ]);
  });

  it('passes a first read, keeping its ETag and generatedAt; a 304 keeps what it saw', () => {
    expect(judgeProbeRead(discipline, served(catalog(discipline)), SETTINGS, undefined)).toEqual({
      lines: [],
      seen,
      changed: false,
    });
    expect(judgeProbeRead(discipline, notModified, SETTINGS, seen)).toEqual({
      lines: [],
      seen,
      changed: false,
    });
  });

  it('says the catalog changed when a 200 names another ETag', () => {
    const other = '"22222222222222222222222222222222"';
    expect(judgeProbeRead(discipline, served(catalog(discipline), other), SETTINGS, seen)).toMatchObject({
      lines: [],
      seen: { etag: other },
      changed: true,
    });
  });

  it('fails a 200 that repeats the ETag it was asked about, a lost header, another discipline, a refusal', () => {
    expect(judgeProbeRead(discipline, served(catalog(discipline)), SETTINGS, seen).lines).toEqual([
      `status: expected 304 (If-None-Match named the current ETag ${seen.etag}), got 200`,
    ]);
    const { vary: _vary, ...withoutVary } = served(catalog(discipline)).headers;
    expect(
      judgeProbeRead(
        discipline,
        { ...served(catalog(discipline)), headers: withoutVary },
        SETTINGS,
        undefined,
      ).lines,
    ).toEqual(['vary: expected "X-Api-Key, Accept-Encoding", got none']);
    expect(judgeProbeRead(discipline, served(catalog('other')), SETTINGS, undefined).lines).toEqual([
      `plans[0]: expected discipline ${discipline}, got "other"`,
    ]);
    const refused = judgeProbeRead(
      discipline,
      { status: 401, headers: {}, body: Buffer.from('{}') },
      SETTINGS,
      seen,
    );
    expect(refused).toEqual({ lines: ['status: expected 200, got 401'], seen, changed: false });
  });

  it('warns on a catalog older than maxAge, from what it read or what a 304 confirmed', () => {
    expect(judgeProbeFreshness({ [discipline]: seen }, SETTINGS)).toEqual({ verdict: 'pass', lines: [] });
    expect(judgeProbeFreshness({ [discipline]: seen }, { ...SETTINGS, maxAgeMs: 60_000 })).toMatchObject({
      verdict: 'warn',
      lines: [expect.stringMatching(/^generatedAt 2026-11-24T11:00:00.000Z is 1h 0m old, more than /)],
    });
    expect(judgeProbeFreshness({}, SETTINGS)).toMatchObject({ verdict: 'skip' });
  });
});

describe('the openapi.yaml row', () => {
  const row = checkSteps().flatMap((step) =>
    step.kind === 'catalog' && step.row.needs.includes('openapi') ? [step.row] : [],
  )[0];
  const judged = (text: string) => {
    const learned = newLearned();
    learned.bodies.openapi = Buffer.from(text);
    return row?.judge(SETTINGS, learned, []);
  };

  it('passes the document the repository ships; fails one that is no YAML, not 3.1, or has other operations, naming each', () => {
    expect(row?.name).toBe("openapi.yaml: OpenAPI 3.1 with exactly the contract's operations");
    expect(judged(OPENAPI_TEMPLATE)).toEqual({ verdict: 'pass', lines: [] });
    expect(judged('openapi: [3.1.0')).toMatchObject({
      verdict: 'fail',
      lines: [expect.stringMatching(/^not YAML: /)],
    });
    expect(judged(OPENAPI_TEMPLATE.replace('openapi: 3.1.0', 'openapi: 3.0.3'))).toEqual({
      verdict: 'fail',
      lines: ['openapi: expected 3.1.x, got "3.0.3"'],
    });
    const changed = judged(OPENAPI_TEMPLATE.replace('\n  /api/plans:\n', '\n  /api/plan:\n'));
    expect(changed).toEqual({
      verdict: 'fail',
      lines: ['paths: /api/plans is missing', "paths: /api/plan is not the contract's"],
    });
    // The same text judged again (the verdict is kept for it), then the shipped one: judged anew each time.
    expect(judged(OPENAPI_TEMPLATE.replace('\n  /api/plans:\n', '\n  /api/plan:\n'))).toEqual(changed);
    expect(judged(OPENAPI_TEMPLATE)).toEqual({ verdict: 'pass', lines: [] });
  });
});
