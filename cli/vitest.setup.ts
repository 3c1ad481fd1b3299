/**
 * Test setup (vitest.config.ts): lets the test harness run `catalog` in-process (testing/cli.ts runCatalog).
 * The harness cannot import the command line (nothing below it may), so the command line registers itself.
 */
import { useInProcessCatalog } from '../testing/cli.ts';

useInProcessCatalog(async (argv, options) => (await import('./in-process.ts')).runInProcess(argv, options));
