/**
 * The CDK app (`infra/cdk.json` runs it with tsx): the {@link CatalogStack} of the deployment CDK context names
 * (`-c deployment=NAME`), built from its file infra/deployments/NAME.json alone (config.ts), in the file's region
 * and its account (the file's, else the CLI's when it found credentials); checked by cdk-nag and CDK's
 * validation. The context is read before the construct libraries load: a bad setting fails at once, and so does a
 * command that acts on the account (`npm run cdk -- diff`: run-cdk.ts names it) when the CLI found no
 * credentials. The generated openapi module the builder bundles is written first, so what is deployed is what the
 * checkout holds, built or not.
 */
import { App, Validations } from 'aws-cdk-lib/core';
import { checkoutRoot } from '../app/paths.ts';
import { ConfigError } from '../contract/errors.ts';
import { writeOpenApiModule } from '../tools/openapi-module.ts';
import { accountProblem, configFromContext } from './config.ts';

const app = new App();
try {
  const root = checkoutRoot();
  if (root === undefined) throw new ConfigError(`${process.cwd()} is not inside the repository`);
  const { stackName, region, account: named, props } = configFromContext(app.node.getAllContext(), root);
  // A command that acts on the account stops here when the CLI found no credentials: nothing bundled yet.
  const cli = {
    command: process.env.CATALOG_CDK_COMMAND || undefined,
    account: process.env.CDK_DEFAULT_ACCOUNT,
  };
  const deployment = { name: stackName, region };
  if (accountProblem(cli, deployment) !== undefined) {
    const { missingProfile } = await import('../app/aws-profile.ts');
    throw new ConfigError(accountProblem(cli, deployment, await missingProfile(process.env)) ?? '');
  }
  await writeOpenApiModule(root);
  const [{ CatalogStack }, { AwsSolutionsChecks }] = await Promise.all([
    import('./stack.ts'),
    import('cdk-nag'),
  ]);
  // The file's account, else the credentials' (the CLI's): the template refuses any other (infra/monitoring.ts).
  const account = named ?? process.env.CDK_DEFAULT_ACCOUNT;
  new CatalogStack(app, stackName, {
    ...props,
    description:
      'Training plan catalog: CloudFront + Functions + KeyValueStore, S3 origin, scheduled builder',
    env: { ...(account ? { account } : {}), region },
  });
  // Every synth and deploy is checked by cdk-nag's AwsSolutions pack: a finding infra/nag.ts does not accept
  // with a reason stops it (the report is validation-report.json in the output directory).
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
} catch (error) {
  process.stderr.write(`infra: ${(error as Error).message}\n`);
  process.exit(1);
}
