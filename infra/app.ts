/**
 * The CDK app (`infra/cdk.json` runs it with tsx): one {@link CatalogStack} configured from CDK context
 * (config.ts), in the CLI's account and region when it found credentials, else environment-agnostic; checked by
 * cdk-nag and CDK's validation. The context is read before the construct libraries load: a bad setting fails at once.
 */
import { App, Validations } from 'aws-cdk-lib/core';
import { configFromContext } from './config.ts';

const app = new App();
try {
  const { stackName, props } = configFromContext((key) => app.node.tryGetContext(key));
  const [{ CatalogStack }, { AwsSolutionsChecks }] = await Promise.all([
    import('./stack.ts'),
    import('cdk-nag'),
  ]);
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  new CatalogStack(app, stackName, {
    ...props,
    description:
      'Training plan catalog: CloudFront + Functions + KeyValueStore, S3 origin, scheduled builder',
    ...(account || region ? { env: { ...(account ? { account } : {}), ...(region ? { region } : {}) } } : {}),
  });
  // Every synth and deploy is checked by cdk-nag's AwsSolutions pack: a finding infra/nag.ts does not accept
  // with a reason stops it (the report is validation-report.json in the output directory).
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
} catch (error) {
  process.stderr.write(`infra: ${(error as Error).message}\n`);
  process.exit(1);
}
