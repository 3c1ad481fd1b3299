/**
 * The production stack (infra/README.md): origin bucket, key-value store, the two functions, distribution,
 * scheduled builder, monitoring.ts, waf.ts, checked by cdk-nag (nag.ts). Construct ids are a contract: renaming
 * one replaces its resource (a new bucket, a new, EMPTY key store), so never rename them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as lambdaDestinations from 'aws-cdk-lib/aws-lambda-destinations';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import {
  Annotations,
  Aws,
  CfnOutput,
  type CfnResource,
  CfnRule,
  type CustomResource,
  Duration,
  Fn,
  RemovalPolicy,
  SecretValue,
  Stack,
} from 'aws-cdk-lib/core';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { CANARY_RESERVE_MS } from '../app/canary.ts';
import { functionEnvironment, lambdaEnvironment } from '../app/settings/environment.ts';
import { SETTINGS } from '../app/settings/index.ts';
import { isReservedContact } from '../app/settings/registry.ts';
import { rootObjects } from '../builder/build.ts';
import { CANARY_BEATS, NOSNIFF, SOURCE_UNSET, STATE_CANARY } from '../contract/index.ts';
import { type Behaviour, DISTRIBUTION } from '../gateway/distribution.ts';
import {
  bundleFunctionSync,
  checkFunctionCode,
  GATEWAY_FUNCTIONS,
  type GatewayFunctionName,
} from '../gateway/functions/bundle.ts';
import { fillContactAddress } from '../gateway/functions/contact.ts';
import { CANARY_BUNDLE, LAMBDA_BUNDLE } from '../lambda/bundling.ts';
import { OPENAPI_MODULE, openapiModuleSource } from '../tools/openapi-module.ts';
import { addMonitoring, type Monitoring, withEdgeReferences } from './monitoring.ts';
import { acknowledgeFindings } from './nag.ts';
import { accountWideName, inEdgeRegion } from './names.ts';
import { type CatalogStackProps, resolveSettings, type StackSettings } from './props.ts';
import { addFunctionRelease, type ReleasedFunction } from './release.ts';
import { addUsageLogs, DISTRIBUTION_ARN_OUTPUT } from './usage-logs.ts';
import { addRateLimit } from './waf.ts';

export type { CatalogStackProps } from './props.ts';
export { CatalogStackPropsError } from './props.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** CDK's method set (a static member of `sets`) holding exactly the methods the table lists. */
function methodSet<T extends { readonly methods: readonly string[] }>(
  methods: readonly string[],
  sets: Record<string, T>,
): T {
  const same = (set: T) => [...set.methods].sort().join() === [...methods].sort().join();
  const match = Object.values(sets).find(same);
  if (!match) throw new Error(`CloudFront offers no method set ${methods.join(', ')}`);
  return match;
}
const ALLOWED_METHODS = methodSet(DISTRIBUTION.allowedMethods, { ...cloudfront.AllowedMethods });
const CACHED_METHODS = methodSet(DISTRIBUTION.cachedMethods, { ...cloudfront.CachedMethods });

/** Each behaviour's policies: the prefix of their construct ids (a contract, as every id), their comments. */
const BEHAVIOUR_POLICIES = {
  api: {
    idPrefix: '',
    cacheComment:
      'Catalog API: key is the rewritten path only (the variant is in it); honours the origin max-age',
    headersComment: 'Catalog API: nosniff on every answer (error pages too); no origin server headers',
  },
  pages: {
    idPrefix: 'Pages',
    cacheComment:
      'Plan pages: key is the rewritten path and the normalised Accept-Encoding (compressed here)',
    headersComment: 'Plan pages: no script, no framing, no referrer, nosniff (the not-found page too)',
  },
} as const;

/** Days a failed builder invocation stays in the failure queue: SQS's longest, room for a long weekend. */
export const FAILURE_RETENTION_DAYS = 14;

/** The functions bundled from their sources, once per process (each stack fills in its own contact address). */
const bundled = new Map<GatewayFunctionName, string>();

/**
 * A function's code as the stack deploys it: bundled from the checkout's sources at synth (never a bundle an
 * older `npm run build` left in dist/), the viewer-request's 401 naming the deployment's contact address, and
 * checked against the runtime's rules and its size limit once filled.
 */
function gatewayCode(name: GatewayFunctionName, contactAddress: string): string {
  let code = bundled.get(name);
  if (code === undefined) {
    code = bundleFunctionSync(join(REPO_ROOT, GATEWAY_FUNCTIONS[name]));
    bundled.set(name, code);
  }
  if (name !== 'viewer-request') return code;
  const filled = fillContactAddress(code, contactAddress);
  const problems = checkFunctionCode(filled);
  if (problems.length > 0) throw new Error(`${name} with contactAddress: ${problems.join('; ')}`);
  return filled;
}

/** The access-log retention when none is given (the setting's declared default). */
const ACCESS_LOG_RETENTION_DAYS = SETTINGS.accessLogRetentionDays.default as number;

/** The whole service in one stack. */
export class CatalogStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly keyValueStore: cloudfront.KeyValueStore;
  readonly viewerRequest: cloudfront.Function;
  readonly viewerResponse: cloudfront.Function;
  readonly distribution: cloudfront.Distribution;
  readonly builder: NodejsFunction;
  /** The canary (lambda/canary.ts), when the stack has one: `canaryEnabled` and a `monitoringKeySecretArn`. */
  readonly canary: NodejsFunction | undefined;
  /**
   * The canary's full run after each deploy (construct id `CanaryAfterDeploy`), when the stack has a canary: a
   * step that must precede it is ordered with `canaryAfterDeploy.node.addDependency(step)`.
   */
  readonly canaryAfterDeploy: cr.AwsCustomResource | undefined;
  /** The builder's failed asynchronous invocations and the scheduled runs the scheduler could not deliver. */
  readonly builderFailures: sqs.Queue;
  /**
   * The functions' release (infra/release.ts): verified DEVELOPMENT published to LIVE. Whatever needs a LIVE
   * function that runs the deploy's code (the distribution; a check of the deployment after the deploy) depends on it.
   */
  readonly functionRelease: CustomResource;
  /** The API's public base URL (possibly a token). */
  readonly baseUrl: string;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: CatalogStackProps = {}) {
    super(scope, id, withEdgeReferences(props));
    const settings = resolveSettings(props, this.stackName);
    // The builder bundles the module generated from openapi.yaml: refuse to deploy an outdated document.
    const openapiModule = join(REPO_ROOT, OPENAPI_MODULE);
    const openapi = openapiModuleSource(readFileSync(join(REPO_ROOT, 'openapi.yaml'), 'utf8'));
    if (!existsSync(openapiModule) || readFileSync(openapiModule, 'utf8') !== openapi)
      throw new Error(`${OPENAPI_MODULE} is missing or older than openapi.yaml: run npm run build`);

    this.bucket = new s3.Bucket(this, 'Origin', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [
        {
          id: 'expire-old-versions',
          noncurrentVersionExpiration: Duration.days(settings.noncurrentVersionExpiryDays),
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });

    this.keyValueStore = new cloudfront.KeyValueStore(this, 'Keys', {
      comment: 'Training plan catalog: SHA-256 hashes of API keys, and the CORS origin',
      // In us-east-1 the store keeps the name CDK gave it (a new name would replace it: a new, empty store).
      ...(inEdgeRegion(this) ? {} : { keyValueStoreName: accountWideName(this, 'keys', 64) }),
      ...(settings.kvsSeedFile ? { source: cloudfront.ImportSource.fromAsset(settings.kvsSeedFile) } : {}),
    });

    // Each deploy changes a function's DEVELOPMENT stage only; the release below verifies it, then publishes it.
    const released: ReleasedFunction[] = [];
    const gatewayFunction = (id: string, name: GatewayFunctionName, comment: string) => {
      const code = gatewayCode(name, settings.contactAddress);
      const fn = new cloudfront.Function(this, id, {
        functionName: accountWideName(this, name, 64),
        comment,
        code: cloudfront.FunctionCode.fromInline(code),
        runtime: cloudfront.FunctionRuntime.JS_2_0,
        keyValueStore: this.keyValueStore,
        autoPublish: false,
      });
      released.push({ fn, kind: name, code });
      return fn;
    };
    this.viewerRequest = gatewayFunction(
      'ViewerRequest',
      'viewer-request',
      'Catalog gateway: path, method, key and discipline checks; rewrites to the catalog object',
    );
    this.viewerResponse = gatewayFunction(
      'ViewerResponse',
      'viewer-response',
      'Catalog gateway: the response headers of the spec, CORS origin',
    );

    // Policies, origins and behaviours follow gateway/distribution.ts, as the local edge does.
    const { cacheKey, ttlSeconds, compression, responseHeaders, behaviours, origins: access } = DISTRIBUTION;
    if (cacheKey.queryStrings !== 'none' || cacheKey.headers !== 'none' || cacheKey.cookies !== 'none')
      throw new Error('gateway/distribution.ts: only a cache key of the path alone is built');

    // The catalog's reader (origin access control) may read, not list: a missing object is the 500 problem.
    if (access.catalog.list) throw new Error('gateway/distribution.ts: the catalog reader must not list');
    const catalogOrigin = origins.S3BucketOrigin.withOriginAccessControl(asIBucket(this.bucket), {
      originAccessLevels: [cloudfront.AccessLevel.READ],
      originAccessControl: new cloudfront.S3OriginAccessControl(this, 'CatalogReader', {
        originAccessControlName: accountWideName(this, 'catalog-reader', 64),
      }),
    });
    // The pages' reader (an origin access identity) may list, so a missing page is the not-found page; it may
    // read the live pages only (infra/README.md).
    const pagesReader = new cloudfront.OriginAccessIdentity(this, 'PagesReader', {
      comment: `Training plan catalog (${this.stackName}): reads plan pages`,
    });
    const pagesOrigin = origins.S3BucketOrigin.withOriginAccessIdentity(asIBucket(this.bucket), {
      originAccessIdentity: pagesReader,
    });
    for (const statement of [
      { sid: 'PagesReaderLists', actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] },
      {
        sid: 'PagesReaderReadsOnlyPages',
        effect: iam.Effect.DENY,
        actions: ['s3:GetObject'],
        notResources: (access.pages.readableKeys ?? []).map((key) => this.bucket.arnForObjects(key)),
      },
    ])
      this.bucket.addToResourcePolicy(
        new iam.PolicyStatement({ ...statement, principals: [pagesReader.grantPrincipal] }),
      );

    const originFor = { catalog: catalogOrigin, pages: pagesOrigin };
    const functionAssociations = [
      { eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.viewerRequest },
      { eventType: cloudfront.FunctionEventType.VIEWER_RESPONSE, function: this.viewerResponse },
    ];
    /** A behaviour of the table, with its own cache policy and response headers policy. */
    const behaviourOptions = (name: keyof typeof behaviours): cloudfront.BehaviorOptions => {
      const behaviour: Behaviour = behaviours[name];
      const { idPrefix, cacheComment, headersComment } = BEHAVIOUR_POLICIES[name];
      return {
        origin: originFor[behaviour.origin],
        allowedMethods: ALLOWED_METHODS,
        cachedMethods: CACHED_METHODS,
        // The table's values are CloudFront's own names of the policies.
        viewerProtocolPolicy: DISTRIBUTION.viewerProtocol as cloudfront.ViewerProtocolPolicy,
        compress: behaviour.compress,
        functionAssociations,
        cachePolicy: new cloudfront.CachePolicy(this, `${idPrefix}CachePolicy`, {
          comment: cacheComment,
          queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
          headerBehavior: cloudfront.CacheHeaderBehavior.none(),
          cookieBehavior: cloudfront.CacheCookieBehavior.none(),
          // An object's own Cache-Control decides within these bounds (gateway/distribution.ts says why).
          minTtl: Duration.seconds(ttlSeconds.min),
          defaultTtl: Duration.seconds(ttlSeconds.default),
          maxTtl: Duration.seconds(behaviour.maxTtlSeconds ?? ttlSeconds.max),
          enableAcceptEncodingGzip: behaviour.compress && compression.encodings.includes('gzip'),
          enableAcceptEncodingBrotli: behaviour.compress && compression.encodings.includes('br'),
        }),
        responseHeadersPolicy: new cloudfront.ResponseHeadersPolicy(this, `${idPrefix}ResponseHeaders`, {
          responseHeadersPolicyName: accountWideName(this, `${idPrefix}ResponseHeaders`, 128),
          comment: headersComment,
          // Only what the table asks for: the functions set every other header of the answers they make.
          securityHeadersBehavior: {
            contentTypeOptions: { override: responseHeaders.contentTypeOptions === NOSNIFF },
            ...securityHeaders(behaviour.securityHeaders),
          },
          removeHeaders: [...responseHeaders.remove],
        }),
      };
    };

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `Training plan catalog (${this.stackName})`,
      defaultBehavior: behaviourOptions('api'),
      additionalBehaviors: { [behaviours.pages.pathPattern]: behaviourOptions('pages') },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableIpv6: true,
      priceClass: `PriceClass_${settings.priceClass}` as cloudfront.PriceClass,
      errorResponses: DISTRIBUTION.errorResponses.map((response) => ({
        httpStatus: response.originStatus,
        responseHttpStatus: response.status,
        responsePagePath: response.page,
        ttl: Duration.seconds(settings.errorCachingMinTtlSeconds),
      })),
      ...(settings.domainName && settings.certificateArn
        ? {
            domainNames: [settings.domainName],
            certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn),
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            sslSupportMethod: cloudfront.SSLMethod.SNI,
          }
        : {}),
      ...this.accessLogging(settings),
    });

    // The distribution may only use functions with a LIVE stage: the release (verified, then published) comes first.
    this.functionRelease = addFunctionRelease(this, {
      functions: released,
      keyValueStore: this.keyValueStore,
      publish: settings.publishFunctions,
      runtime: lambdaRuntime(),
      bundling: BUNDLING,
      root: REPO_ROOT,
    });
    this.distribution.node.addDependency(this.functionRelease);

    const deployCallLogs = this.putErrorPages(settings);
    this.refuseExampleContact(settings.contactAddress);

    this.baseUrl =
      settings.baseUrl ?? `https://${settings.domainName ?? this.distribution.distributionDomainName}`;
    this.builderFailures = new sqs.Queue(this, 'BuilderFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(FAILURE_RETENTION_DAYS),
    });
    this.builder = this.createBuilder(settings);
    this.schedule(settings);
    const canary = this.createCanary(settings, deployCallLogs);
    this.canary = canary?.canary;
    this.canaryAfterDeploy = canary?.afterDeploy;
    // The full check after a deploy asks LIVE: it comes after the functions' release has published it.
    this.canaryAfterDeploy?.node.addDependency(this.functionRelease);
    const webAcl = addRateLimit(this, this.distribution, settings);
    this.monitoring = addMonitoring(
      this,
      {
        distribution: this.distribution,
        functions: [this.viewerRequest, this.viewerResponse],
        builder: this.builder,
        builderFailures: this.builderFailures,
        canary: this.canary,
        webAclName: webAcl?.name,
      },
      settings,
    );
    addUsageLogs(
      this,
      { distributionArn: this.distribution.distributionArn, monitoring: this.monitoring },
      settings,
    );
    acknowledgeFindings(this, settings);

    const cdn = this.distribution;
    const outputs: Record<string, [value: string, description: string]> = {
      ApiUrl: [this.baseUrl, 'The API base URL (GET /api/plans)'],
      DistributionDomainName: [cdn.distributionDomainName, 'Point the custom domain (CNAME / alias) here'],
      DistributionId: [cdn.distributionId, 'The distribution (CloudWatch metrics)'],
      [DISTRIBUTION_ARN_OUTPUT]: [
        cdn.distributionArn,
        "The distribution's ARN (outside us-east-1, the edge stack's usage records read it)",
      ],
      BucketName: [
        this.bucket.bucketName,
        'catalog publish|builds|history|rollback|unpin|status --bucket (CATALOG_BUCKET)',
      ],
      KeyValueStoreArn: [
        this.keyValueStore.keyValueStoreArn,
        'catalog keys|cors|publish|builds|history|rollback|unpin|status --kvs-arn (CATALOG_KVS_ARN)',
      ],
      BuilderFunctionName: [this.builder.functionName, 'catalog rebuild --function (CATALOG_FUNCTION_NAME)'],
      BuilderFailureQueueUrl: [
        this.builderFailures.queueUrl,
        'Failed builder invocations (runbook "the builder keeps failing" in infra/README.md)',
      ],
      ViewerRequestFunctionName: [
        this.viewerRequest.functionName,
        'catalog verify-function|publish-functions --name (CATALOG_VIEWER_REQUEST_FUNCTION)',
      ],
      ViewerResponseFunctionName: [
        this.viewerResponse.functionName,
        'catalog verify-function|publish-functions --response-name (CATALOG_VIEWER_RESPONSE_FUNCTION)',
      ],
      ContactAddress: [
        settings.contactAddress,
        'Where partners ask for keys: catalog publish --contact-address (CATALOG_CONTACT_ADDRESS)',
      ],
    };
    for (const [outputId, [value, description]] of Object.entries(outputs))
      new CfnOutput(this, outputId, { value, description });
  }

  /**
   * A contact address at a domain reserved for examples (the default deployment file's, until its operator sets
   * the real one) synthesizes, so the stack can be checked offline, but its template refuses to deploy before
   * any resource is made: partners would be told to write to an address that reaches no one.
   */
  private refuseExampleContact(address: string): void {
    if (!isReservedContact(address)) return;
    new CfnRule(this, 'ContactAddressSet', {
      assertions: [
        {
          assert: Fn.conditionEquals(Aws.REGION, 'contactAddress-is-an-example'),
          assertDescription: `contactAddress ${address} is at a domain reserved for examples, which reaches no one: set the address partners ask for keys at in infra/deployments/${this.stackName}.json, then deploy.`,
        },
      ],
    });
  }

  /**
   * The error pages, put by the deploy itself (until the first publish writes the same bytes, CloudFront would
   * answer its errors with the 403 of the missing page): one SDK call per page, which stays with the bucket.
   */
  private putErrorPages(settings: StackSettings): logs.ILogGroup {
    // The function's log group (CDK's one SDK-call function, which the canary's after-deploy run uses too), made
    // before the function (a group Lambda makes at its first run races the one CDK would add after the function)
    // and deleted with the stack.
    const logGroup = new logs.LogGroup(this, 'ErrorPagesLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    for (const page of rootObjects(settings.appScheme ?? (SETTINGS.appScheme.default as string))) {
      const put: cr.AwsSdkCall = {
        service: 'S3',
        action: 'putObject',
        parameters: {
          Bucket: this.bucket.bucketName,
          Key: page.key,
          Body: page.body.toString('utf8'),
          ContentType: page.contentType,
          CacheControl: page.cacheControl,
        },
        physicalResourceId: cr.PhysicalResourceId.of(page.key),
      };
      // `ErrorPage500`, `ErrorPage404`: one resource per page, each may write only its page.
      new cr.AwsCustomResource(this, `ErrorPage${basename(page.key).replace(/\..*$/, '')}`, {
        onCreate: put,
        onUpdate: put,
        installLatestAwsSdk: false,
        logGroup,
        policy: cr.AwsCustomResourcePolicy.fromStatements([
          new iam.PolicyStatement({
            actions: ['s3:PutObject'],
            resources: [this.bucket.arnForObjects(page.key)],
          }),
        ]),
      });
    }
    return logGroup;
  }

  /** Standard access logs, to the named bucket or to a new private one whose logs expire. */
  private accessLogging(settings: StackSettings): Partial<cloudfront.DistributionProps> {
    if (!settings.accessLogging) return {};
    const expiration = Duration.days(settings.accessLogRetentionDays ?? ACCESS_LOG_RETENTION_DAYS);
    const logBucket: s3.IBucket = settings.accessLogBucketName
      ? s3.Bucket.fromBucketName(this, 'AccessLogBucket', settings.accessLogBucketName)
      : asIBucket(
          new s3.Bucket(this, 'AccessLogs', {
            blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
            enforceSSL: true,
            encryption: s3.BucketEncryption.S3_MANAGED,
            // CloudFront standard logging writes with an ACL grant.
            objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            lifecycleRules: [{ id: 'expire-logs', expiration }],
          }),
        );
    return { enableLogging: true, logBucket, logFilePrefix: 'cloudfront/', logIncludesCookies: false };
  }

  /** The builder Lambda: bundled by the local esbuild, least-privilege IAM, failures to the failure queue. */
  private createBuilder(settings: StackSettings): NodejsFunction {
    let secretArn = settings.sourceSecretArn;
    if (settings.source === undefined && secretArn === undefined) {
      // Created with no source in it: until the operator puts one there, each run is `not-configured`, not failed.
      secretArn = new secretsmanager.Secret(this, 'SourceSecret', {
        description:
          'Training plan catalog: the builder source (postgres://… or http(s)://…, or {"source","token"}). Replace the empty placeholder.',
        secretStringValue: SecretValue.unsafePlainText(SOURCE_UNSET),
      }).secretArn;
      new CfnOutput(this, 'SourceSecretArn', {
        value: secretArn,
        description: 'Put the builder source here: aws secretsmanager put-secret-value --secret-id …',
      });
    }

    // Every setting the Lambda reads that this stack knows: its CDK settings, and its own resources.
    const environment = lambdaEnvironment({
      ...settings,
      bucket: this.bucket.bucketName,
      kvsArn: this.keyValueStore.keyValueStoreArn,
      baseUrl: this.baseUrl,
      sourceSecretArn: secretArn,
    });

    const network = settings.vpcId !== undefined ? this.builderNetwork(settings) : {};
    const rate = Duration.minutes(settings.buildRateMinutes);
    const logGroup = new logs.LogGroup(this, 'BuilderLogs', { retention: logs.RetentionDays.THREE_MONTHS });
    // An explicit role instead of AWSLambdaBasicExecutionRole (which may write to every log group).
    const role = new iam.Role(this, 'BuilderRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'Catalog builder: its own log group, the origin bucket, the key-value store, the source secret',
      ...(settings.vpcId !== undefined
        ? {
            managedPolicies: [
              iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'),
            ],
          }
        : {}),
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'OwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    const runtime = lambdaRuntime();
    const builder = new NodejsFunction(this, 'Builder', {
      description: `Training plan catalog builder: source → a build in S3 → the live pointer (${LAMBDA_BUNDLE.entry})`,
      entry: join(REPO_ROOT, LAMBDA_BUNDLE.entry),
      handler: LAMBDA_BUNDLE.handler,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      runtime,
      architecture: lambda.Architecture.ARM_64,
      // Sized from the measured cost of a build (infra/README.md, "Sizing the builder"): memory buys CPU.
      memorySize: settings.builderMemoryMiB,
      timeout: Duration.seconds(settings.builderTimeoutSeconds),
      // No reserved concurrency (it fails deploys on accounts with a small concurrency quota): two runs at
      // once are safe without it — the second finds the run lock at the origin and ends busy, and the live
      // pointer's conditional write refuses a stale move (docs/decisions.md#build-cost).
      // A failed run is not retried at once (the next scheduled run is the retry), and a run that waited in
      // the queue longer than one interval is dropped: the next one is due. Either lands in the failure
      // queue, whose alarm says so.
      retryAttempts: 0,
      maxEventAge: Duration.seconds(Math.min(Math.max(rate.toSeconds(), 60), 6 * 3600)),
      onFailure: new lambdaDestinations.SqsDestination(this.builderFailures),
      environment,
      role,
      logGroup,
      ...network,
      // The same bundle as `npm run build:lambda`, which the tests run (lambda/bundling.ts).
      bundling: BUNDLING,
    });

    // The live pointer lives in the key-value store: a publish reads it and moves it with one conditional
    // UpdateKeys. No invalidation: a new build has new cache keys.
    const kvsActions = ['DescribeKeyValueStore', 'ListKeys', 'GetKey', 'UpdateKeys'].map(
      (action) => `cloudfront-keyvaluestore:${action}`,
    );
    const statements: [sid: string, actions: string[], resource: string | undefined][] = [
      ['CatalogObjects', ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], this.bucket.arnForObjects('*')],
      ['CatalogListing', ['s3:ListBucket'], this.bucket.bucketArn],
      ['LivePointer', kvsActions, this.keyValueStore.keyValueStoreArn],
      ['ReadSource', ['secretsmanager:GetSecretValue'], secretArn],
      ['ReadMonitoringKey', ['secretsmanager:GetSecretValue'], settings.monitoringKeySecretArn],
    ];
    for (const [sid, actions, resource] of statements)
      if (resource !== undefined)
        builder.addToRolePolicy(new iam.PolicyStatement({ sid, actions, resources: [resource] }));
    return builder;
  }

  /**
   * The canary (lambda/canary.ts, infra/README.md "The canary"): the scheduler runs its probe every
   * `canaryRateMinutes` and its full table every `canaryFullRateMinutes` against the public base URL with the
   * monitoring key, within `checkDeadline`, and {@link canaryAfterDeploy} runs the full table once the rest of
   * the stack is deployed. Its role may write its own log group, read that one secret, read entries of the key
   * store (the CORS origin, at each run), read the probe's report and put the two reports; its metrics are
   * embedded in its log (no CloudWatch permission). None without `monitoringKeySecretArn`, or with
   * `canaryEnabled` false.
   */
  private createCanary(
    settings: StackSettings,
    deployCallLogs: logs.ILogGroup,
  ): { readonly canary: NodejsFunction; readonly afterDeploy: cr.AwsCustomResource } | undefined {
    const secretArn = settings.monitoringKeySecretArn;
    if (!settings.canaryEnabled || secretArn === undefined) return undefined;
    const rates = {
      probe: Duration.minutes(settings.canaryRateMinutes),
      full: Duration.minutes(settings.canaryFullRateMinutes),
    };
    const logGroup = new logs.LogGroup(this, 'CanaryLogs', { retention: logs.RetentionDays.THREE_MONTHS });
    const role = new iam.Role(this, 'CanaryRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'Catalog canary: its own log group, the monitoring key secret, the CORS origin in the key store, its reports',
    });
    const statements: [sid: string, actions: string[], resources: string[]][] = [
      ['OwnLogs', ['logs:CreateLogStream', 'logs:PutLogEvents'], [logGroup.logGroupArn]],
      ['ReadMonitoringKey', ['secretsmanager:GetSecretValue'], [secretArn]],
      // GetKey alone: it reads the entries it names (the CORS origin), never lists the key hashes.
      ['ReadCorsOrigin', ['cloudfront-keyvaluestore:GetKey'], [this.keyValueStore.keyValueStoreArn]],
      ['ReadProbeReport', ['s3:GetObject'], [this.bucket.arnForObjects(STATE_CANARY.probe)]],
      [
        'WriteReports',
        ['s3:PutObject'],
        CANARY_BEATS.map((beat) => this.bucket.arnForObjects(STATE_CANARY[beat])),
      ],
    ];
    for (const [sid, actions, resources] of statements)
      role.addToPolicy(new iam.PolicyStatement({ sid, actions, resources }));
    const canary = new NodejsFunction(this, 'Canary', {
      description: `Training plan catalog canary: catalog check's probe every ${rates.probe.toHumanString()} and full table every ${rates.full.toHumanString()} against ${settings.domainName ?? 'the distribution'} (${CANARY_BUNDLE.entry})`,
      entry: join(REPO_ROOT, CANARY_BUNDLE.entry),
      handler: CANARY_BUNDLE.handler,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      runtime: lambdaRuntime(),
      architecture: lambda.Architecture.ARM_64,
      // Sized from the measured peak of a full run at 30,000 plans (infra/README.md, "The canary").
      memorySize: settings.canaryMemoryMiB,
      // The run's deadline, then time to store its reports and metrics: below the period (props.ts checks).
      // Lambda counts its timeout in whole seconds.
      timeout: Duration.seconds(Math.ceil((settings.checkDeadline + CANARY_RESERVE_MS) / 1000)),
      retryAttempts: 0,
      environment: functionEnvironment('canary', {
        ...settings,
        baseUrl: this.baseUrl,
        bucket: this.bucket.bucketName,
        kvsArn: this.keyValueStore.keyValueStoreArn,
        monitoringKeySecretArn: secretArn,
      }),
      role,
      logGroup,
      bundling: BUNDLING,
    });
    // One schedule per beat; the event names the beat (lambda/canary.ts `CanaryEvent`).
    const schedules = CANARY_BEATS.map(
      (beat) =>
        new scheduler.Schedule(this, beat === 'probe' ? 'CanarySchedule' : 'CanaryFullSchedule', {
          description: `Training plan catalog: the canary's ${beat === 'probe' ? 'probe' : 'full table'} every ${rates[beat].toHumanString()}`,
          schedule: scheduler.ScheduleExpression.rate(rates[beat]),
          target: new schedulerTargets.LambdaInvoke(canary, {
            input: scheduler.ScheduleTargetInput.fromObject({ beat }),
            // A run that did not happen is no retry's business: the next one is a period away, and the silence
            // alarm of its beat counts the periods without a report.
            retryAttempts: 0,
            maxEventAge: Duration.seconds(60),
          }),
        }),
    );
    new CfnOutput(this, 'CanaryFunctionName', {
      value: canary.functionName,
      description: 'The canary (runbook "the canary reports a failing row" in infra/README.md)',
    });
    new CfnOutput(this, 'CanaryScheduleName', {
      value: schedules[0]?.scheduleName as string,
      description: "aws scheduler get-schedule --name … (the canary's probe)",
    });
    new CfnOutput(this, 'CanaryFullScheduleName', {
      value: schedules[1]?.scheduleName as string,
      description: "aws scheduler get-schedule --name … (the canary's full table)",
    });
    return { canary, afterDeploy: this.runCanaryAfterDeploy(canary, deployCallLogs) };
  }

  /**
   * The full table once every deploy has put the distribution, the functions and the canary in place: an
   * asynchronous invocation (`{"beat":"full","trigger":"deploy"}`) by an SDK call the deploy makes, after those
   * resources. Its `deployedAt` changes with every synthesis, so every deploy makes the call again (and `cdk
   * diff` always lists this one resource). A step that must come first (a check of the functions) is ordered
   * with `canaryAfterDeploy.node.addDependency(step)`.
   */
  private runCanaryAfterDeploy(canary: NodejsFunction, logGroup: logs.ILogGroup): cr.AwsCustomResource {
    const invoke: cr.AwsSdkCall = {
      service: 'Lambda',
      action: 'invoke',
      parameters: {
        FunctionName: canary.functionName,
        InvocationType: 'Event',
        Payload: JSON.stringify({ beat: 'full', trigger: 'deploy' }),
      },
      physicalResourceId: cr.PhysicalResourceId.of('canary-after-deploy'),
    };
    const run = new cr.AwsCustomResource(this, 'CanaryAfterDeploy', {
      onCreate: invoke,
      onUpdate: invoke,
      installLatestAwsSdk: false,
      logGroup,
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [canary.functionArn] }),
      ]),
    });
    // Not read by the call: a new value per synthesis, so that each deploy updates (and so runs) it.
    const resource = run.node.findChild('Resource').node.defaultChild as CfnResource;
    resource.addPropertyOverride('DeployedAt', new Date().toISOString());
    run.node.addDependency(this.distribution, this.viewerRequest, this.viewerResponse, canary);
    return run;
  }

  private builderNetwork(settings: StackSettings) {
    const vpc = ec2.Vpc.fromVpcAttributes(this, 'BuilderVpc', {
      vpcId: settings.vpcId as string,
      // Only the explicit subnets below are used; the zones are resolved at deploy time, not looked up.
      availabilityZones: Fn.getAzs(),
    });
    Annotations.of(vpc).acknowledgeWarning(
      '@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones',
      'the builder uses only the explicit subnets',
    );
    const subnets = (settings.subnetIds ?? []).map((id) => {
      const subnet = ec2.Subnet.fromSubnetId(this, `Subnet-${id}`, id);
      Annotations.of(subnet).acknowledgeWarning(
        '@aws-cdk/aws-ec2:noSubnetRouteTableId',
        'no route table is read',
      );
      return subnet;
    });
    const securityGroups = settings.securityGroupIds?.map((id) =>
      ec2.SecurityGroup.fromSecurityGroupId(this, `SecurityGroup-${id}`, id),
    );
    return { vpc, vpcSubnets: { subnets }, ...(securityGroups ? { securityGroups } : {}) };
  }

  /** EventBridge Scheduler runs the builder (the alarms on its runs: infra/monitoring.ts). */
  private schedule(settings: StackSettings): void {
    const rate = Duration.minutes(settings.buildRateMinutes);
    const schedule = new scheduler.Schedule(this, 'BuildSchedule', {
      description: `Training plan catalog: build and publish every ${rate.toHumanString()}`,
      schedule: scheduler.ScheduleExpression.rate(rate),
      enabled: settings.scheduleEnabled,
      target: new schedulerTargets.LambdaInvoke(this.builder, {
        input: scheduler.ScheduleTargetInput.fromObject({}),
        retryAttempts: 2,
        maxEventAge: Duration.seconds(Math.max(rate.toSeconds(), 60)),
        // A delivery the scheduler gives up on lands in the failure queue too, whose alarm says so.
        deadLetterQueue: this.builderFailures,
      }),
    });
    new CfnOutput(this, 'BuildScheduleName', {
      value: schedule.scheduleName,
      description: 'aws scheduler get-schedule --name … (runbooks in infra/README.md)',
    });
  }
}

/** The runtime lambda/bundling.ts names (its bundles target it): that version, not CDK's "latest" alias. */
function lambdaRuntime(): lambda.Runtime {
  const runtime = lambda.Runtime.ALL.find(
    (candidate) => candidate.name === LAMBDA_BUNDLE.runtime && !candidate.isVariable,
  );
  if (!runtime) throw new Error(`unknown Lambda runtime ${LAMBDA_BUNDLE.runtime} in lambda/bundling.ts`);
  return runtime;
}

/** Both functions' bundling: the same as `npm run build:lambda`, which the tests run (lambda/bundling.ts). */
const BUNDLING = {
  format: OutputFormat.ESM,
  target: LAMBDA_BUNDLE.target,
  platform: LAMBDA_BUNDLE.platform,
  mainFields: [...LAMBDA_BUNDLE.mainFields],
  banner: LAMBDA_BUNDLE.banner,
  bundleAwsSDK: true,
  externalModules: [...LAMBDA_BUNDLE.external],
  minify: LAMBDA_BUNDLE.minify,
  sourceMap: false,
  logLevel: LogLevel.WARNING,
  forceDockerBundling: false,
};

/** A behaviour's security headers (by lowercase name, as the table holds them) as CDK's policy settings. */
function securityHeaders(headers: Behaviour['securityHeaders']): cloudfront.ResponseSecurityHeadersBehavior {
  const setting = ([name, value]: [string, string]): cloudfront.ResponseSecurityHeadersBehavior => {
    if (name === 'content-security-policy')
      return { contentSecurityPolicy: { contentSecurityPolicy: value, override: true } };
    if (name === 'referrer-policy' && value === 'no-referrer')
      return {
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
      };
    if (name === 'x-frame-options' && value === 'DENY')
      return { frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true } };
    throw new Error(`gateway/distribution.ts: no response headers policy setting for ${name}: ${value}`);
  };
  return Object.assign({}, ...Object.entries(headers).map(setting));
}

/** aws-cdk-lib's `Bucket` declares `isWebsite?: boolean`, which `exactOptionalPropertyTypes` refuses as `IBucket`. */
function asIBucket(bucket: s3.Bucket): s3.IBucket {
  return bucket as unknown as s3.IBucket;
}
