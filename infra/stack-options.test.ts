/**
 * The stack's props: each optional setting changes the template as documented (the builder is not bundled
 * here: see stack.test.ts), and each invalid value fails in the constructor, naming the prop and the value.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLambdaEnvironment } from '../app/settings/environment.ts';
import { constructStack, logicalId, type Synthesized, synthStack } from '../testing/infra/stacks.ts';
import { type CatalogStackProps, CatalogStackPropsError } from './stack.ts';

const CERT = 'arn:aws:acm:us-east-1:123456789012:certificate/0f2b1c3d-1111-2222-3333-444455556666';
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog/source-AbCdEf';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ops-alerts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'catalog-infra-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function synth(props: CatalogStackProps): Promise<Synthesized> {
  return synthStack(props);
}

const distributionConfig = (s: Synthesized) =>
  Object.values(s.template.findResources('AWS::CloudFront::Distribution'))[0]?.Properties
    .DistributionConfig as Record<string, unknown>;
const builderOf = (s: Synthesized) =>
  s.template.findResources('AWS::Lambda::Function')[logicalId(s.template, 'AWS::Lambda::Function', 'Builder')]
    ?.Properties as Record<string, unknown>;
const builderVariables = (s: Synthesized) =>
  (builderOf(s).Environment as { Variables: Record<string, unknown> }).Variables;
const builderStatements = (s: Synthesized) => {
  const role = logicalId(s.template, 'AWS::IAM::Role', 'BuilderRole');
  return Object.values(s.template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[]);
};

describe('optional settings', () => {
  it('serves a custom domain with its ACM certificate and TLS 1.2 at least, and builds links on it', async () => {
    const s = await synth({ domainName: 'catalog.example.com', certificateArn: CERT });
    expect(distributionConfig(s)).toMatchObject({
      Aliases: ['catalog.example.com'],
      ViewerCertificate: {
        AcmCertificateArn: CERT,
        MinimumProtocolVersion: 'TLSv1.2_2021',
        SslSupportMethod: 'sni-only',
      },
    });
    expect(builderVariables(s).CATALOG_BASE_URL).toBe('https://catalog.example.com');
    s.template.hasOutput('ApiUrl', { Value: 'https://catalog.example.com' });
  });

  it('writes access logs to a new private bucket whose logs expire', async () => {
    const s = await synth({ accessLogging: true, accessLogRetentionDays: 30 });
    const logs = logicalId(s.template, 'AWS::S3::Bucket', 'AccessLogs');
    expect(distributionConfig(s).Logging).toEqual({
      Bucket: { 'Fn::GetAtt': [logs, 'RegionalDomainName'] },
      Prefix: 'cloudfront/',
      IncludeCookies: false,
    });
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: Match.objectLike({
        BlockPublicAcls: true,
        RestrictPublicBuckets: true,
      }),
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerPreferred' }] },
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 30, Status: 'Enabled' })] },
    });
  });

  it('writes access logs to a named bucket', async () => {
    const s = await synth({ accessLogging: true, accessLogBucketName: 'ops-cloudfront-logs' });
    s.template.resourceCountIs('AWS::S3::Bucket', 1);
    expect(distributionConfig(s).Logging).toMatchObject({
      Bucket: {
        'Fn::Join': ['', ['ops-cloudfront-logs.s3.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]],
      },
    });
  });

  it('uses the price class, error TTL and version expiry it is given', async () => {
    const s = await synth({
      priceClass: 'All',
      errorCachingMinTtlSeconds: 0,
      noncurrentVersionExpiryDays: 7,
    });
    expect(distributionConfig(s).PriceClass).toBe('PriceClass_All');
    for (const response of distributionConfig(s).CustomErrorResponses as Record<string, unknown>[])
      expect(response.ErrorCachingMinTTL).toBe(0);
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: [Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 7 } })],
      },
    });
  });

  it('seeds the key-value store from an import file', async () => {
    const seed = join(scratch, 'seed.json');
    const content = `${JSON.stringify({ data: [{ key: 'cors:origin', value: 'https://partner.example' }] })}\n`;
    await writeFile(seed, content);
    const s = await synth({ kvsSeedFile: seed });
    s.template.hasResourceProperties('AWS::CloudFront::KeyValueStore', {
      ImportSource: { SourceType: 'S3', SourceArn: Match.anyValue() },
    });
    const assets = JSON.parse(await readFile(join(s.outdir, 'TrainingPlanCatalog.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string } }>;
    };
    const staged = Object.values(assets.files).map((f) => join(s.outdir, f.source.path));
    const copies = await Promise.all(staged.map((p) => readFile(p, 'utf8').catch(() => '')));
    expect(copies).toContain(content);
  });

  it('reads a given secret and only that one, creating none', async () => {
    const s = await synth({ sourceSecretArn: SECRET });
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(builderVariables(s)).toMatchObject({ CATALOG_SOURCE_SECRET_ARN: SECRET });
    expect(builderVariables(s).CATALOG_SOURCE).toBeUndefined();
    expect(builderStatements(s).filter((st) => JSON.stringify(st.Action).includes('secretsmanager'))).toEqual(
      [expect.objectContaining({ Action: 'secretsmanager:GetSecretValue', Resource: SECRET })],
    );
    expect(s.template.findOutputs('SourceSecretArn')).toEqual({});
  });

  it('passes a credential-free source in the environment and may read no secret', async () => {
    const s = await synth({ source: 'https://plans.example.com/export.json' });
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(builderVariables(s)).toMatchObject({ CATALOG_SOURCE: 'https://plans.example.com/export.json' });
    expect(builderVariables(s).CATALOG_SOURCE_SECRET_ARN).toBeUndefined();
    expect(JSON.stringify(builderStatements(s))).not.toContain('secretsmanager');
  });

  it('lets the builder read the monitoring key secret, that one only, and passes the propagation settings', async () => {
    const MONITORING = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog/monitoring-XyZ123';
    const s = await synth({
      source: 'https://plans.example.com/export.json',
      monitoringKeySecretArn: MONITORING,
      propagationMaxWait: '90s',
      propagationInterval: '2s',
    });
    expect(builderVariables(s)).toMatchObject({
      CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING,
      CATALOG_PROPAGATION_MAX_WAIT: '90s',
      CATALOG_PROPAGATION_INTERVAL: '2s',
    });
    expect(builderStatements(s).filter((st) => JSON.stringify(st.Action).includes('secretsmanager'))).toEqual(
      [
        expect.objectContaining({
          Sid: 'ReadMonitoringKey',
          Action: 'secretsmanager:GetSecretValue',
          Resource: MONITORING,
        }),
      ],
    );
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
  });

  it('passes the builder settings it is given', async () => {
    const s = await synth({
      baseUrl: 'https://plans.example.com/',
      webBaseUrl: 'https://www.example.com/training/',
      appScheme: 'myapp',
      skipInvalid: true,
      minRatio: 0.8,
      keepBuilds: 5,
      builderTimeoutSeconds: 120,
      builderMemoryMiB: 512,
      buildRateMinutes: 15,
    });
    expect(builderVariables(s)).toMatchObject({
      CATALOG_BASE_URL: 'https://plans.example.com',
      CATALOG_WEB_BASE_URL: 'https://www.example.com/training',
      CATALOG_APP_SCHEME: 'myapp',
      CATALOG_SKIP_INVALID: 'true',
      CATALOG_MIN_RATIO: '0.8',
      CATALOG_KEEP: '5',
    });
    expect(builderOf(s)).toMatchObject({ Timeout: 120, MemorySize: 512 });
    s.template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(15 minutes)' });
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumEventAgeInSeconds: 900 });
  });

  it('configures the deployed builder with every source setting, which its own parser then reads', async () => {
    const s = await synth({
      sourceSecretArn: SECRET,
      sourceRelation: 'reporting.published_plans',
      sourceStatementTimeout: '2m',
      sourceConnectTimeout: '3s',
      sourceHeadersTimeout: '20s',
      sourceBodyTimeout: '40s',
      sourceMaxBytes: '32MiB',
      sourceRetries: 6,
    });
    const variables = builderVariables(s);
    expect(variables).toMatchObject({
      CATALOG_SOURCE_RELATION: 'reporting.published_plans',
      CATALOG_SOURCE_STATEMENT_TIMEOUT: '2m',
      CATALOG_SOURCE_RETRIES: '6',
    });
    // The stack's references (bucket, key-value store) stand for deployed values the parser checks as text.
    const deployed = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [
        name,
        typeof value === 'string'
          ? value
          : ({
              CATALOG_BUCKET: 'catalog-origin',
              CATALOG_KVS_ARN:
                'arn:aws:cloudfront::123456789012:key-value-store/0123abcd-4567-89ab-cdef-0123456789ab',
              CATALOG_BASE_URL: 'https://d1.cloudfront.net',
            }[name] ?? ''),
      ]),
    );
    expect(parseLambdaEnvironment(deployed)).toMatchObject({
      sourceSecretArn: SECRET,
      sourceRelation: 'reporting.published_plans',
      sourceStatementTimeout: 120_000,
      sourceConnectTimeout: 3_000,
      sourceHeadersTimeout: 20_000,
      sourceBodyTimeout: 40_000,
      sourceMaxBytes: 32 * 1024 * 1024,
      sourceRetries: 6,
    });
  });

  it('places the builder in the given subnets, with the ENI permissions Lambda needs there', async () => {
    const s = await synth({
      vpcId: 'vpc-0abc1234',
      subnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
      securityGroupIds: ['sg-0ccc3333'],
    });
    expect(builderOf(s).VpcConfig).toEqual({
      SubnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
      SecurityGroupIds: ['sg-0ccc3333'],
    });
    const role = logicalId(s.template, 'AWS::IAM::Role', 'BuilderRole');
    expect(JSON.stringify(s.template.toJSON().Resources[role].Properties.ManagedPolicyArns)).toContain(
      'service-role/AWSLambdaVPCAccessExecutionRole',
    );
  });

  it('creates a security group for the builder when none is given, and synthesizes without warnings', async () => {
    const s = await synth({ vpcId: 'vpc-0abc1234', subnetIds: ['subnet-0aaa1111'] });
    s.template.hasResourceProperties('AWS::EC2::SecurityGroup', { VpcId: 'vpc-0abc1234' });
    const annotations = Annotations.fromStack(s.stack);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
  });

  it('sends the alarm to the given topic and creates none', async () => {
    const s = await synth({ alarmTopicArn: TOPIC });
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: [TOPIC] });
  });
});

describe('invalid props', () => {
  /** The constructor's error for these props. */
  function failure(props: CatalogStackProps, stackName?: string): string {
    try {
      constructStack(props, stackName);
    } catch (error) {
      expect(error).toBeInstanceOf(CatalogStackPropsError);
      return (error as Error).message;
    }
    throw new Error('the stack accepted the props');
  }

  it('fails a schedule under 5 minutes', () => {
    expect(failure({ buildRateMinutes: 4 })).toContain(
      'buildRateMinutes 4: must be a whole number from 5 to 1440',
    );
  });

  it('fails a schedule that is not whole minutes', () => {
    expect(failure({ buildRateMinutes: 5.5 })).toContain(
      'buildRateMinutes 5.5: must be a whole number from 5 to 1440',
    );
  });

  it('fails a certificate without a domain', () => {
    expect(failure({ certificateArn: CERT })).toContain(`certificateArn "${CERT}" is set without domainName`);
  });

  it('fails a domain without a certificate', () => {
    expect(failure({ domainName: 'catalog.example.com' })).toContain(
      'domainName "catalog.example.com" needs certificateArn',
    );
  });

  it('fails a certificate outside us-east-1', () => {
    const arn = CERT.replace('us-east-1', 'eu-west-1');
    expect(failure({ domainName: 'catalog.example.com', certificateArn: arn })).toContain(
      `certificateArn "${arn}": is in eu-west-1; CloudFront only uses certificates in us-east-1`,
    );
  });

  it('fails a domain that is not one host name', () => {
    expect(failure({ domainName: 'https://Catalog.example.com', certificateArn: CERT })).toContain(
      'domainName "https://Catalog.example.com": must be one lowercase host name',
    );
  });

  it('fails memory out of range', () => {
    expect(failure({ builderMemoryMiB: 64 })).toContain(
      'builderMemoryMiB 64: must be a whole number from 128 to 10240',
    );
    expect(failure({ builderMemoryMiB: 20_000 })).toContain('builderMemoryMiB 20000');
  });

  it('fails a timeout not shorter than the schedule, or over 15 minutes', () => {
    expect(failure({ buildRateMinutes: 10, builderTimeoutSeconds: 600 })).toContain(
      'builderTimeoutSeconds 600: must be shorter than buildRateMinutes (10 minutes)',
    );
    expect(failure({ builderTimeoutSeconds: 1200 })).toContain(
      'builderTimeoutSeconds 1200: must be a whole number from 10 to 900',
    );
  });

  it('fails both a source and a source secret', () => {
    expect(failure({ source: 'https://plans.example.com/x.json', sourceSecretArn: SECRET })).toContain(
      'source and sourceSecretArn are both set: choose one',
    );
  });

  it('fails a source with credentials, without repeating them', () => {
    const message = failure({ source: 'postgres://catalog:hunter2@db.internal/plans' });
    expect(message).toContain(
      'source: holds credentials, which would be stored in plain text; put it in a secret',
    );
    expect(message).not.toContain('hunter2');
  });

  it('fails a source the function cannot read (a file path)', () => {
    expect(failure({ source: 'fixtures/plans.json' })).toContain(
      'source "fixtures/plans.json": must be postgres://… or http(s)://…',
    );
  });

  it('fails a secret ARN that is not complete', () => {
    const partial = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog/source';
    expect(failure({ sourceSecretArn: partial })).toContain(
      `sourceSecretArn "${partial}": must be the complete ARN`,
    );
  });

  it('fails a log bucket without access logging, and a retention for a bucket it does not create', () => {
    expect(failure({ accessLogBucketName: 'ops-logs' })).toContain(
      'accessLogBucketName "ops-logs" is set but accessLogging is not true',
    );
    expect(
      failure({ accessLogging: true, accessLogBucketName: 'ops-logs', accessLogRetentionDays: 10 }),
    ).toContain('accessLogRetentionDays 10: applies only to the log bucket this stack creates');
  });

  it('fails a long error-caching TTL', () => {
    expect(failure({ errorCachingMinTtlSeconds: 600 })).toContain(
      'errorCachingMinTtlSeconds 600: must be a whole number from 0 to 300',
    );
  });

  it('fails an http base URL and a bad app scheme', () => {
    const message = failure({ baseUrl: 'http://plans.example.com', appScheme: '1app' });
    expect(message).toContain('baseUrl "http://plans.example.com": must be https://');
    expect(message).toContain('appScheme "1app"');
  });

  it('fails a shrink ratio over 1 and zero kept builds', () => {
    const message = failure({ minRatio: 1.5, keepBuilds: 0 });
    expect(message).toContain('minRatio 1.5: must be a number from 0 to 1');
    expect(message).toContain('keepBuilds 0: must be a whole number from 1 to 1000');
  });

  it('fails malformed VPC ids', () => {
    const message = failure({ vpcId: 'vpc1', subnetIds: ['subnet-0aaa1111', 'sub-2'] });
    expect(message).toContain('vpcId "vpc1": must be vpc-…');
    expect(message).toContain('subnetIds ["subnet-0aaa1111","sub-2"]: must be subnet-…');
    expect(failure({ vpcId: 'vpc-0abc1234', subnetIds: [] })).toContain(
      'vpcId "vpc-0abc1234": name at least one private subnet in subnetIds',
    );
    expect(failure({ subnetIds: ['subnet-0aaa1111'] })).toContain(
      'subnetIds and securityGroupIds need vpcId',
    );
  });

  it('fails an alarm topic that is not an SNS topic ARN', () => {
    expect(failure({ alarmTopicArn: 'ops-alerts' })).toContain(
      'alarmTopicArn "ops-alerts": must be an SNS topic ARN',
    );
  });

  it('fails a seed file that is missing or not in the import format', async () => {
    expect(failure({ kvsSeedFile: join(scratch, 'none.json') })).toContain(
      `kvsSeedFile "${join(scratch, 'none.json')}": no such file`,
    );
    const bad = join(scratch, 'bad-seed.json');
    await writeFile(bad, '{"data":[{"key":"k"}]}');
    expect(failure({ kvsSeedFile: bad })).toContain(
      `kvsSeedFile: ${bad} is not in the KeyValueStore import format`,
    );
  });

  it('fails a stack name the settings refuse (the names of its resources derive from it)', () => {
    const name = `Catalog${'x'.repeat(42)}`;
    expect(failure({}, name)).toContain(
      `deployment "${name}": must be a deployment's name: its stack's name, letters, digits and - (at most 48`,
    );
  });

  it('fails a stack name that another stack’s us-east-1 companion has', () => {
    expect(failure({}, 'Catalog-edge-eu-west-1')).toContain(
      'deployment "Catalog-edge-eu-west-1": must not end with -edge-<region>',
    );
    expect(() => constructStack({}, 'Catalog-edge')).not.toThrow();
  });

  it('fails a region whose buckets the pages’ origin access identity cannot read (opt-in, after 2022), or one CDK does not know', () => {
    for (const region of ['ap-southeast-4', 'il-central-1', 'ca-west-1', 'mx-central-1', 'xx-nowhere-1'])
      expect(failure({ env: { account: '123456789012', region } }), region).toContain(
        `region ${region}: the plan pages' reader (an origin access identity) cannot read S3 buckets in regions launched after December 2022`,
      );
    // Older regions, opt-in ones too, are fine.
    for (const region of ['us-east-1', 'eu-west-1', 'eu-south-1', 'ap-south-2', 'eu-central-2'])
      expect(() => constructStack({ env: { account: '123456789012', region } }), region).not.toThrow();
  });

  it('fails access logs in an opt-in region, where CloudFront delivers no standard logs to the bucket the stack would create', () => {
    for (const region of ['eu-south-1', 'ap-east-1', 'me-south-1'])
      expect(failure({ accessLogging: true, env: { account: '123456789012', region } }), region).toContain(
        `accessLogging in ${region}: CloudFront delivers no standard logs to buckets in opt-in regions, where the stack would create its log bucket; name a bucket in another region with accessLogBucketName`,
      );
    // A bucket of the operator's own (in a region CloudFront delivers to), or a region that is not opt-in.
    expect(() =>
      constructStack({
        accessLogging: true,
        accessLogBucketName: 'ops-logs-bucket',
        env: { account: '123456789012', region: 'eu-south-1' },
      }),
    ).not.toThrow();
    expect(() =>
      constructStack({ accessLogging: true, env: { account: '123456789012', region: 'eu-west-1' } }),
    ).not.toThrow();
  });

  it('fails a contact address that is neither an e-mail address nor an https:// URL', () => {
    for (const address of ['keys', 'http://keys.example.org', 'keys@example', 'a"b@example.org'])
      expect(failure({ contactAddress: address }), address).toContain(
        `contactAddress ${JSON.stringify(address)}: must be an e-mail address (keys@example.org) or an https:// URL`,
      );
  });

  it('fails listing every problem at once', () => {
    const error = (() => {
      try {
        constructStack({ buildRateMinutes: 1, builderMemoryMiB: 1, certificateArn: CERT });
      } catch (e) {
        return e as CatalogStackPropsError;
      }
      throw new Error('accepted');
    })();
    expect(error.problems).toHaveLength(3);
    expect(error.message).toMatch(/^invalid CatalogStack props: /);
  });
});

describe('the contact address', () => {
  const functionCode = (s: Synthesized, id: string) =>
    s.template.findResources('AWS::CloudFront::Function')[
      logicalId(s.template, 'AWS::CloudFront::Function', id)
    ]?.Properties.FunctionCode as string;

  it('is in the viewer-request function’s 401 and in the output ContactAddress, the placeholder gone', async () => {
    const s = await synth({ contactAddress: 'https://partners.trainingplans.app/keys' });
    const code = functionCode(s, 'ViewerRequest');
    expect(code).toContain('keys are issued through https://partners.trainingplans.app/keys.');
    expect(code).not.toContain('<CONTACT_ADDRESS>');
    expect(Buffer.byteLength(code)).toBeLessThanOrEqual(10 * 1024);
    s.template.hasOutput('ContactAddress', { Value: 'https://partners.trainingplans.app/keys' });
    expect(s.template.toJSON().Rules?.ContactAddressSet).toBeUndefined();
  });

  it('at a domain reserved for examples synthesizes, with a rule that refuses to deploy it before any resource is made', async () => {
    const s = await synth({ contactAddress: 'api-keys@example.com' });
    expect(s.template.toJSON().Rules.ContactAddressSet).toEqual({
      Assertions: [
        {
          Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'contactAddress-is-an-example'] },
          AssertDescription:
            'contactAddress api-keys@example.com is at a domain reserved for examples, which reaches no one: set the address partners ask for keys at in infra/deployments/TrainingPlanCatalog.json, then deploy.',
        },
      ],
    });
  });
});
