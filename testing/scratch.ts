/** Scratch directories for vitest suites (kept apart from cli.ts, which benchmarks import outside vitest). */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { scratchDir } from './cli.ts';

/**
 * A scratch directory for the tests of the enclosing `describe`: a fresh one for each test (or one for them
 * all with `each: false`), removed afterwards. Read `.dir` inside a test.
 */
export function useScratchDir(options: { each?: boolean; prefix?: string } = {}): { readonly dir: string } {
  const state = { dir: '', remove: async () => {} };
  const before = options.each === false ? beforeAll : beforeEach;
  const after = options.each === false ? afterAll : afterEach;
  before(async () => {
    const made = await scratchDir(options.prefix);
    state.dir = made.dir;
    state.remove = made.remove;
  });
  after(() => state.remove());
  return {
    get dir() {
      return state.dir;
    },
  };
}
