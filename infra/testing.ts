/**
 * Test support for the stack: synthesizes a {@link CatalogStack} into a scratch directory (never
 * `infra/cdk.out`) and returns the template with a function that removes the directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
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
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
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
