import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', '.catalog/**', 'infra/cdk.out/**', '**/*.system.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The command line registers itself with the test harness, so runCatalog runs commands in-process.
    setupFiles: ['cli/vitest.setup.ts'],
    pool: 'forks',
    // Two cores: CLI tests spawn processes, so keep the parallelism modest.
    maxWorkers: 2,
  },
});
