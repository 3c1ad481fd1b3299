/**
 * The names a deployment gives its resources, read from synthesized templates as CloudFormation would make
 * them (a name the template leaves out is generated, and a stack id is new, for every creation of a stack):
 *
 * - each fits its service's limit, for the longest stack name the settings accept in every placement, and in
 *   the template `npm run synth` writes; a name over its limit fails the synth;
 * - two deployments in one account never share one: two stack names in one region, or one stack name in
 *   several regions (the account-wide names carry the region);
 * - a failed first deploy can be run again as it is, and so can a deploy after a destroy: nothing the first
 *   attempt left behind has a name the next one asks for.
 */
import { createHash } from 'node:crypto';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LONGEST_STACK_NAME, type SharedName, sharedAssembly, synthStack } from '../testing/infra/stacks.ts';
import type { CatalogStackProps } from './stack.ts';

const ACCOUNT = '123456789012';

/** The resource types whose name a template may set: where, its limit, and whether it is account-wide. */
const NAMED: Record<
  string,
  { readonly path: string; readonly max: number; readonly scope: 'account' | 'region' }
> = {
  'AWS::CloudFront::Function': { path: 'Name', max: 64, scope: 'account' },
  'AWS::CloudFront::KeyValueStore': { path: 'Name', max: 64, scope: 'account' },
  'AWS::CloudFront::CachePolicy': { path: 'CachePolicyConfig.Name', max: 128, scope: 'account' },
  'AWS::CloudFront::ResponseHeadersPolicy': {
    path: 'ResponseHeadersPolicyConfig.Name',
    max: 128,
    scope: 'account',
  },
  'AWS::CloudFront::OriginAccessControl': {
    path: 'OriginAccessControlConfig.Name',
    max: 64,
    scope: 'account',
  },
  'AWS::CloudWatch::Dashboard': { path: 'DashboardName', max: 255, scope: 'account' },
  'AWS::WAFv2::WebACL': { path: 'Name', max: 128, scope: 'account' },
  'AWS::IAM::Role': { path: 'RoleName', max: 64, scope: 'account' },
  'AWS::S3::Bucket': { path: 'BucketName', max: 63, scope: 'account' },
  'AWS::Logs::LogGroup': { path: 'LogGroupName', max: 512, scope: 'region' },
  'AWS::Logs::DeliverySource': { path: 'Name', max: 60, scope: 'region' },
  'AWS::Logs::DeliveryDestination': { path: 'Name', max: 60, scope: 'region' },
  'AWS::Logs::ResourcePolicy': { path: 'PolicyName', max: 255, scope: 'region' },
  'AWS::Lambda::Function': { path: 'FunctionName', max: 64, scope: 'region' },
  'AWS::SQS::Queue': { path: 'QueueName', max: 80, scope: 'region' },
  'AWS::SNS::Topic': { path: 'TopicName', max: 256, scope: 'region' },
  'AWS::SecretsManager::Secret': { path: 'Name', max: 512, scope: 'region' },
  'AWS::Scheduler::Schedule': { path: 'Name', max: 64, scope: 'region' },
  'AWS::CloudWatch::Alarm': { path: 'AlarmName', max: 255, scope: 'region' },
};

type Resource = { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string };
type Json = { Resources: Record<string, Resource>; Outputs?: Record<string, { Value: unknown }> };

/** A stack as deployed: its template, region, and which creation of it this is (generated names differ). */
interface Deployed {
  readonly name: string;
  readonly region: string;
  readonly json: Json;
  readonly creation: string;
}

/** One name a deployment holds: where it must be unique (`*` = the account), its type and its text. */
interface PhysicalName {
  readonly scope: string;
  readonly type: string;
  readonly text: string;
  readonly max: number;
  readonly stack: string;
  readonly id: string;
}

/** The stacks of a cloud assembly as one deployment of them: a template without a region deploys in us-east-1. */
function deployment(
  templates: Readonly<Record<string, Template>>,
  regions: Readonly<Record<string, string>>,
) {
  return Object.entries(templates).map(
    ([name, template]): Deployed => ({
      name,
      region: regions[name] ?? 'us-east-1',
      json: template.toJSON() as Json,
      creation: 'first',
    }),
  );
}

/** What is random in a creation of a stack (its id's last part, the generated names), the same on every read. */
const random = (stack: Deployed, id: string) =>
  createHash('sha256').update(`${stack.name} ${stack.region} ${stack.creation} ${id}`).digest('hex');

/** The names of a deployment, as CloudFormation makes them. */
function physicalNames(stacks: readonly Deployed[]): PhysicalName[] {
  const byName = new Map(stacks.map((stack) => [stack.name, stack]));
  const nameOf = (stack: Deployed, id: string): string => {
    const resource = stack.json.Resources[id];
    const named = resource ? NAMED[resource.Type] : undefined;
    const value = named ? at(resource?.Properties, named.path) : undefined;
    if (value !== undefined) return text(stack, value);
    // CloudFormation's: within the limit, with a random part of this creation of this stack.
    return `${`${stack.name}-${id}`.slice(0, (named?.max ?? 64) - 13)}-${random(stack, id).slice(0, 12)}`;
  };
  const text = (stack: Deployed, value: unknown): string => {
    if (typeof value === 'string') return value;
    const v = value as Record<string, unknown>;
    if (v.Ref === 'AWS::Region') return stack.region;
    if (v.Ref === 'AWS::AccountId') return ACCOUNT;
    if (v.Ref === 'AWS::Partition') return 'aws';
    if (v.Ref === 'AWS::StackName') return stack.name;
    if (v.Ref === 'AWS::StackId')
      return `arn:aws:cloudformation:${stack.region}:${ACCOUNT}:stack/${stack.name}/${random(stack, '').slice(0, 36)}`;
    if (typeof v.Ref === 'string') return nameOf(stack, v.Ref);
    if (v['Fn::GetAtt']) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      return `${nameOf(stack, id)}.${attribute}`;
    }
    if (v['Fn::Join']) {
      const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map((part) => text(stack, part)).join(separator);
    }
    if (v['Fn::Split']) {
      const [separator, whole] = v['Fn::Split'] as [string, unknown];
      return JSON.stringify(text(stack, whole).split(separator));
    }
    if (v['Fn::Select']) {
      const [index, list] = v['Fn::Select'] as [number, unknown];
      return (JSON.parse(text(stack, list)) as string[])[index] ?? '';
    }
    if (v['Fn::GetStackOutput']) {
      const { StackName, OutputName } = v['Fn::GetStackOutput'] as { StackName: string; OutputName: string };
      const other = byName.get(StackName);
      const output = other?.json.Outputs?.[OutputName];
      if (!other || !output) throw new Error(`no output ${OutputName} of ${StackName}`);
      return text(other, output.Value);
    }
    throw new Error(`cannot resolve ${JSON.stringify(value)}`);
  };
  const names: PhysicalName[] = stacks.map((stack) => ({
    scope: stack.region,
    type: 'AWS::CloudFormation::Stack',
    text: stack.name,
    max: 128,
    stack: stack.name,
    id: stack.name,
  }));
  for (const stack of stacks)
    for (const [id, resource] of Object.entries(stack.json.Resources)) {
      const named = NAMED[resource.Type];
      if (!named) continue;
      names.push({
        scope: named.scope === 'account' ? '*' : stack.region,
        type: resource.Type,
        text: nameOf(stack, id),
        max: named.max,
        stack: stack.name,
        id,
      });
    }
  return names;
}

/** The value at a dotted path of an object. */
function at(object: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((o, key) => (o as Record<string, unknown> | undefined)?.[key], object);
}

/** The names two sets share in one scope (none, for two deployments that can coexist). */
function shared(a: readonly PhysicalName[], b: readonly PhysicalName[]): string[] {
  const key = (n: PhysicalName) => `${n.scope} ${n.type} ${n.text}`;
  const keys = new Set(a.map(key));
  return b.filter((n) => keys.has(key(n))).map((n) => `${key(n)} (${n.stack}/${n.id})`);
}

/** A whole app synthesized in this process (the stack and its edge companion, if any). */
async function synthApp(stackName: string, props: CatalogStackProps): Promise<Deployed[]> {
  const { stack, template } = await synthStack(props, { stackName });
  const edge = stack.monitoring.edgeStack;
  const region = props.env?.region ?? 'us-east-1';
  return [
    { name: stackName, region, json: template.toJSON() as Json, creation: 'first' },
    ...(edge
      ? [
          {
            name: edge.stackName,
            region: 'us-east-1',
            json: Template.fromStack(edge).toJSON() as Json,
            creation: 'first',
          },
        ]
      : []),
  ];
}

/** The shared syntheses of the longest stack name and `npm run synth`'s, as deployments. */
const PLACEMENTS: [SharedName, Record<string, string>][] = [
  ['readme', {}],
  ['longest name, no region', {}],
  ['longest name, eu-west-1 with its us-east-1 edge stack', { [LONGEST_STACK_NAME]: 'eu-west-1' }],
];

describe('every name fits its service’s limit', () => {
  for (const [name, regions] of PLACEMENTS)
    it(`in ${name === 'readme' ? 'the template npm run synth writes' : `the app of the ${name}`}`, async () => {
      const names = physicalNames(deployment((await sharedAssembly(name)).templates, regions));
      expect(names.length).toBeGreaterThan(20);
      expect(names.filter((n) => n.text.length > n.max).map((n) => `${n.stack}/${n.id}: ${n.text}`)).toEqual(
        [],
      );
    });

  it('and a name over its limit fails the synth: CDK’s CloudFormation validation finds it, as an error', async () => {
    const { conclusions, violations } = await sharedAssembly('a name over its limit');
    expect(violations).toContainEqual({
      rule: 'F3033',
      path: 'Overlong/Destination',
      severity: 'error',
    });
    expect(conclusions['CloudFormation Validate']).toBe('failure');
  });
});

describe('two deployments in one account share no name', () => {
  it('staging and production in one region', async () => {
    for (const region of ['us-east-1', 'eu-west-1']) {
      const env = { account: ACCOUNT, region };
      const staging = physicalNames(await synthApp('CatalogStaging', { env }));
      const production = physicalNames(await synthApp('CatalogProduction', { env }));
      expect(shared(staging, production), region).toEqual([]);
    }
  });

  it('one deployment name in three regions (two with their us-east-1 edge stacks)', async () => {
    const apps = await Promise.all(
      ['us-east-1', 'eu-west-1', 'eu-central-1'].map(async (region) =>
        physicalNames(await synthApp('TrainingPlanCatalog', { env: { account: ACCOUNT, region } })),
      ),
    );
    const [east = [], west = [], central = []] = apps;
    expect(shared(east, west)).toEqual([]);
    expect(shared(east, central)).toEqual([]);
    expect(shared(west, central)).toEqual([]);
    // The account-wide names really carry the region (the generated ones aside).
    expect(west.filter((n) => n.type === 'AWS::CloudFront::Function').map((n) => n.text)).toEqual([
      'TrainingPlanCatalog_eu-west-1-viewer-request',
      'TrainingPlanCatalog_eu-west-1-viewer-response',
    ]);
  });
});

describe('a deploy can be run again after a failed first deploy, or after a destroy', () => {
  /** What a deletion keeps: on a failed create's rollback, `RetainExceptOnCreate` goes too. */
  const kept = (resource: Resource, rollback: boolean) =>
    resource.DeletionPolicy === 'Retain' ||
    resource.DeletionPolicy === 'Snapshot' ||
    (!rollback && resource.DeletionPolicy === 'RetainExceptOnCreate');

  /** The names the stacks `gone` of the first attempt kept that the second attempt asks for again. */
  const clashes = (first: Deployed[], gone: readonly Deployed[], second: Deployed[], rollback: boolean) => {
    const keptNames = physicalNames(first).filter((n) => {
      const stack = gone.find((s) => s.name === n.stack);
      const resource = stack?.json.Resources[n.id];
      return resource !== undefined && kept(resource, rollback);
    });
    return shared(keptNames, physicalNames(second));
  };

  for (const [name, regions] of PLACEMENTS.filter(([n]) => n === 'readme' || n.includes('eu-west-1')))
    it(`in ${name === 'readme' ? 'the template npm run synth writes' : `the app of the ${name}`}`, async () => {
      const app = deployment((await sharedAssembly(name)).templates, regions);
      const again = (stack: Deployed) => ({ ...stack, creation: 'second' });
      // Something was kept (else there is nothing to test).
      expect(app.some((stack) => Object.values(stack.json.Resources).some((r) => kept(r, false)))).toBe(true);
      // A stack's first create fails and rolls back; the same deploy is run again (the stacks before it stay).
      for (const failed of app) {
        const second = app.map((stack) => (stack === failed ? again(stack) : stack));
        expect(clashes(app, [failed], second, true), failed.name).toEqual([]);
      }
      // The whole app is destroyed (`cdk destroy --all`), then deployed again.
      expect(clashes(app, app, app.map(again), false)).toEqual([]);
    });
});
