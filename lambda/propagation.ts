/** How long the edge takes to serve a new build after the pointer moved (docs/decisions.md#operations). */
import { setTimeout as sleep } from 'node:timers/promises';
import { CatalogError, describeCause, settingRef } from '../contract/errors.ts';
import { catalogTarget, DISCIPLINES } from '../contract/index.ts';

/** What the check found. Only `measured` carries a figure; none of these fails a run. */
export type PropagationResult =
  /** The edge served the new build `seconds` after the pointer moved. */
  | { readonly outcome: 'measured'; readonly seconds: number; readonly polls: number }
  /** The edge still served another build when the wait ran out. */
  | {
      readonly outcome: 'timeout';
      readonly waitedSeconds: number;
      readonly polls: number;
      /** The `generatedAt` the edge served last, or why no catalog came back. */
      readonly lastSeen: string;
    }
  /** Not measured: no key configured, no time left, or nothing was published. */
  | { readonly outcome: 'skipped'; readonly reason: string }
  /** The edge refused the probe in a way waiting does not fix (a wrong key, a wrong address). */
  | { readonly outcome: 'failed'; readonly reason: string; readonly polls: number };

/** The statuses no amount of waiting changes: the probe itself is wrong. */
const FINAL_STATUSES = new Set([400, 401, 403, 404, 405]);

/** The longest one request may take, and the least it is given however near the deadline. */
const REQUEST_TIMEOUT_MS = 10_000;
const MIN_REQUEST_TIMEOUT_MS = 2_000;

/** `since`: `performance.now()` at the pointer move; `key`: the monitoring key, never logged. */
export interface PropagationOptions {
  readonly baseUrl: string;
  readonly key: string;
  /** The new build's `generatedAt`. */
  readonly generatedAt: string;
  readonly since: number;
  readonly maxWaitMs: number;
  readonly intervalMs: number;
}

/**
 * The most of an answer the probe reads: a catalog starts with its `generatedAt` (builder/catalogs.ts), and the
 * rest of it (megabytes at 30,000 plans) is never downloaded.
 */
const HEAD_BYTES = 1024;

/** A catalog's head: `{"generatedAt":"…"` (JSON whitespace allowed). */
const CATALOG_HEAD = /^\s*\{\s*"generatedAt"\s*:\s*("(?:[^"\\]|\\.)*")/;

/** Reads `generatedAt` from the head of a catalog body; null when the body does not start as a catalog. */
function generatedAtOf(head: string): string | null {
  const quoted = CATALOG_HEAD.exec(head)?.[1];
  if (quoted === undefined) return null;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return null;
  }
}

/** The first {@link HEAD_BYTES} of an answer's body (decoded); the rest is cancelled, never read. */
async function headOf(answer: Response): Promise<string> {
  const reader = answer.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < HEAD_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, HEAD_BYTES).toString('utf8');
}

/**
 * Asks the edge which build it serves until it serves the one stamped `generatedAt`, or until `maxWaitMs`
 * after `since`. Network errors and 5xx answers are waited out; 400, 401, 403, 404 and 405 stop at once.
 */
export async function measurePropagation(options: PropagationOptions): Promise<PropagationResult> {
  // The probe: the first discipline's catalog (`running`, the spec's probe), one the edge caches.
  const url = `${options.baseUrl.replace(/\/+$/, '')}${catalogTarget(DISCIPLINES[0])}`;
  const deadline = options.since + options.maxWaitMs;
  let polls = 0;
  let lastSeen = 'no answer yet';
  for (;;) {
    polls += 1;
    const remaining = deadline - performance.now();
    try {
      const answer = await fetch(url, {
        headers: { 'x-api-key': options.key, accept: 'application/json' },
        // The last poll, at the deadline, still gets a fair chance to answer.
        signal: AbortSignal.timeout(
          Math.ceil(Math.min(REQUEST_TIMEOUT_MS, Math.max(remaining, MIN_REQUEST_TIMEOUT_MS))),
        ),
      });
      const head = await headOf(answer);
      if (answer.status === 200) {
        const served = generatedAtOf(head);
        if (served === options.generatedAt) {
          const seconds = Math.max(0, performance.now() - options.since) / 1000;
          return { outcome: 'measured', seconds: Math.round(seconds * 1000) / 1000, polls };
        }
        lastSeen = served === null ? 'a 200 answer that is not a catalog' : `generatedAt ${served}`;
      } else if (FINAL_STATUSES.has(answer.status)) {
        return {
          outcome: 'failed',
          reason: `GET ${url} answered ${answer.status}${answer.status === 401 ? ' (the monitoring key is not valid)' : ''}`,
          polls,
        };
      } else {
        lastSeen = `HTTP ${answer.status}`;
      }
    } catch (error) {
      lastSeen = describeCause(error);
    }
    const now = performance.now();
    if (now >= deadline) {
      return {
        outcome: 'timeout',
        waitedSeconds: Math.round(Math.max(0, now - options.since)) / 1000,
        polls,
        lastSeen,
      };
    }
    // A timer can end up to a millisecond early (Node counts whole ms): the last pause ends past the deadline.
    await sleep(Math.min(options.intervalMs, Math.ceil(deadline - now) + 1));
  }
}

/** After a publish that moved the pointer: how long the edge takes to serve it (propagation.ts); never fails. */
export interface PropagationCheck {
  /** The monitoring key; resolves undefined when none is configured (the check is skipped, and says so). */
  readonly key: () => Promise<string | undefined>;
  /** How long to wait after the pointer move. */
  readonly maxWaitMs: number;
  readonly intervalMs: number;
  /** How long the caller may still wait (the Lambda: its remaining time less a reserve); nothing left: skipped. */
  readonly timeLeftMs?: () => number;
}

/**
 * Runs the check after a publish that moved the pointer at `movedAt` (`performance.now()`): skipped without a
 * monitoring key or without time left, else measured within what is left. Never throws.
 */
export async function checkPropagation(
  check: PropagationCheck,
  run: {
    readonly baseUrl: string;
    readonly generatedAt: string;
    readonly movedAt: number;
    /** Shows a message the way the entry point names settings. */
    readonly present: (message: string) => string;
  },
): Promise<PropagationResult> {
  const left = check.timeLeftMs?.() ?? Number.POSITIVE_INFINITY;
  if (left <= 0) return { outcome: 'skipped', reason: 'no time left for it before the run times out' };
  let key: string | undefined;
  try {
    key = await check.key();
  } catch (error) {
    const message = error instanceof CatalogError ? error.message : describeCause(error);
    return {
      outcome: 'failed',
      reason: run.present(`reading the monitoring key failed: ${message}`),
      polls: 0,
    };
  }
  if (key === undefined)
    return {
      outcome: 'skipped',
      reason: run.present(`no monitoring key is configured (${settingRef('monitoringKeySecretArn')})`),
    };
  return measurePropagation({
    baseUrl: run.baseUrl,
    key,
    generatedAt: run.generatedAt,
    since: run.movedAt,
    maxWaitMs: Math.min(check.maxWaitMs, performance.now() - run.movedAt + left),
    intervalMs: check.intervalMs,
  });
}
