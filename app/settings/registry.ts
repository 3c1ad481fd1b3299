/**
 * Every setting declared once ({@link SETTINGS}), and what each command, the builder Lambda and the CDK app read
 * ({@link READS}); every entry point is generated from or checked against these (docs/settings.md).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { AppScheme, BaseUrl, DEFAULT_LINKS, WebBaseUrl } from '../../builder/model.ts';
import { ByteSize, formatBytes, RelationNameText, SOURCE_DEFAULTS } from '../../builder/sources/options.ts';
import { redactUrl } from '../../builder/sources/redact.ts';
import { settingRef } from '../../contract/errors.ts';
import { BUILD_ID_PATTERN, EDGE_REGION, LOOPBACK_HOST } from '../../contract/index.ts';
import { originProblem } from '../../keys/cors.ts';
import { KEY_PATTERN, KeyIdInput, PartnerLabel } from '../../keys/keys.ts';
import { KvsArn } from '../../keys/store.ts';
import { Duration, duration, formatDuration } from '../../keys/time.ts';
import { LOCAL_STACK } from '../paths.ts';
import { boolean, decimal, integer, type Kind, list, matching, parsed, text } from './kinds.ts';

/**
 * Where a setting is read: a command of the command line (see {@link READS}), the builder Lambda, the canary
 * Lambda, or the CDK app.
 */

/** Lambda's longest function timeout: the builder's setting and the canary's deadline stay within it. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
export type Context = keyof typeof READS;
/** The `catalog` commands (`keys issue` is `keys-issue` here). */
export type CommandName = Exclude<Context, 'lambda' | 'canary' | 'cdk'>;

/**
 * How a context treats a setting: `required` (no value is an error), `default` (no value takes the
 * setting's default), `optional` (no value stays undefined: a later layer decides).
 */
export type Mode = 'required' | 'default' | 'optional';

/** Contexts that publish for real: a value that only suits the local stack is refused there. */
export const PRODUCTION_CONTEXTS: readonly Context[] = ['publish', 'lambda', 'cdk'];

/** What a context reads: the names of its settings in each mode, in lists separated by spaces. */
type Reads = { readonly [M in Mode]?: readonly string[] };

/** A setting's declaration: its kind of value, what it does, and how it is given, named and shown. */
export interface SettingSpec<I = unknown, O = unknown> {
  readonly kind: Kind<I, O>;
  /** One line: what the setting does (help texts, docs/settings.md). */
  readonly description: string;
  /** The value when none is given, where the context's mode is `default`. */
  readonly default?: NoInfer<O>;
  /** The flag, `--kebab-name` by default; `false`: none (a secret is never a flag: flags show in `ps`). */
  readonly flag?: string | false;
  /** The environment variable, `CATALOG_SNAKE_NAME` by default; `false`: none. */
  readonly env?: string | false;
  /** Never echoed in a message, never logged. */
  readonly secret?: boolean;
  /**
   * How a message shows a value that may hold a secret (a URL's password is shown as `***`): every URL setting
   * declares builder/sources/redact.ts `redactUrl`, the one redaction (a test holds them to it).
   */
  readonly redact?: (text: string) => string;
  /** How a message names the setting where the default (flag, variable, context key) would be wrong advice. */
  readonly labels?: Readonly<Partial<Record<'cli' | 'lambda' | 'cdk', string>>>;
  /** The stack output that gives the value under `--deployment` (app/deployment.ts), when one does. */
  readonly output?: string;
  /**
   * A further rule in {@link PRODUCTION_CONTEXTS}: why the value does not suit production. It sees the other
   * settings of the reading (parsed, whatever their order), for a rule that depends on them (a publish's target).
   */
  readonly production?: (value: NoInfer<O>, reading: ProductionReading) => string | undefined;
}

/** What a production rule sees besides the value: where the setting is read, and the other values read there. */
export interface ProductionReading {
  readonly context: Context;
  /** The values of the context's other settings that parsed (undefined: not given). */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** What a setting declares besides its kind and description. */
type Extras<I, O> = Omit<SettingSpec<I, O>, 'kind' | 'description'>;

/** Declares a setting: its kind, one line on what it does, and the rest (typed by the kind). */
function setting<I, O>(kind: Kind<I, O>, description: string, rest: Extras<I, O> = {}): SettingSpec<I, O> {
  return { kind, description, ...rest };
}

/** A switch that is off unless given. */
const toggle = (description: string, rest: Extras<boolean | string, boolean> = {}) =>
  setting(boolean, description, { default: false, ...rest });

// ---------------------------------------------------------------------------------------------------------
// Value rules used only here (the domain rules live with their modules and are imported above).

const bucketName = matching(
  'name',
  /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
  'must be an S3 bucket name (3–63 of a-z, 0-9, . and -)',
);
const arn = (service: string, pattern: RegExp, what: string) =>
  matching('arn', pattern, `must be ${what} (arn:aws:${service}:…)`);
const secretArn = arn(
  'secretsmanager',
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/,
  'the complete ARN of a Secrets Manager secret, ending in -XXXXXX',
);
/** What a key must be; a message never shows the value. */
const KEY_RULE = 'is not an API key (tpc_ and 43 base64url characters); the value is not shown';
/** A CloudFront function's name. */
const functionName = matching(
  'name',
  /^[A-Za-z0-9_-]{1,64}$/,
  'must be a CloudFront function name (1–64 of A-Z, a-z, 0-9, - and _)',
);
const cfnStackName = (error: string) => matching('name', /^[A-Za-z][A-Za-z0-9-]{0,47}$/, error);
/** Text that is an origin or `off` (null), written back as the same text. */
function corsOriginKind(
  valueName: string,
  inner: z.ZodType<string | null, string>,
): Kind<string, string | null> {
  return { ...text(valueName, inner), format: (value) => value ?? 'off' };
}
/**
 * An interface to listen on: an IP address or a host name. Digits and dots alone must make an IPv4 address:
 * `999.1.1.1` is none, and a host name lookup would only say it found no such host.
 */
const listenHost = text(
  'host',
  z.string().refine((host) => !/^[\d.]+$/.test(host) || isIP(host) === 4, {
    error:
      'cannot be listened on: it is not an IP address (an IPv4 address is four numbers from 0 to 255), nor a host name; give an address of this machine, such as 127.0.0.1 (0.0.0.0: all of them)',
  }),
);
/** A deadline, at most a day. */
const timeout = parsed('duration', duration(86_400_000), formatDuration);
/** A span of time such as a key's grace or how far back to look, at most 100 years. */
const span = parsed('duration', Duration, formatDuration);

/** A whole number from a closed list (the values an AWS API accepts); `error` lists them. */
function wholeNumberOf(values: readonly number[], valueName: string, error: string) {
  const kind = integer(Math.min(...values), Math.max(...values), valueName);
  return { ...kind, schema: kind.schema.refine((value) => values.includes(value), { error }) };
}
/** The evaluation windows an AWS WAF rate-based rule accepts, in seconds. */
const wafWindow = wholeNumberOf([60, 120, 300, 600], 'seconds', 'must be 60, 120, 300 or 600');
/** The retention periods a CloudWatch Logs group accepts, in days. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/**
 * The production rule of a URL that partners follow: https://, except that publishing to a local origin may
 * use http:// on a loopback host, which is where its `catalog serve` answers (an https host there would be
 * invented). `why` says what https protects.
 */
function httpsUnlessLocal(url: string, { context, settings }: ProductionReading, why: string) {
  if (url.startsWith('https://')) return undefined;
  // A local origin (--origin or --store, no --bucket or --kvs-arn): only this machine serves it.
  const local =
    context === 'publish' &&
    (settings.bucket ?? settings.kvsArn) === undefined &&
    (settings.origin ?? settings.store) !== undefined;
  if (local && url.startsWith('http://') && LOOPBACK_HOST.test(new URL(url).hostname)) return undefined;
  if (context !== 'publish') return `must be https:// (${why})`;
  return local
    ? `must be https:// (${why}), or http:// on a loopback host (127.0.0.1, [::1], localhost) when publishing to a local origin`
    : `must be https:// (${why}); http:// on a loopback host is only for a local origin (${settingRef('origin')} with ${settingRef('store')})`;
}

/**
 * The local stack's contact address: at a domain reserved for examples (RFC 2606), which reaches no one, so it
 * cannot pass for a real one (a production reading refuses it: {@link reservedContact}).
 */
export const LOCAL_CONTACT_ADDRESS = 'api-keys@example.com';

/** Characters a contact address never holds: it is written into a YAML document and a JavaScript string. */
const CONTACT_UNSAFE = /[\s"'`\\<>{}$]/;

/** An e-mail address (`keys@example.org`) or an https:// URL of at most 200 characters, nothing unsafe in it. */
const ContactAddress = z
  .string()
  .refine(
    (value) =>
      value.length <= 200 &&
      !CONTACT_UNSAFE.test(value) &&
      (/^[^@/:]+@([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}$/i.test(value) ||
        (value.startsWith('https://') && URL.canParse(value) && new URL(value).hostname.includes('.'))),
    {
      error:
        'must be an e-mail address (keys@example.org) or an https:// URL, at most 200 characters, without quotes, backslashes, braces, $ or spaces',
    },
  );

/** The domains reserved for examples and tests (RFC 2606, RFC 6761): no partner can reach an address there. */
const RESERVED_DOMAIN = /(^|\.)(example\.(com|net|org)|example|invalid|test|localhost)$/i;

/** The domain of a contact address: an e-mail address's, or a URL's host. */
const contactDomain = (address: string) =>
  address.includes('@') && !address.startsWith('https://')
    ? address.slice(address.lastIndexOf('@') + 1)
    : new URL(address).hostname;

/** Whether a contact address is at a domain reserved for examples (the local stack's default is one). */
export function isReservedContact(address: string): boolean {
  return RESERVED_DOMAIN.test(contactDomain(address));
}

/**
 * The builder Lambda's rule of the contact address: not at a domain reserved for examples. (The CDK app leaves it
 * to the template, which refuses to deploy such an address (infra/stack.ts), so a deployment file still
 * synthesizes offline before its address is known; a publish from a workstation takes the deployment's address
 * from its stack, with `--deployment`.)
 */
function reservedContact(address: string, { context }: ProductionReading): string | undefined {
  if (context !== 'lambda' || !isReservedContact(address)) return undefined;
  return `is at ${contactDomain(address)}, a domain reserved for examples that reaches no one: give the address partners ask for keys at`;
}

/** Every setting, by the name the code and the CDK context use (its flag and variable derive from it). */
export const SETTINGS = {
  // The build (source, links, validation).
  source: setting(text('source'), 'plans source: a JSON file path, postgres://… or http(s)://…', {
    default: 'fixtures/plans.json',
    redact: redactUrl,
  }),
  sourceSecretArn: setting(
    secretArn,
    'Secrets Manager secret holding the source (or {"source","token"}), read on every run',
    { flag: false },
  ),
  sourceToken: setting(text('token'), 'bearer token sent to an http(s) source', {
    flag: false,
    secret: true,
  }),
  baseUrl: setting(
    text('url', z.string().pipe(BaseUrl)),
    "the service's base URL, http(s)://host[:port]: the base of webUrl and of the served openapi.yaml (catalog check: the deployment to check)",
    {
      default: DEFAULT_LINKS.baseUrl,
      output: 'ApiUrl',
      redact: redactUrl,
      production: (url, reading) =>
        httpsUnlessLocal(
          url,
          reading,
          'partners render webUrl as a link; the distribution serves HTTPS only',
        ),
    },
  ),
  webBaseUrl: setting(
    text('url', z.string().pipe(WebBaseUrl)),
    'a website elsewhere that has the plan pages: webUrl becomes {this}/plans/{id} and no pages are built (default: the pages this service serves)',
    {
      redact: redactUrl,
      production: (url, reading) => httpsUnlessLocal(url, reading, 'partners render webUrl as a link'),
    },
  ),
  contactAddress: setting(
    text('address', ContactAddress),
    'where partners ask for an API key: an e-mail address or an https:// URL, written into the served openapi.yaml and the 401 answer',
    { default: LOCAL_CONTACT_ADDRESS, output: 'ContactAddress', production: reservedContact },
  ),
  appScheme: setting(text('scheme', AppScheme), 'scheme of appUrl deep links', {
    default: DEFAULT_LINKS.appScheme,
  }),
  skipInvalid: toggle('publish the valid rows and report the invalid ones as warnings'),
  sourceRelation: setting(
    text('name', RelationNameText),
    'postgres: table or view to read, optionally schema-qualified',
    { default: SOURCE_DEFAULTS.sourceRelation },
  ),
  sourceStatementTimeout: setting(
    timeout,
    'postgres: statement_timeout of each statement of the read, e.g. 30s',
    { default: SOURCE_DEFAULTS.sourceStatementTimeout },
  ),
  sourceConnectTimeout: setting(timeout, 'postgres and http(s): time to connect', {
    default: SOURCE_DEFAULTS.sourceConnectTimeout,
  }),
  sourceHeadersTimeout: setting(timeout, 'http(s): time to the response headers', {
    default: SOURCE_DEFAULTS.sourceHeadersTimeout,
  }),
  sourceBodyTimeout: setting(timeout, 'http(s): longest pause while the body arrives', {
    default: SOURCE_DEFAULTS.sourceBodyTimeout,
  }),
  sourceMaxBytes: setting(
    parsed('size', ByteSize, formatBytes),
    'http(s) and file: the largest source read, e.g. 64MiB (a larger one is refused at the limit)',
    { default: SOURCE_DEFAULTS.sourceMaxBytes },
  ),
  sourceRetries: setting(integer(0, 10), 'http(s): retries on 5xx, 429 and network errors, with backoff', {
    default: SOURCE_DEFAULTS.sourceRetries,
  }),
  out: setting(
    text('dir'),
    'the directory the build is written to, flat (default: a new scratch directory, whose path is printed); never an origin that holds builds, nor the local stack origin',
  ),

  // Publishing.
  deployment: setting(
    cfnStackName(
      "must be a deployment's name: its stack's name, letters, digits and - (at most 48, a letter first)",
    ),
    "the deployment, by its name (its stack's; infra/deployments/<name>.json declares it): its stack's outputs give every target not given (bucket, store, builder function, usage log group, base URL, region); none and no target: the local stack npm start serves",
  ),
  bucket: setting(
    bucketName,
    'the origin S3 bucket (with --kvs-arn; or --origin and --store for a local origin)',
    { output: 'BucketName' },
  ),
  unpin: toggle("remove a rollback's pin first, so this publish goes live again"),
  force: toggle(
    'publish even when the catalog shrank, or is identical to the live one; every page is written again',
    {
      labels: { lambda: 'an invocation with the event {"force": true} (catalog rebuild --force)' },
    },
  ),
  recover: toggle(
    "publish even though the store's live build is not at the origin (deleted, or the store edited by hand): a fresh build replaces it, and a store that names no origin yet takes this one (a store that serves another origin is refused even so). Only to repair a broken deployment: with a wrong --origin or --bucket it points partners at a build their edge cannot serve",
    { env: false, labels: { lambda: 'catalog publish --recover' } },
  ),
  allowEmpty: toggle('publish a catalog with no plans'),
  minRatio: setting(decimal(0, 1, 'ratio'), 'refuse fewer plans than this share of the live count (0–1)', {
    default: 0.5,
  }),
  keepBuilds: setting(integer(1, 1000), 'earlier builds kept for rollback', {
    default: 20,
    flag: '--keep',
    env: 'CATALOG_KEEP',
  }),
  s3PathStyle: toggle('path-style S3 addressing (S3-compatible stores, test servers)'),
  region: setting(
    matching('region', /^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-west-1'),
    "AWS region: a deployment's is its file's (infra/deployments/<name>.json); else the SDK's chain (AWS_REGION, then the profile's region)",
    { env: false },
  ),
  maxAttempts: setting(integer(1, 10), 'attempts per AWS request (retries back off on throttling and 5xx)', {
    default: 5,
  }),
  to: setting(
    matching('build', BUILD_ID_PATTERN, 'must be a build id (see catalog builds)'),
    'the build to make live and pin (default: the one before the live build)',
    { env: 'CATALOG_ROLLBACK_TO' },
  ),
  function: setting(
    matching('name', /^[A-Za-z0-9_:.$-]{1,170}$/, 'must be a Lambda function name or ARN'),
    'the builder function name or ARN',
    { env: 'CATALOG_FUNCTION_NAME', output: 'BuilderFunctionName' },
  ),
  canaryFunction: setting(
    matching('name', /^[A-Za-z0-9_:.$-]{1,170}$/, 'must be a Lambda function name or ARN'),
    "the deployment's canary (stack output CanaryFunctionName): with --deployment, status judges the canary's report only while the stack has one",
    { flag: false, env: false, output: 'CanaryFunctionName' },
  ),

  // The local edge and the key-value store.
  origin: setting(
    text('dir|s3://bucket'),
    'origin: a directory (publishing: with --store), or an S3 bucket (s3://name) to serve',
    { default: LOCAL_STACK.origin },
  ),
  endpoint: setting(
    text('url', z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    'S3-compatible endpoint for an s3:// origin',
    { env: 'CATALOG_S3_ENDPOINT', redact: redactUrl },
  ),
  store: setting(text('file'), 'local key-value store file (keys and CORS), the one catalog serve reads', {
    default: LOCAL_STACK.store,
  }),
  kvsArn: setting(
    text('arn', KvsArn),
    'CloudFront KeyValueStore ARN (keys, the CORS origin and the live build): the store on AWS',
    { output: 'KeyValueStoreArn' },
  ),
  port: setting(integer(0, 65535, 'n'), 'port (0 picks a free one)', { default: 8787 }),
  host: setting(listenHost, 'interface to listen on', { default: '127.0.0.1' }),

  // Keys.
  partner: setting(text('label', PartnerLabel), 'partner label: a-z, 0-9 and -, up to 64'),
  expires: setting(text('when'), 'ISO 8601 time, or a duration from now such as 90d'),
  grace: setting(span, 'how long the old keys keep working, such as 7d'),
  keyId: setting(text('id', KeyIdInput), 'the key id keys list shows (never the key itself)'),
  after: setting(span, 'keep the keys working this long, such as 1h'),
  json: toggle('print JSON instead of a table, and no progress line'),
  historyLimit: setting(integer(1, 10000), 'how many moves of the live pointer to show, newest first', {
    default: 20,
    flag: '--limit',
  }),

  // verify-function and publish-functions (keys are checked by the command, never echoed).
  viewerRequestFunction: setting(
    functionName,
    'the viewer-request function (stack output ViewerRequestFunctionName)',
    { flag: '--name', output: 'ViewerRequestFunctionName' },
  ),
  viewerResponseFunction: setting(
    functionName,
    'the viewer-response function (verify-function without it verifies the viewer-request function alone)',
    { flag: '--response-name', output: 'ViewerResponseFunctionName' },
  ),
  stage: setting(
    text(
      'stage',
      z
        .string()
        .toUpperCase()
        .pipe(z.enum(['DEVELOPMENT', 'LIVE'], { error: 'must be DEVELOPMENT or LIVE' })),
    ),
    'DEVELOPMENT (what a deploy put there, not yet published) or LIVE (the stage serving traffic)',
    { default: 'LIVE', env: 'CATALOG_FUNCTION_STAGE' },
  ),
  key: setting(
    list(z.string().regex(KEY_PATTERN, { error: KEY_RULE }), 'key'),
    "valid keys of the deployed store, separated by commas: the first stands for every valid key of the table, a second for another partner's (never a flag, never printed)",
    { flag: false, env: 'CATALOG_VERIFY_KEYS', secret: true, default: [] },
  ),
  expiredKey: setting(
    matching('key', KEY_PATTERN, KEY_RULE),
    'a key of the store whose expiry has passed (else its cases are skipped; never a flag, never printed)',
    { flag: false, env: 'CATALOG_VERIFY_EXPIRED_KEY', secret: true },
  ),
  revokedKey: setting(
    matching('key', KEY_PATTERN, KEY_RULE),
    'a key that was revoked (else its cases are skipped; never a flag, never printed)',
    { flag: false, env: 'CATALOG_VERIFY_REVOKED_KEY', secret: true },
  ),

  // The stack (CDK context keys; see infra/README.md).
  account: setting(
    matching('account', /^\d{12}$/, 'must be an AWS account id: 12 digits'),
    "the AWS account the deployment lives in: its templates refuse, before any resource is made, a deploy with another account's credentials; not set: the account of the deploying credentials",
  ),
  publishFunctions: setting(
    boolean,
    "put a deploy's new function code in CloudFront's DEVELOPMENT stage, verify it against the request-case table and publish it to LIVE when every case passes; false: leave it in DEVELOPMENT for catalog verify-function --stage DEVELOPMENT and catalog publish-functions (a first deploy still verifies and publishes: a distribution needs LIVE functions)",
    { default: true },
  ),
  domainName: setting(
    matching(
      'host',
      /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
      'must be one lowercase host name such as catalog.example.com',
    ),
    'custom domain name of the API (needs certificateArn)',
  ),
  certificateArn: setting(
    arn('acm', /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]{36}$/, 'an ACM certificate ARN'),
    'ACM certificate in us-east-1 covering domainName',
    {
      production: (value) =>
        value.split(':')[3] === EDGE_REGION
          ? undefined
          : `is in ${value.split(':')[3]}; CloudFront only uses certificates in ${EDGE_REGION}`,
    },
  ),
  priceClass: setting(
    text('class', z.enum(['100', '200', 'All'], { error: 'must be 100, 200 or All' })),
    'edge locations: 100 (North America, Europe), 200 (adds most of Asia), All',
    { default: '100' },
  ),
  accessLogging: toggle('write CloudFront standard access logs'),
  usageLogging: setting(
    boolean,
    'deliver standard logs (v2) with the fields catalog usage reads to a CloudWatch Logs group (docs/decisions.md#usage)',
    { default: true },
  ),
  usageLogRetentionDays: setting(
    wholeNumberOf(
      LOG_RETENTION_DAYS,
      'days',
      `must be one of the retention periods CloudWatch Logs offers: ${LOG_RETENTION_DAYS.join(', ')}`,
    ),
    'days the usage log group keeps its records (how far back catalog usage can look)',
    { default: 400 },
  ),
  accessLogBucketName: setting(
    bucketName,
    'existing bucket (ACLs enabled) for the access logs, with accessLogging',
  ),
  // Optional in READS.cdk, so a value given with accessLogBucketName (where it cannot apply) is refused.
  accessLogRetentionDays: setting(
    integer(1, 3650, 'days'),
    'days the access logs are kept in the bucket this stack creates for them (default 90)',
    { default: 90 },
  ),
  errorCachingMinTtlSeconds: setting(
    integer(0, 300, 'seconds'),
    'how long an edge keeps an error answer (a long TTL hides a recovered origin)',
    { default: 10 },
  ),
  noncurrentVersionExpiryDays: setting(
    integer(1, 3650, 'days'),
    'days an overwritten or deleted object version is kept in the origin bucket',
    { default: 30 },
  ),
  kvsSeedFile: setting(
    text('file'),
    'KeyValueStore import file seeding the store when it is CREATED (never change it afterwards)',
  ),
  buildRateMinutes: setting(
    integer(5, 1440, 'minutes'),
    'how often the scheduler runs the builder, in whole minutes (each run reads the whole source)',
    { default: 60 },
  ),
  // Sized from the measured cost of a publish: infra/README.md, "Sizing the builder".
  builderTimeoutSeconds: setting(
    integer(10, LAMBDA_MAX_TIMEOUT_SECONDS, 'seconds'),
    'the builder timeout, shorter than the build rate (a 30,000-plan publish takes about a third)',
    { default: 300 },
  ),
  builderMemoryMiB: setting(
    integer(128, 10240, 'MiB'),
    'the builder memory, and so its CPU share (1,769 MiB is one vCPU)',
    { default: 2048 },
  ),
  vpcId: setting(
    matching('id', /^vpc-[0-9a-f]{8,17}$/, 'must be vpc-…'),
    'run the builder in this VPC (with subnetIds), e.g. to reach a private PostgreSQL',
  ),
  subnetIds: setting(
    list(z.string().regex(/^subnet-[0-9a-f]{8,17}$/, { error: 'must be subnet-…' }), 'ids'),
    'private subnets of the builder, with a NAT route (CloudFront has no VPC endpoint)',
  ),
  securityGroupIds: setting(
    list(z.string().regex(/^sg-[0-9a-f]{8,17}$/, { error: 'must be sg-…' }), 'ids'),
    'security groups of the builder (default: a new one, all outbound, no inbound)',
  ),
  alarmTopicArn: setting(
    arn('sns', /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'an SNS topic ARN'),
    'SNS topic the alarms notify (default: a new topic AlarmTopic)',
  ),

  // Operations: alarms, CloudFront's additional metrics, per-key rate limits (infra/README.md).
  scheduleEnabled: setting(
    boolean,
    'run the builder on its schedule; false keeps the schedule disabled and the no-successful-run alarm quiet',
    { default: true },
  ),
  catalogAgeAlarmSeconds: setting(
    integer(3600, 31536000, 'seconds'),
    'alarm when the live catalog is older than this after a run (set it above the longest the source goes unchanged)',
    { default: 7 * 24 * 3600 },
  ),
  additionalCloudFrontMetrics: toggle(
    "turn on CloudFront's additional distribution metrics (401/403/404/502/503/504 rates, cache hit rate, origin latency; billed per metric)",
  ),
  rateLimitPerKey: setting(
    integer(10, 2_000_000_000, 'requests'),
    'requests one X-Api-Key may make per rateLimitWindowSeconds; adds an AWS WAF web ACL answering 429 (off when unset)',
  ),
  // Optional in READS.cdk, so a window given without rateLimitPerKey (where it cannot apply) is refused.
  rateLimitWindowSeconds: setting(
    wafWindow,
    'the window of rateLimitPerKey: 60, 120, 300 or 600 seconds (the only windows AWS WAF offers)',
    { default: 300 },
  ),

  // The partner proxy (catalog proxy): the partner's side, so its own names and defaults.
  upstream: setting(
    text('url', z.string().pipe(BaseUrl)),
    "the catalog service's base URL, http(s)://host[:port]",
    { redact: redactUrl },
  ),
  partnerKey: setting(
    text('key'),
    'the API key the proxy sends to the service (never a flag, never logged)',
    { flag: false, env: 'CATALOG_PARTNER_KEY', secret: true },
  ),
  proxyPort: setting(integer(0, 65535, 'n'), 'port the proxy listens on (0 picks a free one)', {
    default: 8788,
    flag: '--port',
  }),
  proxyHost: setting(listenHost, 'interface the proxy listens on', {
    default: '127.0.0.1',
    flag: '--host',
  }),
  cacheFile: setting(
    text('file'),
    "file holding the proxy's last good copy and its change history, so a restart does not start empty",
    { default: '.catalog/proxy-cache.json' },
  ),
  refreshSeconds: setting(
    integer(5, 86_400, 'seconds'),
    "seconds between the proxy's refreshes, at least 5 (default: as long as the service's Cache-Control max-age says, 300 today)",
  ),
  changesKept: setting(
    integer(1, 10_000, 'n'),
    'how many change sets the proxy keeps for GET /changes?since=N (older ones answer 410: resync from /plans.json)',
    { default: 100 },
  ),
  notify: setting(
    matching(
      'url',
      /^https?:\/\/[^\s/?#@]+(?:[/?][^\s#]*)?$/,
      'must be an http(s):// URL without user:password@ or a #fragment',
    ),
    "URL of the partner's application the proxy POSTs each new change set to (JSON), retried with back-off until it answers 2xx",
    { env: 'CATALOG_NOTIFY_URL', redact: redactUrl },
  ),

  // Operations: `catalog status`, and the builder's propagation check after a pointer move
  // (docs/decisions.md#operations).
  maxAge: setting(
    span,
    'catalog status: degraded when the catalog was last built or confirmed against the source longer ago than this; catalog check: a warning when the served generatedAt is older',
    { default: 25 * 3_600_000 },
  ),

  // `catalog usage` and `catalog keys list --usage` (docs/decisions.md#usage).
  since: setting(span, 'how far back to count, such as 30d (up to the log group retention on AWS)', {
    default: 30 * 86_400_000,
  }),
  accessLog: setting(
    text('file'),
    "a catalog serve access log to read (- for standard input) instead of the AWS log group; with no target, the local stack's (.catalog/access.log)",
  ),
  usageLogGroup: setting(
    matching(
      'name',
      /^[A-Za-z0-9_./#-]{1,512}$/,
      'must be a CloudWatch Logs group name (stack output UsageLogGroupName)',
    ),
    'the log group the distribution delivers its usage records to (stack output UsageLogGroupName)',
    { flag: '--log-group', output: 'UsageLogGroupName' },
  ),
  withUsage: toggle(
    "add when each key's partner was last seen, from --access-log or --log-group (usage names partners, not keys)",
    { flag: '--usage', env: false },
  ),

  // `catalog check`: a deployment, row by row, from outside (docs/decisions.md#checking-a-deployment).
  checkKey: setting(
    matching('key', KEY_PATTERN, KEY_RULE),
    'the API key catalog check sends (never a flag, never printed)',
    { flag: false, env: 'CATALOG_CHECK_KEY', secret: true },
  ),
  corsOrigin: setting(
    corsOriginKind(
      'origin|off',
      z.string().transform((value, ctx) => {
        if (value === 'off') return null;
        const problem = originProblem(value);
        if (problem === undefined) return value;
        ctx.addIssue({ code: 'custom', message: `${problem} (or off: no CORS origin is set)` });
        return z.NEVER;
      }),
    ),
    'the CORS origin the operator set (catalog cors show), or off; not given: the CORS rows are skipped, unless a deployment is named: then what its store holds (as the canary reads it at each run)',
  ),
  checkTimeout: setting(
    timeout,
    'catalog check: the deadline of each answer, from connecting to its last byte',
    { default: 10_000, flag: '--timeout' },
  ),
  checkDeadline: setting(
    timeout,
    'catalog check and the canary: the deadline of the whole run; rows not run by then are reported as not run, never as passed (the canary: below canaryRateMinutes)',
    { default: 120_000, flag: '--deadline' },
  ),
  canaryEnabled: setting(
    boolean,
    "run the canary: its probe every canaryRateMinutes and catalog check's full table every canaryFullRateMinutes against the deployment, with the monitoring key (needs monitoringKeySecretArn); false: no canary and no alarms of it (status then shows its last reports as a former canary's, unjudged)",
    { default: true },
  ),
  canaryRateMinutes: setting(
    integer(5, 60, 'minutes'),
    "how often the canary's probe checks the deployment (catalog start: the local stack), in whole minutes: each discipline's catalog in brotli (a 304 while unchanged), a refused key, the CORS preflight; catalog status calls it silent after two of them without a report",
    { default: 5 },
  ),
  canaryFullRateMinutes: setting(
    integer(5, 720, 'minutes'),
    'how often the canary runs the full table of catalog check, in whole minutes (also after each deploy, and at once when a probe finds the live catalogs changed); at least canaryRateMinutes; catalog status calls it silent after two of them without a report',
    { default: 60 },
  ),
  // Sized from the measured peak of a full run: infra/README.md, "The canary".
  canaryMemoryMiB: setting(
    integer(128, 10240, 'MiB'),
    "the canary function's memory: its measured peak at 30,000 plans stays below 60 % of the default (infra/README.md says how to size it for a larger catalog)",
    { default: 640 },
  ),
  monitoringKeySecretArn: setting(
    secretArn,
    'Secrets Manager secret holding an API key (the secret string is the key) with which the builder measures, after a publish, how long the edge takes to serve the new build, and the canary checks the deployment; unset: neither',
    { flag: false },
  ),
  propagationMaxWait: setting(
    timeout,
    'how long the builder waits, after a publish, for the edge to serve the new build before it records a timeout',
    { default: 120_000, flag: false },
  ),
  propagationInterval: setting(
    timeout,
    'how often the builder asks the edge which build it serves while it waits',
    { default: 5_000, flag: false },
  ),
} as const;

// One rule for every secret: it is read from its variable alone (a flag shows in `ps` and in shell history).
for (const [name, spec] of Object.entries(SETTINGS) as [string, SettingSpec][])
  if (spec.secret && spec.flag !== false)
    throw new Error(`app/settings/registry.ts: ${name} is secret, so it takes no flag (flag: false)`);

/** What every build reads besides the source, its token and the base URLs: the commands that build, the Lambda. */
const BUILD = [
  'appScheme skipInvalid sourceRelation sourceStatementTimeout sourceConnectTimeout',
  'sourceHeadersTimeout sourceBodyTimeout sourceMaxBytes sourceRetries',
] as const;
/** Where the commands that act on a deployment find it. */
const DEPLOYMENT = ['deployment region'] as const;
/** The target of the commands that read or move the live pointer: a deployment, a bucket and store, or a local origin. */
const TARGET = [...DEPLOYMENT, 'bucket origin store kvsArn'] as const;
/** The store of the commands that read or change keys and the CORS origin: a file, or a deployment's. */
const STORE = { default: ['store'], optional: [...DEPLOYMENT, 'kvsArn'] } as const;

/**
 * What each context reads, and how (see {@link Mode}): the `catalog` commands (`keys issue` is `keys-issue`
 * here), the builder Lambda (from its environment) and the CDK app (context keys and stack props).
 */
export const READS = {
  build: {
    default: ['source baseUrl contactAddress', ...BUILD, 'json'],
    optional: ['sourceToken webBaseUrl out'],
  },
  serve: { default: ['origin store port host contactAddress'], optional: ['endpoint'] },
  start: { default: ['port host canaryRateMinutes canaryFullRateMinutes'] },
  publish: {
    required: ['source baseUrl'],
    default: [
      'contactAddress',
      ...BUILD,
      'unpin force recover allowEmpty minRatio keepBuilds s3PathStyle maxAttempts json',
    ],
    optional: ['sourceToken webBaseUrl', ...TARGET],
  },
  builds: { default: ['s3PathStyle maxAttempts'], optional: [...TARGET] },
  history: { default: ['s3PathStyle maxAttempts json historyLimit'], optional: [...TARGET] },
  rollback: { default: ['s3PathStyle maxAttempts json'], optional: [...TARGET, 'to'] },
  unpin: { default: ['s3PathStyle maxAttempts'], optional: [...TARGET] },
  rebuild: { required: ['function'], default: ['force maxAttempts'], optional: [...DEPLOYMENT] },
  'keys-issue': { ...STORE, required: ['partner'], optional: [...STORE.optional, 'expires'] },
  'keys-rotate': { ...STORE, required: ['partner grace'] },
  'keys-revoke': { ...STORE, optional: [...STORE.optional, 'partner keyId after'] },
  'keys-list': {
    default: ['store maxAttempts json since withUsage'],
    optional: [...STORE.optional, 'accessLog usageLogGroup'],
  },
  'cors-set': STORE,
  'cors-clear': STORE,
  'cors-show': STORE,
  'verify-function': {
    required: ['viewerRequestFunction'],
    default: ['maxAttempts stage key'],
    optional: [...DEPLOYMENT, 'viewerResponseFunction expiredKey revokedKey corsOrigin'],
  },
  'publish-functions': {
    required: ['viewerRequestFunction viewerResponseFunction kvsArn'],
    default: ['maxAttempts json'],
    optional: [...DEPLOYMENT],
  },
  proxy: {
    required: ['upstream partnerKey'],
    default: ['proxyPort proxyHost cacheFile changesKept'],
    optional: ['refreshSeconds notify'],
  },
  status: {
    default: ['s3PathStyle maxAttempts json maxAge'],
    optional: [...TARGET, 'canaryFunction viewerRequestFunction viewerResponseFunction'],
  },
  check: {
    required: ['baseUrl checkKey'],
    default: ['json maxAge checkTimeout checkDeadline maxAttempts'],
    optional: [...DEPLOYMENT, 'corsOrigin', 'kvsArn'],
  },
  usage: { default: ['maxAttempts json since'], optional: [...DEPLOYMENT, 'accessLog usageLogGroup'] },
  lambda: {
    required: ['baseUrl bucket kvsArn contactAddress'],
    default: [
      ...BUILD,
      'allowEmpty minRatio keepBuilds s3PathStyle maxAttempts propagationMaxWait propagationInterval',
    ],
    optional: ['source sourceSecretArn webBaseUrl monitoringKeySecretArn'],
  },
  // The canary Lambda (lambda/canary.ts): catalog check's rows against the deployment, its report to the bucket.
  canary: {
    required: ['baseUrl bucket monitoringKeySecretArn kvsArn'],
    default: [
      'maxAge checkTimeout checkDeadline canaryRateMinutes canaryFullRateMinutes s3PathStyle maxAttempts',
    ],
  },
  // The CDK app passes the build's settings on to the Lambda (optional: the Lambda has the defaults).
  cdk: {
    required: ['deployment contactAddress'],
    default: [
      'priceClass accessLogging usageLogging usageLogRetentionDays errorCachingMinTtlSeconds',
      'noncurrentVersionExpiryDays buildRateMinutes builderTimeoutSeconds builderMemoryMiB scheduleEnabled',
      'catalogAgeAlarmSeconds additionalCloudFrontMetrics canaryEnabled canaryRateMinutes checkDeadline',
      'canaryFullRateMinutes canaryMemoryMiB',
      'publishFunctions',
    ],
    optional: [
      'account region source sourceSecretArn baseUrl webBaseUrl minRatio keepBuilds',
      ...BUILD,
      'monitoringKeySecretArn propagationMaxWait propagationInterval',
      'domainName certificateArn accessLogBucketName accessLogRetentionDays kvsSeedFile vpcId subnetIds',
      'securityGroupIds alarmTopicArn rateLimitPerKey rateLimitWindowSeconds',
    ],
  },
} as const satisfies Record<string, Reads>;

export type Registry = typeof SETTINGS;
export type SettingName = keyof Registry;
