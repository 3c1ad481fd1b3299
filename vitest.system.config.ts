import { defineConfig } from 'vitest/config';

/** `npm run test:system`: suites that need programs beyond npm packages (njs, Chromium) or run long. */
export default defineConfig({
  test: {
    include: ['**/*.system.test.ts'],
    exclude: ['node_modules/**', 'dist/**', '.catalog/**', 'infra/cdk.out/**'],
    // Quiet logs, as in vitest.config.ts.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Scratch files on tmpfs where there is one (testing/global-setup.ts).
    globalSetup: ['testing/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
  },
});
