import { defineConfig } from 'vitest/config';

const EXCLUDE = ['node_modules/**', 'dist/**', '.catalog/**', 'infra/cdk.out/**', '**/*.system.test.ts'];
/**
 * The CDK stack's tests: they load aws-cdk-lib (about 2 s) and synthesize whole apps, so they have worker
 * processes of their own (the unit tests' workers stay small), shared by the infra files as the unit tests'
 * workers are shared by theirs: each process loads its modules once, not once per file. The syntheses every
 * file shares (`npm run synth`'s, and those checked by cdk-nag and CDK's validation) run once per run, in
 * processes testing/infra/global-setup.ts starts; a test waits for what it reads, however long the machine takes,
 * so the infra tests have no time limit (nothing in them waits on anything but work). They run in one worker,
 * after the other projects (`groupOrder`): each further worker would load aws-cdk-lib again, and by then the
 * shared syntheses, started with the run, are done, so a second worker would have nothing to overlap.
 */
const INFRA = ['infra/**/*.test.ts'];
/**
 * Files that change what the whole process shares while they run, so they run in a process of their own, not
 * in the unit tests' shared workers: a module mock (builder/sources/http.test.ts shortens the waits of undici's
 * RetryAgent, a class of a package: a mock another file already loaded in a shared worker would not see, and a
 * package's exports cannot be spied on), and the working directory ({@link DOCS}). A file that counts calls to
 * our own modules spies on their exports instead (app/run.test.ts), in the shared workers.
 */
const OWN_PROCESS = ['builder/sources/http.test.ts'];
/**
 * The commands of the docs: a process of their own, as they change the working directory (a module first loaded
 * meanwhile keeps it, as esbuild starts its service in the directory it was loaded in), and the project reads
 * the run's shared syntheses (testing/infra/global-setup.ts): the docs' CDK commands run on the cloud assembly
 * of the context they give, made once per run for the infra tests and them.
 */
const DOCS = ['docs/commands.test.ts'];

export default defineConfig({
  test: {
    // Quiet logs: the AWS SDK's notice that later versions need Node 22 is said once, in the README's Node
    // paragraph (`npm ci` shows the engine warnings), not once per test process.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // A limit only stops a test that hangs; it never judges speed. The slowest test or hook takes under a minute
    // on a quiet 2-core machine: ten minutes holds on a machine many times slower or busier.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Scratch files on tmpfs where there is one (testing/global-setup.ts).
    globalSetup: ['testing/global-setup.ts'],
    pool: 'forks',
    // Garbage collection on each worker's main thread only (as in the synthesizing processes of
    // testing/infra/stacks.ts): with three workers and their peers on two cores, V8's helper threads cost more CPU
    // than they save. Six runs side by side: about 5 % less CPU for the unit and own-process projects.
    execArgv: ['--single-threaded-gc'],
    // Each file as transformed for the tests is kept in node_modules/.experimental-vitest-cache, keyed by its
    // content, so a run transforms only what changed (`npm ci` starts it afresh; `vitest --clearCache` drops it).
    experimental: { fsModuleCache: true },
    // Two cores, but many tests wait (on a child process, a socket, a timer): a third worker fills those waits.
    // Measured against two workers, a third costs no CPU time that the noise of a shared machine shows.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: [...EXCLUDE, ...INFRA, ...OWN_PROCESS, ...DOCS],
          // The command line registers itself with the test harness, so runCatalog runs commands in-process.
          setupFiles: ['testing/vitest.setup.ts', 'cli/vitest.setup.ts'],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'own-process',
          include: OWN_PROCESS,
          exclude: EXCLUDE,
          setupFiles: ['testing/vitest.setup.ts', 'cli/vitest.setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'docs',
          include: DOCS,
          exclude: EXCLUDE,
          setupFiles: ['testing/vitest.setup.ts', 'cli/vitest.setup.ts'],
          globalSetup: ['testing/infra/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          isolate: false,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          include: INFRA,
          exclude: EXCLUDE,
          setupFiles: ['testing/vitest.setup.ts', 'cli/vitest.setup.ts'],
          globalSetup: ['testing/infra/global-setup.ts'],
          testTimeout: 0,
          hookTimeout: 0,
        },
      },
    ],
  },
});
