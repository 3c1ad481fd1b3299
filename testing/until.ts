import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves with what `check` returns once that is truthy, checking every `everyMs`. No limit of its own: how
 * long a busy machine takes is no test's business, and the test's time limit (vitest.config.ts) stops a hang.
 * `what` names the wait for a reader of the test.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  _what: string,
  everyMs = 10,
): Promise<NonNullable<T>> {
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    await sleep(everyMs);
  }
}
