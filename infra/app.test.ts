/**
 * The app's configuration: a deployment's file (infra/deployments/NAME.json) to the stack's name, region and
 * props, and every context key refused but the deployment's name, CDK's own keys and settings that say what the
 * file says; what `npm run synth` writes and says (a shared synthesis, testing/infra/stacks.ts); and the app run
 * by the pinned CDK CLI itself (`npm run cdk -- …`), in a scratch checkout with deployments of its own.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction, GATEWAY_FUNCTIONS } from '../gateway/functions/bundle.ts';
import { fillContactAddress } from '../gateway/functions/contact.ts';
import { ROOT } from '../testing/cli.ts';
import { runCdk, type ScratchCheckout, scratchCheckout } from '../testing/infra/checkout.ts';
import { CDK_CONTEXT, SYNTH_V8_FLAGS, sharedAssembly } from '../testing/infra/stacks.ts';
import { accountProblem, cdkCommand, configFromContext } from './config.ts';

/** The repository's default deployment (package.json's `npm run synth` names it). */
const DEFAULT_DEPLOYMENT = 'TrainingPlanCatalog';

const CONTACT = 'https://partners.trainingplans.app/keys';

/** What an older build could have left in dist/gateway: not the functions of the sources. */
const STALE_BUNDLE = 'async function handler(event) { return event.request; }\n';

/** The deployments the scratch checkouts declare besides the repository's. */
const DEPLOYMENTS = {
  CatalogStaging: {
    deployment: 'CatalogStaging',
    region: 'us-east-1',
    account: '123456789012',
    contactAddress: CONTACT,
    scheduleEnabled: false,
    buildRateMinutes: 15,
  },
  CatalogWest: {
    deployment: 'CatalogWest',
    region: 'eu-west-1',
    account: '123456789012',
    contactAddress: CONTACT,
  },
  CatalogLab: {
    deployment: 'CatalogLab',
    region: 'eu-west-1',
    contactAddress: CONTACT,
    vpcId: 'vpc-0abc1234',
    subnetIds: ['subnet-0aaa1111'],
    kvsSeedFile: 'seeds/lab.json',
  },
  CatalogBroken: {
    deployment: 'CatalogBroken',
    region: 'us-east-1',
    contactAddress: CONTACT,
    buildRateMinutes: 2,
  },
};

describe('configFromContext', () => {
  let checkout: ScratchCheckout;
  beforeAll(async () => {
    checkout = await scratchCheckout(DEPLOYMENTS);
  });
  afterAll(() => checkout.remove());
  const from = (context: Record<string, unknown>) => configFromContext(context, checkout.dir);
  const failure = (context: Record<string, unknown>) => {
    try {
      from(context);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('builds the stack the context names from its file alone: its name, its region, the settings it gives', () => {
    const config = from({ ...CDK_CONTEXT, deployment: 'CatalogLab' });
    expect(config).toMatchObject({
      stackName: 'CatalogLab',
      region: 'eu-west-1',
      props: {
        contactAddress: CONTACT,
        subnetIds: ['subnet-0aaa1111'],
        vpcId: 'vpc-0abc1234',
        kvsSeedFile: join(checkout.dir, 'infra', 'deployments', 'seeds', 'lab.json'),
      },
    });
    expect(from({ deployment: 'CatalogStaging' }).props).toEqual({
      contactAddress: CONTACT,
      scheduleEnabled: false,
      buildRateMinutes: 15,
    });
    expect(Object.keys(config.props)).not.toContain('deployment');
    expect(Object.keys(config.props)).not.toContain('region');
  });

  it('takes the account a file names into the stack’s environment, not its props; none when it names none', () => {
    const staging = from({ deployment: 'CatalogStaging' });
    expect(staging.account).toBe('123456789012');
    expect(Object.keys(staging.props)).not.toContain('account');
    expect(from({ deployment: 'CatalogLab' }).account).toBeUndefined();
  });

  it('fails without a deployment, naming the ones the checkout declares', () => {
    expect(failure({ ...CDK_CONTEXT })).toBe(
      'name the deployment: -c deployment=NAME (declared in infra/deployments/: CatalogBroken, CatalogLab, CatalogStaging, CatalogWest, TrainingPlanCatalog)',
    );
  });

  it('fails a deployment that has no file, naming the one probably meant', () => {
    expect(failure({ deployment: 'CatalogStagng' })).toBe(
      'context deployment "CatalogStagng": there is no infra/deployments/CatalogStagng.json; did you mean CatalogStaging? (declared in infra/deployments/: CatalogBroken, CatalogLab, CatalogStaging, CatalogWest, TrainingPlanCatalog; a new deployment is a new file there)',
    );
    expect(failure({ deployment: 'CatalogProd' })).toBe(
      'context deployment "CatalogProd": there is no infra/deployments/CatalogProd.json (declared in infra/deployments/: CatalogBroken, CatalogLab, CatalogStaging, CatalogWest, TrainingPlanCatalog; a new deployment is a new file there)',
    );
  });

  it('fails every context key that is no setting, naming the one probably meant; CDK’s own keys pass', () => {
    expect(
      failure({
        ...CDK_CONTEXT,
        'aws:cdk:bundling-stacks': [],
        'cli-telemetry': false,
        deployment: 'CatalogStaging',
        stackname: 'CatalogStaging',
        scheduleEnable: 'false',
        frobnicate: '1',
      }),
    ).toBe(
      'context stackname: is not a setting of a deployment (did you mean deployment?); context scheduleEnable: is not a setting of a deployment (did you mean scheduleEnabled?); context frobnicate: is not a setting of a deployment',
    );
    // A key that is no setting, and no deployment named: both said, in one message.
    expect(failure({ ...CDK_CONTEXT, stackName: 'CatalogStaging' })).toBe(
      'context stackName: is not a setting of a deployment (did you mean deployment?); name the deployment: -c deployment=NAME (declared in infra/deployments/: CatalogBroken, CatalogLab, CatalogStaging, CatalogWest, TrainingPlanCatalog)',
    );
  });

  it('fails a setting given as context that differs from the file, and takes one that says the same', () => {
    expect(failure({ deployment: 'CatalogStaging', scheduleEnabled: 'true' })).toBe(
      `context scheduleEnabled "true" differs from infra/deployments/CatalogStaging.json, which says "false": a deployment's settings live in its file; change it there`,
    );
    expect(failure({ deployment: 'CatalogStaging', scheduleEnabled: 'true', buildRateMinutes: '60' })).toBe(
      'context scheduleEnabled "true" differs from infra/deployments/CatalogStaging.json, which says "false": a deployment\'s settings live in its file; change it there; context buildRateMinutes "60" differs from infra/deployments/CatalogStaging.json, which says "15": a deployment\'s settings live in its file; change it there',
    );
    expect(failure({ deployment: 'TrainingPlanCatalog', scheduleEnabled: 'false' })).toBe(
      'context scheduleEnabled "false" differs from infra/deployments/TrainingPlanCatalog.json (the default), which says "true": a deployment\'s settings live in its file; change it there',
    );
    expect(failure({ deployment: 'TrainingPlanCatalog', vpcId: 'vpc-0abc1234' })).toContain(
      'context vpcId "vpc-0abc1234" differs from infra/deployments/TrainingPlanCatalog.json (the default), which says not set',
    );
    expect(
      from({ deployment: 'CatalogLab', subnetIds: 'subnet-0aaa1111', scheduleEnabled: true }).stackName,
    ).toBe('CatalogLab');
  });

  it('fails a file with a key that is no setting, a bad value, another name, or no region or contact address', async () => {
    expect(failure({ deployment: 'CatalogBroken' })).toBe(
      'infra/deployments/CatalogBroken.json: buildRateMinutes 2: must be a whole number from 5 to 1440',
    );
    const bad = await scratchCheckout({
      Copied: { deployment: 'CatalogStaging', stackName: 'X', buildRateMinutes: 2 },
    });
    try {
      expect(() => configFromContext({ deployment: 'Copied' }, bad.dir)).toThrow(
        'infra/deployments/Copied.json: stackName: is not a setting of a deployment (did you mean deployment?); the settings: infra/README.md, "Settings"; contactAddress: is required; buildRateMinutes 2: must be a whole number from 5 to 1440; deployment "CatalogStaging": must be the file\'s name, Copied (a copied file keeps the name of the one it was copied from); region: is required (the AWS region the deployment lives in, such as us-east-1)',
      );
    } finally {
      await bad.remove();
    }
  });

  it('lets a command that needs no AWS account go on offline, and refuses one that does without credentials', () => {
    const deployment = { name: 'CatalogStaging', region: 'us-east-1' };
    expect(cdkCommand(['-c', 'deployment=CatalogStaging', 'diff', '--exclusively'])).toBe('diff');
    expect(cdkCommand(['--version'])).toBeUndefined();
    for (const command of [undefined, 'synth', 'ls', 'context'])
      expect(accountProblem({ command, account: undefined }, deployment), command).toBeUndefined();
    for (const command of ['diff', 'deploy', 'destroy', 'bootstrap', 'watch', 'import'])
      expect(accountProblem({ command, account: undefined }, deployment), command).toMatch(
        new RegExp(`^cdk ${command} acts on the AWS account of deployment CatalogStaging \\(in us-east-1\\)`),
      );
    // What it says without a reason of the environment's (app/aws-profile.ts gives one: the CLI test below).
    expect(accountProblem({ command: 'diff', account: undefined }, deployment)).toBe(
      'cdk diff acts on the AWS account of deployment CatalogStaging (in us-east-1), and the CDK CLI found no AWS credentials that work: set AWS_PROFILE (after aws sso login, for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; nothing was built (npm run synth needs no credentials)',
    );
    expect(accountProblem({ command: 'deploy', account: '123456789012' }, deployment)).toBeUndefined();
  });

  it('is what the repository declares for its default deployment: us-east-1, and a contact address', () => {
    const config = configFromContext({ ...CDK_CONTEXT, deployment: DEFAULT_DEPLOYMENT }, ROOT);
    expect(config).toMatchObject({ stackName: DEFAULT_DEPLOYMENT, region: 'us-east-1' });
    expect(config.props.contactAddress).toBeDefined();
  });
});

describe('npm run synth (the README’s command, on a machine without AWS credentials)', () => {
  it('writes the default deployment’s stack for us-east-1, the region its file gives, with a rule refusing any other region', async () => {
    const { templates } = await sharedAssembly('readme');
    expect(Object.keys(templates)).toEqual([DEFAULT_DEPLOYMENT]);
    const rules = templates[DEFAULT_DEPLOYMENT]?.toJSON().Rules as Record<string, { Assertions: unknown[] }>;
    expect(rules.DeployRegion?.Assertions).toEqual([
      {
        Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
        AssertDescription: expect.stringContaining('Deploy this template in us-east-1'),
      },
    ]);
  });

  it('says nothing but what it does: no deprecated CDK call, every feature flag set, no cdk-nag finding', async () => {
    const { output } = await sharedAssembly('readme');
    expect(output).not.toMatch(/deprecated/i);
    expect(output).not.toMatch(/feature flags? (is|are) not configured/);
    expect(output).not.toMatch(/AwsSolutions|validation/i);
  });
});

describe('the app as the CDK CLI runs it (npm run cdk -- …, the pinned CLI, in a checkout’s infra/)', () => {
  let checkout: ScratchCheckout;
  beforeAll(async () => {
    checkout = await scratchCheckout(DEPLOYMENTS);
    // A dist/ an older npm run build left: its function bundles are not the sources'.
    await rm(join(checkout.dir, 'dist'));
    await mkdir(join(checkout.dir, 'dist', 'gateway'), { recursive: true });
    for (const name of ['viewer-request', 'viewer-response'])
      await writeFile(join(checkout.dir, 'dist', 'gateway', `${name}.js`), STALE_BUNDLE);
  });
  afterAll(() => checkout.remove());
  /** `cdk ARGS` into an output directory of its own, so runs side by side do not share infra/cdk.out. */
  const cdk = (args: string[], env: Record<string, string> = {}) =>
    runCdk(checkout, [...args, '--output', join(checkout.scratch, `out-${args.join('-')}`)], env);

  /**
   * `cdk ls` of the deployment in eu-west-1 with its account, the app as cdk.json runs it (with the V8 flags of
   * the synthesizing processes) but its modules kept at their paths in the checkout (Node would follow the links to the repository's), so that a stack reading dist/
   * would read the checkout's stale one; CDK's CloudFormation validation of that placement is nag.test.ts's (a
   * shared synthesis). One synthesis, read by the two cases after it.
   */
  const APP = `node ${SYNTH_V8_FLAGS.join(' ')} --preserve-symlinks --preserve-symlinks-main --import tsx app.ts`;
  let west: Promise<{ listed: Awaited<ReturnType<typeof cdk>>; dir: string }> | undefined;
  const listedWest = () => {
    west ??= cdk(['ls', '-c', 'deployment=CatalogWest', '--app', APP], { CDK_VALIDATION: 'false' }).then(
      (listed) => ({ listed, dir: join(checkout.scratch, `out-ls--c-deployment=CatalogWest---app-${APP}`) }),
    );
    return west;
  };

  // Each case runs the CLI and the app in child processes, each into its own directory, side by side.
  it.concurrent('lists the deployment -c deployment names, and only it, from its file, in its account, with the functions of the checkout’s sources whatever dist/ holds', async ({
    expect,
  }) => {
    const { listed, dir } = await listedWest();
    expect(listed.stderr).not.toMatch(/infra:/);
    expect(listed.stdout).toBe('CatalogWest\nCatalogWest-edge-eu-west-1\n');
    expect(listed.code).toBe(0);
    const template = JSON.parse(await readFile(join(dir, 'CatalogWest.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: { FunctionCode?: string } }>;
      Rules: Record<string, { Assertions: { Assert: unknown }[] }>;
    };
    // The account its file names: the template refuses any other before it makes anything.
    expect(template.Rules.DeployAccount?.Assertions[0]?.Assert).toEqual({
      'Fn::Equals': [{ Ref: 'AWS::AccountId' }, '123456789012'],
    });
    const code = Object.entries(template.Resources)
      .filter(([, resource]) => resource.Type === 'AWS::CloudFront::Function')
      .map(([id, resource]) => [id.replace(/[0-9A-F]{8}$/, ''), resource.Properties.FunctionCode]);
    expect(Object.fromEntries(code)).toEqual({
      ViewerRequest: fillContactAddress(
        await bundleFunction(join(ROOT, GATEWAY_FUNCTIONS['viewer-request'])),
        CONTACT,
      ),
      ViewerResponse: await bundleFunction(join(ROOT, GATEWAY_FUNCTIONS['viewer-response'])),
    });
  });

  it.concurrent('adds the us-east-1 edge stack of a deployment whose file says another region, named after it and its region, and checks both stacks with cdk-nag', async ({
    expect,
  }) => {
    const { listed, dir } = await listedWest();
    expect(listed.stdout).toBe('CatalogWest\nCatalogWest-edge-eu-west-1\n');
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; environment?: string }>;
    };
    expect(manifest.artifacts.CatalogWest?.environment).toMatch(/\/eu-west-1$/);
    expect(manifest.artifacts['CatalogWest-edge-eu-west-1']?.environment).toMatch(/\/us-east-1$/);
    // The AwsSolutions pack ran on the app (its report is written) and found nothing unaccepted.
    const report = JSON.parse(await readFile(join(dir, 'validation-report.json'), 'utf8'));
    expect(report).toMatchObject({ title: 'Validation Report', pluginReports: [] });
  });

  // Every refusal of a deployment's configuration takes one path through the app (configFromContext throws,
  // app.ts prints the message in one line): one run shows that path through the CLI; each message is
  // configFromContext's (the tests above). A deploy without credentials: the configuration is refused first.
  it.concurrent('fails, in one line before any stack is built or credentials are asked for, a configuration it refuses', async ({
    expect,
  }) => {
    const differs = await cdk([
      'deploy',
      '--all',
      '-c',
      'deployment=CatalogStaging',
      '-c',
      'scheduleEnabled=true',
    ]);
    expect(differs.code).not.toBe(0);
    expect(differs.stderr).toContain(
      `infra: context scheduleEnabled "true" differs from infra/deployments/CatalogStaging.json, which says "false": a deployment's settings live in its file; change it there\n`,
    );
    expect(differs.stderr.match(/^infra:/gm)).toHaveLength(1);
    expect(differs.stderr).not.toMatch(/acts on the AWS account/);
    expect(`${differs.stdout}${differs.stderr}`).not.toMatch(/Bundling/);
  });

  it.concurrent('fails a command that acts on the AWS account at once when the CLI found no credentials, before bundling anything', async ({
    expect,
  }) => {
    // One path through app.ts whatever the reason (accountProblem's messages: the tests above): a profile
    // that does not exist, which the app names.
    const deploy = await cdk(['deploy', '--all', '-c', 'deployment=CatalogWest'], { AWS_PROFILE: 'prodd' });
    expect(deploy.code).not.toBe(0);
    expect(deploy.stderr).toContain(
      `infra: cdk deploy acts on the AWS account of deployment CatalogWest (in eu-west-1), and the CDK CLI found no AWS credentials that work: AWS_PROFILE names the profile "prodd", which neither ${join(checkout.scratch, 'home', '.aws', 'config')} nor ${join(checkout.scratch, 'home', '.aws', 'credentials')} holds`,
    );
    expect(`${deploy.stdout}${deploy.stderr}`).not.toMatch(/Bundling/);
  });
});
