/**
 * Judges one answer against its case (cases.ts) and the rules every answer obeys (docs/decisions.md#gateway,
 * #plan-pages), for the table's runs and `catalog check` alike. What a run knows of its world comes in as
 * {@link Known}; a rule whose fact is unknown is not judged. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  ANSWER_HEADERS,
  CATALOGS,
  CONTACT_PLACEHOLDER,
  GENERATED_HEADERS,
  HOME_PAGE,
  PAGE_PATH_PREFIX,
  PAGE_SECURITY_HEADERS,
  PATHS,
  PROBLEMS,
  type ProblemType,
  perDiscipline,
  problemDocument,
} from '../contract/index.ts';
import type { ExpectedBody, OriginObjectName, RequestCase } from './cases.ts';

/** An answer as a client sees it: header names lowercase, repeated headers joined with ", ". */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** What viewer-request recorded for the request (null: nothing), where the engine shows it. */
  readonly logData?: string | null;
}

/** The bodies a case may name that come from the origin, as served before any `Content-Encoding`. */
export type KnownBody = Exclude<ExpectedBody, 'empty' | 'home' | keyof typeof PROBLEMS>;

/** The stored variant an answer is served from: none (the object itself), br or gzip. */
export type Encoding = 'br' | 'gzip' | undefined;

/**
 * What the judge knows about the world an answer comes from: each object's decoded body, and its `ETag` and
 * `Last-Modified` in an encoding (what is not given is not compared); texts no body may contain (the keys
 * sent); the CORS origin (`null`: none, so no `Access-Control-*` header at all; `undefined`: not judged).
 */
export interface Known {
  readonly bodies: Readonly<Partial<Record<KnownBody, Buffer>>>;
  etag(object: OriginObjectName, encoding: Encoding): string | undefined;
  modified(object: OriginObjectName, encoding: Encoding): string | undefined;
  readonly secrets: readonly string[];
  readonly cors: string | null | undefined;
}

/** The key of an object's stored variant, as `{etag:…}` names it: `all`, `all.br`, `all.gz`. */
export function variantKey(object: OriginObjectName, encoding: Encoding): string {
  return encoding === undefined ? object : `${object}.${encoding === 'gzip' ? 'gz' : 'br'}`;
}

/** The largest body read or decoded (64 MiB): a catalog of 30,000 plans is about 15 MB. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** The body before its `Content-Encoding`; throws when it cannot be decoded or is over {@link MAX_BODY_BYTES}. */
export function decodeBody(answer: {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}): Buffer {
  const encoding = answer.headers['content-encoding'];
  const decode = encoding === 'br' ? brotliDecompressSync : encoding === 'gzip' ? gunzipSync : undefined;
  try {
    return decode ? decode(answer.body, { maxOutputLength: MAX_BODY_BYTES }) : answer.body;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_BUFFER_TOO_LARGE') throw error;
    throw new Error(`it decodes to more than ${MAX_BODY_BYTES / 1024 ** 2} MiB, far more than any catalog`);
  }
}

/** A header value as a problem line shows it: quoted, or `none`. */
export function shown(value: string | undefined): string {
  if (value === undefined) return 'none';
  return JSON.stringify(value.length > 160 ? `${value.slice(0, 157)}...` : value);
}

/** Where two bodies first differ, as a problem line can say it (sizes and a few characters around). */
export function describeDifference(got: Buffer, expected: Buffer): string {
  let at = 0;
  const length = Math.min(got.length, expected.length);
  while (at < length && got[at] === expected[at]) at += 1;
  // A few characters either side, control characters escaped so the line stays one line.
  const around = (body: Buffer) =>
    `…${body
      .subarray(Math.max(0, at - 20), at + 40)
      .toString('utf8')
      .replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}…`;
  return `${got.length} bytes against ${expected.length}, first difference at byte ${at}: ${around(got)} where ${around(expected)} was expected`;
}

/**
 * Whether `sent` is the problem document of `problem`, field for field; where its detail names the contact
 * address, any address but the placeholder itself (a function deployed without its address filled in fails).
 */
function isProblemDocument(sent: unknown, problem: ProblemType): boolean {
  const expected = JSON.parse(problemDocument(problem)) as Record<string, unknown>;
  if (!problem.detail.includes(CONTACT_PLACEHOLDER)) return isDeepStrictEqual(sent, expected);
  if (typeof sent !== 'object' || sent === null) return false;
  const { detail, ...rest } = sent as Record<string, unknown>;
  const { detail: _template, ...others } = expected;
  const [before = '', after = ''] = problem.detail.split(CONTACT_PLACEHOLDER);
  return (
    isDeepStrictEqual(rest, others) &&
    typeof detail === 'string' &&
    detail.startsWith(before) &&
    detail.endsWith(after) &&
    /^\S+$/.test(detail.slice(before.length, detail.length - after.length)) &&
    !detail.includes(CONTACT_PLACEHOLDER)
  );
}

/** The body `read` gives, as JSON; undefined when it cannot be read or is not JSON. */
function jsonOf(read: () => Buffer): unknown {
  try {
    return JSON.parse(read().toString('utf8'));
  } catch {
    return undefined;
  }
}

const BODY_NAMES: Readonly<Record<KnownBody, string>> = {
  all: 'the whole catalog',
  ...perDiscipline((discipline) => `the ${discipline} catalog`),
  openapi: 'openapi.yaml',
  page: "the plan's page",
  notFoundPage: 'the not-found page',
};

/**
 * Every way `answer` departs from `testCase` and the rules every answer obeys, one line each (`vary: expected
 * "X-Api-Key, Accept-Encoding", got none`); empty when it conforms. A wrong status is the only line: the
 * rest would describe another answer.
 */
export function judgeAnswer(testCase: RequestCase, answer: Answer, known: Known): string[] {
  const { headers } = answer;
  if (answer.status !== testCase.status) {
    // A problem document's `type` says what the wrong status was.
    const type = (jsonOf(() => decodeBody(answer)) as { type?: unknown } | null | undefined)?.type;
    const what = typeof type === 'string' ? ` (${type})` : '';
    return [`status: expected ${testCase.status}, got ${answer.status}${what}`];
  }
  const problems: string[] = [];
  const expect = (name: string, expected: string | undefined) => {
    const got = headers[name];
    if (got !== expected) problems.push(`${name}: expected ${shown(expected)}, got ${shown(got)}`);
  };
  const expectMatch = (name: string, pattern: RegExp, what: string) => {
    const got = headers[name];
    if (got === undefined || !pattern.test(got))
      problems.push(`${name}: expected ${what}, got ${shown(got)}`);
  };
  for (const [name, value] of Object.entries(testCase.headersPresent ?? {})) expect(name, value);
  for (const name of testCase.headersAbsent ?? []) expect(name, undefined);

  let body: Buffer | undefined;
  try {
    body = decodeBody(answer);
  } catch (error) {
    problems.push(`body: cannot be decoded as ${headers['content-encoding']} (${(error as Error).message})`);
  }
  if (body !== undefined) {
    const expected = testCase.body;
    if (expected === 'empty') {
      if (body.length !== 0) problems.push(`body: expected none, got ${body.length} bytes`);
    } else if (expected === 'home') {
      const page = Buffer.from(HOME_PAGE);
      if (!body.equals(page)) problems.push(`body: is not the home page (${describeDifference(body, page)})`);
    } else if (expected in BODY_NAMES) {
      const known_ = known.bodies[expected as KnownBody];
      if (known_ !== undefined && !body.equals(known_)) {
        const encoding = headers['content-encoding'];
        problems.push(
          `body: ${encoding ? `decoded from ${encoding}, ` : ''}is not ${BODY_NAMES[expected as KnownBody]} (${describeDifference(body, known_)})`,
        );
      }
    } else {
      const problem = PROBLEMS[expected as keyof typeof PROBLEMS];
      const sent = body;
      if (
        !isProblemDocument(
          jsonOf(() => sent),
          problem,
        )
      )
        problems.push(
          `body: expected the problem document ${problemDocument(problem)}${problem.detail.includes(CONTACT_PLACEHOLDER) ? ` (${CONTACT_PLACEHOLDER} filled in)` : ''}, got ${shown(body.toString('utf8'))}`,
        );
    }
    // Searched in the bytes: a catalog's text would be twice its size in memory.
    const sent = body;
    if (known.secrets.some((secret) => secret !== '' && sent.includes(secret)))
      problems.push('body: repeats a key that was sent');
  }

  // Rules for every answer. CloudFront adds its own `X-Amz-Cf-*` headers and `Server: CloudFront`; what must
  // never reach a client is what S3 sends.
  for (const name of Object.keys(headers)) {
    if (name.startsWith('x-amz-') && !name.startsWith('x-amz-cf-'))
      problems.push(`${name}: expected none (an origin header), got ${shown(headers[name])}`);
    if (known.cors === null && name.startsWith('access-control-'))
      problems.push(`${name}: expected none (no CORS origin is set), got ${shown(headers[name])}`);
  }
  if (headers.server === 'AmazonS3') problems.push('server: expected no "AmazonS3", got "AmazonS3"');
  // CloudFront's error pages (the not-found page, the 500 problem) come from its custom error response, where no
  // function runs: they never carry the CORS origin. Every answer a function shapes does.
  const errorPage = (testCase.rewrite !== undefined && testCase.status === 404) || testCase.status === 500;
  if (typeof known.cors === 'string' && testCase.status !== 304)
    expect('access-control-allow-origin', errorPage ? undefined : known.cors);

  // The object served: a 304 or a HEAD names it, a 200 has it as its body (the home page is no object).
  const named = testCase.status === 304 || testCase.body === 'empty' ? testCase.object : testCase.body;
  const object = (named === 'home' ? undefined : named) as OriginObjectName | undefined;
  // A page, found or not, carries the pages' security headers (the not-found page: CloudFront's own answer).
  const isPage = testCase.rewrite !== undefined;
  if (isPage && testCase.status !== 304)
    for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) expect(name, value);
  // The home page, found, carries its headers exactly (the function sets them all, CSP included).
  const isHome = testCase.status === 200 && testCase.target.split('?')[0] === PATHS.home;
  if (isHome) for (const [name, value] of Object.entries(ANSWER_HEADERS.home)) expect(name, value);
  // The API's answers carry no CSP. Under /plans/ the pages' response headers policy may add one to what the
  // function generates too (AWS does not say whether a policy applies there): either is allowed.
  if (!isPage && !isHome && !testCase.target.startsWith(PAGE_PATH_PREFIX))
    expect('content-security-policy', undefined);
  const expectAll = (kind: Readonly<Record<string, string>>, names = Object.keys(kind)) => {
    for (const name of names) expect(name, kind[name]);
  };
  if (testCase.status === 404 && isPage) expectAll(ANSWER_HEADERS.notFoundPage);
  else if (testCase.status >= 400) expectAll(ANSWER_HEADERS.problem);
  // Every 401 carries the challenge; no other answer does.
  expect('www-authenticate', testCase.status === 401 ? GENERATED_HEADERS.wwwAuthenticate : undefined);
  // What is served from the origin: the whole object, validators, and a Vary that names Accept-Encoding.
  const served = testCase.status === 200 || testCase.status === 304;
  const catalogs: readonly (string | undefined)[] = CATALOGS;
  const kind = ANSWER_HEADERS[object === 'openapi' || object === 'page' ? object : 'catalog'];
  // A 304 describes no body: its validators and caching headers only.
  if (served && object !== undefined) expectAll(kind, ['vary', 'cache-control']);
  if (served && catalogs.includes(object))
    expectMatch('etag', /^(W\/)?"[0-9a-f]{32}"$/, 'a strong or weak MD5 entity tag');
  if (served && object !== undefined) {
    const lastModified = known.modified(object, testCase.encoding);
    if (lastModified !== undefined) expect('last-modified', lastModified);
    // The same object in the same encoding has one entity tag, whatever else the request said.
    const etag = testCase.body === object ? known.etag(object, testCase.encoding) : undefined;
    if (etag !== undefined) expect('etag', etag);
  }
  if (testCase.status === 200 && testCase.body === 'page') {
    expect('content-type', ANSWER_HEADERS.page['content-type']);
    // Untrusted text stays text: the page answer allows no script at all.
    expectMatch('content-security-policy', /^default-src 'none';/, "a policy starting default-src 'none'");
  }
  if (testCase.status === 200 && (catalogs.includes(testCase.body) || testCase.body === 'openapi'))
    expectAll(kind, ['content-type', 'x-content-type-options']);
  if (served) expect('content-range', undefined);
  if (testCase.status === 200) expect('content-encoding', testCase.encoding);
  return [...new Set(problems)];
}
