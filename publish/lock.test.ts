/**
 * The run lock against real origins (a directory, s3rver): one holder at a time, an expired lock taken over by
 * exactly one of the runs that find it, renewal while the holder runs, and a release that never removes a lock
 * another run has taken.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { STATE_RUN_LOCK } from '../contract/index.ts';
import { TARGET_KINDS, usePublishTarget } from '../testing/targets.ts';
import { acquireRunLock, type HeldRunLock, type LockAttempt, RunLockRecord } from './lock.ts';

/** The lock a run holds; fails the test when it was busy. */
function heldOf(attempt: LockAttempt): HeldRunLock {
  if ('busy' in attempt) throw new Error(`busy: ${JSON.stringify(attempt.busy)}`);
  return attempt.held;
}

const NEVER = 2 ** 30;

describe.each(TARGET_KINDS)('the run lock on %s', (kind) => {
  const under = usePublishTarget(kind, 'catalog-lock-');

  it('is held by one run: a second finds it busy, naming the holder, until it is released', async () => {
    const origin = under.target.origin;
    const first = heldOf(await acquireRunLock(origin, { by: 'lambda', renewEveryMs: NEVER }));
    expect(first.tookOver).toBeNull();
    const stored = RunLockRecord.parse(JSON.parse((await origin.get(STATE_RUN_LOCK))?.body.toString() ?? ''));
    expect(stored).toEqual(first.record);
    expect(Date.parse(stored.expires) - Date.parse(stored.since)).toBe(120_000);

    const second = await acquireRunLock(origin, { by: 'catalog publish' });
    expect(second).toMatchObject({
      busy: {
        by: 'lambda',
        host: stored.host,
        pid: process.pid,
        since: stored.since,
        expires: stored.expires,
      },
    });
    await first.release();
    expect(await origin.get(STATE_RUN_LOCK)).toBeNull();
    const third = heldOf(await acquireRunLock(origin, { by: 'catalog publish', renewEveryMs: NEVER }));
    await third.release();
  });

  it('once expired, is taken over by exactly one of the runs that find it', async () => {
    const origin = under.target.origin;
    const past = () => new Date(Date.now() - 600_000);
    heldOf(await acquireRunLock(origin, { by: 'crashed', clock: past, ttlMs: 60_000, renewEveryMs: NEVER }));
    const attempts = await Promise.all(
      ['a', 'b', 'c'].map((by) => acquireRunLock(origin, { by, renewEveryMs: NEVER })),
    );
    const held = attempts.flatMap((attempt) => ('held' in attempt ? [attempt.held] : []));
    expect(held).toHaveLength(1);
    const stored = RunLockRecord.parse(JSON.parse((await origin.get(STATE_RUN_LOCK))?.body.toString() ?? ''));
    expect(stored).toEqual(held[0]?.record);
    for (const attempt of attempts) if ('busy' in attempt) expect(attempt.busy.by).toBe(held[0]?.record.by);
    await held[0]?.release();
  });

  it('is renewed while its run goes on, and a holder that stalled past its expiry neither keeps nor removes it', async () => {
    const origin = under.target.origin;
    const holder = heldOf(await acquireRunLock(origin, { by: 'slow', ttlMs: 1_000, renewEveryMs: 200 }));
    const firstExpiry = holder.record.expires;
    await sleep(1_500);
    // Renewed: still held past its first expiry.
    expect(Date.parse(holder.record.expires)).toBeGreaterThan(Date.parse(firstExpiry));
    expect(await acquireRunLock(origin, { by: 'next' })).toMatchObject({ busy: { by: 'slow' } });
    expect(holder.lost()).toBe(false);

    await holder.release();

    // A holder that stalled: its lock expired (it was taken ten minutes ago for a second) and another run took
    // it over; its next renewal finds the lock not its own, and its release leaves the new holder's lock.
    const crashed = heldOf(
      await acquireRunLock(origin, {
        by: 'crashed',
        clock: () => new Date(Date.now() - 600_000),
        ttlMs: 1_000,
        renewEveryMs: 300,
      }),
    );
    const taker = heldOf(await acquireRunLock(origin, { by: 'taker', renewEveryMs: NEVER }));
    expect(taker.tookOver).toMatchObject({ by: 'crashed' });
    await sleep(700);
    expect(crashed.lost()).toBe(true);
    await crashed.release();
    expect(await acquireRunLock(origin, { by: 'next' })).toMatchObject({ busy: { by: 'taker' } });
    await taker.release();
    expect(await origin.get(STATE_RUN_LOCK)).toBeNull();
  });
});
