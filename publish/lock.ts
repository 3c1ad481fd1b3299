/**
 * The run lock at the origin (docs/decisions.md#build-cost): one object, `state/run-lock.json`, created only
 * if absent (S3 `If-None-Match: *`; a directory: an exclusive link), holding who runs and until when. A second
 * run finds it and exits early as `busy`; the holder renews the expiry while it runs; a crashed run's lock
 * expires (or, its process gone from this host, is free at once) and the next run takes it over with a compare-and-swap on the lock's MD5 (S3 `If-Match`), so two
 * runs taking over at once cannot both win. The live pointer's own conditional write still refuses a stale
 * flip: the lock saves a second run its work, it is not what keeps the pointer right.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { STATE_RUN_LOCK } from '../contract/index.ts';
import { isAlive } from '../files/alive.ts';
import { type ObjectToWrite, type OriginStore, stateObject } from './origin.ts';

/** How long a lock lasts without renewal: a crashed run blocks the next ones at most this long. */
export const RUN_LOCK_TTL_MS = 120_000;

/** The lock as stored. */
export const RunLockRecord = z.object({
  /** A random id of the run holding it. */
  run: z.string(),
  /** What runs: `catalog publish`, `catalog rollback`, `lambda`. */
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

/** A lock this run holds: renewed in the background until released. */
export interface HeldRunLock {
  readonly record: RunLockRecord;
  /** The expired lock this run took over, if it did. */
  readonly tookOver: LockHolder | null;
  /** Set when a renewal found the lock no longer ours (we stalled past its expiry and another run took it). */
  readonly lost: () => boolean;
  /** Stops renewing and removes the lock if it is still ours. Never throws. */
  release(): Promise<void>;
}

export type LockAttempt = { readonly held: HeldRunLock } | { readonly busy: LockHolder };

function lockObject(record: RunLockRecord): ObjectToWrite {
  return stateObject(STATE_RUN_LOCK, `${JSON.stringify(record)}\n`);
}

/** The stored lock: its record (or, unreadable, an expiry from when it was written) and its MD5. */
export async function readLock(origin: OriginStore): Promise<{ holder: LockHolder; md5: string } | null> {
  const stored = await origin.get(STATE_RUN_LOCK);
  if (!stored) return null;
  let parsed: RunLockRecord | undefined;
  try {
    parsed = RunLockRecord.parse(JSON.parse(stored.body.toString('utf8')));
  } catch {
    parsed = undefined;
  }
  const holder: LockHolder = parsed ?? {
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

/**
 * Takes the run lock for `by` (what runs: `catalog publish`, `lambda`), or finds it held. An expired lock is
 * taken over (`tookOver` names its run). Throws when the origin cannot be read or written.
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

  let tookOver: LockHolder | null = null;
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
    // A holder on this host whose process is gone (killed) holds nothing: its lock is taken over at once.
    const gone = found.holder.host === hostname() && !isAlive(found.holder.pid);
    if (Date.parse(found.holder.expires) > Date.now() && !gone) return { busy: found.holder };
    if (await origin.replace(object, found.md5)) {
      tookOver = found.holder;
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
