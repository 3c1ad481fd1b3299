/**
 * Test support, run by testing/infra/global-setup.ts as `tsx testing/infra/shared-synth.ts DIR`: synthesizes every shared
 * configuration of testing/infra/stacks.ts into `DIR/<name>/` as infra/app.ts does (cdk-nag's AwsSolutions pack and
 * CDK's CloudFormation validation, the builder not bundled), one after the other in this one process (the
 * validation's rule engine starts once), and writes `DIR/<name>.done.json` after each.
 */
import { join } from 'node:path';
import { CfnDeliveryDestination } from 'aws-cdk-lib/aws-logs';
import { App, Stack, Validations } from 'aws-cdk-lib/core';
import { AwsSolutionsChecks } from 'cdk-nag';
import { writeFileAtomic } from '../../files/atomic-write.ts';
import { CatalogStack } from '../../infra/stack.ts';
import { CDK_CONTEXT, SHARED, type SharedConfiguration, type SynthDone, withContact } from './stacks.ts';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: tsx testing/infra/shared-synth.ts DIR');

const acknowledge = Validations.prototype.acknowledge;
for (const [name, configuration] of Object.entries(SHARED) as [string, SharedConfiguration][]) {
  let done: SynthDone = { code: 0, output: '' };
  try {
    const app = new App({
      outdir: join(dir, name),
      context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: !configuration.bare,
    });
    // Without the stack's acknowledgements: every finding cdk-nag makes is in the report.
    Validations.prototype.acknowledge = configuration.bare ? () => undefined : acknowledge;
    if (configuration.overlong) {
      const stack = new Stack(app, configuration.stackName);
      new CfnDeliveryDestination(stack, 'Destination', {
        name: 'x'.repeat(61),
        destinationResourceArn: stack.formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: 'x',
        }),
      });
    } else new CatalogStack(app, configuration.stackName, withContact(configuration.props));
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    try {
      app.synth();
    } catch (error) {
      // A validation failure (the report says why, and the tests read the report); anything else is an error.
      if (!/validation-report\.json/.test((error as Error).message)) throw error;
    }
  } catch (error) {
    done = { code: 1, output: (error as Error).stack ?? String(error) };
  }
  // Written whole: a test never reads half of it.
  await writeFileAtomic(join(dir, `${name}.done.json`), JSON.stringify(done));
}
