/**
 * Bounds that follow the machine's pace, for the system tests whose work is long (every kill point of a publish,
 * twenty rounds of racing publishes): the first unit of the work is timed on this machine, at this load, and each
 * later unit, which repeats it, must end within a multiple of that time. A test using them has no fixed limit of its
 * own (`NO_FIXED_LIMIT`), so it holds on a machine however busy, and still stops when something hangs. Test
 * support only.
 */

/** vitest's time limit turned off for one test: its units have the bounds below. */
export const NO_FIXED_LIMIT = 0;

/** How many times the first unit's time a later unit may take: a unit repeats the first one's work, or less. */
export const PACE_FACTOR = 10;

/** The first unit's bound, before there is a pace: a limit that only stops a hang. */
export const FIRST_UNIT_BOUND_MS = 600_000;

/** Resolves what `work` resolves, or rejects naming `what` once `bound` ms have passed without it ending. */
export async function within<T>(bound: number, what: string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${bound} ms`)), bound);
  });
  try {
    return await Promise.race([work(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Times `first` (bounded by {@link FIRST_UNIT_BOUND_MS}); resolves its result and the bound of each later unit:
 * {@link PACE_FACTOR} times that time.
 */
export async function paced<T>(what: string, first: () => Promise<T>): Promise<{ result: T; bound: number }> {
  const started = performance.now();
  const result = await within(FIRST_UNIT_BOUND_MS, what, first);
  return { result, bound: Math.ceil((performance.now() - started) * PACE_FACTOR) };
}
