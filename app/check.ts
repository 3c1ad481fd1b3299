/**
 * `catalog check` (docs/decisions.md#checking-a-deployment): check-rows.ts's rows sent one at a time, each with a
 * deadline and a size bound, retried only on network errors; a request two rows judge is sent once and its answer
 * shared. Also the canary's probe ({@link probeDeployment}): the few rows that show partners are served now.
 */
import { Agent, RetryAgent } from 'undici';
import { describeCause, NETWORK_ERROR_CODES, settingRef } from '../contract/errors.ts';
import { DISCIPLINES, type Discipline } from '../contract/index.ts';
import { type Answer, MAX_BODY_BYTES } from '../gateway/judge.ts';
import { generateKey } from '../keys/keys.ts';
import { formatDuration } from '../keys/time.ts';
import {
  type CheckReport,
  type CheckRequest,
  type CheckRow,
  type CheckSettings,
  checkSteps,
  corsCause,
  forgetParsed,
  judgeCase,
  judgeProbeFreshness,
  judgeProbeRead,
  type Learned,
  learnPagePlan,
  newLearned,
  notServed,
  PROBE_CASES,
  PROBE_FRESHNESS,
  type ProbeSeen,
  plannedRequests,
  prepareCase,
  probeReadCase,
  probeRequest,
  requestKey,
  rowTemplates,
  type Seen,
  shownRequest,
  type Verdict,
  withoutKeys,
} from './check-rows.ts';

export type { CheckReport, ProbeSeen } from './check-rows.ts';

/**
 * What `catalog check` is given, the deadline of each answer (from connecting to its last byte) and the deadline
 * of the whole run (from its start: rows not run by then are reported as not run).
 */
export type CheckOptions = Omit<CheckSettings, 'forged' | 'now'> & {
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  /** Headers sent on every request, before each row's own (the canary's marker: `CANARY_HEADER`). */
  readonly alwaysHeaders?: readonly (readonly [string, string])[];
};

/** The methods the service answers, and the ones the table checks are refused. */
const CHECK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const TOO_LARGE = `the answer is larger than ${MAX_BODY_BYTES / 1024 ** 2} MiB, far more than any catalog: not read further`;

/** Why a row was not run: the run's deadline, or the key its request carries was refused by the first answer. */
const deadlinePassed = (deadlineMs: number, during: boolean) =>
  `not run: ${settingRef('checkDeadline')} ${formatDuration(deadlineMs)} passed ${during ? 'while its answer came' : 'before it'}`;
const KEY_REFUSED = 'not sent: the key was refused by the first answer (401), see the first row';

/** What one request got: the raw answer (no decompression), or why none came. */
type Sent = Answer | { readonly failure: string } | { readonly notRun: string };

/** A run in progress: its settings, how it sends, and what it learned about the deployment as a whole. */
interface Run {
  readonly settings: CheckSettings;
  readonly deadline: AbortSignal;
  /** Sends one request, the target exactly as given (`uses`: how many later rows send it too). */
  send(
    request: CheckRequest,
    uses?: { readonly template: string; readonly left: Map<string, number> },
  ): Promise<Sent>;
  /** The run's deadline came before every row was run. */
  deadlineReached: boolean;
  /** Every request sent, and the distinct ones (a request two rows judge is sent once). */
  readonly sent: { requests: number };
  /** Cuts what still trickles after the deadline; otherwise lets the connections close. */
  close(): Promise<void>;
}

/** Opens a run: its settings (with a key it forges), its deadline, one connection pool, the shared answers. */
function openRun(options: CheckOptions): Run {
  const settings: CheckSettings = { ...options, forged: generateKey(), now: new Date() };
  const deadline = AbortSignal.timeout(options.deadlineMs);
  const dispatcher = new RetryAgent(new Agent({ maxResponseSize: MAX_BODY_BYTES }), {
    maxRetries: 2,
    minTimeout: 250,
    maxTimeout: 2_000,
    timeoutFactor: 2,
    // Network errors only: a status, whatever it is, is the answer being checked.
    statusCodes: [],
    errorCodes: [...Object.keys(NETWORK_ERROR_CODES), 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'],
    // Not POST or PATCH: a request that may have arrived is not sent twice.
    methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'],
  });
  const always = options.alwaysHeaders ?? [];
  /** Answers still wanted by a later row, by request. */
  const shared = new Map<string, Sent>();
  const run: Run = {
    settings,
    deadline,
    deadlineReached: false,
    sent: { requests: 0 },
    async send(request, uses) {
      const key = requestKey(request);
      // How many rows after this one send the same request: its answer is kept for them, and no longer.
      const left = uses === undefined ? 0 : (uses.left.get(uses.template) ?? 1) - 1;
      if (uses !== undefined) uses.left.set(uses.template, left);
      const kept = shared.get(key);
      if (kept !== undefined) {
        if (left <= 0) shared.delete(key);
        return kept;
      }
      const answer = await sendOnce(request);
      if (left > 0 && !('notRun' in answer)) shared.set(key, answer);
      return answer;
    },
    close: () => (deadline.aborted ? dispatcher.destroy() : dispatcher.close()),
  };
  const sendOnce = async (request: CheckRequest): Promise<Sent> => {
    const method = CHECK_METHODS.find((known) => known === request.method);
    if (method === undefined) throw new Error(`catalog check never sends ${request.method}`);
    run.sent.requests += 1;
    try {
      const response = await dispatcher.request({
        origin: options.baseUrl,
        path: request.target,
        method,
        headers: [['user-agent', 'catalog-check'], ...always, ...request.headers].flat(),
        signal: AbortSignal.any([AbortSignal.timeout(options.timeoutMs), deadline]),
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (value !== undefined)
          headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      return { status: response.statusCode, headers, body };
    } catch (error) {
      if (deadline.aborted) {
        run.deadlineReached = true;
        return { notRun: deadlinePassed(options.deadlineMs, true) };
      }
      if ((error as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
        return { failure: TOO_LARGE };
      if ((error as Error).name === 'TimeoutError')
        return {
          failure: `no complete answer within ${settingRef('checkTimeout')} ${formatDuration(options.timeoutMs)}`,
        };
      return { failure: `no answer: ${describeCause(error)}` };
    }
  };
  return run;
}

/** Whether a request carries the checker's key (a refused key is not sent again). */
const carriesKey = (request: CheckRequest, key: string) =>
  request.target.includes(key) || request.headers.some(([, value]) => value.includes(key));

/** The report of a run (never with a key in it). */
function reportOf(
  run: Run,
  started: number,
  found: {
    readonly rows: readonly CheckRow[];
    readonly reachable: boolean;
    readonly keyRefused: boolean;
    readonly learned: Pick<Learned, 'pagePlan' | 'corsSeen'>;
  },
  options: CheckOptions,
): CheckReport {
  const { rows, learned } = found;
  const counts: Record<Verdict, number> = { pass: 0, fail: 0, skip: 0, warn: 0, 'not-run': 0 };
  for (const row of rows) counts[row.verdict] += 1;
  const report: CheckReport = {
    baseUrl: options.baseUrl,
    checkedAt: run.settings.now.toISOString(),
    cors: options.cors === undefined ? 'unchecked' : (options.cors ?? 'off'),
    pagePlan:
      'id' in learned.pagePlan
        ? `${learned.pagePlan.id} (the catalog's first plan)`
        : `not checked: ${learned.pagePlan.reason}`,
    reachable: found.reachable,
    keyRefused: found.keyRefused,
    corsCause: corsCause(options.cors, rows, learned),
    rows,
    counts,
    durationMs: Math.round(performance.now() - started),
    deadline: { ms: options.deadlineMs, reached: run.deadlineReached },
    requests: run.sent.requests,
    // A row not run never counts as passed.
    exitCode: !found.reachable ? 2 : counts.fail > 0 || counts['not-run'] > 0 ? 1 : 0,
  };
  return withoutKeys(report, run.settings);
}

/**
 * Runs every row within the deadline and returns the report (never with a key in it); `reachable: false` when
 * nothing answers. Once the first answer refuses the key, the rows whose request carries it are not sent: one
 * diagnosis, not a failure per row.
 */
export async function checkDeployment(options: CheckOptions): Promise<CheckReport> {
  const started = performance.now();
  const run = openRun(options);
  const { settings, deadline } = run;
  const left = new Map(plannedRequests(settings).uses);
  const learned = newLearned();
  const rows: CheckRow[] = [];
  let reachable = true;
  let keyRefused = false;
  try {
    const steps = checkSteps();
    for (const [index, step] of steps.entries()) {
      // The parsed catalogs serve the catalog rows that follow a case: dropped before the next case.
      if (step.kind === 'case' && steps[index - 1]?.kind === 'catalog') forgetParsed(learned);
      const name = step.kind === 'catalog' ? step.row.name : step.testCase.name;
      if (deadline.aborted) {
        run.deadlineReached = true;
        const request = step.kind === 'catalog' ? step.row.request : shownRequest(step.testCase, learned);
        const source = step.kind === 'catalog' ? 'catalog' : 'case';
        const lines = [deadlinePassed(options.deadlineMs, false)];
        rows.push({ name, source, request, verdict: 'not-run', lines });
        continue;
      }
      if (step.kind === 'catalog') {
        const { row } = step;
        const head = { name: row.name, source: 'catalog', request: row.request } as const;
        const missing = row.needs.find((body) => learned.bodies[body] === undefined);
        if (missing !== undefined) {
          rows.push({ ...head, verdict: 'skip', lines: [notServed(missing)] });
          continue;
        }
        const answers: Answer[] = [];
        let failure: string | undefined;
        let notRun: string | undefined;
        const templates = rowTemplates(row, settings);
        for (const [at, request] of (row.requests?.(settings) ?? []).entries()) {
          if (keyRefused && carriesKey(request, settings.key)) {
            notRun = KEY_REFUSED;
            break;
          }
          const answer = await run.send(request, { template: templates[at] as string, left });
          if ('notRun' in answer) {
            notRun = answer.notRun;
            break;
          }
          if ('failure' in answer) {
            failure = `${request.method} ${request.target.split('?')[0]}: ${answer.failure}`;
            break;
          }
          answers.push(answer);
        }
        const judged = notRun
          ? ({ verdict: 'not-run', lines: [notRun] } as const)
          : failure
            ? ({ verdict: 'fail', lines: [failure] } as const)
            : row.judge(settings, learned, answers);
        rows.push({ ...head, ...judged });
        continue;
      }
      const { testCase } = step;
      const head = { name: testCase.name, source: 'case', request: shownRequest(testCase, learned) } as const;
      const prepared = prepareCase(testCase, settings, learned);
      if ('skip' in prepared) {
        rows.push({ ...head, verdict: 'skip', lines: [prepared.skip] });
        continue;
      }
      if (keyRefused && carriesKey(prepared.request, settings.key)) {
        rows.push({ ...head, verdict: 'not-run', lines: [KEY_REFUSED] });
        continue;
      }
      const answer = await run.send(prepared.request, { template: prepared.template, left });
      if ('notRun' in answer) {
        rows.push({ ...head, verdict: 'not-run', lines: [answer.notRun] });
        continue;
      }
      if ('failure' in answer) {
        rows.push({ ...head, verdict: 'fail', lines: [answer.failure] });
        // Nothing answered the very first request (in time): the service cannot be reached at all.
        reachable = rows.length > 1 || answer.failure === TOO_LARGE;
        if (!reachable) break;
        continue;
      }
      if (rows.length === 0 && answer.status === 401) keyRefused = true;
      const problems = judgeCase(prepared.testCase, answer, settings, learned, prepared.compressed);
      rows.push({ ...head, verdict: problems.length === 0 ? 'pass' : 'fail', lines: problems });
      // The whole catalog names the plan whose page the page cases check.
      if (rows.length === 1) learnPagePlan(settings, learned);
    }
  } finally {
    // A deadline passed while answers still trickle: their connections are cut, not waited for.
    await run.close();
  }
  return reportOf(run, started, { rows, reachable, keyRefused, learned }, options);
}

/** A probe's outcome: its report, what to keep for the next probe, whether the live catalogs changed since. */
export interface ProbeOutcome {
  readonly report: CheckReport;
  readonly seen: ProbeSeen;
  /** A read answered 200 with another ETag than the last probe saw: the live build changed since. */
  readonly changed: boolean;
}

/**
 * The probe (docs/decisions.md#the-canary): each discipline's catalog in brotli, conditional on the ETag the last
 * probe saw (`seen`: an unchanged catalog costs a 304), judged with the success headers and its freshness; one
 * refused key; the CORS preflight when an origin is set. A handful of requests and, unchanged, no body.
 */
export async function probeDeployment(options: CheckOptions, seen: ProbeSeen): Promise<ProbeOutcome> {
  const started = performance.now();
  const run = openRun(options);
  const { settings, deadline } = run;
  const learned = newLearned();
  const rows: CheckRow[] = [];
  const latest: Partial<Record<Discipline, Seen>> = { ...seen };
  let reachable = true;
  let keyRefused = false;
  let changed = false;
  const notRunRow = (name: string, request: string, line: string) =>
    rows.push({ name, source: 'case', request, verdict: 'not-run', lines: [line] });
  try {
    for (const discipline of DISCIPLINES) {
      const request = probeRequest(discipline, settings, seen);
      const name = probeReadCase(discipline).name;
      const shown = `GET ${request.target}${seen[discipline] ? ' (If-None-Match)' : ''}`;
      if (!reachable) break;
      if (deadline.aborted) {
        run.deadlineReached = true;
        notRunRow(name, shown, deadlinePassed(options.deadlineMs, false));
        continue;
      }
      if (keyRefused) {
        notRunRow(name, shown, KEY_REFUSED);
        continue;
      }
      const answer = await run.send(request);
      if ('notRun' in answer) {
        notRunRow(name, shown, answer.notRun);
        continue;
      }
      if ('failure' in answer) {
        rows.push({ name, source: 'case', request: shown, verdict: 'fail', lines: [answer.failure] });
        reachable = rows.length > 1 || answer.failure === TOO_LARGE;
        continue;
      }
      if (rows.length === 0 && answer.status === 401) keyRefused = true;
      const judged = judgeProbeRead(discipline, answer, settings, seen[discipline]);
      if (judged.seen) latest[discipline] = judged.seen;
      changed ||= judged.changed;
      const verdict = judged.lines.length === 0 ? 'pass' : 'fail';
      rows.push({ name, source: 'case', request: shown, verdict, lines: judged.lines });
    }
    if (reachable) {
      const freshness = judgeProbeFreshness(latest, settings);
      rows.push({ name: PROBE_FRESHNESS, source: 'catalog', request: 'the reads above', ...freshness });
      for (const testCase of PROBE_CASES) {
        const head = {
          name: testCase.name,
          source: 'case',
          request: shownRequest(testCase, learned),
        } as const;
        const prepared = prepareCase(testCase, settings, learned);
        if ('skip' in prepared) {
          rows.push({ ...head, verdict: 'skip', lines: [prepared.skip] });
          continue;
        }
        if (deadline.aborted) {
          run.deadlineReached = true;
          rows.push({ ...head, verdict: 'not-run', lines: [deadlinePassed(options.deadlineMs, false)] });
          continue;
        }
        const answer = await run.send(prepared.request);
        if ('notRun' in answer) rows.push({ ...head, verdict: 'not-run', lines: [answer.notRun] });
        else if ('failure' in answer) rows.push({ ...head, verdict: 'fail', lines: [answer.failure] });
        else {
          const problems = judgeCase(prepared.testCase, answer, settings, learned);
          rows.push({ ...head, verdict: problems.length === 0 ? 'pass' : 'fail', lines: problems });
        }
      }
    }
  } finally {
    await run.close();
  }
  const report = reportOf(run, started, { rows, reachable, keyRefused, learned }, options);
  return { report, seen: latest, changed };
}
