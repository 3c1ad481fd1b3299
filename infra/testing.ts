/**
 * Test support for the stack: synthesizes a {@link CatalogStack} into a scratch directory (never
 * `infra/cdk.out`) and returns the template with a function that removes the directory; or synthesizes it
 * with cdk-nag and returns the findings.
 *
 * CDK's built-in CloudFormation template validation (a WebAssembly rule engine: about 2 s to start in each
 * test process, half a second a template) runs where its findings are asserted: {@link synthWithNag}, whose
 * report holds every plugin's violations (nag.test.ts synthesizes every configuration with it and allows
 * none), and the app entry as the CDK CLI runs it (app.test.ts). The template tests ({@link synthStack},
 * {@link constructStack}) assert the template itself, so they skip it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { App, Validations } from 'aws-cdk-lib/core';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CatalogStack, type CatalogStackProps } from './stack.ts';

export interface Synthesized {
  readonly stack: CatalogStack;
  readonly template: Template;
  /** The cloud assembly directory (assets are `asset.<hash>` in it). */
  readonly outdir: string;
  remove(): Promise<void>;
}

/**
 * Builds and synthesizes the stack. `bundle: false` skips the builder's esbuild bundling (CDK's
 * `aws:cdk:bundling-stacks` context), for tests about other parts.
 */
export async function synthStack(
  props: CatalogStackProps = {},
  options: { bundle?: boolean; stackName?: string } = {},
): Promise<Synthesized> {
  const outdir = await mkdtemp(join(tmpdir(), 'catalog-cdk-'));
  const remove = () => rm(outdir, { recursive: true, force: true });
  try {
    const app = new App({
      outdir,
      context: options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {},
      builtinCloudFormationValidation: false,
    });
    const stack = new CatalogStack(app, options.stackName ?? 'TrainingPlanCatalog', props);
    return { stack, template: Template.fromStack(stack), outdir, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** Builds the stack only to see whether the constructor accepts the props (nothing is synthesized). */
export function constructStack(props: CatalogStackProps, stackName = 'TrainingPlanCatalog'): CatalogStack {
  const outdir = mkdtempSync(join(tmpdir(), 'catalog-cdk-'));
  try {
    const app = new App({
      outdir,
      context: { 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: false,
    });
    return new CatalogStack(app, stackName, props);
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

/** A cdk-nag violation as the validation report lists it: the rule (with its finding) and the construct. */
export interface NagViolation {
  readonly rule: string;
  readonly path: string;
}

/** What a synth with the AwsSolutions pack left: the violations, and the acknowledgements with their reasons. */
export interface NagResult {
  readonly violations: NagViolation[];
  /** Every acknowledged finding: the construct path, the rule and the reason. */
  readonly acknowledged: { readonly path: string; readonly rule: string; readonly reason: string }[];
  /** The templates synthesized, by stack name. */
  readonly stacks: string[];
}

/**
 * Synthesizes the stack (and its edge companion, if any) with cdk-nag's AwsSolutions pack as infra/app.ts
 * registers it, and reads the validation report and the acknowledgements from the cloud assembly.
 */
export async function synthWithNag(
  props: CatalogStackProps = {},
  stackName = 'TrainingPlanCatalog',
): Promise<NagResult> {
  const outdir = await mkdtemp(join(tmpdir(), 'catalog-nag-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    new CatalogStack(app, stackName, props);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    try {
      app.synth();
    } catch (error) {
      // The plugin's failure (the report says why); anything else is a real error.
      if (!/validation-report\.json/.test((error as Error).message)) throw error;
    }
    const report = JSON.parse(await readFile(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: {
        violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[];
      }[];
    };
    const violations = report.pluginReports.flatMap((plugin) =>
      plugin.violations.flatMap((violation) =>
        violation.violatingConstructs.map((c) => ({ rule: violation.ruleName, path: c.constructPath })),
      ),
    );
    const stacks = (await readdir(outdir))
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => file.replace(/\.template\.json$/, ''));
    const acknowledged: NagResult['acknowledged'][number][] = [];
    for (const name of stacks) {
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
    return { violations, acknowledged, stacks };
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}
