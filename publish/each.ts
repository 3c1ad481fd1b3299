/**
 * Runs `task` on every item, at most `concurrency` at once, in order of the items; the tasks are started as
 * runners free up, so a build of 100,000 objects never holds 100,000 pending promises. Every started task
 * settles before the call does. The first failure stops new tasks from starting and is thrown at the end.
 */
export async function eachLimit<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const runner = async () => {
    while (failure === undefined && next < items.length) {
      const index = next;
      next += 1;
      try {
        await task(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, runner));
  if (failure) throw failure.error;
}
