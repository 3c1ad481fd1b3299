/**
 * `catalog check` (docs/decisions.md#checking-a-deployment): the rows of app/check-rows.ts, sent one at a time
 * with undici: a deadline on each answer (retries included), a size bound on its body, retries only on
 * network errors, and only the methods the service answers or the table checks are refused (all bodiless).
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
  finishReport,
  judgeCase,
  learnPagePlan,
  newLearned,
  prepareCase,
  shownRequest,
  withoutKeys,
} from './check-rows.ts';

export type { CheckReport } from './check-rows.ts';

/** What `catalog check` is given; `cors` is `null` for none, undefined when not told. */
export interface CheckOptions {
  readonly baseUrl: string;
  readonly key: string;
  readonly cors: string | null | undefined;
  readonly maxAgeMs: number;
  /** The deadline of each answer, from connecting to its last byte. */
  readonly timeoutMs: number;
  /** Retries of a request that failed on the network (default 2). */
  readonly retries?: number;
  readonly now?: () => Date;
}

/** The methods the service answers, and the ones the table checks are refused. */
export const CHECK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Sends one request, the target exactly as given; resolves with the raw answer (no decompression). */
export type Sender = (request: CheckRequest) => Promise<Answer>;

/** A sender over undici to `baseUrl`, and how to close it. */
export function undiciSender(
  baseUrl: string,
  options: { readonly timeoutMs: number; readonly retries: number },
): { send: Sender; close(): Promise<void> } {
  const dispatcher = new RetryAgent(new Agent({ maxResponseSize: MAX_BODY_BYTES }), {
    maxRetries: options.retries,
    minTimeout: 250,
    maxTimeout: 2_000,
    timeoutFactor: 2,
    // Network errors only: a status, whatever it is, is the answer being checked.
    statusCodes: [],
    errorCodes: [...Object.keys(NETWORK_ERROR_CODES), 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'],
    // Not POST or PATCH: a request that may have arrived is not sent twice.
    methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'],
  });
  const send: Sender = async (request) => {
    if (!(CHECK_METHODS as readonly string[]).includes(request.method))
      throw new Error(`catalog check never sends ${request.method}`);
    const response = await dispatcher.request({
      origin: baseUrl,
      path: request.target,
      method: request.method as (typeof CHECK_METHODS)[number],
      headers: [['user-agent', 'catalog-check'], ...request.headers].flat(),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = Buffer.from(await response.body.arrayBuffer());
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers))
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    return { status: response.statusCode, headers, body };
  };
  return { send, close: () => dispatcher.close() };
}

const TOO_LARGE = `the answer is larger than ${MAX_BODY_BYTES / 1024 ** 2} MiB, far more than any catalog: not read further`;

/** Why a request got no answer to judge, as its row says it. */
function unanswered(error: unknown, timeoutMs: number): string {
  if ((error as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return TOO_LARGE;
  if ((error as Error).name === 'TimeoutError')
    return `no complete answer within ${settingRef('checkTimeout')} ${formatDuration(timeoutMs)}`;
  return `no answer: ${describeCause(error)}`;
}

/** Runs every row and returns the report (never with a key in it); `reachable: false` when nothing answers. */
export async function checkDeployment(options: CheckOptions, sender?: Sender): Promise<CheckReport> {
  const now = (options.now ?? (() => new Date()))();
  const settings: CheckSettings = {
    baseUrl: options.baseUrl,
    key: options.key,
    forged: generateKey(),
    cors: options.cors,
    maxAgeMs: options.maxAgeMs,
    now,
  };
  const own = sender
    ? undefined
    : undiciSender(options.baseUrl, { timeoutMs: options.timeoutMs, retries: options.retries ?? 2 });
  const send = sender ?? (own as { send: Sender }).send;
  const learned = newLearned();
  const rows: CheckRow[] = [];
  let reachable = true;
  let keyRefused = false;
  try {
    for (const step of checkSteps()) {
      if (step.kind === 'catalog') {
        const { row } = step;
        const head = { name: row.name, source: 'catalog', request: row.request } as const;
        const requests = row.requests(settings, learned);
        if ('skip' in requests) {
          rows.push({ ...head, verdict: 'skip', lines: [requests.skip] });
          continue;
        }
        const answers: Answer[] = [];
        let failure: string | undefined;
        for (const request of requests) {
          try {
            answers.push(await send(request));
          } catch (error) {
            failure = `${request.method} ${request.target.split('?')[0]}: ${unanswered(error, options.timeoutMs)}`;
            break;
          }
        }
        const judged = failure
          ? { verdict: 'fail' as const, lines: [failure] }
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
      let answer: Answer;
      try {
        answer = await send(prepared.request);
      } catch (error) {
        const reason = unanswered(error, options.timeoutMs);
        rows.push({ ...head, verdict: 'fail', lines: [reason] });
        if (rows.length === 1 && reason !== TOO_LARGE) {
          // Nothing answered the very first request (in time): the service cannot be reached at all.
          reachable = false;
          break;
        }
        continue;
      }
      if (rows.length === 0 && answer.status === 401) keyRefused = true;
      const problems = judgeCase(prepared.testCase, answer, settings, learned);
      rows.push({ ...head, verdict: problems.length === 0 ? 'pass' : 'fail', lines: problems });
      // The whole catalog names the plan whose page the page cases check.
      if (rows.length === 1) learnPagePlan(settings, learned);
    }
  } finally {
    await own?.close();
  }
  const report = finishReport(
    {
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
    },
    rows,
  );
  return withoutKeys(report, settings);
}
