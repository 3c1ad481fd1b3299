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
  shownRequest,
  withoutKeys,
} from './check-rows.ts';

export type { CheckReport } from './check-rows.ts';

/** What `catalog check` is given, and the deadline of each answer (from connecting to its last byte). */
export type CheckOptions = Omit<CheckSettings, 'forged' | 'now'> & { readonly timeoutMs: number };

/** The methods the service answers, and the ones the table checks are refused. */
const CHECK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const TOO_LARGE = `the answer is larger than ${MAX_BODY_BYTES / 1024 ** 2} MiB, far more than any catalog: not read further`;

/** Runs every row and returns the report (never with a key in it); `reachable: false` when nothing answers. */
export async function checkDeployment(options: CheckOptions): Promise<CheckReport> {
  const now = new Date();
  const settings: CheckSettings = { ...options, forged: generateKey(), now };
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
  const send = async (request: CheckRequest): Promise<Answer | { readonly failure: string }> => {
    const method = CHECK_METHODS.find((known) => known === request.method);
    if (method === undefined) throw new Error(`catalog check never sends ${request.method}`);
    try {
      const response = await dispatcher.request({
        origin: options.baseUrl,
        path: request.target,
        method,
        headers: [['user-agent', 'catalog-check'], ...request.headers].flat(),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (value !== undefined)
          headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      return { status: response.statusCode, headers, body };
    } catch (error) {
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
  try {
    for (const step of checkSteps()) {
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
        for (const request of row.requests?.(settings) ?? []) {
          const answer = await send(request);
          if ('failure' in answer) {
            failure = `${request.method} ${request.target.split('?')[0]}: ${answer.failure}`;
            break;
          }
          answers.push(answer);
        }
        const judged = failure
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
      const answer = await send(prepared.request);
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
    await dispatcher.close();
  }
  const counts = { pass: 0, fail: 0, skip: 0, warn: 0 };
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
    exitCode: !reachable ? 2 : counts.fail > 0 ? 1 : 0,
  };
  return withoutKeys(report, settings);
}
