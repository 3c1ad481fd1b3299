/**
 * The syntheses a test run makes once and every test that reads them shares (testing/infra/global-setup.ts starts
 * them, each in a directory of its own under one run directory, and writes `<name>.done.json` when it ends): what
 * each one is, and the wait for one. Kept apart from stacks.ts, which loads aws-cdk-lib: the run's main process
 * (the global setup) and docs/commands.test.ts read this module and never synthesize themselves. Test support.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CatalogStackProps } from '../../infra/stack.ts';

/**
 * V8 flags for the processes that synthesize (Node's, before tsx's loader): garbage collection on the main thread
 * only, and WebAssembly compiled once by the baseline compiler. A synthesis makes a large heap of small objects
 * whose collection costs more CPU spread over helper threads than on the main thread alone, and CDK's validation
 * runs a 9 MB WebAssembly module for seconds: optimizing it again costs more than it saves. The same
 * templates and reports either way; about a third less CPU for the process (measured with `time`).
 */
export const SYNTH_V8_FLAGS = ['--single-threaded-gc', '--liftoff-only'];

/**
 * The contact address of the stacks the tests build when they name none (a deployment file must name one; an
 * address at a domain reserved for examples would add the rule that refuses to deploy it).
 */
export const TEST_CONTACT_ADDRESS = 'api-keys@trainingplans.app';

/** The props with the test contact address when they give none. */
export function withContact(props: CatalogStackProps): CatalogStackProps {
  return props.contactAddress === undefined ? { ...props, contactAddress: TEST_CONTACT_ADDRESS } : props;
}

/** The longest stack name the settings accept (48 characters). */
export const LONGEST_STACK_NAME = 'TrainingPlanCatalog-Production-Partners-Europe-1';

const ACCOUNT = '123456789012';

/** A configuration synthesized once per run: the stack's name, its props, and whether cdk-nag's acknowledgements apply. */
export interface SharedConfiguration {
  readonly stackName: string;
  readonly props: CatalogStackProps;
  /** Without the stack's acknowledgements and without CDK's validation: what cdk-nag finds on its own. */
  readonly bare?: true;
  /** Instead of the stack, one resource whose name is one character over its service's limit. */
  readonly overlong?: true;
}

/** The configurations synthesized once per run besides `npm run synth`'s (`readme`), in one process. */
export const SHARED = {
  // What the CDK CLI gives the app on a machine without credentials: `npm run synth`'s, validated here.
  'the default stack in us-east-1, as npm run synth has it': {
    stackName: 'TrainingPlanCatalog',
    props: { env: { region: 'us-east-1' } },
  },
  'longest name, no region': { stackName: LONGEST_STACK_NAME, props: {} },
  'longest name, eu-west-1 with its us-east-1 edge stack': {
    stackName: LONGEST_STACK_NAME,
    props: { env: { account: ACCOUNT, region: 'eu-west-1' } },
  },
  'us-east-1 with the rate limit and additional metrics': {
    stackName: 'TrainingPlanCatalog',
    props: {
      env: { account: ACCOUNT, region: 'us-east-1' },
      rateLimitPerKey: 1000,
      additionalCloudFrontMetrics: true,
    },
  },
  'every option: domain, access logs, VPC, given secret, rate limit, canary': {
    stackName: 'TrainingPlanCatalog',
    props: {
      domainName: 'catalog.example.com',
      certificateArn: `arn:aws:acm:us-east-1:${ACCOUNT}:certificate/0f2b1c3d-1111-2222-3333-444455556666`,
      accessLogging: true,
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: ['subnet-0123456789abcdef0'],
      sourceSecretArn: `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:catalog/source-AbCdEf`,
      monitoringKeySecretArn: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:TrainingPlanCatalog/monitoring-key-AbCdEf`,
      rateLimitPerKey: 500,
    },
  },
  'access logs to a named bucket': {
    stackName: 'TrainingPlanCatalog',
    props: { accessLogging: true, accessLogBucketName: 'ops-logs-bucket' },
  },
  'longest name, no region, without the acknowledgements': {
    stackName: LONGEST_STACK_NAME,
    props: {},
    bare: true,
  },
  'a name over its limit': { stackName: 'Overlong', props: {}, overlong: true },
} as const satisfies Record<string, SharedConfiguration>;

/**
 * The deployments the docs have a reader declare besides the repository's (infra/README.md, "Two deployments in
 * one account": the default deployment's file copied, its name and contact address its own), as the reader
 * would have written them. The docs' checkout holds them (testing/doc-world.ts), and so does the one the
 * synthesis of `docs CatalogStaging` runs in.
 */
export const DOC_DEPLOYMENTS = {
  CatalogStaging: {
    deployment: 'CatalogStaging',
    region: 'us-east-1',
    contactAddress: TEST_CONTACT_ADDRESS,
    buildRateMinutes: 15,
  },
};

/**
 * The CDK contexts the docs' commands give the CLI (`-c deployment=…`), each with the shared synthesis that is
 * its cloud assembly: the app as the CLI runs it (`cdk synth --quiet -c …`) on a machine without credentials,
 * in a checkout holding {@link DOC_DEPLOYMENTS}. `npm run synth`'s (`readme`) is the default deployment's.
 */
export const DOC_CONTEXTS: Readonly<Record<string, DocSynthName>> = {
  [contextKey(['deployment=TrainingPlanCatalog'])]: 'readme',
  [contextKey(['deployment=CatalogStaging'])]: 'docs CatalogStaging',
};

/** The syntheses of the docs' contexts besides `readme`, by name: the deployment each one names. */
export const DOC_SYNTHESES = { 'docs CatalogStaging': 'CatalogStaging' } as const;

type DocSynthName = 'readme' | keyof typeof DOC_SYNTHESES;

/** A CDK context (`KEY=VALUE` pairs) as a key: the same pairs in any order are the same context. */
export function contextKey(context: readonly string[]): string {
  return JSON.stringify([...context].sort());
}

/** The name of a shared synthesis: `readme` (`npm run synth`), one of {@link SHARED} or {@link DOC_SYNTHESES}. */
export type SharedName = 'readme' | keyof typeof SHARED | keyof typeof DOC_SYNTHESES;

/** What a shared synthesis left when it ended: its exit code and output. */
export interface SynthDone {
  readonly code: number;
  readonly output: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where testing/infra/global-setup.ts has the shared syntheses write (`<name>/`, then `<name>.done.json`). */
    infraSynthDir: string;
  }
}

/**
 * Waits for a shared synthesis to end (the process writes `<name>.done.json` when it does; there is nothing else
 * to wait on) and returns its outcome and its cloud assembly's directory.
 */
export async function synthesisDone(dir: string, name: SharedName): Promise<SynthDone & { outdir: string }> {
  const doneFile = join(dir, `${name}.done.json`);
  for (;;) {
    const done = await readFile(doneFile, 'utf8').then(
      (text) => JSON.parse(text) as SynthDone,
      () => undefined,
    );
    if (done) return { ...done, outdir: join(dir, name) };
    await sleep(100);
  }
}
