/**
 * The default stack as `npm run synth` writes it (a shared synthesis, testing/infra/stacks.ts: the builder really
 * bundled by the local esbuild): each part of the stack asserted by its properties. Other settings:
 * stack-options.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseLambdaEnvironment } from '../app/settings/environment.ts';
import { SETTINGS } from '../app/settings/index.ts';
import { rootObjects } from '../builder/build.ts';
import { ERROR_PAGE, NOT_FOUND_PAGE, PAGE_CSP, SOURCE_UNSET } from '../contract/index.ts';
import { bundleFunction, GATEWAY_FUNCTIONS, type GatewayFunctionName } from '../gateway/functions/bundle.ts';
import { fillContactAddress } from '../gateway/functions/contact.ts';
import { ROOT } from '../testing/cli.ts';
import { type Assembly, logicalId, sharedAssembly } from '../testing/infra/stacks.ts';

const run = promisify(execFile);

const SEVEN_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'];

/** The contact address of the default deployment's file, which `npm run synth` synthesizes. */
const DEFAULT_CONTACT = (
  JSON.parse(readFileSync(join(ROOT, 'infra/deployments/TrainingPlanCatalog.json'), 'utf8')) as {
    contactAddress: string;
  }
).contactAddress;

let synth: Assembly;
let template: Template;
const ids: Record<string, string> = {};

beforeAll(async () => {
  synth = await sharedAssembly('readme');
  template = synth.templates.TrainingPlanCatalog as Template;
  ids.bucket = logicalId(template, 'AWS::S3::Bucket', 'Origin');
  ids.kvs = logicalId(template, 'AWS::CloudFront::KeyValueStore', 'Keys');
  ids.viewerRequest = logicalId(template, 'AWS::CloudFront::Function', 'ViewerRequest');
  ids.viewerResponse = logicalId(template, 'AWS::CloudFront::Function', 'ViewerResponse');
  ids.distribution = logicalId(template, 'AWS::CloudFront::Distribution', 'Distribution');
  ids.cachePolicy = logicalId(template, 'AWS::CloudFront::CachePolicy', 'CachePolicy');
  ids.headersPolicy = logicalId(template, 'AWS::CloudFront::ResponseHeadersPolicy', 'ResponseHeaders');
  ids.builder = logicalId(template, 'AWS::Lambda::Function', 'Builder');
  ids.builderRole = logicalId(template, 'AWS::IAM::Role', 'BuilderRole');
  ids.secret = logicalId(template, 'AWS::SecretsManager::Secret', 'SourceSecret');
  ids.topic = logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic');
  ids.failures = logicalId(template, 'AWS::SQS::Queue', 'BuilderFailures');
  ids.pagesReader = logicalId(template, 'AWS::CloudFront::CloudFrontOriginAccessIdentity', 'PagesReader');
});

/** The one resource of a logical id. */
const resource = (id: string | undefined) =>
  (template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>)[
    id ?? ''
  ] as { Type: string; Properties: Record<string, unknown> };

const distributionConfig = () =>
  resource(ids.distribution).Properties.DistributionConfig as Record<string, unknown>;
const defaultBehavior = () => distributionConfig().DefaultCacheBehavior as Record<string, unknown>;

/** Every IAM statement of the policies attached to a role. */
/** The template's expression for this distribution's ARN. */
const distributionArn = () => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':cloudfront::',
      { Ref: 'AWS::AccountId' },
      ':distribution/',
      { Ref: ids.distribution },
    ],
  ],
});

/** The logical id of the role the schedule runs its target with. */
function schedulerRole(): string {
  const schedule = Object.values(template.findResources('AWS::Scheduler::Schedule'))[0];
  const roleArn = schedule?.Properties.Target.RoleArn as { 'Fn::GetAtt': [string, string] } | undefined;
  return roleArn?.['Fn::GetAtt'][0] ?? 'missing';
}

function statementsOf(roleId: string): Record<string, unknown>[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Record<string, unknown>[]);
}

describe('synthesis', () => {
  it('reports no warnings or errors (the validation report holds the annotations too)', () => {
    expect(synth.violations).toEqual([]);
  });
});

describe('construct ids (a contract: renaming one replaces its resource)', () => {
  it('keeps the logical ids of the bucket, store, functions, distribution and builder', () => {
    expect(ids.bucket).toMatch(/^Origin[0-9A-F]{8}$/);
    expect(ids.kvs).toMatch(/^Keys[0-9A-F]{8}$/);
    expect(ids.distribution).toMatch(/^Distribution[0-9A-F]{8}$/);
    expect(ids.builder).toMatch(/^Builder[0-9A-F]{8}$/);
  });
});

describe('origin bucket', () => {
  it('is private, SSE-S3, versioned, and expires noncurrent versions', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      VersioningConfiguration: { Status: 'Enabled' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
        ]),
      },
    });
    expect(resource(ids.bucket)).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('refuses every request without TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: ids.bucket },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('is readable only by this distribution: the API through Origin Access Control, the pages through an identity that may list and read pages only', () => {
    const policies = Object.values(template.findResources('AWS::S3::BucketPolicy'));
    expect(policies).toHaveLength(1);
    const statements = (policies[0]?.Properties.PolicyDocument.Statement ?? []) as Record<string, unknown>[];
    const objects = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.bucket, 'Arn'] }, '/*']] };
    const pagesReader = { CanonicalUser: { 'Fn::GetAtt': [ids.pagesReader, 'S3CanonicalUserId'] } };
    expect(statements.filter((s) => s.Effect === 'Allow')).toEqual([
      {
        Sid: 'PagesReaderLists',
        Effect: 'Allow',
        Principal: pagesReader,
        Action: 's3:ListBucket',
        Resource: { 'Fn::GetAtt': [ids.bucket, 'Arn'] },
      },
      {
        Effect: 'Allow',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: 's3:GetObject',
        Resource: objects,
        Condition: {
          StringEquals: {
            'AWS:SourceArn': distributionArn(),
          },
        },
      },
      { Effect: 'Allow', Principal: pagesReader, Action: 's3:GetObject', Resource: objects },
    ]);
    // The identity's read is cut down to page objects (a Deny wins over CDK's grant on every object).
    expect(statements).toContainEqual({
      Sid: 'PagesReaderReadsOnlyPages',
      Effect: 'Deny',
      Principal: pagesReader,
      Action: 's3:GetObject',
      NotResource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.bucket, 'Arn'] }, '/plans/*']] },
    });
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: {
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      },
    });
    const origins = distributionConfig().Origins as Record<string, unknown>[];
    expect(origins).toHaveLength(2);
    expect(origins[0]).toMatchObject({
      DomainName: { 'Fn::GetAtt': [ids.bucket, 'RegionalDomainName'] },
      OriginAccessControlId: {
        'Fn::GetAtt': [logicalId(template, 'AWS::CloudFront::OriginAccessControl', 'CatalogReader'), 'Id'],
      },
      S3OriginConfig: { OriginAccessIdentity: '' },
    });
    expect(origins[1]).toMatchObject({
      DomainName: { 'Fn::GetAtt': [ids.bucket, 'RegionalDomainName'] },
      S3OriginConfig: {
        OriginAccessIdentity: {
          'Fn::Join': ['', ['origin-access-identity/cloudfront/', { Ref: ids.pagesReader }]],
        },
      },
    });
    expect(origins[1]?.OriginAccessControlId).toBeUndefined();
  });
});

describe('key-value store and functions', () => {
  it('creates one store, empty unless a seed file is given', () => {
    template.resourceCountIs('AWS::CloudFront::KeyValueStore', 1);
    template.hasResourceProperties('AWS::CloudFront::KeyValueStore', { ImportSource: Match.absent() });
  });

  for (const [id, name] of [
    ['viewerRequest', 'viewer-request'],
    ['viewerResponse', 'viewer-response'],
  ] as const) {
    it(`${name} runs cloudfront-js-2.0 with the store, bundled from its source at synth, published by the release, not by CloudFormation${name === 'viewer-request' ? ', its 401 naming the deployment’s contact address' : ''}`, async () => {
      const props = resource(ids[id]).Properties;
      expect(props).toMatchObject({
        Name: `TrainingPlanCatalog-${name}`,
        AutoPublish: false,
        FunctionConfig: {
          Runtime: 'cloudfront-js-2.0',
          KeyValueStoreAssociations: [{ KeyValueStoreARN: { 'Fn::GetAtt': [ids.kvs, 'Arn'] } }],
        },
      });
      // The bundle of the source as it is now, whatever an earlier npm run build left in dist/.
      const fresh = await bundleFunction(join(ROOT, GATEWAY_FUNCTIONS[name as GatewayFunctionName]));
      expect(props.FunctionCode).toBe(
        name === 'viewer-request' ? fillContactAddress(fresh, DEFAULT_CONTACT) : fresh,
      );
    });
  }

  it('associates viewer-request and viewer-response with the default behavior', () => {
    expect(defaultBehavior().FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [ids.viewerRequest, 'FunctionARN'] } },
      { EventType: 'viewer-response', FunctionARN: { 'Fn::GetAtt': [ids.viewerResponse, 'FunctionARN'] } },
    ]);
  });
});

describe('cache and response headers policies', () => {
  it('keys the cache on the rewritten path only (the variant is in it), keeps build objects up to a year, compresses nothing', () => {
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: {
        MinTTL: 0,
        DefaultTTL: 300,
        MaxTTL: 31_536_000,
        ParametersInCacheKeyAndForwardedToOrigin: {
          QueryStringsConfig: { QueryStringBehavior: 'none' },
          HeadersConfig: { HeaderBehavior: 'none' },
          CookiesConfig: { CookieBehavior: 'none' },
          EnableAcceptEncodingGzip: false,
          EnableAcceptEncodingBrotli: false,
        },
      },
    });
    expect(defaultBehavior()).toMatchObject({ CachePolicyId: { Ref: ids.cachePolicy }, Compress: false });
  });

  it('adds nosniff to every answer and removes Server', () => {
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: {
        SecurityHeadersConfig: Match.objectEquals({ ContentTypeOptions: { Override: true } }),
        RemoveHeadersConfig: { Items: Match.arrayWith([{ Header: 'Server' }]) },
        CorsConfig: Match.absent(),
      },
    });
    expect(defaultBehavior().ResponseHeadersPolicyId).toEqual({ Ref: ids.headersPolicy });
  });
});

describe('distribution', () => {
  it('allows all seven methods, caches GET and HEAD, serves HTTPS only over HTTP/2 and HTTP/3', () => {
    expect([...(defaultBehavior().AllowedMethods as string[])].sort()).toEqual([...SEVEN_METHODS].sort());
    expect(defaultBehavior().CachedMethods).toEqual(['GET', 'HEAD']);
    expect(defaultBehavior().ViewerProtocolPolicy).toBe('https-only');
    expect(distributionConfig()).toMatchObject({
      HttpVersion: 'http2and3',
      IPV6Enabled: true,
      Enabled: true,
    });
  });

  it('serves from North America and Europe by default, with no custom domain or logs', () => {
    expect(distributionConfig()).toMatchObject({ PriceClass: 'PriceClass_100' });
    expect(distributionConfig().Aliases).toBeUndefined();
    expect(distributionConfig().ViewerCertificate).toBeUndefined();
    expect(distributionConfig().Logging).toBeUndefined();
  });

  it('answers a missing catalog object (403) and origin failures with the 500 page, a missing plan page (404) with the not-found page, cached 10 seconds', () => {
    expect(distributionConfig().CustomErrorResponses).toEqual(
      [403, 404, 500, 502, 503, 504].map((code) => ({
        ErrorCode: code,
        ResponseCode: code === 404 ? 404 : 500,
        ResponsePagePath: code === 404 ? `/${NOT_FOUND_PAGE}` : `/${ERROR_PAGE}`,
        ErrorCachingMinTTL: 10,
      })),
    );
  });

  it('serves plan pages through their own behaviour: compressed, with the pages headers policy', () => {
    const pages = (distributionConfig().CacheBehaviors as Record<string, unknown>[])[0] ?? {};
    expect(pages).toMatchObject({
      PathPattern: '/plans/*',
      Compress: true,
      ViewerProtocolPolicy: 'https-only',
    });
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: {
        SecurityHeadersConfig: {
          ContentSecurityPolicy: { ContentSecurityPolicy: PAGE_CSP, Override: true },
          FrameOptions: { FrameOption: 'DENY', Override: true },
          ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
          ContentTypeOptions: { Override: true },
        },
      },
    });
  });
});

describe('error pages before the first publish', () => {
  /** The SDK calls of the custom resources that put objects in the bucket, the bucket's name as `<bucket>`. */
  const puts = () =>
    Object.entries(template.findResources('Custom::AWS')).map(([id, r]) => {
      const call = (value: { 'Fn::Join': [string, unknown[]] }) =>
        JSON.parse(
          value['Fn::Join'][1]
            .map((part) =>
              typeof part === 'string'
                ? part
                : JSON.stringify(part) === JSON.stringify({ Ref: ids.bucket })
                  ? '<bucket>'
                  : '?',
            )
            .join(''),
        );
      return { id, create: call(r.Properties.Create), update: call(r.Properties.Update) };
    });

  it('are put in the bucket by the deploy itself, as a publish writes them, so an error is never a 403', () => {
    const pages = rootObjects(SETTINGS.appScheme.default as string);
    // Every page the distribution's custom error responses fetch.
    const responses = distributionConfig().CustomErrorResponses as { ResponsePagePath: string }[];
    expect(pages.map((page) => `/${page.key}`).sort()).toEqual(
      [...new Set(responses.map((response) => response.ResponsePagePath))].sort(),
    );
    const expected = pages.map((page) => ({
      service: 'S3',
      action: 'putObject',
      parameters: {
        Bucket: '<bucket>',
        Key: page.key,
        Body: page.body.toString('utf8'),
        ContentType: page.contentType,
        CacheControl: page.cacheControl,
      },
      physicalResourceId: { id: page.key },
    }));
    const calls = puts();
    expect(calls.map((c) => c.create)).toEqual(expected);
    // A deploy that changes a page (appScheme) puts it again; deleting the stack leaves them, like the bucket.
    expect(calls.map((c) => c.update)).toEqual(expected);
    for (const { id } of calls) expect(resource(id).Properties.Delete).toBeUndefined();
  });

  it('by a function whose log group exists before it (no group of its first run’s making) and goes with the stack', () => {
    const functions = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([id]) =>
      id.startsWith('AWS679f53fac002430cb0da5b7982bd2287'),
    );
    expect(functions).toHaveLength(1);
    const group = logicalId(template, 'AWS::Logs::LogGroup', 'ErrorPagesLogs');
    expect(functions[0]?.[1].Properties.LoggingConfig).toEqual({ LogGroup: { Ref: group } });
    expect(resource(group)).toMatchObject({
      DeletionPolicy: 'Delete',
      Properties: { RetentionInDays: 30 },
    });
    expect(resource(group).Properties.LogGroupName).toBeUndefined();
    // The group CDK would add after the function (named after it, kept on delete) is not there.
    const groups = Object.keys(template.findResources('AWS::Logs::LogGroup'));
    expect(groups.filter((id) => id.startsWith('AWS679f53fac002430cb0da5b7982bd2287'))).toEqual([]);
  });

  it('each by a call that may put only its page', () => {
    for (const { id, create } of puts()) {
      const own = Object.entries(template.findResources('AWS::IAM::Policy')).find(([policyId]) =>
        policyId.startsWith(id.replace(/[0-9A-F]{8}$/, 'CustomResourcePolicy')),
      );
      expect(own?.[1].Properties.PolicyDocument.Statement).toEqual([
        {
          Effect: 'Allow',
          Action: 's3:PutObject',
          Resource: {
            'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.bucket, 'Arn'] }, `/${create.parameters.Key}`]],
          },
        },
      ]);
    }
  });
});

describe('builder Lambda', () => {
  it('runs on Node.js 24 with the declared timeout and memory, no reserved concurrency, never retried at once', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Handler: 'index.handler',
      ReservedConcurrentExecutions: Match.absent(),
      Timeout: SETTINGS.builderTimeoutSeconds.default,
      MemorySize: SETTINGS.builderMemoryMiB.default,
      Role: { 'Fn::GetAtt': [ids.builderRole, 'Arn'] },
      VpcConfig: Match.absent(),
    });
    expect(resource(ids.builder).Properties).not.toHaveProperty('ReservedConcurrentExecutions');
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ids.builder },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 3600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [ids.failures, 'Arn'] } },
      },
    });
  });

  it('sends a failed asynchronous invocation to an encrypted queue that keeps it 14 days, which only TLS reaches', () => {
    template.resourceCountIs('AWS::SQS::Queue', 1);
    expect(resource(ids.failures).Properties).toEqual({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    const policy = Object.values(template.findResources('AWS::SQS::QueuePolicy'))[0];
    expect(JSON.stringify(policy?.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    const statements = statementsOf(ids.builderRole ?? '');
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Resource: { 'Fn::GetAtt': [ids.failures, 'Arn'] },
      }),
    );
  });

  it('is configured through an environment the handler accepts: this bucket, this key-value store, the secret', () => {
    const variables = (resource(ids.builder).Properties.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(variables).toEqual({
      CATALOG_BUCKET: { Ref: ids.bucket },
      CATALOG_KVS_ARN: { 'Fn::GetAtt': [ids.kvs, 'Arn'] },
      CATALOG_BASE_URL: {
        'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [ids.distribution, 'DomainName'] }]],
      },
      CATALOG_SOURCE_SECRET_ARN: { Ref: ids.secret },
      CATALOG_CONTACT_ADDRESS: DEFAULT_CONTACT,
    });
    // Deployed values in place of the references: the handler's own parser must accept them. (The default
    // file's address, reserved for examples, is refused at deploy by the ContactAddressSet rule: what runs is
    // the address its operator sets.)
    const deployed: Record<string, string> = {
      [`${ids.bucket}`]: 'trainingplancatalog-origin-1a2b3c',
      [`${ids.kvs}.Arn`]:
        'arn:aws:cloudfront::123456789012:key-value-store/0123abcd-4567-89ab-cdef-0123456789ab',
      [`${ids.distribution}.DomainName`]: 'd111111abcdef8.cloudfront.net',
      [`${ids.secret}`]: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SourceSecret-AbCdEf',
    };
    const resolve = (value: unknown): string => {
      if (typeof value === 'string') return value;
      const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, unknown[]] };
      if (v.Ref) return deployed[v.Ref] ?? `unresolved ${v.Ref}`;
      if (v['Fn::GetAtt']) return deployed[v['Fn::GetAtt'].join('.')] ?? 'unresolved';
      if (v['Fn::Join']) return v['Fn::Join'][1].map(resolve).join(v['Fn::Join'][0]);
      return 'unresolved';
    };
    const env = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, resolve(v)]));
    env.CATALOG_CONTACT_ADDRESS = 'api-keys@trainingplans.app';
    const config = parseLambdaEnvironment({ ...env, AWS_REGION: 'eu-west-1' });
    expect(config).toMatchObject({
      bucket: 'trainingplancatalog-origin-1a2b3c',
      kvsArn: 'arn:aws:cloudfront::123456789012:key-value-store/0123abcd-4567-89ab-cdef-0123456789ab',
      baseUrl: 'https://d111111abcdef8.cloudfront.net',
      sourceSecretArn: deployed[ids.secret ?? ''],
    });
  });

  it('may touch only this bucket, the live pointer in this key-value store, its own logs, that secret and its failure queue; no invalidation', () => {
    const statements = statementsOf(ids.builderRole ?? '');
    const bucketArn = { 'Fn::GetAtt': [ids.bucket, 'Arn'] };
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Allow',
          Action: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'],
          Resource: { 'Fn::Join': ['', [bucketArn, '/*']] },
        }),
        expect.objectContaining({ Effect: 'Allow', Action: 's3:ListBucket', Resource: bucketArn }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: [
            'cloudfront-keyvaluestore:DescribeKeyValueStore',
            'cloudfront-keyvaluestore:GetKey',
            'cloudfront-keyvaluestore:ListKeys',
            'cloudfront-keyvaluestore:UpdateKeys',
          ],
          Resource: { 'Fn::GetAtt': [ids.kvs, 'Arn'] },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'secretsmanager:GetSecretValue',
          Resource: { Ref: ids.secret },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [expect.stringMatching(/^BuilderLogs/), 'Arn'] },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          Resource: { 'Fn::GetAtt': [ids.failures, 'Arn'] },
        }),
      ]),
    );
    expect(statements).toHaveLength(6);
    expect(JSON.stringify(statements)).not.toContain('CreateInvalidation');
    for (const statement of statements) {
      expect(JSON.stringify(statement.Resource)).not.toMatch(/"\*"|":\*"/);
      expect(JSON.stringify(statement.Action)).not.toContain('*');
    }
    expect(resource(ids.builderRole).Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('is bundled by the local esbuild into one ES module that exports the handler', async () => {
    const code = resource(ids.builder).Properties.Code as { S3Key: string };
    const assetDir = join(synth.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    expect(existsSync(join(assetDir, 'index.mjs'))).toBe(true);
    // Loaded by plain Node as Lambda would (module top level only: no configuration is read until a run).
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(assetDir, 'index.mjs'))}); console.log(typeof m.handler);`,
      ],
      { env: { PATH: process.env.PATH ?? '' } },
    );
    expect(stdout.trim()).toBe('function');
  });
});

describe('schedule and alarm', () => {
  it('runs the builder every hour with EventBridge Scheduler, through a role that may invoke only it', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: { Arn: { 'Fn::GetAtt': [ids.builder, 'Arn'] }, Input: '{}' },
    });
    const statements = statementsOf(schedulerRole());
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatchObject({ Action: 'lambda:InvokeFunction', Effect: 'Allow' });
    expect(JSON.stringify(statements[0]?.Resource)).toContain(`"${ids.builder}"`);
  });

  it('puts a run it could not deliver (after its retries) in the failure queue, whose alarm says so', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: {
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [ids.failures, 'Arn'] } },
      },
    });
    expect(statementsOf(schedulerRole())[1]).toEqual({
      Effect: 'Allow',
      Action: 'sqs:SendMessage',
      Resource: { 'Fn::GetAtt': [ids.failures, 'Arn'] },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.failures, 'QueueName'] } }],
      AlarmActions: [{ Ref: ids.topic }],
    });
  });

  it('alarms on any builder error to the SNS topic', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.builder } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: ids.topic }],
    });
  });
});

describe('outputs', () => {
  it('gives the values the catalog commands take', () => {
    template.hasOutput('DistributionDomainName', {
      Value: { 'Fn::GetAtt': [ids.distribution, 'DomainName'] },
    });
    template.hasOutput('DistributionId', { Value: { Ref: ids.distribution } });
    template.hasOutput('BucketName', { Value: { Ref: ids.bucket } });
    template.hasOutput('KeyValueStoreArn', { Value: { 'Fn::GetAtt': [ids.kvs, 'Arn'] } });
    template.hasOutput('BuilderFunctionName', { Value: { Ref: ids.builder } });
    template.hasOutput('ViewerRequestFunctionName', { Value: 'TrainingPlanCatalog-viewer-request' });
    template.hasOutput('SourceSecretArn', { Value: { Ref: ids.secret } });
    template.hasOutput('AlarmTopicArn', { Value: { Ref: ids.topic } });
    template.hasOutput('ContactAddress', { Value: DEFAULT_CONTACT });
  });

  it('creates the source secret holding no source, which the builder records as not configured (no alarm)', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', { SecretString: SOURCE_UNSET });
  });
});
