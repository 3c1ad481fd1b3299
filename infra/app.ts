/**
 * The CDK app (`infra/cdk.json` runs it with tsx): one {@link CatalogStack}, configured from CDK context (see
 * infra/config.ts and infra/README.md). Synth needs no credentials and makes no lookups: account and region
 * come from CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION when the CLI found credentials, else the stack is
 * environment-agnostic and the deploy uses the CLI's account and region.
 */
import { App } from 'aws-cdk-lib';
import { configFromContext } from './config.ts';
import { CatalogStack } from './stack.ts';

const app = new App();
try {
  const { stackName, props } = configFromContext((key) => app.node.tryGetContext(key));
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  new CatalogStack(app, stackName, {
    ...props,
    description:
      'Training plan catalog: CloudFront + Functions + KeyValueStore, S3 origin, scheduled builder',
    ...(account || region ? { env: { ...(account ? { account } : {}), ...(region ? { region } : {}) } } : {}),
  });
  app.synth();
} catch (error) {
  process.stderr.write(`infra: ${(error as Error).message}\n`);
  process.exit(1);
}
