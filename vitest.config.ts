import { defineConfig } from 'vitest/config';

const EXCLUDE = ['node_modules/**', 'dist/**', '.catalog/**', 'infra/cdk.out/**', '**/*.system.test.ts'];
/** The CDK stack's tests: each loads aws-cdk-lib and synthesizes whole apps. */
const INFRA = ['infra/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Scratch files on tmpfs where there is one (testing/global-setup.ts).
    globalSetup: ['testing/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: [...EXCLUDE, ...INFRA],
          // The command line registers itself with the test harness, so runCatalog runs commands in-process.
          setupFiles: ['cli/vitest.setup.ts'],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          include: INFRA,
          exclude: EXCLUDE,
          setupFiles: ['cli/vitest.setup.ts'],
        },
      },
    ],
  },
});
