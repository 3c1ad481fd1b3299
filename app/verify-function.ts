/**
 * The gateway's request-case table through CloudFront's TestFunction API against a deployed function (the real
 * runtime and its KeyValueStore), in either stage: `catalog verify-function` by hand, and the deploy's release
 * step (app/release.ts) before it publishes. One implementation for both.
 *
 * - The viewer-request function gets each case's request and is judged on its outcome: the status it answers
 *   with, or the URI it passes on (within the live build). Keys stand in for the table's placeholders; a case
 *   whose key is not given is skipped.
 * - The viewer-response function runs only on what reaches the origin and comes back below 400 (gateway/README.md),
 *   so its cases are the table's served ones (200 and 304): each gets the viewer's request and the origin's answer
 *   as S3 gives it (the object's stored type and encoding, S3's own headers, a stray CORS header), and is judged on
 *   the headers it must leave: exactly the kind of answer's headers, the stored encoding kept, S3's headers gone,
 *   and the store's CORS origin when it is known (null: none, so no such header; undefined: not judged).
 *
 * A case's CORS origin is not set up for the viewer-request function: it changes headers, never the status or
 * the URI compared here. Keys are never printed.
 */
import {
  type CloudFrontClient,
  DescribeFunctionCommand,
  type DescribeFunctionCommandOutput,
  type FunctionStage,
  TestFunctionCommand,
  type TestFunctionCommandOutput,
  type TestResult,
} from '@aws-sdk/client-cloudfront';
import pLimit from 'p-limit';
import { CatalogError, describeCause } from '../contract/errors.ts';
import { CATALOG_HEADERS, HEADER_VALUES, OPENAPI_HEADERS, PAGE_SERVED_HEADERS } from '../contract/index.ts';
import {
  type RequestCase,
  type ViewerRequestOutcome,
  viewerRequestOutcome,
  withinBuild,
} from '../gateway/cases.ts';
import type { CloudFrontEvent, CloudFrontResponse, Fields } from '../gateway/functions/event.ts';
import { viewerRequestEvent, viewerResponseEvent } from '../gateway/local/event.ts';
import { generateKey } from '../keys/keys.ts';
import { envOf } from './settings/index.ts';

/** The two functions of the gateway. */
export type FunctionKind = 'viewer-request' | 'viewer-response';

/** The keys that stand in for the table's placeholders: valid ones (`{valid}`, `{expiring}`, then `{other}`), an expired, a revoked one. */
export interface VerifyKeys {
  readonly valid: readonly string[];
  readonly expired?: string | undefined;
  readonly revoked?: string | undefined;
}

/** The ETag `{etag:…}` stands for (the viewer-request function does not read If-None-Match). */
export const PLACEHOLDER_ETAG = '"00000000000000000000000000000000"';

/** A test event has no distribution name or id and no request id; its viewer is TEST-NET-3 (RFC 5737). */
const TEST_VIEWER = '203.0.113.9';

/** How many TestFunction calls run at once: CloudFront's API is rate-limited (the client backs off on throttling). */
export const TEST_CONCURRENCY = 4;

/** One case of the table, ready to send, or skipped with the reason. */
export type PlannedCase =
  | { readonly testCase: RequestCase; readonly event: CloudFrontEvent; readonly notes: readonly string[] }
  | { readonly testCase: RequestCase; readonly skip: string };

/** The case's request with its placeholders filled by `value` (a name's value, or undefined: the case is skipped). */
function resolvedRequest(
  testCase: RequestCase,
  value: (name: string) => string | undefined,
): { event: CloudFrontEvent; missing: string | undefined } {
  let missing: string | undefined;
  const resolve = (text: string) =>
    text.replace(/\{(etag:)?([a-z]+)\}/g, (match, etag: string | undefined, name: string) => {
      if (etag) return PLACEHOLDER_ETAG;
      const filled = value(name);
      if (filled === undefined) {
        missing ??= name;
        return match;
      }
      return filled;
    });
  const target = resolve(testCase.target);
  const rawHeaders = (testCase.headers ?? []).flatMap(([name, header]) => [name, resolve(header)]);
  const request = { method: testCase.method, target, rawHeaders, remoteAddress: TEST_VIEWER };
  const event = { ...viewerRequestEvent(request, 'test'), context: { eventType: 'viewer-request' } };
  return { event: event satisfies CloudFrontEvent, missing };
}

/** Resolves the placeholders of every case with the keys given; a case missing a key is skipped, saying where to give it. */
export function planCases(cases: readonly RequestCase[], keys: VerifyKeys): PlannedCase[] {
  const valid = keys.valid[0];
  const needsValid = `needs a valid key (${envOf('key')})`;
  const values: Record<string, { value?: string | undefined; missing: string; note?: string | undefined }> = {
    valid: { value: valid, missing: needsValid },
    expiring: {
      value: keys.valid[2] ?? valid,
      missing: needsValid,
      note:
        keys.valid.length < 3 ? '{expiring} is the first key (any valid key gives this outcome)' : undefined,
    },
    other: {
      value: keys.valid[1] ?? valid,
      missing: needsValid,
      note:
        keys.valid.length < 2
          ? `{other} is the first key (give a second in ${envOf('key')} to vary it)`
          : undefined,
    },
    // The canary's marker changes no answer, only what is recorded (which TestFunction may not show).
    monitoring: {
      value: valid,
      missing: needsValid,
      note: "{monitoring} (the canary's marker) is the first key: the marker changes no answer",
    },
    expired: { value: keys.expired, missing: `needs an expired key (${envOf('expiredKey')})` },
    revoked: { value: keys.revoked, missing: `needs a revoked key (${envOf('revokedKey')})` },
    // A never-issued key of the right shape.
    forged: { value: generateKey(), missing: '' },
  };
  return cases.map((testCase): PlannedCase => {
    const notes = new Set<string>();
    const { event, missing } = resolvedRequest(testCase, (name) => {
      const entry = values[name];
      if (entry?.value !== undefined && entry.note) notes.add(entry.note);
      return entry?.value;
    });
    if (missing !== undefined) return { testCase, skip: values[missing]?.missing ?? `needs {${missing}}` };
    return { testCase, event, notes: [...notes] };
  });
}

/** What the origin serves a case: the kind of object, and its stored variant; undefined when no object comes back below 400. */
function servedObject(
  testCase: RequestCase,
): { kind: 'catalog' | 'openapi' | 'page'; encoding: 'br' | 'gzip' | undefined } | undefined {
  if (testCase.status !== 200 && testCase.status !== 304) return undefined;
  const outcome = viewerRequestOutcome(testCase);
  if (!('uri' in outcome)) return undefined;
  const kind = testCase.rewrite ? 'page' : /\/openapi\.yaml/.test(outcome.uri) ? 'openapi' : 'catalog';
  return { kind, encoding: testCase.encoding };
}

/** The headers of each kind of served answer that the viewer-response function sets (contract/index.ts). */
const SERVED_HEADERS = {
  catalog: CATALOG_HEADERS,
  openapi: OPENAPI_HEADERS,
  page: PAGE_SERVED_HEADERS,
} as const;
/** The type the builder stores each kind of object with. */
const STORED_TYPE = {
  catalog: HEADER_VALUES.json,
  openapi: HEADER_VALUES.yaml,
  page: HEADER_VALUES.html,
} as const;

/** The origin's 200, as S3 answers it through CloudFront: what the viewer-response function is given. */
function originAnswer(served: NonNullable<ReturnType<typeof servedObject>>): CloudFrontResponse {
  const headers: Fields = {
    'content-type': { value: STORED_TYPE[served.kind] },
    etag: { value: '"0123456789abcdef0123456789abcdef"' },
    'last-modified': { value: 'Mon, 23 Nov 2026 13:39:44 GMT' },
    server: { value: 'AmazonS3' },
    'x-amz-request-id': { value: 'TESTREQUEST1' },
    'x-amz-id-2': { value: 'test-id-2' },
    'x-amz-version-id': { value: 'test-version' },
    'x-amz-server-side-encryption': { value: 'AES256' },
    // A CORS header the origin must never decide: the function sets the store's, or none.
    'access-control-allow-origin': { value: '*' },
  };
  if (served.kind === 'page') headers['cache-control'] = { value: HEADER_VALUES.cacheable };
  if (served.encoding) headers['content-encoding'] = { value: served.encoding };
  return { statusCode: 200, statusDescription: 'OK', headers };
}

/**
 * The viewer-response function's cases: each of the table's served cases (what reaches the origin and comes back
 * below 400), its request as the viewer sent it (any key in it a forged one: this function never reads keys) and
 * the origin's answer.
 */
export function planResponseCases(cases: readonly RequestCase[]): PlannedCase[] {
  const forged = generateKey();
  return cases.flatMap((testCase): PlannedCase[] => {
    const served = servedObject(testCase);
    if (served === undefined) return [];
    const { event } = resolvedRequest(testCase, () => forged);
    return [{ testCase, event: viewerResponseEvent(event, originAnswer(served)), notes: [] }];
  });
}

/** What the viewer-request function did: answered with a status, passed the request on to a URI, or failed. */
export type Observed = { readonly status: number } | { readonly uri: string } | { readonly error: string };

/** TestFunction's FunctionOutput as JSON, `{"request": {…}}` or `{"response": {…}}` unwrapped, or why not. */
function functionOutput(
  result: TestResult,
): { readonly output: Record<string, unknown> } | { readonly error: string } {
  if (result.FunctionErrorMessage) return { error: `the function failed: ${result.FunctionErrorMessage}` };
  if (!result.FunctionOutput) return { error: 'TestFunction returned no FunctionOutput' };
  try {
    const record = (JSON.parse(result.FunctionOutput) ?? {}) as Record<string, unknown>;
    return { output: (record.response ?? record.request ?? record) as Record<string, unknown> };
  } catch {
    return { error: `FunctionOutput is not JSON: ${result.FunctionOutput.slice(0, 200)}` };
  }
}

/** Reads TestFunction's FunctionOutput of the viewer-request function. */
export function observe(result: TestResult): Observed {
  const read = functionOutput(result);
  if ('error' in read) return read;
  const inner = read.output;
  if (typeof inner.statusCode === 'number') return { status: inner.statusCode };
  if (typeof inner.statusCode === 'string' && /^\d{3}$/.test(inner.statusCode))
    return { status: Number(inner.statusCode) };
  if (typeof inner.uri === 'string') return { uri: inner.uri };
  return {
    error: `FunctionOutput is neither a response nor a request: ${(result.FunctionOutput ?? '').slice(0, 200)}`,
  };
}

/** Shows an outcome the way the report prints it: `404`, or `→ /catalog.json`. */
export function describeOutcome(outcome: ViewerRequestOutcome | Observed): string {
  if ('status' in outcome) return String(outcome.status);
  if ('uri' in outcome) return `→ ${outcome.uri}`;
  return outcome.error;
}

/** The verdict on one case: its request as the table writes it (never a key), what the function did or why skipped. */
export interface CaseReport {
  readonly name: string;
  readonly request: string;
  readonly verdict: 'pass' | 'fail' | 'skip';
  readonly expected: string;
  readonly actual: string;
  readonly computeUtilization: number | null;
  readonly notes: readonly string[];
}

/** The report on one case; a compute utilization that is not a number is none. */
function caseReport(
  testCase: RequestCase,
  verdict: CaseReport['verdict'],
  expected: string,
  actual: string,
  notes: readonly string[] = [],
  cu = Number.NaN,
): CaseReport {
  const computeUtilization = Number.isFinite(cu) ? cu : null;
  const request = `${testCase.method} ${testCase.target}`;
  return { name: testCase.name, request, verdict, expected, actual, computeUtilization, notes };
}

const utilizationOf = (result: TestResult) => Number.parseFloat(result.ComputeUtilization ?? '');

/** Compares one observed result of the viewer-request function with the case's outcome. */
export function judge(testCase: RequestCase, result: TestResult, notes: readonly string[] = []): CaseReport {
  const expected = viewerRequestOutcome(testCase);
  const observed = observe(result);
  const pass =
    ('status' in expected && 'status' in observed && expected.status === observed.status) ||
    ('uri' in expected && 'uri' in observed && expected.uri === withinBuild(observed.uri));
  return caseReport(
    testCase,
    pass ? 'pass' : 'fail',
    describeOutcome(expected),
    describeOutcome(observed),
    notes,
    utilizationOf(result),
  );
}

/** A header value as a report shows it. */
const shownHeader = (value: string | undefined) => (value === undefined ? 'none' : JSON.stringify(value));

/**
 * Compares what the viewer-response function left of the origin's answer with what the case's kind of answer
 * carries; `cors` is the store's CORS origin (null: none; undefined: not judged).
 */
export function judgeResponse(
  testCase: RequestCase,
  result: TestResult,
  cors: string | null | undefined,
): CaseReport {
  const served = servedObject(testCase);
  if (served === undefined) throw new Error(`case "${testCase.name}" does not reach the origin`);
  const wanted: Record<string, string | undefined> = {
    ...SERVED_HEADERS[served.kind],
    'content-encoding': served.encoding,
  };
  if (cors !== undefined) wanted['access-control-allow-origin'] = cors ?? undefined;
  const expected = `${served.kind} headers${served.encoding ? `, ${served.encoding}` : ''}${cors === undefined ? '' : cors === null ? ', no CORS' : `, CORS ${cors}`}`;
  const read = functionOutput(result);
  const cu = utilizationOf(result);
  if ('error' in read) return caseReport(testCase, 'fail', expected, read.error, [], cu);
  const inner = read.output;
  const fields = (inner.headers ?? {}) as Record<string, { value?: unknown } | undefined>;
  const headers = new Map(
    Object.entries(fields).map(([name, field]) => [name.toLowerCase(), String(field?.value ?? '')]),
  );
  const problems: string[] = [];
  if (inner.statusCode !== undefined && Number(inner.statusCode) !== 200)
    problems.push(`status: expected 200 (the origin's), got ${String(inner.statusCode)}`);
  for (const [name, value] of Object.entries(wanted))
    if (headers.get(name) !== value)
      problems.push(`${name}: expected ${shownHeader(value)}, got ${shownHeader(headers.get(name))}`);
  for (const name of headers.keys())
    if (name === 'server' || name.startsWith('x-amz-')) problems.push(`${name}: the origin's, still there`);
  return caseReport(
    testCase,
    problems.length === 0 ? 'pass' : 'fail',
    expected,
    problems.length === 0 ? expected : problems.join('; '),
    [],
    cu,
  );
}

/** Compute utilization above this is throttled when sustained (DG/cloudfront-limits.html). */
export const COMPUTE_UTILIZATION_LIMIT = 70;

/** The whole run against one function. */
export interface VerifyReport {
  readonly name: string;
  readonly kind: FunctionKind;
  readonly stage: FunctionStage;
  readonly etag: string;
  readonly runtime: string | undefined;
  readonly keyValueStores: readonly string[];
  readonly cases: readonly CaseReport[];
}

/** Counts of a report. */
export function summarize(report: VerifyReport) {
  const count = (verdict: CaseReport['verdict']) => report.cases.filter((c) => c.verdict === verdict).length;
  const utilizations = report.cases
    .map((c) => c.computeUtilization)
    .filter((cu): cu is number => cu !== null)
    .sort((a, b) => a - b);
  return {
    passed: count('pass'),
    failed: count('fail'),
    skipped: count('skip'),
    maxUtilization: utilizations.at(-1) ?? null,
    medianUtilization: utilizations[Math.floor(utilizations.length / 2)] ?? null,
  };
}

/** The report as text: one line per case, then the summary. Never contains a key. */
export function formatReport(report: VerifyReport): string {
  const width = Math.min(48, Math.max(...report.cases.map((c) => c.name.length), 4));
  const lines = report.cases.map((c) => {
    const verdict = c.verdict.toUpperCase().padEnd(4);
    const got = c.verdict === 'fail' ? `expected ${c.expected}, got ${c.actual}` : c.actual;
    const cu = c.verdict === 'skip' || c.computeUtilization === null ? '' : `  cu ${c.computeUtilization}`;
    const notes = c.notes.length > 0 ? `  (${c.notes.join('; ')})` : '';
    return `${verdict}  ${c.name.padEnd(width)}  ${c.request}  ${got}${cu}${notes}`;
  });
  const s = summarize(report);
  lines.push(
    '',
    `${report.name} (${report.kind}, ${report.stage}, ETag ${report.etag}, ${report.runtime ?? 'runtime unknown'}, ` +
      `key value store ${report.keyValueStores.join(', ') || 'none'})`,
    `${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped of ${report.cases.length} cases; ` +
      `compute utilization median ${s.medianUtilization ?? '-'}, max ${s.maxUtilization ?? '-'} ` +
      `(throttled when sustained over ${COMPUTE_UTILIZATION_LIMIT})`,
  );
  if (s.maxUtilization !== null && s.maxUtilization > COMPUTE_UTILIZATION_LIMIT)
    lines.push(`warning: a case used ${s.maxUtilization}% of the compute budget`);
  return `${lines.join('\n')}\n`;
}

/** The failed cases of a report in one line: how many, then the first few with what came back. */
export function failedCases(report: VerifyReport, shown = 5): string {
  const failed = report.cases.filter((c) => c.verdict === 'fail');
  const named = failed
    .slice(0, shown)
    .map((c) => `"${c.name}" (${c.request}: expected ${c.expected}, got ${c.actual})`);
  if (failed.length > shown) named.push(`and ${failed.length - shown} more`);
  return `${failed.length} of ${report.cases.length} cases failed against ${report.name} (${report.stage}): ${named.join(', ')}`;
}

/** How a TestFunction call is made: its ETag and stage, and the signal that ends the run. */
export interface TestCall {
  readonly name: string;
  readonly stage: FunctionStage;
  readonly etag: string;
  readonly signal?: AbortSignal | undefined;
}

/** Runs one event through TestFunction; throws {@link CatalogError} when the call fails. */
export async function testEvent(
  client: CloudFrontClient,
  call: TestCall,
  event: CloudFrontEvent,
  what: string,
): Promise<TestResult> {
  let answer: TestFunctionCommandOutput;
  try {
    answer = await client.send(
      new TestFunctionCommand({
        Name: call.name,
        IfMatch: call.etag,
        Stage: call.stage,
        EventObject: new TextEncoder().encode(JSON.stringify(event)),
      }),
      call.signal ? { abortSignal: call.signal } : {},
    );
  } catch (error) {
    throw new CatalogError(`TestFunction ${call.name} failed on ${what} (${describeCause(error)})`, {
      cause: error,
    });
  }
  return answer.TestResult ?? {};
}

/** Describes a function in a stage; throws {@link CatalogError} naming it when it is not there or the call fails. */
export async function describeFunction(
  client: CloudFrontClient,
  name: string,
  stage: FunctionStage,
  signal?: AbortSignal,
): Promise<DescribeFunctionCommandOutput & { readonly ETag: string }> {
  let described: DescribeFunctionCommandOutput;
  try {
    described = await client.send(
      new DescribeFunctionCommand({ Name: name, Stage: stage }),
      signal ? { abortSignal: signal } : {},
    );
  } catch (error) {
    const message =
      (error as { name?: string }).name === 'NoSuchFunctionExists'
        ? `no CloudFront function ${JSON.stringify(name)} in stage ${stage}`
        : `DescribeFunction ${name} failed (${describeCause(error)})`;
    throw new CatalogError(message, { cause: error });
  }
  if (!described.ETag) throw new CatalogError(`DescribeFunction ${name} returned no ETag`);
  return described as DescribeFunctionCommandOutput & { readonly ETag: string };
}

/** What a verification is given besides the client. */
export interface VerifyOptions {
  readonly name: string;
  readonly kind: FunctionKind;
  readonly stage: FunctionStage;
  readonly cases: readonly RequestCase[];
  /** The keys of the viewer-request function's cases. */
  readonly keys: VerifyKeys;
  /** The store's CORS origin, for the viewer-response function's cases (null: none; undefined: not judged). */
  readonly cors?: string | null | undefined;
  /** Ends the run: a call in flight is aborted, and the run fails. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Describes the function (TestFunction needs its ETag), then tests every planned case, {@link TEST_CONCURRENCY}
 * at a time. Throws {@link CatalogError} when a call fails (the rest are not started); a case whose result
 * differs is a failed case.
 */
export async function verifyFunction(
  client: CloudFrontClient,
  options: VerifyOptions,
): Promise<VerifyReport> {
  const described = await describeFunction(client, options.name, options.stage, options.signal);
  const call: TestCall = {
    name: options.name,
    stage: options.stage,
    etag: described.ETag,
    signal: options.signal,
  };
  const config = described.FunctionSummary?.FunctionConfig;
  const response = options.kind === 'viewer-response';
  const planned = response ? planResponseCases(options.cases) : planCases(options.cases, options.keys);
  const limit = pLimit(TEST_CONCURRENCY);
  const reports = await Promise.all(
    planned.map((item) =>
      limit(async () => {
        if ('skip' in item)
          return caseReport(
            item.testCase,
            'skip',
            describeOutcome(viewerRequestOutcome(item.testCase)),
            item.skip,
          );
        let result: TestResult;
        try {
          result = await testEvent(client, call, item.event, `case "${item.testCase.name}"`);
        } catch (error) {
          limit.clearQueue();
          throw error;
        }
        return response
          ? judgeResponse(item.testCase, result, options.cors)
          : judge(item.testCase, result, item.notes);
      }),
    ),
  );
  return {
    name: options.name,
    kind: options.kind,
    stage: options.stage,
    etag: described.ETag,
    runtime: config?.Runtime,
    keyValueStores: (config?.KeyValueStoreAssociations?.Items ?? []).flatMap((item) =>
      item.KeyValueStoreARN ? [item.KeyValueStoreARN] : [],
    ),
    cases: reports,
  };
}
