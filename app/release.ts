/**
 * A release of the gateway's functions (infra/README.md, "Verifying the function"): what the deploy's release step
 * (lambda/release.ts) and `catalog publish-functions` both run. For each function whose DEVELOPMENT stage runs
 * something else than LIVE (or that has no LIVE yet), the whole request-case table runs against DEVELOPMENT through
 * TestFunction (app/verify-function.ts), and only when every case of every such function passes is each published,
 * with the ETag of what was verified. A function whose LIVE already runs its DEVELOPMENT code costs four reads and
 * no test.
 *
 * The viewer-request cases that need keys get keys of their own: the release adds them to the store in one write
 * (partner `release-check`, expiring within {@link KEY_LIFETIME_MS} even if the release dies before it removes
 * them) and removes them in one write at the end; a partner's key is never used. Whether TestFunction sees a
 * store write at once is not documented, so the release first asks, with one case, until the new key is accepted
 * (at most {@link KEY_WAIT_MS}); a store that lags longer still gets the whole table, and a failure then says so.
 * The whole release ends by {@link RELEASE_DEADLINE_MS}: published, or failed with nothing published.
 */
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { CatalogError, describeCause } from '../contract/errors.ts';
import { KVS_CORS_ORIGIN } from '../contract/index.ts';
import { REQUEST_CASES, type RequestCase } from '../gateway/cases.ts';
import { generateKey, hashKey, serializeKeyRecord, storeKeyOf } from '../keys/keys.ts';
import type { KeyValueStore } from '../keys/store.ts';
import { type FunctionStages, publishFunction, readStages, stagesDiffer } from './function-stages.ts';
import {
  type FunctionKind,
  failedCases,
  observe,
  planCases,
  summarize,
  testEvent,
  type VerifyKeys,
  type VerifyReport,
  verifyFunction,
} from './verify-function.ts';

/** The partner of the keys a release adds to the store for its own cases (and removes). */
export const RELEASE_PARTNER = 'release-check';
/** How long the release's keys stay valid even if it dies before removing them. */
export const KEY_LIFETIME_MS = 30 * 60_000;
/** How long the release waits for TestFunction to see the keys it added, asking every {@link KEY_PROBE_MS}. */
export const KEY_WAIT_MS = 90_000;
export const KEY_PROBE_MS = 5_000;
/** The end of a release, whatever happens: published, or failed with nothing published. */
export const RELEASE_DEADLINE_MS = 10 * 60_000;
/** Time the deploy's release step keeps, after the deadline, to remove its keys and answer CloudFormation. */
export const RELEASE_RESERVE_MS = 60_000;

/** A release is refused: a case failed, or a call did. Nothing was published. */
export class ReleaseError extends CatalogError {
  override name = 'ReleaseError';
  /** The verifications that ran before it ended (every case's line). */
  readonly reports: readonly VerifyReport[];
  constructor(message: string, options: { cause?: unknown; reports?: readonly VerifyReport[] } = {}) {
    super(message, { cause: options.cause });
    this.reports = options.reports ?? [];
  }
}

/** A function of the release, and which of the gateway's two it is. */
export interface ReleaseFunction {
  readonly name: string;
  readonly kind: FunctionKind;
}

/** What the release did with one function. */
export interface FunctionRelease {
  readonly name: string;
  readonly kind: FunctionKind;
  /**
   * `unchanged`: LIVE already runs DEVELOPMENT's code, nothing tested; `published`: verified, then published;
   * `held`: DEVELOPMENT differs and publishing is off (nothing tested: catalog publish-functions does both).
   */
  readonly result: 'unchanged' | 'published' | 'held';
  /** The verified DEVELOPMENT's ETag (published), or LIVE's. */
  readonly etag: string;
  /** The cases' counts, for a verified function. */
  readonly cases?: { readonly passed: number; readonly failed: number; readonly skipped: number };
}

/** A release's outcome: each function's, the verifications' reports, and what became of its keys. */
export interface ReleaseOutcome {
  readonly functions: readonly FunctionRelease[];
  readonly reports: readonly VerifyReport[];
  /** `none`: no viewer-request cases ran; `removed`; or why they are still there (they expire by themselves). */
  readonly keys: string;
}

/** What a release is given: its clients and what it acts on. */
export interface ReleaseOptions {
  readonly functions: readonly ReleaseFunction[];
  /** Publish what passes; false: a function that has a LIVE stage is held (a first create is always published). */
  readonly publish: boolean;
  readonly cases?: readonly RequestCase[];
  readonly now?: () => Date;
  readonly deadlineMs?: number;
  readonly keyWaitMs?: number;
  readonly keyProbeMs?: number;
  /** Hears one line per step (no key in any). */
  readonly log?: (entry: Readonly<Record<string, unknown>>) => void;
}

/** The keys a release adds: three valid ones (`{valid}`, `{other}`, `{expiring}`) and an expired one. */
interface ReleaseKeys {
  readonly verify: VerifyKeys;
  /** Their entries in the store, by store key. */
  readonly entries: ReadonlyMap<string, string>;
}

/** New keys for one release, at `now`; a revoked key is one the store does not hold, as a removed key. */
export function releaseKeys(now: Date): ReleaseKeys {
  const created = now.toISOString();
  const valid = [generateKey(), generateKey(), generateKey()];
  const expired = generateKey();
  const record = (expires: number) =>
    serializeKeyRecord({ partner: RELEASE_PARTNER, created, expires: new Date(expires).toISOString() });
  const entries = new Map<string, string>([
    ...valid.map((key) => [storeKeyOf(hashKey(key)), record(now.getTime() + KEY_LIFETIME_MS)] as const),
    [storeKeyOf(hashKey(expired)), record(now.getTime() - 60_000)],
  ]);
  return { verify: { valid, expired, revoked: generateKey() }, entries };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** The case the release asks with until the store's new key is accepted: the whole catalog, with a valid key. */
function probeCase(cases: readonly RequestCase[]): RequestCase {
  const probe = cases.find(
    (c) =>
      c.method === 'GET' && c.status === 200 && JSON.stringify(c.headers) === '[["X-Api-Key","{valid}"]]',
  );
  if (!probe) throw new Error('the request-case table has no plain case with a valid key');
  return probe;
}

/**
 * Asks TestFunction with one case until it accepts the release's key (the store's write has reached it), at most
 * `waitMs`; LIVE when the function has one (known code: a refusal there is the store's lag, not the new code's).
 * Returns whether it did.
 */
async function keysSeen(
  client: CloudFrontClient,
  stages: FunctionStages,
  keys: VerifyKeys,
  options: { cases: readonly RequestCase[]; waitMs: number; probeMs: number; signal: AbortSignal },
): Promise<boolean> {
  const [planned] = planCases([probeCase(options.cases)], keys);
  if (!planned || !('event' in planned)) throw new Error('the probe case needs no other key');
  const live = stages.live;
  const call = {
    name: stages.name,
    stage: live ? ('LIVE' as const) : ('DEVELOPMENT' as const),
    etag: (live ?? stages.development).etag,
    signal: options.signal,
  };
  const until = Date.now() + options.waitMs;
  for (;;) {
    const observed = observe(await testEvent(client, call, planned.event, "the release's key"));
    if (!('status' in observed && observed.status === 401)) return true;
    if (Date.now() + options.probeMs > until) return false;
    await sleep(options.probeMs, options.signal);
  }
}

/**
 * Releases the functions: see the module's comment. Throws {@link ReleaseError} when a case fails or a call does
 * (naming the cases, and what came back); nothing is published then.
 */
export async function releaseFunctions(
  clients: { readonly cloudfront: CloudFrontClient; readonly store: KeyValueStore },
  options: ReleaseOptions,
): Promise<ReleaseOutcome> {
  const cases = options.cases ?? REQUEST_CASES;
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const signal = AbortSignal.timeout(options.deadlineMs ?? RELEASE_DEADLINE_MS);
  const { cloudfront, store } = clients;
  const reports: VerifyReport[] = [];
  const fail = (message: string, error?: unknown): never => {
    if (error instanceof ReleaseError) throw error;
    const why = signal.aborted
      ? `not done within ${Math.round((options.deadlineMs ?? RELEASE_DEADLINE_MS) / 1000)} s`
      : message;
    throw new ReleaseError(`${why}; nothing was published (LIVE keeps the code partners are served)`, {
      cause: error,
      reports,
    });
  };

  let stages: FunctionStages[];
  try {
    stages = await Promise.all(options.functions.map((fn) => readStages(cloudfront, fn.name, signal)));
  } catch (error) {
    return fail(`reading the functions' stages failed (${describeCause(error)})`, error);
  }
  const plans = options.functions.map((fn, i) => {
    const stage = stages[i] as FunctionStages;
    const differs = stagesDiffer(stage);
    const action = !differs ? 'unchanged' : options.publish || stage.live === null ? 'verify' : 'held';
    return { fn, stage, action } as const;
  });
  for (const { fn, action } of plans) log({ message: 'function stages read', function: fn.name, action });
  const toVerify = plans.filter((plan) => plan.action === 'verify');
  const done = (keys: string): ReleaseOutcome => ({
    functions: plans.map(({ fn, stage, action }) => {
      const report = reports.find((r) => r.name === fn.name);
      return {
        name: fn.name,
        kind: fn.kind,
        result: action === 'verify' ? 'published' : action,
        etag: report?.etag ?? (stage.live ?? stage.development).etag,
        ...(report ? { cases: summarize(report) } : {}),
      };
    }),
    reports,
    keys,
  });
  if (toVerify.length === 0) return done('none');

  const request = toVerify.find((plan) => plan.fn.kind === 'viewer-request');
  const keys = request ? releaseKeys(now()) : undefined;
  let keyState = 'none';
  let cors: string | null;
  try {
    if (keys)
      cors = await store.update((entries) => {
        for (const [key, value] of keys.entries) entries.set(key, value);
        return entries.get(KVS_CORS_ORIGIN) ?? null;
      });
    else cors = (await store.read()).get(KVS_CORS_ORIGIN) ?? null;
  } catch (error) {
    return fail(`adding the release's keys to ${store.name} failed (${describeCause(error)})`, error);
  }
  if (keys) keyState = 'added';
  log({ message: 'store read', keysAdded: keys ? keys.entries.size : 0, cors: cors !== null });

  try {
    let lagging = false;
    if (request && keys) {
      try {
        lagging = !(await keysSeen(cloudfront, request.stage, keys.verify, {
          cases,
          waitMs: options.keyWaitMs ?? KEY_WAIT_MS,
          probeMs: options.keyProbeMs ?? KEY_PROBE_MS,
          signal,
        }));
      } catch (error) {
        fail(`asking whether TestFunction sees the release's keys failed (${describeCause(error)})`, error);
      }
      log({ message: 'release keys', seen: !lagging });
    }
    for (const { fn } of toVerify) {
      try {
        reports.push(
          await verifyFunction(cloudfront, {
            name: fn.name,
            kind: fn.kind,
            stage: 'DEVELOPMENT',
            cases,
            keys: keys?.verify ?? { valid: [] },
            cors,
            signal,
          }),
        );
      } catch (error) {
        fail(`verifying ${fn.name} failed (${describeCause(error)})`, error);
      }
    }
    const failed = reports.filter((report) => summarize(report).failed > 0);
    if (failed.length > 0) {
      const lag = lagging
        ? `; the release's keys had not reached TestFunction after ${Math.round((options.keyWaitMs ?? KEY_WAIT_MS) / 1000)} s, so a case that needs a valid key may have failed for that alone: deploy again`
        : '';
      fail(`${failed.map((report) => failedCases(report)).join('; ')}${lag}`);
    }
    // Every case of every function passed: publish each, as verified.
    const published: string[] = [];
    for (const report of reports) {
      try {
        await publishFunction(cloudfront, report.name, report.etag, signal);
      } catch (error) {
        const before = published.length > 0 ? ` (${published.join(', ')} was published before it)` : '';
        throw new ReleaseError(`${describeCause(error)}${before}`, { cause: error, reports });
      }
      published.push(report.name);
      log({ message: 'function published', function: report.name, etag: report.etag });
    }
    keyState = keys ? await removeKeys(store, keys) : 'none';
    return done(keyState);
  } catch (error) {
    if (keys) {
      const removed = await removeKeys(store, keys);
      log({ message: 'release keys', keys: removed });
    }
    throw error;
  }
}

/** Removes the release's keys; never throws: a key left behind expires by itself (says when). */
async function removeKeys(store: KeyValueStore, keys: ReleaseKeys): Promise<string> {
  try {
    await store.update((entries) => {
      for (const key of keys.entries.keys()) entries.delete(key);
    });
    return 'removed';
  } catch (error) {
    return `not removed (${describeCause(error)}); they expire within ${KEY_LIFETIME_MS / 60_000} minutes`;
  }
}
