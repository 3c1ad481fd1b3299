/**
 * `--deployment NAME` (docs/decisions.md#command-line): the stack's outputs give the settings that declare one;
 * no name and no target: the local stack. Values given as flags or variables always win.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CatalogError, ConfigError, describeCause, settingRef } from '../contract/errors.ts';
import { EDGE_REGION } from '../contract/index.ts';
import { declaredDeployment, listDeployments } from './deployments.ts';
import { localStackUrl } from './local.ts';
import { checkoutRoot, LOCAL_FILLS, LOCAL_STACK, localStackPath } from './paths.ts';
import { type Context, envOf, modeIn, namesIn, type SettingName, specFor } from './settings/index.ts';

/** The settings that name where a command acts: any of them given means no local default. */
const TARGETS: readonly SettingName[] = ['bucket', 'kvsArn', 'origin', 'store', 'deployment'];

/** How long the stack's outputs may take to arrive. */
const DESCRIBE_TIMEOUT_MS = 10_000;

/** The outputs of a stack, by key; null when there is no such stack. */
async function outputsOf(client: CloudFormationClient, stack: string): Promise<Map<string, string> | null> {
  const { DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  try {
    const answer = await client.send(new DescribeStacksCommand({ StackName: stack }), {
      abortSignal: AbortSignal.timeout(DESCRIBE_TIMEOUT_MS),
    });
    const outputs = answer.Stacks?.[0]?.Outputs ?? [];
    return new Map(
      outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'ValidationError' && /does not exist/.test(String(error)))
      return null;
    throw new CatalogError(
      `reading the outputs of stack ${stack} failed (${describeCause(error)}); nothing was done`,
      { cause: error },
    );
  }
}

/** What the first reading of a command's settings gave: the values that parsed, and which were given. */
export interface GivenSettings {
  readonly values: Readonly<Partial<Record<SettingName, unknown>>>;
  readonly given: (name: SettingName) => boolean;
}

/**
 * The values `context`'s unset settings take from its deployment, as the text a flag would hold
 * (`cloudFormation(region)` builds the client for the stack's region).
 */
export async function deploymentValues(
  context: Context,
  first: GivenSettings,
  cloudFormation: (region: string | undefined) => Promise<CloudFormationClient>,
): Promise<Map<SettingName, string>> {
  const values = new Map<SettingName, string>();
  // An access log given instead of the usage log group is the command's choice of what to read.
  const wanted = (name: SettingName) =>
    modeIn(name, context) !== undefined &&
    !first.given(name) &&
    !(name === 'usageLogGroup' && first.given('accessLog'));
  const name = first.values.deployment as string | undefined;
  if (name === undefined) {
    if (TARGETS.some(first.given)) return values;
    // A command that acts on a deployment only (the builder function, the deployed viewer-request function):
    // no local stack stands in, and the deployment is what to name first.
    const deployed = namesIn(context).filter(
      (setting) =>
        modeIn(setting, context) === 'required' &&
        specFor(setting).output !== undefined &&
        !LOCAL_FILLS.includes(setting) &&
        !first.given(setting),
    );
    if (deployed.length > 0) throw noDeployment(context, deployed);
    // The checkout's one local stack, from whichever of its folders the command is typed in.
    if (wanted('origin')) values.set('origin', localStackPath(LOCAL_STACK.origin));
    if (wanted('store')) values.set('store', localStackPath(LOCAL_STACK.store));
    if (wanted('baseUrl')) values.set('baseUrl', await localStackUrl());
    // The local stack's access log, unless the command was given the log group to read instead.
    if (wanted('accessLog') && !first.given('usageLogGroup'))
      values.set('accessLog', localStackPath(LOCAL_STACK.accessLog));
    return values;
  }
  // The deployment's region is its file's, in a checkout that declares it (one word for one thing).
  const root = checkoutRoot();
  // In a checkout, a deployment is one it declares: a name it does not is a slip, said before AWS is asked.
  const file = root === undefined ? null : declaredDeployment(root, name, settingRef('deployment'));
  const given = first.values.region as string | undefined;
  if (file !== null && given !== undefined && first.given('region') && given !== file.region)
    throw new ConfigError(
      `${settingRef('region')} ${given}: the deployment ${name} is in ${file.region} (${file.file}); leave ${settingRef('region')} out`,
    );
  const client = await cloudFormation(given ?? file?.region);
  const region = await client.config.region().catch(() => undefined);
  if (region === undefined)
    throw new ConfigError(
      `${settingRef('deployment')} ${JSON.stringify(name)}: no AWS region to find its stack in: give ${settingRef('region')} or set AWS_REGION`,
    );
  const outputs = await outputsOf(client, name);
  if (outputs === null)
    throw new ConfigError(
      `${settingRef('deployment')} ${JSON.stringify(name)}: there is no stack ${name} in ${region} (${file === null ? `a stack in another region: give ${settingRef('region')}` : `the region ${file.file} declares: not deployed yet, or destroyed`})`,
    );
  for (const setting of namesIn(context)) {
    const output = specFor(setting).output;
    if (output && wanted(setting) && outputs.has(output)) values.set(setting, outputs.get(output) as string);
  }
  // The usage log group is in us-east-1 wherever the stack is (infra/usage-logs.ts): its queries go there.
  if (wanted('region')) values.set('region', values.has('usageLogGroup') ? EDGE_REGION : region);
  return values;
}

/**
 * The refusal of a command that acts on a deployment only (`rebuild`, `verify-function`) when none is named:
 * name the deployment first (the declared ones, in a checkout), or else give the settings it would have given.
 */
function noDeployment(context: Context, settings: readonly SettingName[]): ConfigError {
  const root = checkoutRoot();
  const declared = root === undefined ? '' : ` (${listDeployments(root)})`;
  return new ConfigError(
    `${context} acts on a deployment, and none is named: give ${settingRef('deployment')} NAME or ${envOf('deployment')}${declared}, or else ${settings.map((setting) => settingRef(setting)).join(' and ')}`,
  );
}
