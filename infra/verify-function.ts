/**
 * `catalog verify-function`: runs the gateway's request-case table through CloudFront's TestFunction API
 * against a deployed viewer-request function (the real runtime and KeyValueStore) and compares each result
 * with the outcome the table implies (a status, or the rewritten URI). The operator's keys stand in for the
 * table's placeholders (infra/README.md, "Verifying the function"); a case whose key is not given is skipped.
 * A case's CORS origin is not set up: it changes headers, never the status or URI compared here.
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
import {
  type RequestCase,
  type ViewerRequestOutcome,
  viewerRequestOutcome,
  withinBuild,
} from '../gateway/cases.ts';
import type { CloudFrontEvent } from '../gateway/functions/event.ts';
import { viewerRequestEvent } from '../gateway/local/event.ts';
import { generateKey } from '../keys/keys.ts';

/** The operator's keys: valid ones (`{valid}` and `{expiring}`, then `{other}`), an expired, a revoked one. */
interface VerifyKeys {
  readonly valid: readonly string[];
  readonly expired?: string;
  readonly revoked?: string;
}

/** The ETag `{etag:…}` stands for (the viewer-request function does not read If-None-Match). */
export const PLACEHOLDER_ETAG = '"00000000000000000000000000000000"';

/** One case of the table, ready to send, or skipped with the reason. */
export type PlannedCase =
  | { readonly testCase: RequestCase; readonly event: CloudFrontEvent; readonly notes: readonly string[] }
  | { readonly testCase: RequestCase; readonly skip: string };

/** Resolves the placeholders of every case with the operator's keys; a case missing a key is skipped. */
export function planCases(cases: readonly RequestCase[], keys: VerifyKeys): PlannedCase[] {
  const valid = keys.valid[0];
  const needsValid = 'needs a valid key (--key)';
  const values: Record<string, { value?: string | undefined; missing: string; note?: string | undefined }> = {
    valid: { value: valid, missing: needsValid },
    expiring: {
      value: valid,
      missing: needsValid,
      note: '{expiring} is the first --key (any valid key gives this outcome)',
    },
    other: {
      value: keys.valid[1] ?? valid,
      missing: needsValid,
      note: keys.valid.length < 2 ? '{other} is the first --key (give a second --key to vary it)' : undefined,
    },
    // The canary's marker changes no answer, only what is recorded (which TestFunction may not show).
    monitoring: {
      value: valid,
      missing: needsValid,
      note: "{monitoring} (the canary's marker) is the first --key: the marker changes no answer",
    },
    expired: { value: keys.expired, missing: 'needs an expired key (--expired-key)' },
    revoked: { value: keys.revoked, missing: 'needs a revoked key (--revoked-key)' },
    // A never-issued key of the right shape.
    forged: { value: generateKey(), missing: '' },
  };
  return cases.map((testCase): PlannedCase => {
    const notes = new Set<string>();
    let skip: string | undefined;
    const resolve = (text: string) =>
      text.replace(/\{(etag:)?([a-z]+)\}/g, (match, etag: string | undefined, name: string) => {
        if (etag) return PLACEHOLDER_ETAG;
        const entry = values[name];
        if (!entry) return match;
        if (entry.value === undefined) {
          skip ??= entry.missing;
          return match;
        }
        if (entry.note) notes.add(entry.note);
        return entry.value;
      });
    const target = resolve(testCase.target);
    const rawHeaders = (testCase.headers ?? []).flatMap(([name, value]) => [name, resolve(value)]);
    if (skip !== undefined) return { testCase, skip };
    // A test event has no distribution name or id and no request id; its viewer is TEST-NET-3 (RFC 5737).
    const request = { method: testCase.method, target, rawHeaders, remoteAddress: '203.0.113.9' };
    const event = { ...viewerRequestEvent(request, 'test'), context: { eventType: 'viewer-request' } };
    return { testCase, event: event satisfies CloudFrontEvent, notes: [...notes] };
  });
}

/** What the function did: answered with a status, passed the request on to a URI, or failed. */
export type Observed = { readonly status: number } | { readonly uri: string } | { readonly error: string };

/** Reads TestFunction's FunctionOutput: `{"request": {…}}` or `{"response": {…}}`, or a bare one. */
export function observe(result: TestResult): Observed {
  if (result.FunctionErrorMessage) return { error: `the function failed: ${result.FunctionErrorMessage}` };
  if (!result.FunctionOutput) return { error: 'TestFunction returned no FunctionOutput' };
  const shown = result.FunctionOutput.slice(0, 200);
  let output: unknown;
  try {
    output = JSON.parse(result.FunctionOutput);
  } catch {
    return { error: `FunctionOutput is not JSON: ${shown}` };
  }
  const record = (output ?? {}) as Record<string, unknown>;
  const inner = (record.response ?? record.request ?? record) as Record<string, unknown>;
  if (typeof inner.statusCode === 'number') return { status: inner.statusCode };
  if (typeof inner.statusCode === 'string' && /^\d{3}$/.test(inner.statusCode))
    return { status: Number(inner.statusCode) };
  if (typeof inner.uri === 'string') return { uri: inner.uri };
  return { error: `FunctionOutput is neither a response nor a request: ${shown}` };
}

/** Shows an outcome the way the report prints it: `404`, or `→ /catalog.json`. */
export function describeOutcome(outcome: ViewerRequestOutcome | Observed): string {
  if ('status' in outcome) return String(outcome.status);
  if ('uri' in outcome) return `→ ${outcome.uri}`;
  return outcome.error;
}

/** The verdict on one case: its request as the table writes it (never a key), what the function did or why skipped. */
interface CaseReport {
  readonly name: string;
  readonly request: string;
  readonly verdict: 'pass' | 'fail' | 'skip';
  readonly expected: string;
  readonly actual: string;
  readonly computeUtilization: number | null;
  readonly notes: readonly string[];
}

/** Compares one observed result with the case's outcome. */
export function judge(testCase: RequestCase, result: TestResult, notes: readonly string[] = []): CaseReport {
  const expected = viewerRequestOutcome(testCase);
  const observed = observe(result);
  const pass =
    ('status' in expected && 'status' in observed && expected.status === observed.status) ||
    ('uri' in expected && 'uri' in observed && expected.uri === withinBuild(observed.uri));
  const cu = Number.parseFloat(result.ComputeUtilization ?? '');
  return caseReport(testCase, pass ? 'pass' : 'fail', describeOutcome(observed), notes, cu);
}

/** The report on one case; a compute utilization that is not a number is none. */
function caseReport(
  testCase: RequestCase,
  verdict: CaseReport['verdict'],
  actual: string,
  notes: readonly string[] = [],
  cu = Number.NaN,
): CaseReport {
  const computeUtilization = Number.isFinite(cu) ? cu : null;
  const expected = describeOutcome(viewerRequestOutcome(testCase));
  const request = `${testCase.method} ${testCase.target}`;
  return { name: testCase.name, request, verdict, expected, actual, computeUtilization, notes };
}

/** Compute utilization above this is throttled when sustained (DG/cloudfront-limits.html). */
export const COMPUTE_UTILIZATION_LIMIT = 70;

/** The whole run. */
export interface VerifyReport {
  readonly name: string;
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
    `${report.name} (${report.stage}, ETag ${report.etag}, ${report.runtime ?? 'runtime unknown'}, ` +
      `key value store ${report.keyValueStores.join(', ') || 'none'})`,
    `${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped of ${report.cases.length} cases; ` +
      `compute utilization median ${s.medianUtilization ?? '-'}, max ${s.maxUtilization ?? '-'} ` +
      `(throttled when sustained over ${COMPUTE_UTILIZATION_LIMIT})`,
  );
  if (s.maxUtilization !== null && s.maxUtilization > COMPUTE_UTILIZATION_LIMIT)
    lines.push(`warning: a case used ${s.maxUtilization}% of the compute budget`);
  return `${lines.join('\n')}\n`;
}

/**
 * Describes the function (TestFunction needs its ETag), then tests every planned case, four at a time. Throws
 * {@link CatalogError} when a call fails; a case whose result differs is a failed case.
 */
export async function verifyFunction(
  client: CloudFrontClient,
  options: {
    readonly name: string;
    readonly stage: FunctionStage;
    readonly cases: readonly RequestCase[];
    readonly keys: VerifyKeys;
  },
): Promise<VerifyReport> {
  let described: DescribeFunctionCommandOutput;
  try {
    described = await client.send(new DescribeFunctionCommand({ Name: options.name, Stage: options.stage }));
  } catch (error) {
    const message =
      (error as { name?: string }).name === 'NoSuchFunctionExists'
        ? `no CloudFront function ${JSON.stringify(options.name)} in stage ${options.stage}`
        : `DescribeFunction ${options.name} failed (${describeCause(error)})`;
    throw new CatalogError(message, { cause: error });
  }
  const etag = described.ETag;
  if (!etag) throw new CatalogError(`DescribeFunction ${options.name} returned no ETag`);
  const config = described.FunctionSummary?.FunctionConfig;

  const planned = planCases(options.cases, options.keys);
  // A few TestFunction calls at a time; the first failing call fails the run (the rest are not started).
  const limit = pLimit(4);
  const reports = await Promise.all(
    planned.map((item) =>
      limit(async () => {
        if ('skip' in item) return caseReport(item.testCase, 'skip', item.skip);
        let answer: TestFunctionCommandOutput;
        try {
          answer = await client.send(
            new TestFunctionCommand({
              Name: options.name,
              IfMatch: etag,
              Stage: options.stage,
              EventObject: new TextEncoder().encode(JSON.stringify(item.event)),
            }),
          );
        } catch (error) {
          limit.clearQueue();
          throw new CatalogError(
            `TestFunction ${options.name} failed on case "${item.testCase.name}" (${describeCause(error)})`,
            { cause: error },
          );
        }
        return judge(item.testCase, answer.TestResult ?? {}, item.notes);
      }),
    ),
  );
  return {
    name: options.name,
    stage: options.stage,
    etag,
    runtime: config?.Runtime,
    keyValueStores: (config?.KeyValueStoreAssociations?.Items ?? []).flatMap((item) =>
      item.KeyValueStoreARN ? [item.KeyValueStoreARN] : [],
    ),
    cases: reports,
  };
}
