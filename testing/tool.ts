import { TOOL } from '../builder/tool.ts';

/**
 * Runs `work` as if this package were at `version`: a build reads {@link TOOL} when it is prepared. The module
 * itself is changed, not mocked, so it holds in a test worker that other files share (vitest.config.ts).
 */
export async function asVersion<T>(version: string, work: () => Promise<T>): Promise<T> {
  const tool = TOOL as { version: string };
  const own = tool.version;
  tool.version = version;
  try {
    return await work();
  } finally {
    tool.version = own;
  }
}
