/**
 * Test support for the stack. Two kinds of synthesis:
 *
 * - {@link synthStack} / {@link constructStack}: one stack in this test process, into a scratch directory,
 *   for the template tests (the builder not bundled, CDK's CloudFormation validation off: they assert the
 *   template itself).
 * - {@link sharedAssembly}: the configurations every run synthesizes once, as the app does (cdk-nag and CDK's
 *   CloudFormation validation, whose rule engine costs seconds to start in a process), shared by every infra
 *   test file. testing/infra/global-setup.ts starts them when the run starts: `npm run synth`'s own command (the
 *   README's), and testing/infra/shared-synth.ts for the {@link SHARED} configurations in one process.
 *
 * Every app gets infra/cdk.json's context (the feature flags), as the CDK CLI gives it to the app.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Template } from 'aws-cdk-lib/assertions';
import { App, Validations } from 'aws-cdk-lib/core';
import { inject } from 'vitest';
import { CatalogStack, type CatalogStackProps } from '../../infra/stack.ts';

const CDK_JSON = JSON.parse(readFileSync(new URL('../../infra/cdk.json', import.meta.url), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

/** infra/cdk.json's context: the feature flags the stack is written for. */
export const CDK_CONTEXT = CDK_JSON.context;

/** infra/cdk.json's app: the command the CDK CLI runs (through a shell, in infra/) to synthesize. */
export const CDK_APP = CDK_JSON.app;

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

/** The configurations synthesized once per run besides `npm run synth`'s (`readme`). */
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

/** The name of a shared synthesis: `readme` (`npm run synth`) or one of {@link SHARED}. */
export type SharedName = 'readme' | keyof typeof SHARED;

/** A cloud assembly as a test reads it. */
export interface Assembly {
  readonly outdir: string;
  /** The templates, by stack name. */
  readonly templates: Readonly<Record<string, Template>>;
  /** Every plugin's violations (cdk-nag's, CDK's CloudFormation validation, annotations): none is accepted. */
  readonly violations: readonly NagViolation[];
  /** Each plugin's conclusion (`success`, `failure`: the synth failed), by plugin name. */
  readonly conclusions: Readonly<Record<string, string>>;
  /** Every acknowledged finding: the construct path, the rule and the reason. */
  readonly acknowledged: readonly { readonly path: string; readonly rule: string; readonly reason: string }[];
  /** What the synthesizing process printed (the CLI's, for `readme`). */
  readonly output: string;
}

/** A violation as the validation report lists it: the rule (with its finding), the construct, how severe. */
export interface NagViolation {
  readonly rule: string;
  readonly path: string;
  readonly severity?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where testing/infra/global-setup.ts has the shared syntheses write (`<name>/`, then `<name>.done.json`). */
    infraSynthDir: string;
  }
}

/** What a shared synthesis left when it ended: its exit code and output. */
export interface SynthDone {
  readonly code: number;
  readonly output: string;
}

const assemblies = new Map<SharedName, Promise<Assembly>>();

/**
 * A shared synthesis, once it is done (testing/infra/global-setup.ts started it when the run started). Fails with
 * its output when it failed.
 */
export function sharedAssembly(name: SharedName): Promise<Assembly> {
  let assembly = assemblies.get(name);
  if (!assembly) {
    assembly = readShared(name);
    assemblies.set(name, assembly);
  }
  return assembly;
}

async function readShared(name: SharedName): Promise<Assembly> {
  const dir = inject('infraSynthDir');
  const doneFile = join(dir, `${name}.done.json`);
  let done: SynthDone | undefined;
  // The synthesizing process writes the file when it ends; there is nothing to wait on but the file.
  while (!done) {
    done = await readFile(doneFile, 'utf8').then(
      (text) => JSON.parse(text) as SynthDone,
      () => undefined,
    );
    if (!done) await sleep(100);
  }
  if (done.code !== 0) throw new Error(`the ${name} synthesis failed (exit ${done.code}):\n${done.output}`);
  return readAssembly(join(dir, name), done.output);
}

/** Reads a cloud assembly: its templates, the validation report's violations and the acknowledgements. */
export async function readAssembly(outdir: string, output = ''): Promise<Assembly> {
  const stacks = (await readdir(outdir))
    .filter((file) => file.endsWith('.template.json'))
    .map((file) => file.replace(/\.template\.json$/, ''));
  const templates: Record<string, Template> = {};
  const acknowledged: Assembly['acknowledged'][number][] = [];
  for (const name of stacks) {
    templates[name] = Template.fromJSON(
      JSON.parse(await readFile(join(outdir, `${name}.template.json`), 'utf8')),
    );
    const metadata = JSON.parse(await readFile(join(outdir, `${name}.metadata.json`), 'utf8')) as Record<
      string,
      { type: string; data: Record<string, string> }[]
    >;
    for (const [path, entries] of Object.entries(metadata))
      for (const entry of entries)
        if (entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          for (const [rule, reason] of Object.entries(entry.data))
            acknowledged.push({
              path: path.replace(/^\//, ''),
              rule: rule.replace(/^Annotation::/, ''),
              reason,
            });
  }
  const report = JSON.parse(await readFile(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      pluginName: string;
      conclusion: string;
      violations: { ruleName: string; severity?: string; violatingConstructs: { constructPath: string }[] }[];
    }[];
  };
  const violations = report.pluginReports.flatMap((plugin) =>
    plugin.violations.flatMap((violation) =>
      violation.violatingConstructs.map((c) => ({
        rule: violation.ruleName,
        path: c.constructPath,
        ...(violation.severity ? { severity: violation.severity } : {}),
      })),
    ),
  );
  const conclusions = Object.fromEntries(
    report.pluginReports.map((plugin) => [plugin.pluginName, plugin.conclusion]),
  );
  return { outdir, templates, violations, conclusions, acknowledged, output };
}

export interface Synthesized {
  readonly stack: CatalogStack;
  readonly template: Template;
  /** The cloud assembly directory (in the run's scratch directory, removed when the run ends). */
  readonly outdir: string;
}

/** A new app as the CLI starts it (cdk.json's context), the builder not bundled, CDK's validation off. */
function testApp(outdir: string): App {
  return new App({
    outdir,
    context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
  });
}

const synthesized = new Map<string, Promise<Synthesized>>();

/**
 * Builds and synthesizes the stack in this process, once per test process for the same name and props (the
 * infra files share their processes: a configuration two files read is synthesized once).
 */
export function synthStack(
  props: CatalogStackProps = {},
  options: { stackName?: string } = {},
): Promise<Synthesized> {
  const stackName = options.stackName ?? 'TrainingPlanCatalog';
  const key = JSON.stringify([stackName, props]);
  let result = synthesized.get(key);
  if (!result) {
    result = mkdtemp(join(tmpdir(), 'catalog-cdk-')).then((outdir) => {
      const stack = new CatalogStack(testApp(outdir), stackName, withContact(props));
      return { stack, template: Template.fromStack(stack), outdir };
    });
    synthesized.set(key, result);
  }
  return result;
}

/** Builds the stack only to see whether the constructor accepts the props (nothing is synthesized). */
export function constructStack(props: CatalogStackProps, stackName = 'TrainingPlanCatalog'): CatalogStack {
  const outdir = mkdtempSync(join(tmpdir(), 'catalog-cdk-'));
  try {
    return new CatalogStack(testApp(outdir), stackName, withContact(props));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The logical id of the one resource of a type whose id starts with `prefix` (a construct id). */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} ${prefix}…, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}
