/**
 * `catalog check` (docs/decisions.md#checking-a-deployment): check-rows.ts's rows sent one at a time, each with a
 * deadline and a size bound, retried only on network errors.
 */
import { Agent, RetryAgent } from 'undici';
import { describeCause, NETWORK_ERROR_CODES, settingRef } from '../contract/errors.ts';
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
  judgeCase,
  learnPagePlan,
  newLearned,
  notServed,
  prepareCase,
  type Step,
  shownRequest,
  withoutKeys,
} from './check-rows.ts';

export type { CheckReport } from './check-rows.ts';

/**
 * What `catalog check` is given, the deadline of each answer (from connecting to its last byte) and the deadline
 * of the whole run (from its start: rows not run by then are reported as not run).
 */
export type CheckOptions = Omit<CheckSettings, 'forged' | 'now'> & {
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  /** The rows to run, in their order (default: every row, {@link checkSteps}; a partner's: `partnerSteps`). */
  readonly steps?: readonly Step[];
};

/** The methods the service answers, and the ones the table checks are refused. */
const CHECK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const TOO_LARGE = `the answer is larger than ${MAX_BODY_BYTES / 1024 ** 2} MiB, far more than any catalog: not read further`;

/** Why a row was not run: the run's deadline, or the key its request carries was refused by the first answer. */
const deadlinePassed = (deadlineMs: number, during: boolean) =>
  `not run: ${settingRef('checkDeadline')} ${formatDuration(deadlineMs)} passed ${during ? 'while its answer came' : 'before it'}`;
const KEY_REFUSED = 'not sent: the key was refused by the first answer (401), see the first row';

/**
 * Runs every row within the deadline and returns the report (never with a key in it); `reachable: false` when
 * nothing answers. Once the first answer refuses the key, the rows whose request carries it are not sent: one
 * diagnosis, not a failure per row.
 */
export async function checkDeployment(options: CheckOptions): Promise<CheckReport> {
  const now = new Date();
  const started = performance.now();
  const settings: CheckSettings = { ...options, forged: generateKey(), now };
  const deadline = AbortSignal.timeout(options.deadlineMs);
  let deadlineReached = false;
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
  /** Sends one request, the target exactly as given: the raw answer (no decompression), or why none came. */
  const send = async (
    request: CheckRequest,
  ): Promise<Answer | { readonly failure: string } | { readonly notRun: string }> => {
    const method = CHECK_METHODS.find((known) => known === request.method);
    if (method === undefined) throw new Error(`catalog check never sends ${request.method}`);
    try {
      const response = await dispatcher.request({
        origin: options.baseUrl,
        path: request.target,
        method,
        headers: [['user-agent', 'catalog-check'], ...request.headers].flat(),
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
        deadlineReached = true;
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
  const learned = newLearned();
  const rows: CheckRow[] = [];
  let reachable = true;
  let keyRefused = false;
  /** Whether a request carries the checker's key (a refused key is not sent again). */
  const carriesKey = (request: CheckRequest) =>
    request.target.includes(settings.key) ||
    request.headers.some(([, value]) => value.includes(settings.key));
  try {
    for (const step of options.steps ?? checkSteps()) {
      const name = step.kind === 'catalog' ? step.row.name : step.testCase.name;
      if (deadline.aborted) {
        deadlineReached = true;
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
        for (const request of row.requests?.(settings) ?? []) {
          if (keyRefused && carriesKey(request)) {
            notRun = KEY_REFUSED;
            break;
          }
          const answer = await send(request);
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
      if (keyRefused && carriesKey(prepared.request)) {
        rows.push({ ...head, verdict: 'not-run', lines: [KEY_REFUSED] });
        continue;
      }
      const answer = await send(prepared.request);
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
      const problems = judgeCase(prepared.testCase, answer, settings, learned);
      rows.push({ ...head, verdict: problems.length === 0 ? 'pass' : 'fail', lines: problems });
      // The whole catalog names the plan whose page the page cases check.
      if (rows.length === 1) learnPagePlan(settings, learned);
    }
  } finally {
    // A deadline passed while answers still trickle: their connections are cut, not waited for.
    await (deadline.aborted ? dispatcher.destroy() : dispatcher.close());
  }
  const counts = { pass: 0, fail: 0, skip: 0, warn: 0, 'not-run': 0 };
  for (const row of rows) counts[row.verdict] += 1;
  const report: CheckReport = {
    baseUrl: options.baseUrl,
    checkedAt: now.toISOString(),
    cors: options.cors === undefined ? 'unchecked' : (options.cors ?? 'off'),
    pagePlan:
      'id' in learned.pagePlan
        ? `${learned.pagePlan.id} (the catalog's first plan)`
        : `not checked: ${learned.pagePlan.reason}`,
    reachable,
    keyRefused,
    corsCause: corsCause(options.cors, rows, learned),
    rows,
    counts,
    durationMs: Math.round(performance.now() - started),
    deadline: { ms: options.deadlineMs, reached: deadlineReached },
    // A row not run never counts as passed.
    exitCode: !reachable ? 2 : counts.fail > 0 || counts['not-run'] > 0 ? 1 : 0,
  };
  return withoutKeys(report, settings);
}
