/**
 * The notify hook: POSTs each new change set, in sequence order, to the partner's application, retrying any
 * failure (network, timeout, non-2xx) with a doubling back-off (p-retry) until it is accepted, beside the proxy
 * (serving never waits for it). At least once: a delivery not saved before a restart is sent again; a change
 * set that left the history first is skipped, and the receiver, seeing the gap, resyncs (README.md).
 */
import pRetry from 'p-retry';
import { Agent, request } from 'undici';
import type { ChangeLog, ChangeSet } from './changes.ts';
import { networkError } from './client.ts';

/** Where each change set is POSTed, and the waits (ms): retries from 1 s doubling to 5 min, 10 s timeouts. */
export interface NotifyOptions {
  readonly url: string;
  readonly minRetryMs?: number;
  readonly maxRetryMs?: number;
  /** Time to connect, to the answer's headers, and the longest pause in its body. */
  readonly timeoutMs?: number;
}

/** One attempt to deliver a change set (`attempt`: 1 for the first at it). */
export interface NotifyAttempt {
  readonly at: string;
  readonly sequence: number;
  readonly attempt: number;
  readonly outcome: 'delivered' | 'failed';
  readonly status?: number;
  readonly error?: string;
}

/** The hook's part of `GET /healthz`. */
export interface NotifyHealth {
  /** `ok`: nothing waits or the last attempt worked; `retrying`: the last attempt failed. */
  readonly status: 'ok' | 'retrying';
  /** The receiver's origin (the path and query can hold a secret and are not shown). */
  readonly receiver: string;
  /** The last change set the receiver accepted, and how many held are not delivered yet. */
  readonly delivered: number;
  readonly pending: number;
  readonly consecutiveFailures: number;
  readonly lastAttempt: NotifyAttempt | null;
  readonly nextAttemptAt: string | null;
}

/** The change history, and whom to tell of a delivery (the proxy saves it: a restart carries on after it). */
export interface NotifySource {
  changes(): Pick<ChangeLog, 'latest' | 'oldest' | 'after'>;
  delivered(sequence: number): void;
}

const DEFAULTS = { minRetryMs: 1_000, maxRetryMs: 300_000, timeoutMs: 10_000 };

/** Checks a notify URL: `http(s)://…`, no `user:password@`, no fragment; returns why not, or undefined. */
export function notifyUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http(s):// URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http(s):// URL';
  if (parsed.username !== '' || parsed.password !== '')
    return 'must not hold user:password@ (put a secret in the path or the query)';
  if (url.includes('#')) return 'must not have a #fragment';
  return undefined;
}

/** Delivers change sets to one receiver, one at a time, in sequence order. */
export class ChangeNotifier {
  readonly #url: URL;
  readonly #options: typeof DEFAULTS;
  readonly #source: NotifySource;
  readonly #log: (entry: Readonly<Record<string, unknown>>) => void;
  readonly #agent: Agent;
  readonly #stop = new AbortController();
  #delivered: number;
  #running: Promise<void> | undefined;
  #failures = 0;
  #lastAttempt: NotifyAttempt | undefined;
  #nextAttemptAt: Date | undefined;

  /** A hook that starts after change set `delivered` (nothing is sent before {@link kick}). */
  constructor(
    options: NotifyOptions,
    source: NotifySource,
    delivered: number,
    log: (entry: Readonly<Record<string, unknown>>) => void,
  ) {
    const problem = notifyUrlProblem(options.url);
    if (problem !== undefined) throw new TypeError(`notify URL ${problem}`);
    this.#url = new URL(options.url);
    this.#options = { ...DEFAULTS, ...options };
    this.#source = source;
    this.#delivered = delivered;
    this.#log = log;
    this.#agent = new Agent({ connect: { timeout: this.#options.timeoutMs } });
  }

  /** Starts delivering what waits, unless a delivery is under way (which carries on to the newest). */
  kick(): void {
    if (this.#running || this.#stop.signal.aborted) return;
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      if (this.#source.changes().after(this.#delivered) !== undefined) this.kick();
    });
  }

  async #drain(): Promise<void> {
    for (;;) {
      const set = this.#source.changes().after(this.#delivered);
      if (set === undefined || this.#stop.signal.aborted) return;
      if (set.sequence > this.#delivered + 1)
        this.#log({
          time: new Date().toISOString(),
          event: 'notify',
          outcome: 'skipped',
          sequences: [this.#delivered + 1, set.sequence - 1],
          error: 'no longer in the change history: the receiver sees a gap and resyncs',
        });
      try {
        await this.#deliver(set);
      } catch {
        return; // Only a stop ends the retries.
      }
      this.#delivered = set.sequence;
      this.#source.delivered(set.sequence);
    }
  }

  /** POSTs `set` until the receiver accepts it (any 2xx), or the hook stops. */
  #deliver(set: ChangeSet): Promise<void> {
    const body = JSON.stringify(set);
    const signal = this.#stop.signal;
    const { minRetryMs, maxRetryMs, timeoutMs } = this.#options;
    return pRetry(
      async (attempt) => {
        this.#nextAttemptAt = undefined;
        let status: number;
        try {
          const response = await request(this.#url, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json; charset=utf-8' },
            dispatcher: this.#agent,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            signal,
          });
          status = response.statusCode;
          await response.body.dump();
        } catch (error) {
          // Every failure on the way is worth another attempt (p-retry gives up at once on a TypeError).
          throw new Error(networkError(error));
        }
        if (status < 200 || status > 299)
          throw Object.assign(new Error(`the receiver answered ${status}`), { status });
        this.#failures = 0;
        this.#attempted({ sequence: set.sequence, attempt, outcome: 'delivered', status });
      },
      {
        retries: Number.POSITIVE_INFINITY,
        factor: 2,
        minTimeout: minRetryMs,
        maxTimeout: maxRetryMs,
        unref: true,
        signal,
        onFailedAttempt: ({ error, attemptNumber, retriesConsumed }) => {
          if (signal.aborted) return;
          // p-retry waits minTimeout × 2^(retries consumed so far), at most maxTimeout, before the next attempt.
          const waitMs = Math.min(minRetryMs * 2 ** retriesConsumed, maxRetryMs);
          this.#failures += 1;
          this.#nextAttemptAt = new Date(Date.now() + waitMs);
          this.#attempted(
            {
              sequence: set.sequence,
              attempt: attemptNumber,
              outcome: 'failed',
              ...('status' in error ? { status: error.status as number } : {}),
              error: error.message,
            },
            { nextAttemptInSeconds: waitMs / 1000 },
          );
        },
      },
    );
  }

  /** Records an attempt, now, as the last one, and logs it. */
  #attempted(attempt: Omit<NotifyAttempt, 'at'>, extra = {}): void {
    this.#lastAttempt = { at: new Date().toISOString(), ...attempt };
    this.#log({ time: this.#lastAttempt.at, event: 'notify', ...this.#lastAttempt, ...extra });
  }

  health(): NotifyHealth {
    const { latest, oldest } = this.#source.changes();
    const held = oldest === null ? latest : oldest - 1;
    return {
      status: this.#lastAttempt?.outcome === 'failed' ? 'retrying' : 'ok',
      receiver: this.#url.origin,
      delivered: this.#delivered,
      pending: Math.max(0, latest - Math.max(this.#delivered, held)),
      consecutiveFailures: this.#failures,
      lastAttempt: this.#lastAttempt ?? null,
      nextAttemptAt: this.#nextAttemptAt?.toISOString() ?? null,
    };
  }

  /** Stops delivering (an attempt under way is aborted; what waits is delivered after a restart). */
  async close(): Promise<void> {
    this.#stop.abort(new Error('the proxy is stopping'));
    await this.#running;
    await this.#agent.close();
  }
}
