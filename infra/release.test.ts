/**
 * The functions' release in the stack (infra/release.ts, infra/README.md "Verifying the function"): the functions
 * are not auto-published; the release runs after both and before the distribution, is called again when (and
 * only when) a function's code changes, may test and publish those two functions only and write that one store;
 * and the environment rules that refuse a deploy to another account or region before any resource is made.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLE } from '../lambda/bundling.ts';
import { logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import { RELEASE_FUNCTION_ACTIONS, RELEASE_STORE_ACTIONS } from './release.ts';

type Resource = { Properties: Record<string, unknown>; DependsOn?: string[] };
const resource = (s: Synthesized, type: string, id: string) =>
  s.template.findResources(type)[logicalId(s.template, type, id)] as Resource;
const functionIds = (s: Synthesized) =>
  ['ViewerRequest', 'ViewerResponse'].map((id) => logicalId(s.template, 'AWS::CloudFront::Function', id));
const release = (s: Synthesized) => resource(s, 'Custom::FunctionRelease', 'FunctionRelease');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the functions’ release', () => {
  it('leaves both functions unpublished by CloudFormation: a deploy changes their DEVELOPMENT stage only', async () => {
    const s = await synthStack();
    for (const id of ['ViewerRequest', 'ViewerResponse'])
      expect(resource(s, 'AWS::CloudFront::Function', id).Properties.AutoPublish).toBe(false);
  });

  it('runs after both functions and before the distribution, with each function’s name, kind and code hash', async () => {
    const s = await synthStack();
    const [request, response] = functionIds(s);
    const custom = release(s);
    expect(custom.DependsOn).toEqual(expect.arrayContaining([request, response]));
    expect(resource(s, 'AWS::CloudFront::Distribution', 'Distribution').DependsOn).toContain(
      'FunctionRelease',
    );
    const code = (id: string | undefined) =>
      (s.template.toJSON().Resources[id as string].Properties as { FunctionCode: string }).FunctionCode;
    expect(custom.Properties).toMatchObject({
      Functions: [
        {
          Name: 'TrainingPlanCatalog-viewer-request',
          Kind: 'viewer-request',
          CodeSha256: sha256(code(request)),
        },
        {
          Name: 'TrainingPlanCatalog-viewer-response',
          Kind: 'viewer-response',
          CodeSha256: sha256(code(response)),
        },
      ],
      KeyValueStoreArn: {
        'Fn::GetAtt': [logicalId(s.template, 'AWS::CloudFront::KeyValueStore', 'Keys'), 'Arn'],
      },
      Publish: 'true',
    });
    // Its handler, on the runtime of the stack's other functions, within Lambda's longest timeout.
    expect(resource(s, 'AWS::Lambda::Function', 'FunctionReleaseHandler').Properties).toMatchObject({
      Runtime: LAMBDA_BUNDLE.runtime,
      Architectures: ['arm64'],
      Timeout: 660,
    });
  });

  it('comes before the canary’s full check after the deploy, which asks LIVE through CloudFront', async () => {
    const s = await synthStack({
      monitoringKeySecretArn:
        'arn:aws:secretsmanager:us-east-1:123456789012:secret:TrainingPlanCatalog/monitoring-key-AbCdEf',
    });
    const afterDeploy = resource(s, 'Custom::AWS', 'CanaryAfterDeploy');
    expect(afterDeploy.DependsOn).toContain('FunctionRelease');
  });

  it('is called again when a function’s code changes, and not for a deploy that changes none', async () => {
    const [one, same, other] = await Promise.all([
      synthStack(),
      synthStack({ buildRateMinutes: 30 }),
      synthStack({ contactAddress: 'keys@partners.trainingplans.app' }),
    ]);
    const hashes = (s: Synthesized) =>
      (release(s).Properties.Functions as { CodeSha256: string }[]).map((fn) => fn.CodeSha256);
    expect(hashes(same)).toEqual(hashes(one));
    // The viewer-request's 401 names the contact address: its code changed, the viewer-response's did not.
    expect(hashes(other)[0]).not.toBe(hashes(one)[0]);
    expect(hashes(other)[1]).toBe(hashes(one)[1]);
  });

  it('with publishFunctions false, tells the release to hold what changed', async () => {
    expect(release(await synthStack({ publishFunctions: false })).Properties.Publish).toBe('false');
  });

  it('may describe, get, test and publish the two functions only, and add and remove keys in that one store', async () => {
    const s = await synthStack();
    const policy = resource(s, 'AWS::IAM::Policy', 'FunctionReleaseRoleDefaultPolicy').Properties
      .PolicyDocument as { Statement: { Sid: string; Action: string[]; Resource: unknown }[] };
    const [request, response] = functionIds(s);
    expect(policy.Statement).toEqual([
      {
        Sid: 'OwnLogs',
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: {
          'Fn::GetAtt': [logicalId(s.template, 'AWS::Logs::LogGroup', 'FunctionReleaseLogs'), 'Arn'],
        },
      },
      {
        Sid: 'GatewayFunctions',
        Effect: 'Allow',
        Action: [...RELEASE_FUNCTION_ACTIONS].sort(),
        Resource: [{ 'Fn::GetAtt': [request, 'FunctionARN'] }, { 'Fn::GetAtt': [response, 'FunctionARN'] }],
      },
      {
        Sid: 'ReleaseKeys',
        Effect: 'Allow',
        Action: [...RELEASE_STORE_ACTIONS],
        Resource: { 'Fn::GetAtt': [logicalId(s.template, 'AWS::CloudFront::KeyValueStore', 'Keys'), 'Arn'] },
      },
    ]);
    // No managed policy on either of its roles.
    for (const id of ['FunctionReleaseRole', 'FunctionReleaseProviderRole'])
      expect(resource(s, 'AWS::IAM::Role', id).Properties.ManagedPolicyArns).toBeUndefined();
  });
});

/** The account rule's assertion, evaluated as CloudFormation does before it makes anything, in `account`. */
function accountAccepted(s: Synthesized, account: string): boolean | undefined {
  const rules = (s.template.toJSON().Rules ?? {}) as Record<string, { Assertions: { Assert: unknown }[] }>;
  const assertion = rules.DeployAccount?.Assertions[0]?.Assert as
    | { 'Fn::Equals': [{ Ref: string }, string] }
    | undefined;
  if (!assertion) return undefined;
  const [left, right] = assertion['Fn::Equals'];
  expect(left).toEqual({ Ref: 'AWS::AccountId' });
  return right === account;
}

describe('the account a deployment names', () => {
  it('refuses a deploy with another account’s credentials, by a rule of the template (before any resource is made)', async () => {
    const s = await synthStack({ env: { account: '111122223333', region: 'us-east-1' } });
    expect(accountAccepted(s, '111122223333')).toBe(true);
    expect(accountAccepted(s, '444455556666')).toBe(false);
    const rule = (
      s.template.toJSON().Rules as Record<string, { Assertions: { AssertDescription: string }[] }>
    ).DeployAccount;
    expect(rule?.Assertions[0]?.AssertDescription).toMatch(/^Deploy this template in account 111122223333/);
  });

  it('holds the us-east-1 companion of a stack elsewhere to the same account', async () => {
    const s = await synthStack({ env: { account: '111122223333', region: 'eu-west-1' } });
    const edge = s.stack.monitoring.edgeStack;
    expect(edge?.account).toBe('111122223333');
    const { Template } = await import('aws-cdk-lib/assertions');
    const rules = Template.fromStack(edge as never).toJSON().Rules as Record<
      string,
      { Assertions: unknown[] }
    >;
    expect(rules.DeployAccount?.Assertions).toEqual([
      {
        Assert: { 'Fn::Equals': [{ Ref: 'AWS::AccountId' }, '111122223333'] },
        AssertDescription: expect.stringMatching(/^Deploy this template in account 111122223333/),
      },
    ]);
  });

  it('without an account (no file account, no credentials), makes no account rule', async () => {
    expect(accountAccepted(await synthStack(), '444455556666')).toBeUndefined();
  });
});
