import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Dispatcher, RetryHandler } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, SourceError, settingRef } from '../../contract/errors.ts';
import { runCatalog } from '../../testing/cli.ts';
import { planCountsText } from '../../testing/counts.ts';
import { refusedPort } from '../../testing/postgres.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { Catalog } from '../model.ts';
import { contentTypeProblem, HttpSource, type HttpSourceOptions, parseRows } from './http.ts';

const TOKEN = 'tok_9f8e7d6c5b4a3928';

/**
 * undici's RetryAgent as is, but for its waits: it records the policy the source gives it, then waits `first`
 * and at most `longest` ms instead, so the failure cases take milliseconds.
 */
const retryWaits = vi.hoisted(() => ({
  given: [] as RetryHandler.RetryOptions[],
  first: 10,
  longest: 2_000,
}));
vi.mock('undici', async (importOriginal) => {
  const undici = await importOriginal<typeof import('undici')>();
  class RetryAgent extends undici.RetryAgent {
    constructor(dispatcher: Dispatcher, options: RetryHandler.RetryOptions) {
      retryWaits.given.push(options);
      super(dispatcher, { ...options, minTimeout: retryWaits.first, maxTimeout: retryWaits.longest });
    }
  }
  return { ...undici, RetryAgent };
});

const ROW = {
  id: '5f0c6a9e-3b1d-4c2e-9a7f-1d2e3f4a5b6c',
  title: 'Tempo Builder',
  summary: null,
  cover_url: null,
  level: 'intermediate',
  discipline: 'running',
  weeks_count: 6,
  days_per_week: 4,
  est_minutes_per_session: '45',
  published: true,
  approved: true,
};

type Handler = (request: IncomingMessage, response: ServerResponse, attempt: number) => void;

/** A real HTTP server on 127.0.0.1: each path has a handler; every request is recorded. */
const routes = new Map<string, Handler>();
const seen: { path: string; authorization: string | undefined; accept: string | undefined }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    seen.push({ path, authorization: request.headers.authorization, accept: request.headers.accept });
    const handler = routes.get(path.split('?')[0] ?? path);
    const attempt = seen.filter((s) => s.path === path).length;
    if (handler) handler(request, response, attempt);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
  routes.clear();
  Object.assign(retryWaits, { given: [], first: 10, longest: 2_000 });
});

const json = (response: ServerResponse, status: number, body: unknown, type = 'application/json') => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) }).end(text);
};

/** Short timeouts, so the failure cases take milliseconds. */
const FAST: HttpSourceOptions = {
  sourceToken: TOKEN,
  sourceConnectTimeout: 1_000,
  sourceHeadersTimeout: 1_000,
  sourceBodyTimeout: 1_000,
  sourceRetries: 2,
};

/** Reads a path of the test server, or any absolute URL. */
async function read(path: string, options: HttpSourceOptions = FAST): Promise<unknown[]> {
  const rows: unknown[] = [];
  const url = path.startsWith('/') ? `${base}${path}` : path;
  for await (const batch of new HttpSource(url, options).batches()) rows.push(...batch);
  return rows;
}

/** The SourceError a read fails with; its message never holds the token. */
async function failure(path: string, options: HttpSourceOptions = FAST): Promise<SourceError> {
  const error = await read(path, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceError);
  const message = (error as Error).message;
  expect(message).not.toContain(TOKEN);
  expect(message.split('\n')).toHaveLength(1);
  return error as SourceError;
}

describe('an HTTP source', () => {
  it('reads a JSON array of rows, sending the token as a bearer token', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, [ROW]));
    expect(await read('/plans')).toEqual([ROW]);
    expect(seen).toEqual([{ path: '/plans', authorization: `Bearer ${TOKEN}`, accept: 'application/json' }]);
  });

  it('sends no Authorization header without a token', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, []));
    expect(await read('/plans', { ...FAST, sourceToken: undefined })).toEqual([]);
    expect(seen[0]?.authorization).toBeUndefined();
  });

  it('accepts a +json content type with parameters', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, [ROW], 'application/vnd.plans+json; charset=utf-8'));
    expect(await read('/plans')).toEqual([ROW]);
  });

  it('retries a 500 and succeeds', async () => {
    routes.set('/plans', (_req, res, attempt) =>
      attempt === 1 ? json(res, 500, { error: 'boom' }) : json(res, 200, [ROW]),
    );
    expect(await read('/plans')).toEqual([ROW]);
    expect(seen).toHaveLength(2);
  });

  it('gives undici its retry policy: 500 ms, then twice as long each time, at most 30 s', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, [ROW]));
    await read('/plans');
    expect(retryWaits.given).toEqual([
      expect.objectContaining({ maxRetries: 2, minTimeout: 500, maxTimeout: 30_000, timeoutFactor: 2 }),
    ]);
  });

  it('backs off exponentially between attempts, up to the longest wait', async () => {
    const arrivals: number[] = [];
    routes.set('/plans', (_req, res) => {
      arrivals.push(performance.now());
      res.writeHead(502).end();
    });
    Object.assign(retryWaits, { first: 100, longest: 200 });
    await failure('/plans', { ...FAST, sourceRetries: 4 });
    const waits = arrivals.slice(1).map((at, i) => at - (arrivals[i] ?? at));
    expect(waits).toHaveLength(4);
    // 100, 200, then capped at 200 (a timer may fire a millisecond early).
    for (const [i, least] of [100, 200, 200, 200].entries())
      expect(waits[i]).toBeGreaterThanOrEqual(least - 5);
    // Without the cap the last wait would be 800 ms.
    expect(waits[3]).toBeLessThan(800);
  });

  it.each([
    ['in seconds', () => '1'],
    ['as an HTTP date', () => new Date(Date.now() + 2_000).toUTCString()],
  ])('waits as long as a 429 Retry-After %s asks before retrying', async (_how, retryAfter) => {
    routes.set('/plans', (_req, res, attempt) => {
      if (attempt === 1) res.writeHead(429, { 'retry-after': retryAfter() }).end();
      else json(res, 200, [ROW]);
    });
    const started = performance.now();
    expect(await read('/plans')).toEqual([ROW]);
    // The backoff alone would be 10 ms; the date, to the second, is 1 to 2 s ahead.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
  });

  it('backs off as usual after a Retry-After it cannot read', async () => {
    routes.set('/plans', (_req, res, attempt) => {
      if (attempt === 1) res.writeHead(503, { 'retry-after': 'soon-ish' }).end();
      else json(res, 200, [ROW]);
    });
    expect(await read('/plans')).toEqual([ROW]);
    expect(seen).toHaveLength(2);
  });

  it('waits no longer than the longest wait when Retry-After asks for more, and quotes it', async () => {
    routes.set('/plans', (_req, res) => res.writeHead(429, { 'retry-after': '120' }).end());
    retryWaits.longest = 100;
    const error = await failure('/plans');
    expect(error.message).toBe(
      `source ${base}/plans: answered 429 Too Many Requests after 3 attempts (Retry-After: 120; a build waits at most 30s between attempts)`,
    );
    expect(seen).toHaveLength(3);
  });

  it('gives up after the configured retries', async () => {
    routes.set('/plans', (_req, res) => res.writeHead(503).end('down'));
    const error = await failure('/plans');
    expect(error.message).toBe(`source ${base}/plans: answered 503 Service Unavailable after 3 attempts`);
    expect(seen).toHaveLength(3);
  });

  it('fails on 401 without retrying, without showing the token', async () => {
    routes.set('/plans', (_req, res) => res.writeHead(401, { 'www-authenticate': 'Bearer' }).end());
    const error = await failure('/plans');
    expect(error.message).toBe(
      `source ${base}/plans: refused the credentials (401 Unauthorized; check ${settingRef('sourceToken')})`,
    );
    expect(seen).toHaveLength(1);
  });

  it('says so when a 401 answers a request that had no token', async () => {
    routes.set('/plans', (_req, res) => res.writeHead(401).end());
    const error = await failure('/plans', { ...FAST, sourceToken: undefined });
    expect(error.message).toContain(
      `answered 401 Unauthorized (no token was sent: set ${settingRef('sourceToken')})`,
    );
  });

  it('fails on 404 without retrying', async () => {
    const error = await failure('/missing');
    expect(error.message).toBe(`source ${base}/missing: answered 404 Not Found`);
    expect(seen).toHaveLength(1);
  });

  it.each([400, 403, 501, 505])('does not retry status %i', async (status) => {
    routes.set('/plans', (_req, res) => res.writeHead(status).end());
    const error = await failure('/plans');
    expect(error.message).toContain(`${status} `);
    expect(error.message).not.toContain('attempts');
    expect(seen).toHaveLength(1);
  });

  it('does not follow a redirect', async () => {
    routes.set('/plans', (_req, res) =>
      res.writeHead(302, { location: 'https://elsewhere.example/plans?token=abcd1234' }).end(),
    );
    const error = await failure('/plans');
    expect(error.message).toContain(
      'answered 302 Found to https://elsewhere.example/plans?token=*** (redirects are not followed',
    );
    expect(seen).toHaveLength(1);
  });

  it('fails when the body stalls past the body timeout', async () => {
    routes.set('/plans', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"id":');
      // …and nothing more.
    });
    const started = performance.now();
    const error = await failure('/plans', { ...FAST, sourceBodyTimeout: 200 });
    expect(error.message).toBe(`source ${base}/plans: stopped sending the body for 200 ms (body timeout)`);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(seen).toHaveLength(1);
  });

  it('fails when no headers arrive within the headers timeout', async () => {
    routes.set('/plans', () => {
      // Never answers.
    });
    const error = await failure('/plans', { ...FAST, sourceHeadersTimeout: 200 });
    expect(error.message).toBe(`source ${base}/plans: sent no response headers within 200 ms`);
    expect(seen).toHaveLength(1);
  });

  it('refuses a body whose Content-Length passes the limit, without reading it', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, [{ ...ROW, summary: 'x'.repeat(5_000) }]));
    const error = await failure('/plans', { ...FAST, sourceMaxBytes: 1024 });
    expect(error.message).toMatch(
      new RegExp(
        `answered a body larger than the limit of 1KiB \\(declares \\d+ bytes; raise ${settingRef('sourceMaxBytes')}\\)$`,
      ),
    );
    expect(seen).toHaveLength(1);
  });

  it('refuses a streamed body as soon as it passes the limit', async () => {
    let written = 0;
    routes.set('/plans', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const timer = setInterval(() => {
        if (res.destroyed || written > 1_000_000) {
          clearInterval(timer);
          res.end(']');
          return;
        }
        written += 10_000;
        res.write(`${JSON.stringify(ROW)},`.repeat(40).slice(0, 10_000));
      }, 5);
    });
    const error = await failure('/plans', { ...FAST, sourceMaxBytes: 64 * 1024 });
    expect(error.message).toContain(
      `answered a body larger than the limit of 64KiB (sent more; raise ${settingRef('sourceMaxBytes')})`,
    );
    expect(written).toBeLessThan(1_000_000);
    expect(seen).toHaveLength(1);
  });

  it('resumes a body the network cuts short with a Range request', async () => {
    const body = JSON.stringify([ROW, ROW]);
    const half = Math.floor(body.length / 2);
    const asked: (string | undefined)[] = [];
    routes.set('/plans', (req, res, attempt) => {
      if (attempt === 1) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': body.length,
          etag: '"v1"',
        });
        res.write(body.slice(0, half), () => res.socket?.destroy());
        return;
      }
      asked.push(req.headers.range, req.headers['if-match']);
      res
        .writeHead(206, {
          'content-type': 'application/json',
          'content-range': `bytes ${half}-${body.length - 1}/${body.length}`,
          'content-length': body.length - half,
          etag: '"v1"',
        })
        .end(body.slice(half));
    });
    expect(await read('/plans')).toEqual([ROW, ROW]);
    expect(asked).toEqual([`bytes=${half}-${body.length - 1}`, '"v1"']);
  });

  it('fails when the network cuts a body short and the server cannot resume it', async () => {
    routes.set('/plans', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1_000 });
      res.write(`[${' '.repeat(99)}`, () => res.socket?.destroy());
    });
    const error = await failure('/plans');
    expect(error.message).toBe(
      `source ${base}/plans: closed the connection before the body was complete and another attempt could not resume it (answered 200 OK: server does not support the range header and the payload was partially consumed)`,
    );
    expect(seen).toHaveLength(2);
  });

  it('refuses malformed JSON', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, '[{"id": "x",'));
    const error = await failure('/plans');
    expect(error.message).toMatch(
      new RegExp(`^source ${base}/plans: answered a body that is not valid JSON \\(`),
    );
  });

  it('refuses JSON that is not an array', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, { plans: [ROW] }));
    const error = await failure('/plans');
    expect(error.message).toBe(`source ${base}/plans: must answer a JSON array of rows (got an object)`);
  });

  it('refuses a content type that is not JSON', async () => {
    routes.set('/plans', (_req, res) =>
      json(res, 200, '<html>maintenance</html>', 'text/html; charset=utf-8'),
    );
    const error = await failure('/plans');
    expect(error.message).toBe(
      `source ${base}/plans: answered "text/html", not JSON (expected Content-Type application/json)`,
    );
  });

  it('retries a refused connection, then fails', async () => {
    const port = await refusedPort();
    const error = await failure(`http://127.0.0.1:${port}/plans`);
    expect(error.message).toBe(
      `source http://127.0.0.1:${port}/plans: cannot connect (connection refused after 3 attempts)`,
    );
  });

  it('names the source with secret query values redacted', async () => {
    const error = await failure('/missing?access_token=querysecret123&page=2');
    expect(error.message).toBe(`source ${base}/missing?access_token=***&page=2: answered 404 Not Found`);
  });
});

describe('an HTTP source refuses before connecting', () => {
  it('a URL with credentials, without showing them', () => {
    expect(() => new HttpSource('https://user:pa55word@example.com/plans')).toThrow(ConfigError);
    expect(() => new HttpSource('https://user:pa55word@example.com/plans')).toThrow(
      `source https://user:***@example.com/plans: credentials in the URL are not sent; give a bearer token in ${settingRef('sourceToken')}`,
    );
  });

  it.each([
    [`Bearer ${TOKEN}`, 'give the token alone, without "Bearer "'],
    [`${TOKEN}\r\nX-Injected: 1`, 'must be printable ASCII without spaces'],
  ])('a token that cannot be sent (%#), without showing it', (token, reason) => {
    let message = '';
    try {
      new HttpSource(`${base}/plans`, { sourceToken: token });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`${settingRef('sourceToken')}: ${reason}`);
    expect(message).not.toContain(TOKEN);
  });
});

describe('body checks', () => {
  it.each([
    ['application/json', null],
    ['Application/JSON; charset=utf-8', null],
    ['application/problem+json', null],
    ['text/json', 'answered "text/json", not JSON'],
    ['application/jsonp', 'answered "application/jsonp", not JSON'],
    [undefined, 'answered without a Content-Type'],
  ])('content type %s', (type, problem) => {
    const found = contentTypeProblem(type);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });

  it('parses an array, allowing a byte order mark', () => {
    expect(parseRows('\ufeff[1]')).toEqual([1]);
    expect(parseRows('null')).toBe('must answer a JSON array of rows (got null)');
    expect(parseRows('"rows"')).toBe('must answer a JSON array of rows (got a string)');
  });
});

describe('catalog build --source http://…', () => {
  const scratch = useScratchDir();

  it('builds from the endpoint with the token from CATALOG_SOURCE_TOKEN', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, [ROW]));
    const result = await runCatalog(['build', '--out', scratch.dir, '--source', `${base}/plans`], {
      env: { CATALOG_SOURCE_TOKEN: TOKEN },
    });
    expect(result.stderr).toContain(`built 1 plans (${planCountsText({ running: 1 })}) from 1 rows`);
    expect(result.code).toBe(0);
    expect(seen.map((s) => s.authorization)).toEqual([`Bearer ${TOKEN}`]);
    const catalog = Catalog.parse(JSON.parse(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')));
    expect(catalog.plans[0]?.estMinutesPerSession).toBe(45);
  });

  it('fails with one line, writes nothing and never prints the token', async () => {
    routes.set('/plans', (_req, res) => res.writeHead(401).end());
    const result = await runCatalog(
      ['build', '--out', scratch.dir, '--source', `${base}/plans`, '--source-retries', '0'],
      {
        env: { CATALOG_SOURCE_TOKEN: TOKEN },
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `catalog: source ${base}/plans: refused the credentials (401 Unauthorized; check CATALOG_SOURCE_TOKEN)\n`,
    );
    expect(await readdir(scratch.dir)).toEqual([]);
  });

  it('takes the limits from flags and the environment', async () => {
    routes.set('/plans', (_req, res) => json(res, 200, [ROW, ROW, ROW]));
    const result = await runCatalog(['build', '--out', scratch.dir, '--source', `${base}/plans`], {
      env: { CATALOG_SOURCE_MAX_BYTES: '100B' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('answered a body larger than the limit of 100B');
  });

  it.each([
    [['--source-retries', '11'], '--source-retries "11": must be a whole number from 0 to 10'],
    [
      ['--source-body-timeout', '5'],
      '--source-body-timeout "5": must be a number and a unit ms, s, m, h or d',
    ],
    [['--source-max-bytes', '1GiB'], '--source-max-bytes "1GiB": must be at most 500MiB'],
    [['--source-relation', 'plans;drop'], '--source-relation "plans;drop": must be a table or view name'],
  ])('refuses %j naming the flag and the value', async (args, message) => {
    const result = await runCatalog(['build', '--out', scratch.dir, ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`catalog: ${message}`);
  });

  it('lists the source settings and the token variable in --help', async () => {
    const result = await runCatalog(['build', '--help']);
    for (const text of [
      '--source-relation',
      '--source-retries',
      'CATALOG_SOURCE_MAX_BYTES',
      'CATALOG_SOURCE_TOKEN',
    ])
      expect(result.stdout).toContain(text);
    expect(result.stdout).not.toContain('--source-token');
  });

  it('names the environment variable of a bad setting', async () => {
    const result = await runCatalog(['build', '--out', scratch.dir], {
      env: { CATALOG_SOURCE_CONNECT_TIMEOUT: '10 s' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'catalog: CATALOG_SOURCE_CONNECT_TIMEOUT "10 s": must be a number and a unit',
    );
  });
});
