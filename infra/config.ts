/**
 * The app's configuration: the deployment CDK context names (`-c deployment=NAME`), read from its committed file
 * (app/deployments.ts, infra/deployments/NAME.json), and nothing else. Every other context key is CDK's own (the
 * feature flags of cdk.json, `aws:cdk:*`…) or refused: a key that is no setting names the one probably meant, and
 * a setting given as context must say what the file says (a runbook changes the file, reviewed like code, not a
 * flag that the next deploy forgets). And whether the CLI's command may go on: one that acts on the account
 * needs the credentials the CLI found ({@link accountProblem}). This file needs no CDK.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  type DeploymentFile,
  declaredDeployment,
  listDeployments,
  nearestSetting,
} from '../app/deployments.ts';
import {
  formatSetting,
  type NamesIn,
  namesIn,
  type SettingInput,
  type SettingName,
  specFor,
} from '../app/settings/index.ts';
import { ConfigError } from '../contract/errors.ts';

/** The stack props the settings give, each optional (props.ts adds CDK's own: this file needs no CDK). */
export type SettingProps = { readonly [K in NamesIn<'cdk'>]?: SettingInput<K> };

/** The app's configuration: the deployment's file, its stack's name and region, and the props it gives. */
export interface AppConfig {
  readonly deployment: DeploymentFile;
  readonly stackName: string;
  readonly region: string;
  /** The AWS account the file names, if it does (else the deploying credentials give it). */
  readonly account: string | undefined;
  /** The settings the file gives, but its name, region and account (the stack's id and environment). */
  readonly props: SettingProps;
}

/** Context keys without a colon that CDK itself sets or reads (every other of its keys holds a colon). */
const CDK_PLAIN_KEYS = new Set(['cli-telemetry', 'acknowledged-issue-numbers']);

/** Whether a context key is CDK's own: a feature flag (`@aws-cdk/…:…`), `aws:cdk:…`, a lookup's cache entry… */
export function isCdkContextKey(key: string): boolean {
  return key.includes(':') || key.startsWith('@') || CDK_PLAIN_KEYS.has(key);
}

/** The CDK CLI's commands (aws-cdk's own list): the first argument that is one is the command a run runs. */
const CDK_COMMANDS = new Set(
  (
    'ls list diff bootstrap deploy destroy synthesize synth metadata init version watch gc flags rollback ' +
    'publish-assets import acknowledge ack notices migrate context docs doc doctor explore lsp orphan refactor ' +
    'drift cli-telemetry diagnose validate'
  ).split(' '),
);

/** Those that act on an AWS account: they read or change its stacks, so the CLI needs credentials for them. */
const ACCOUNT_COMMANDS = new Set(
  'diff bootstrap deploy destroy watch gc rollback publish-assets import migrate refactor drift orphan'.split(
    ' ',
  ),
);

/** The command of a CDK CLI run from its arguments (`diff` in `diff -c deployment=X`), or undefined. */
export function cdkCommand(args: readonly string[]): string | undefined {
  return args.find((arg) => CDK_COMMANDS.has(arg));
}

/**
 * Why the app must not go on: the CDK CLI runs `command`, which acts on the deployment's AWS account, and found
 * no credentials to give the app one (it sets `CDK_DEFAULT_ACCOUNT` when it did); undefined when it may. A
 * command that needs none (`synth`, `ls`) goes on offline. Said before anything is bundled: the CLI itself would
 * say so only after the app had built the whole assembly. `why` says what the environment can tell of it (a
 * profile `AWS_PROFILE` names that does not exist, app/aws-profile.ts).
 */
export function accountProblem(
  env: { readonly command: string | undefined; readonly account: string | undefined },
  deployment: { readonly name: string; readonly region: string },
  why?: string,
): string | undefined {
  if (env.command === undefined || !ACCOUNT_COMMANDS.has(env.command) || env.account) return undefined;
  return `cdk ${env.command} acts on the AWS account of deployment ${deployment.name} (in ${deployment.region}), and the CDK CLI found no AWS credentials that work: ${why ?? 'set AWS_PROFILE (after aws sso login, for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'}; nothing was built (npm run synth needs no credentials)`;
}

/** The text of a setting's value as a message shows it (canonical, as a flag would hold it). */
const shownValue = (name: SettingName, value: unknown) =>
  value === undefined ? 'not set' : JSON.stringify(formatSetting(name, value as never));

/**
 * Reads the configuration from the app's whole context (`app.node.getAllContext()`) in the checkout at `root`.
 * Throws one {@link ConfigError} naming every problem.
 */
export function configFromContext(context: Readonly<Record<string, unknown>>, root: string): AppConfig {
  const names: readonly string[] = namesIn('cdk');
  const problems: string[] = [];
  const keys = Object.keys(context).filter((key) => !isCdkContextKey(key));
  for (const key of keys)
    if (!names.includes(key)) {
      const meant = nearestSetting(key, names);
      problems.push(
        `context ${key}: is not a setting of a deployment${meant ? ` (did you mean ${meant}?)` : ''}`,
      );
    }
  const raw = context.deployment;
  const named = specFor('deployment').kind.schema.safeParse(raw);
  if (raw === undefined || raw === '') {
    problems.push(`name the deployment: -c deployment=NAME (${listDeployments(root)})`);
  } else if (!named.success) {
    problems.push(
      `context deployment ${JSON.stringify(raw)}: ${named.error.issues[0]?.message ?? 'is invalid'}`,
    );
  }
  if (problems.length > 0 || !named.success) throw new ConfigError(problems.join('; '));
  const name = named.data as string;
  const deployment = declaredDeployment(root, name, 'context deployment');

  // A setting given as context as well: accepted only when it says what the file says.
  for (const key of keys) {
    if (key === 'deployment' || !names.includes(key)) continue;
    const setting = key as NamesIn<'cdk'>;
    const parsed = specFor(setting).kind.schema.safeParse(context[key]);
    const inFile = deployment.settings[setting];
    const where = deployment.given.has(setting) ? deployment.file : `${deployment.file} (the default)`;
    if (!parsed.success) problems.push(`context ${key}: ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
    else if (!isDeepStrictEqual(parsed.data, inFile))
      problems.push(
        `context ${key} ${shownValue(setting, parsed.data)} differs from ${where}, which says ${shownValue(setting, inFile)}: a deployment's settings live in its file; change it there`,
      );
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));

  const props: Record<string, unknown> = {};
  const environment: readonly string[] = ['deployment', 'region', 'account'];
  for (const setting of deployment.given)
    if (!environment.includes(setting)) props[setting] = deployment.values[setting];
  const account = deployment.settings.account;
  return { deployment, stackName: name, region: deployment.region, account, props: props as SettingProps };
}
