/**
 * The run lock against real origins (a directory, s3rver): one holder at a time, an expired lock taken over by
 * exactly one of the runs that find it, renewal while the holder runs, and a release that never removes a lock
 * another run has taken.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STATE_RUN_LOCK } from '../contract/index.ts';
import { TARGET_KINDS, usePublishTarget } from '../testing/targets.ts';
import {
  acquireRunLock,
  describeHolder,
  type HeldRunLock,
  type LockAttempt,
  RUN_LOCK_TTL_MS,
  RunLockRecord,
  tookOverWarning,
} from './lock.ts';
import { stateObject } from './origin.ts';

/** The lock a run holds; fails the test when it was busy. */
function heldOf(attempt: LockAttempt): HeldRunLock {
  if ('busy' in attempt) throw new Error(`busy: ${JSON.stringify(attempt.busy)}`);
  return attempt.held;
}

/** The clock (and the renewal timer) of the tests that move time: fake, so no test waits for it. */
const MOVED = { toFake: ['Date', 'setInterval', 'clearInterval'] } satisfies Parameters<
  typeof vi.useFakeTimers
>[0];
/** How long a renewal's write may take on a busy machine before the test gives up on it. */
const SETTLED = { timeout: 60_000 };
afterEach(() => {
  vi.useRealTimers();
});

describe.each(TARGET_KINDS)('the run lock on %s', (kind) => {
  const under = usePublishTarget(kind, 'catalog-lock-');

  it('is held by one run: a second finds it busy, naming the holder, until it is released', async () => {
    const origin = under.target.origin;
    const first = heldOf(await acquireRunLock(origin, 'lambda'));
    expect(first.tookOver).toBeNull();
    const stored = RunLockRecord.parse(JSON.parse((await origin.get(STATE_RUN_LOCK))?.body.toString() ?? ''));
    expect(stored).toEqual(first.record);
    expect(Date.parse(stored.expires) - Date.parse(stored.since)).toBe(120_000);

    const second = await acquireRunLock(origin, 'catalog publish');
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
    const third = heldOf(await acquireRunLock(origin, 'catalog publish'));
    await third.release();
  });

  it('once expired, is taken over by exactly one of the runs that find it', async () => {
    const origin = under.target.origin;
    // A run that took the lock ten minutes ago and crashed: its renewals never fire.
    vi.useFakeTimers({ ...MOVED, now: Date.now() - 600_000 });
    heldOf(await acquireRunLock(origin, 'crashed'));
    vi.useRealTimers();
    const attempts = await Promise.all(['a', 'b', 'c'].map((by) => acquireRunLock(origin, by)));
    const held = attempts.flatMap((attempt) => ('held' in attempt ? [attempt.held] : []));
    expect(held).toHaveLength(1);
    expect(held[0]?.tookOver).toMatchObject({ by: 'crashed', dead: false });
    // Its process is this one, alive: it is named as expired.
    expect(
      tookOverWarning(held[0]?.tookOver ?? { by: '', host: '', pid: 0, since: '', expires: '', dead: true }),
    ).toMatch(/^took over the run lock of crashed \(pid \d+ on .+\), which had expired$/);
    const stored = RunLockRecord.parse(JSON.parse((await origin.get(STATE_RUN_LOCK))?.body.toString() ?? ''));
    expect(stored).toEqual(held[0]?.record);
    for (const attempt of attempts) if ('busy' in attempt) expect(attempt.busy.by).toBe(held[0]?.record.by);
    await held[0]?.release();
  });

  it('held by a process of this host that is gone (killed), is taken over at once, naming it', async () => {
    const origin = under.target.origin;
    const dead = Number(
      spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
        .stdout,
    );
    const killed = heldOf(await acquireRunLock(origin, 'killed'));
    // Its record as the killed run left it: unexpired, but its process is gone.
    await origin.put(stateObject(STATE_RUN_LOCK, `${JSON.stringify({ ...killed.record, pid: dead })}\n`), {
      overwrite: true,
    });
    const next = heldOf(await acquireRunLock(origin, 'next'));
    expect(next.tookOver).toMatchObject({ by: 'killed', pid: dead, dead: true });
    // Named as dead, not as expired: its lock had not expired.
    expect(tookOverWarning(next.tookOver ?? { ...killed.record, dead: false })).toBe(
      `took over the run lock of ${describeHolder({ ...killed.record, pid: dead })}, whose process is dead`,
    );
    await next.release();
    // A live holder of this host is waited for, as before.
    const live = heldOf(await acquireRunLock(origin, 'live'));
    expect(await acquireRunLock(origin, 'again')).toMatchObject({ busy: { by: 'live', pid: process.pid } });
    await live.release();
  });

  it('is renewed while its run goes on, and a holder that stalled past its expiry neither keeps nor removes it', async () => {
    const origin = under.target.origin;
    vi.useFakeTimers(MOVED);
    const holder = heldOf(await acquireRunLock(origin, 'slow'));
    const firstExpiry = holder.record.expires;
    // A quarter of the expiry later, the holder has renewed it: still held past its first expiry.
    await vi.advanceTimersByTimeAsync(RUN_LOCK_TTL_MS / 4);
    await vi.waitFor(
      () => expect(Date.parse(holder.record.expires)).toBeGreaterThan(Date.parse(firstExpiry)),
      SETTLED,
    );
    vi.setSystemTime(Date.parse(firstExpiry) + 1);
    expect(await acquireRunLock(origin, 'next')).toMatchObject({ busy: { by: 'slow' } });
    expect(holder.lost()).toBe(false);
    await holder.release();

    // A holder that stalled: its lock expired and another run took it over; its next renewal finds the lock not
    // its own, and its release leaves the new holder's lock.
    const stalled = heldOf(await acquireRunLock(origin, 'stalled'));
    vi.setSystemTime(Date.parse(stalled.record.expires) + 1);
    const taker = heldOf(await acquireRunLock(origin, 'taker'));
    expect(taker.tookOver).toMatchObject({ by: 'stalled' });
    await vi.advanceTimersByTimeAsync(RUN_LOCK_TTL_MS / 4);
    await vi.waitFor(() => expect(stalled.lost()).toBe(true), SETTLED);
    await stalled.release();
    expect(await acquireRunLock(origin, 'next')).toMatchObject({ busy: { by: 'taker' } });
    await taker.release();
    expect(await origin.get(STATE_RUN_LOCK)).toBeNull();
  });
});
