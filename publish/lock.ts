/**
 * The run lock at the origin (docs/decisions.md#build-cost): `state/run-lock.json`, created only if absent,
 * saying who runs and until when. A second run finds it and ends `busy`; the holder renews it while it runs; a
 * crashed run's lock expires (its process dead on this host: at once) and the next run takes it over by a compare
 * and swap on its MD5, which only one run can win. The lock saves a run its work: the pointer's own conditional
 * write is what keeps the pointer right.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { STATE_RUN_LOCK } from '../contract/index.ts';
import { isAlive } from '../files/alive.ts';
import { type OriginStore, parseStoredJson, stateObject } from './origin.ts';

/** How long a lock lasts without renewal: a crashed run blocks the next ones at most this long. */
export const RUN_LOCK_TTL_MS = 120_000;

/** The lock as stored. */
export const RunLockRecord = z.object({
  /** A random id of the run holding it, and what runs: `catalog publish`, `catalog rollback`, `lambda`. */
  run: z.string(),
  by: z.string(),
  host: z.string(),
  pid: z.number().int(),
  /** When the run took the lock, and until when it holds it (ISO 8601). */
  since: z.iso.datetime(),
  expires: z.iso.datetime(),
});
export type RunLockRecord = z.output<typeof RunLockRecord>;

/** The lock another run holds. */
export type LockHolder = Readonly<Omit<RunLockRecord, 'run'>>;

/**
 * A lock this run holds, renewed until released (`release` never throws): the lock it took over, if any (`dead`:
 * its holder's process, on this host, is gone); `lost` once a renewal found it another run's.
 */
export interface HeldRunLock {
  readonly record: RunLockRecord;
  readonly tookOver: (LockHolder & { readonly dead: boolean }) | null;
  readonly lost: () => boolean;
  release(): Promise<void>;
}

export type LockAttempt = { readonly held: HeldRunLock } | { readonly busy: LockHolder };

const lockObject = (record: RunLockRecord) => stateObject(STATE_RUN_LOCK, `${JSON.stringify(record)}\n`);

/** The stored lock: its record (or, unreadable, an expiry from when it was written) and its MD5. */
export async function readLock(origin: OriginStore): Promise<{ holder: LockHolder; md5: string } | null> {
  const stored = await origin.get(STATE_RUN_LOCK);
  if (!stored) return null;
  const read = parseStoredJson(stored.body, STATE_RUN_LOCK, RunLockRecord, { what: 'a lock', noun: 'lock' });
  const holder: LockHolder =
    'value' in read
      ? read.value
      : {
          by: 'unknown (an unreadable lock)',
          host: 'unknown',
          pid: 0,
          since: stored.lastModified.toISOString(),
          expires: new Date(stored.lastModified.getTime() + RUN_LOCK_TTL_MS).toISOString(),
        };
  return { holder, md5: stored.md5 };
}

/** One line naming the run that holds a lock. */
export function describeHolder(holder: LockHolder): string {
  return `${holder.by} (pid ${holder.pid} on ${holder.host}, since ${holder.since}, lock until ${holder.expires})`;
}

/** The warning of a run that took over a lock: its holder's process was dead, or the lock had expired. */
export function tookOverWarning(holder: LockHolder & { readonly dead: boolean }): string {
  return `took over the run lock of ${describeHolder(holder)}, ${holder.dead ? 'whose process is dead' : 'which had expired'}`;
}

/**
 * Takes the run lock for `by` (what runs: `catalog publish`, `lambda`), or finds it held. A lock that expired, or
 * whose holder is a process of this host that is dead, is taken over (`tookOver` names its run). Throws when the
 * origin cannot be read or written.
 */
export async function acquireRunLock(origin: OriginStore, by: string): Promise<LockAttempt> {
  const run = randomBytes(8).toString('hex');
  const since = new Date();
  const recordAt = (now: Date): RunLockRecord => ({
    run,
    by,
    host: hostname(),
    pid: process.pid,
    since: since.toISOString(),
    expires: new Date(now.getTime() + RUN_LOCK_TTL_MS).toISOString(),
  });

  let tookOver: HeldRunLock['tookOver'] = null;
  let record = recordAt(since);
  let object = lockObject(record);
  // A lock released between our create and our read is simply tried again.
  for (let attempt = 0; ; attempt += 1) {
    if ((await origin.put(object, { overwrite: false })) === 'written') break;
    const found = await readLock(origin);
    if (found === null) {
      if (attempt < 3) continue;
      throw new Error(`${origin.name}: ${STATE_RUN_LOCK} could not be created nor read`);
    }
    // A holder on this host whose process is dead (killed) holds nothing: its lock is taken over at once.
    const dead = found.holder.host === hostname() && !isAlive(found.holder.pid);
    if (Date.parse(found.holder.expires) > Date.now() && !dead) return { busy: found.holder };
    if (await origin.replace(object, found.md5)) {
      tookOver = { ...found.holder, dead };
      break;
    }
    // Another run took the expired lock first: it is busy now.
    const winner = await readLock(origin);
    if (winner) return { busy: winner.holder };
  }

  let lost = false;
  let renewing: Promise<unknown> = Promise.resolve();
  // Renewed four times per expiry: a failed renewal is tried again at the next, the expiry leaves room for a few.
  const timer = setInterval(() => {
    renewing = renewing.then(async () => {
      if (lost) return;
      const renewed = recordAt(new Date());
      const next = lockObject(renewed);
      try {
        if (await origin.replace(next, object.md5)) {
          record = renewed;
          object = next;
        } else lost = true;
      } catch {}
    });
  }, RUN_LOCK_TTL_MS / 4);
  timer.unref();
  return {
    held: {
      get record() {
        return record;
      },
      tookOver,
      lost: () => lost,
      async release() {
        clearInterval(timer);
        await renewing;
        try {
          const found = await origin.get(STATE_RUN_LOCK);
          if (found && found.md5 === object.md5) await origin.delete([STATE_RUN_LOCK]);
        } catch {
          // Left in place, it expires.
        }
      },
    },
  };
}
