/**
 * Every setting of the service, declared once: its kind (how it is read and written), default, description,
 * whether it is secret, and where it is used — which `catalog` commands take it as a flag and environment
 * variable, whether the builder Lambda reads it from its environment, whether it is a CDK context key / stack
 * prop. The command line, the Lambda and the CDK app are generated from (or checked against) this table; see
 * docs/settings.md.
 */
import { z } from 'zod';
import { AppScheme, BaseUrl, DEFAULT_LINKS, WebBaseUrl } from '../../builder/model.ts';
import {
  ByteSize,
  formatBytes,
  formatMs,
  RelationNameText,
  SOURCE_DEFAULTS,
  TimeoutMs,
} from '../../builder/sources/options.ts';
import { redactUrl } from '../../builder/sources/redact.ts';
import { settingRef } from '../../contract/errors.ts';
import { BUILD_ID_PATTERN, LOOPBACK_HOST } from '../../contract/index.ts';
import { originProblem } from '../../keys/cors.ts';
import { KEY_PATTERN, KeyIdInput, PartnerLabel } from '../../keys/keys.ts';
import { KvsArn } from '../../keys/store.ts';
import { Duration } from '../../keys/time.ts';
import { LOCAL_STACK } from '../paths.ts';
import { boolean, decimal, integer, type Kind, list, oneOf, parsed, text } from './kinds.ts';

/** The `catalog` commands (`keys issue` is `keys-issue` here). */
export const COMMANDS = [
  'build',
  'serve',
  'start',
  'publish',
  'builds',
  'history',
  'rollback',
  'unpin',
  'rebuild',
  'keys-issue',
  'keys-rotate',
  'keys-revoke',
  'keys-list',
  'cors-set',
  'cors-clear',
  'cors-show',
  'verify-function',
  'proxy',
  'status',
  'check',
  'usage',
] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Where a setting is read: a command of the command line, the builder Lambda, or the CDK app. */
export type Context = CommandName | 'lambda' | 'cdk';

/**
 * How a context treats a setting: `required` (no value is an error), `default` (no value takes the
 * setting's default), `optional` (no value stays undefined: a later layer decides).
 */
export type Mode = 'required' | 'default' | 'optional';

/** Contexts that publish for real: a value that only suits the local stack is refused there. */
export const PRODUCTION_CONTEXTS: readonly Context[] = ['publish', 'lambda', 'cdk'];

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
  /** How a message shows a value that may hold a secret (a source URL's password is shown as `***`). */
  readonly redact?: (text: string) => string;
  /** A flag that may be repeated (values add up); its variable holds a comma- or space-separated list. */
  readonly repeatable?: boolean;
  /** How a message names the setting where the default (flag, variable, context key) would be wrong advice. */
  readonly labels?: Readonly<Partial<Record<'cli' | 'lambda' | 'cdk', string>>>;
  /** The contexts that read the setting, and how. */
  readonly use: Readonly<Partial<Record<Context, Mode>>>;
  /** The stack output that gives the value under `--deployment` (app/deployment.ts), when one does. */
  readonly output?: string;
  /**
   * A further rule in {@link PRODUCTION_CONTEXTS}: returns why the value does not suit production. It sees the
   * context and the other settings of the same reading (parsed, whatever their order), for a rule that depends
   * on them, such as the target a publish goes to.
   */
  readonly production?: (value: NoInfer<O>, reading: ProductionReading) => string | undefined;
}

/** What a production rule sees besides the value: where the setting is read, and the other values read there. */
export interface ProductionReading {
  readonly context: Context;
  /** The values of the context's other settings that parsed (undefined: not given). */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** Declares a setting, keeping the literal types of `use` (the typed values of each context derive from them). */
function setting<I, O, const U extends Readonly<Partial<Record<Context, Mode>>>>(
  spec: Omit<SettingSpec<I, O>, 'use'> & { readonly use: U },
): Omit<SettingSpec<I, O>, 'use'> & { readonly use: U } {
  return spec;
}

// ---------------------------------------------------------------------------------------------------------
// Value rules used only here (the domain rules live with their modules and are imported above).

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const bucketName = z.string().regex(BUCKET_NAME, {
  error: 'must be an S3 bucket name (3–63 of a-z, 0-9, . and -)',
});
const arn = (service: string, pattern: RegExp, what: string) =>
  z.string().regex(pattern, { error: `must be ${what} (arn:aws:${service}:…)` });

/** The evaluation windows an AWS WAF rate-based rule accepts, in seconds. */
export const WAF_RATE_WINDOWS = [60, 120, 300, 600] as const;
const wafWindow: Kind<number | string, number> = {
  ...integer(60, 600, 'seconds'),
  schema: integer(60, 600, 'seconds').schema.refine(
    (value) => (WAF_RATE_WINDOWS as readonly number[]).includes(value),
    { error: 'must be 60, 120, 300 or 600' },
  ),
};

/** The retention periods a CloudWatch Logs group accepts, in days. */
export const LOG_RETENTION_DAYS: readonly number[] = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/**
 * Whether a reading publishes to a local origin (a directory and a store file, `catalog publish --origin
 * --store`), which only its own machine serves, rather than to AWS.
 */
function publishesLocally({ context, settings }: ProductionReading): boolean {
  return (
    context === 'publish' &&
    settings.bucket === undefined &&
    settings.kvsArn === undefined &&
    (settings.origin !== undefined || settings.store !== undefined)
  );
}

/**
 * The production rule of a URL that partners follow: https://, except that publishing to a local origin may
 * use http:// on a loopback host, which is where its `catalog serve` answers (an https host there would be
 * invented). `why` says what https protects.
 */
function httpsUnlessLocal(url: string, reading: ProductionReading, why: string): string | undefined {
  if (url.startsWith('https://')) return undefined;
  const local = publishesLocally(reading);
  if (local && url.startsWith('http://') && LOOPBACK_HOST.test(new URL(url).hostname)) return undefined;
  if (reading.context !== 'publish') return `must be https:// (${why})`;
  return local
    ? `must be https:// (${why}), or http:// on a loopback host (127.0.0.1, [::1], localhost) when publishing to a local origin`
    : `must be https:// (${why}); http:// on a loopback host is only for a local origin (${settingRef('origin')} with ${settingRef('store')})`;
}

/** Source settings: the commands that build and the Lambda take them; CDK writes them into the Lambda. */
const sourceUse = { build: 'default', publish: 'default', lambda: 'default', cdk: 'optional' } as const;
/** The commands that read or change the key-value store, with the default local file. */
const storeUse = {
  'keys-issue': 'default',
  'keys-rotate': 'default',
  'keys-revoke': 'default',
  'keys-list': 'default',
  'cors-set': 'default',
  'cors-clear': 'default',
  'cors-show': 'default',
} as const;

/** The commands that act on a deployment: each reads `--deployment`, and `--region` to find its stack. */
const deploymentUse = {
  publish: 'optional',
  builds: 'optional',
  history: 'optional',
  rollback: 'optional',
  unpin: 'optional',
  status: 'optional',
  rebuild: 'optional',
  'keys-issue': 'optional',
  'keys-rotate': 'optional',
  'keys-revoke': 'optional',
  'keys-list': 'optional',
  'cors-set': 'optional',
  'cors-clear': 'optional',
  'cors-show': 'optional',
  'verify-function': 'optional',
  check: 'optional',
  usage: 'optional',
} as const;

// ---------------------------------------------------------------------------------------------------------

export const SETTINGS = {
  // The build (source, links, validation).
  source: setting({
    kind: text('source'),
    description: 'plans source: a JSON file path, postgres://… or http(s)://…',
    default: 'fixtures/plans.json',
    redact: redactUrl,
    use: { build: 'default', publish: 'required', lambda: 'optional', cdk: 'optional' },
  }),
  sourceSecretArn: setting({
    kind: text(
      'arn',
      arn(
        'secretsmanager',
        /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/,
        'the complete ARN of a Secrets Manager secret, ending in -XXXXXX',
      ),
    ),
    description: 'Secrets Manager secret holding the source (or {"source","token"}), read on every run',
    flag: false,
    use: { lambda: 'optional', cdk: 'optional' },
  }),
  sourceToken: setting({
    kind: text('token'),
    description: 'bearer token sent to an http(s) source',
    flag: false,
    secret: true,
    use: { build: 'optional', publish: 'optional' },
  }),
  baseUrl: setting({
    kind: text('url', z.string().pipe(BaseUrl)),
    description:
      "the service's base URL, http(s)://host[:port]: the base of webUrl and of the served openapi.yaml (catalog check: the deployment to check)",
    default: DEFAULT_LINKS.baseUrl,
    output: 'ApiUrl',
    use: { build: 'default', publish: 'required', lambda: 'required', cdk: 'optional', check: 'required' },
    production: (url, reading) =>
      httpsUnlessLocal(url, reading, 'partners render webUrl as a link; the distribution serves HTTPS only'),
  }),
  webBaseUrl: setting({
    kind: text('url', z.string().pipe(WebBaseUrl)),
    description:
      'a website elsewhere that has the plan pages: webUrl becomes {this}/plans/{id} and no pages are built (default: the pages this service serves)',
    use: { build: 'optional', publish: 'optional', lambda: 'optional', cdk: 'optional' },
    production: (url, reading) => httpsUnlessLocal(url, reading, 'partners render webUrl as a link'),
  }),
  appScheme: setting({
    kind: text('scheme', AppScheme),
    description: 'scheme of appUrl deep links',
    default: DEFAULT_LINKS.appScheme,
    use: sourceUse,
  }),
  skipInvalid: setting({
    kind: boolean,
    description: 'publish the valid rows and report the invalid ones as warnings',
    default: false,
    use: sourceUse,
  }),
  sourceRelation: setting({
    kind: text('name', RelationNameText),
    description: 'postgres: table or view to read, optionally schema-qualified',
    default: SOURCE_DEFAULTS.relation,
    use: sourceUse,
  }),
  sourceStatementTimeout: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description: 'postgres: statement_timeout of each statement of the read, e.g. 30s',
    default: SOURCE_DEFAULTS.statementTimeoutMs,
    use: sourceUse,
  }),
  sourceConnectTimeout: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description: 'postgres and http(s): time to connect',
    default: SOURCE_DEFAULTS.connectTimeoutMs,
    use: sourceUse,
  }),
  sourceHeadersTimeout: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description: 'http(s): time to the response headers',
    default: SOURCE_DEFAULTS.headersTimeoutMs,
    use: sourceUse,
  }),
  sourceBodyTimeout: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description: 'http(s): longest pause while the body arrives',
    default: SOURCE_DEFAULTS.bodyTimeoutMs,
    use: sourceUse,
  }),
  sourceMaxBytes: setting({
    kind: parsed('size', ByteSize, formatBytes),
    description: 'http(s): largest body accepted, e.g. 64MiB',
    default: SOURCE_DEFAULTS.maxBodyBytes,
    use: sourceUse,
  }),
  sourceRetries: setting({
    kind: integer(0, 10),
    description: 'http(s): retries on 5xx, 429 and network errors, with backoff',
    default: SOURCE_DEFAULTS.retries,
    use: sourceUse,
  }),
  out: setting({
    kind: text('dir'),
    description: 'output directory',
    default: LOCAL_STACK.origin,
    use: { build: 'default' },
  }),

  // Publishing.
  deployment: setting({
    kind: text(
      'name',
      z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,47}$/, {
        error: 'must be the name of a deployed stack (letters, digits and -, at most 48)',
      }),
    ),
    description:
      "the deployment: its stack's outputs give every target not given (bucket, store, builder function, usage log group, base URL, region); none and no target: the local stack npm start serves",
    use: deploymentUse,
  }),
  bucket: setting({
    kind: text('name', bucketName),
    description: 'the origin S3 bucket (with --kvs-arn; or --origin and --store for a local origin)',
    output: 'BucketName',
    use: {
      publish: 'optional',
      builds: 'optional',
      history: 'optional',
      rollback: 'optional',
      unpin: 'optional',
      status: 'optional',
      lambda: 'required',
    },
  }),
  unpin: setting({
    kind: boolean,
    description: "remove a rollback's pin first, so this publish goes live again",
    default: false,
    use: { publish: 'default' },
  }),
  force: setting({
    kind: boolean,
    description: 'publish even when the catalog shrank, or is identical to the live one',
    default: false,
    labels: { lambda: 'an invocation with the event {"force": true} (catalog rebuild --force)' },
    use: { publish: 'default', rebuild: 'default' },
  }),
  recover: setting({
    kind: boolean,
    description:
      "publish even though the store's live build is not at the origin (deleted, or the store edited by hand): a fresh build replaces it, and a store that names no origin yet takes this one (a store that serves another origin is refused even so). Only to repair a broken deployment: with a wrong --origin or --bucket it points partners at a build their edge cannot serve",
    default: false,
    env: false,
    labels: { lambda: 'catalog publish --recover' },
    use: { publish: 'default' },
  }),
  allowEmpty: setting({
    kind: boolean,
    description: 'publish a catalog with no plans',
    default: false,
    use: { publish: 'default', lambda: 'default' },
  }),
  minRatio: setting({
    kind: decimal(0, 1, 'ratio'),
    description: 'refuse fewer plans than this share of the live count (0–1)',
    default: 0.5,
    use: { publish: 'default', lambda: 'default', cdk: 'optional' },
  }),
  keepBuilds: setting({
    kind: integer(1, 1000),
    description: 'earlier builds kept for rollback',
    default: 20,
    flag: '--keep',
    env: 'CATALOG_KEEP',
    use: { publish: 'default', lambda: 'default', cdk: 'optional' },
  }),
  s3PathStyle: setting({
    kind: boolean,
    description: 'path-style S3 addressing (S3-compatible stores, test servers)',
    default: false,
    use: {
      publish: 'default',
      builds: 'default',
      history: 'default',
      rollback: 'default',
      unpin: 'default',
      status: 'default',
      lambda: 'default',
    },
  }),
  region: setting({
    kind: text(
      'region',
      z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, { error: 'must be an AWS region such as eu-west-1' }),
    ),
    description:
      "AWS region (default: the SDK's chain: AWS_REGION, then the profile's region; with --deployment, the stack's)",
    env: false,
    use: deploymentUse,
  }),
  maxAttempts: setting({
    kind: integer(1, 10),
    description: 'attempts per AWS request (retries back off on throttling and 5xx)',
    default: 5,
    use: {
      publish: 'default',
      builds: 'default',
      history: 'default',
      rollback: 'default',
      unpin: 'default',
      status: 'default',
      rebuild: 'default',
      'verify-function': 'default',
      usage: 'default',
      'keys-list': 'default',
      lambda: 'default',
    },
  }),
  to: setting({
    kind: text(
      'build',
      z.string().regex(BUILD_ID_PATTERN, { error: 'must be a build id (see catalog builds)' }),
    ),
    description: 'the build to make live and pin (default: the one before the live build)',
    env: 'CATALOG_ROLLBACK_TO',
    use: { rollback: 'optional' },
  }),
  function: setting({
    kind: text(
      'name',
      z.string().regex(/^[A-Za-z0-9_:.$-]{1,170}$/, { error: 'must be a Lambda function name or ARN' }),
    ),
    description: 'the builder function name or ARN',
    env: 'CATALOG_FUNCTION_NAME',
    output: 'BuilderFunctionName',
    use: { rebuild: 'required' },
  }),

  // The local edge and the key-value store.
  origin: setting({
    kind: text('dir|s3://bucket'),
    description: 'origin: a directory (publishing: with --store), or an S3 bucket (s3://name) to serve',
    default: LOCAL_STACK.origin,
    use: {
      serve: 'default',
      publish: 'optional',
      builds: 'optional',
      history: 'optional',
      rollback: 'optional',
      unpin: 'optional',
      status: 'optional',
    },
  }),
  endpoint: setting({
    kind: text('url', z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    description: 'S3-compatible endpoint for an s3:// origin',
    env: 'CATALOG_S3_ENDPOINT',
    use: { serve: 'optional' },
  }),
  store: setting({
    kind: text('file'),
    description: 'local key-value store file (keys and CORS), the one catalog serve reads',
    default: LOCAL_STACK.store,
    use: {
      serve: 'default',
      ...storeUse,
      publish: 'optional',
      builds: 'optional',
      history: 'optional',
      rollback: 'optional',
      unpin: 'optional',
      status: 'optional',
    },
  }),
  kvsArn: setting({
    kind: text('arn', KvsArn),
    description:
      'CloudFront KeyValueStore ARN (keys, the CORS origin and the live build), instead of --store',
    output: 'KeyValueStoreArn',
    use: {
      publish: 'optional',
      builds: 'optional',
      history: 'optional',
      rollback: 'optional',
      unpin: 'optional',
      status: 'optional',
      lambda: 'required',
      'keys-issue': 'optional',
      'keys-rotate': 'optional',
      'keys-revoke': 'optional',
      'keys-list': 'optional',
      'cors-set': 'optional',
      'cors-clear': 'optional',
      'cors-show': 'optional',
    },
  }),
  port: setting({
    kind: integer(0, 65535, 'n'),
    description: 'port (0 picks a free one)',
    default: 8787,
    use: { serve: 'default', start: 'default' },
  }),
  host: setting({
    kind: text('host'),
    description: 'interface to listen on',
    default: '127.0.0.1',
    use: { serve: 'default', start: 'default' },
  }),

  // Keys.
  partner: setting({
    kind: text('label', PartnerLabel),
    description: 'partner label: a-z, 0-9 and -, up to 64',
    use: { 'keys-issue': 'required', 'keys-rotate': 'required', 'keys-revoke': 'optional' },
  }),
  expires: setting({
    kind: text('when'),
    description: 'ISO 8601 time, or a duration from now such as 90d',
    use: { 'keys-issue': 'optional' },
  }),
  grace: setting({
    kind: parsed('duration', z.string().pipe(Duration), (ms) => `${Math.round(ms / 1000)}s`),
    description: 'how long the old keys keep working, such as 7d',
    use: { 'keys-rotate': 'required' },
  }),
  keyId: setting({
    kind: text('id', KeyIdInput),
    description: 'the key id keys list shows (never the key itself)',
    use: { 'keys-revoke': 'optional' },
  }),
  after: setting({
    kind: parsed('duration', z.string().pipe(Duration), (ms) => `${Math.round(ms / 1000)}s`),
    description: 'keep the keys working this long, such as 1h',
    use: { 'keys-revoke': 'optional' },
  }),
  json: setting({
    kind: boolean,
    description: 'print JSON instead of a table, and no progress line',
    default: false,
    use: {
      build: 'default',
      publish: 'default',
      rollback: 'default',
      'keys-list': 'default',
      status: 'default',
      history: 'default',
      check: 'default',
      usage: 'default',
    },
  }),
  historyLimit: setting({
    kind: integer(1, 10000),
    description: 'how many moves of the live pointer to show, newest first',
    default: 20,
    flag: '--limit',
    use: { history: 'default' },
  }),

  // verify-function (keys are checked by the command, never echoed).
  viewerRequestFunction: setting({
    kind: text(
      'name',
      z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, {
        error: 'must be a CloudFront function name (1–64 of A-Z, a-z, 0-9, - and _)',
      }),
    ),
    description: 'the viewer-request function (stack output ViewerRequestFunctionName)',
    flag: '--name',
    output: 'ViewerRequestFunctionName',
    use: { 'verify-function': 'required' },
  }),
  stage: setting({
    kind: text(
      'stage',
      z
        .string()
        .transform((value) => value.toUpperCase())
        .pipe(z.enum(['DEVELOPMENT', 'LIVE'], { error: 'must be DEVELOPMENT or LIVE' })),
    ),
    description: 'DEVELOPMENT or LIVE (the stage serving traffic)',
    default: 'LIVE',
    env: 'CATALOG_FUNCTION_STAGE',
    use: { 'verify-function': 'default' },
  }),
  key: setting({
    kind: list(z.string(), 'key'),
    description:
      'a valid key of the deployed store; repeat for a second partner. Prefer the variable: arguments show in ps and shell history',
    env: 'CATALOG_VERIFY_KEYS',
    secret: true,
    repeatable: true,
    default: [],
    use: { 'verify-function': 'default' },
  }),
  expiredKey: setting({
    kind: text('key'),
    description: 'a key whose expiry has passed (else its cases are skipped)',
    env: 'CATALOG_VERIFY_EXPIRED_KEY',
    secret: true,
    use: { 'verify-function': 'optional' },
  }),
  revokedKey: setting({
    kind: text('key'),
    description: 'a key that was revoked (else its cases are skipped)',
    env: 'CATALOG_VERIFY_REVOKED_KEY',
    secret: true,
    use: { 'verify-function': 'optional' },
  }),

  // The stack (CDK context keys; see infra/README.md).
  stackName: setting({
    kind: text(
      'name',
      z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,47}$/, {
        error: 'must be a CloudFormation stack name of at most 48 characters (letters, digits, -)',
      }),
    ),
    description: 'the stack name (function names derive from it)',
    default: 'TrainingPlanCatalog',
    use: { cdk: 'default' },
  }),
  domainName: setting({
    kind: text(
      'host',
      z.string().regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, {
        error: 'must be one lowercase host name such as catalog.example.com',
      }),
    ),
    description: 'custom domain name of the API (needs certificateArn)',
    use: { cdk: 'optional' },
  }),
  certificateArn: setting({
    kind: text(
      'arn',
      arn(
        'acm',
        /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]{36}$/,
        'an ACM certificate ARN',
      ),
    ),
    description: 'ACM certificate in us-east-1 covering domainName',
    use: { cdk: 'optional' },
    production: (value) =>
      /:acm:us-east-1:/.test(value)
        ? undefined
        : `is in ${value.split(':')[3]}; CloudFront only uses certificates in us-east-1`,
  }),
  priceClass: setting({
    kind: oneOf(['100', '200', 'All'], 'class'),
    description: 'edge locations: 100 (North America, Europe), 200 (adds most of Asia), All',
    default: '100',
    use: { cdk: 'default' },
  }),
  accessLogging: setting({
    kind: boolean,
    description: 'write CloudFront standard access logs',
    default: false,
    use: { cdk: 'default' },
  }),
  usageLogging: setting({
    kind: boolean,
    description:
      'deliver standard logs (v2) with the fields catalog usage reads to a CloudWatch Logs group (docs/decisions.md#usage)',
    default: true,
    use: { cdk: 'default' },
  }),
  usageLogRetentionDays: setting({
    kind: {
      ...integer(1, 3653, 'days'),
      schema: integer(1, 3653, 'days').schema.refine((days) => LOG_RETENTION_DAYS.includes(days), {
        error: `must be one of the retention periods CloudWatch Logs offers: ${LOG_RETENTION_DAYS.join(', ')}`,
      }),
    },
    description: 'days the usage log group keeps its records (how far back catalog usage can look)',
    default: 400,
    use: { cdk: 'default' },
  }),
  accessLogBucketName: setting({
    kind: text('name', bucketName),
    description: 'existing bucket (ACLs enabled) for the access logs, with accessLogging',
    use: { cdk: 'optional' },
  }),
  accessLogRetentionDays: setting({
    kind: integer(1, 3650, 'days'),
    description: 'days the access logs are kept in the bucket this stack creates for them (default 90)',
    // Optional, so a value given with accessLogBucketName (where it cannot apply) is refused.
    default: 90,
    use: { cdk: 'optional' },
  }),
  errorCachingMinTtlSeconds: setting({
    kind: integer(0, 300, 'seconds'),
    description: 'how long an edge keeps an error answer (a long TTL hides a recovered origin)',
    default: 10,
    use: { cdk: 'default' },
  }),
  noncurrentVersionExpiryDays: setting({
    kind: integer(1, 3650, 'days'),
    description: 'days an overwritten or deleted object version is kept in the origin bucket',
    default: 30,
    use: { cdk: 'default' },
  }),
  kvsSeedFile: setting({
    kind: text('file'),
    description:
      'KeyValueStore import file seeding the store when it is CREATED (never change it afterwards)',
    use: { cdk: 'optional' },
  }),
  buildRateMinutes: setting({
    kind: integer(5, 1440, 'minutes'),
    description:
      'how often the scheduler runs the builder, in whole minutes (each run reads the whole source)',
    default: 60,
    use: { cdk: 'default' },
  }),
  // Sized from the measured cost of a publish: infra/README.md, "Sizing the builder".
  builderTimeoutSeconds: setting({
    kind: integer(10, 900, 'seconds'),
    description:
      'the builder timeout, shorter than the build rate (a 30,000-plan publish takes about a third)',
    default: 300,
    use: { cdk: 'default' },
  }),
  builderMemoryMiB: setting({
    kind: integer(128, 10240, 'MiB'),
    description: 'the builder memory, and so its CPU share (1,769 MiB is one vCPU)',
    default: 2048,
    use: { cdk: 'default' },
  }),
  vpcId: setting({
    kind: text('id', z.string().regex(/^vpc-[0-9a-f]{8,17}$/, { error: 'must be vpc-…' })),
    description: 'run the builder in this VPC (with subnetIds), e.g. to reach a private PostgreSQL',
    use: { cdk: 'optional' },
  }),
  subnetIds: setting({
    kind: list(z.string().regex(/^subnet-[0-9a-f]{8,17}$/, { error: 'must be subnet-…' }), 'ids'),
    description: 'private subnets of the builder, with a NAT route (CloudFront has no VPC endpoint)',
    use: { cdk: 'optional' },
  }),
  securityGroupIds: setting({
    kind: list(z.string().regex(/^sg-[0-9a-f]{8,17}$/, { error: 'must be sg-…' }), 'ids'),
    description: 'security groups of the builder (default: a new one, all outbound, no inbound)',
    use: { cdk: 'optional' },
  }),
  alarmTopicArn: setting({
    kind: text(
      'arn',
      arn('sns', /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'an SNS topic ARN'),
    ),
    description: 'SNS topic the alarms notify (default: a new topic AlarmTopic)',
    use: { cdk: 'optional' },
  }),

  // Operations: alarms, CloudFront's additional metrics, per-key rate limits (infra/README.md).
  scheduleEnabled: setting({
    kind: boolean,
    description:
      'run the builder on its schedule; false keeps the schedule disabled and the no-successful-run alarm quiet',
    default: true,
    use: { cdk: 'default' },
  }),
  catalogAgeAlarmSeconds: setting({
    kind: integer(3600, 31536000, 'seconds'),
    description:
      'alarm when the live catalog is older than this after a run (set it above the longest the source goes unchanged)',
    default: 7 * 24 * 3600,
    use: { cdk: 'default' },
  }),
  additionalCloudFrontMetrics: setting({
    kind: boolean,
    description:
      "turn on CloudFront's additional distribution metrics (401/403/404/502/503/504 rates, cache hit rate, origin latency; billed per metric)",
    default: false,
    use: { cdk: 'default' },
  }),
  rateLimitPerKey: setting({
    kind: integer(10, 2_000_000_000, 'requests'),
    description:
      'requests one X-Api-Key may make per rateLimitWindowSeconds; adds an AWS WAF web ACL answering 429 (off when unset)',
    use: { cdk: 'optional' },
  }),
  rateLimitWindowSeconds: setting({
    kind: wafWindow,
    description:
      'the window of rateLimitPerKey: 60, 120, 300 or 600 seconds (the only windows AWS WAF offers)',
    // Optional, so a window given without rateLimitPerKey (where it cannot apply) is refused.
    default: 300,
    use: { cdk: 'optional' },
  }),

  // The partner proxy (catalog proxy): the partner's side, so its own names and defaults.
  upstream: setting({
    kind: text('url', z.string().pipe(BaseUrl)),
    description: "the catalog service's base URL, http(s)://host[:port]",
    redact: redactUrl,
    use: { proxy: 'required' },
  }),
  partnerKey: setting({
    kind: text('key'),
    description: 'the API key the proxy sends to the service (never a flag, never logged)',
    flag: false,
    env: 'CATALOG_PARTNER_KEY',
    secret: true,
    use: { proxy: 'required' },
  }),
  proxyPort: setting({
    kind: integer(0, 65535, 'n'),
    description: 'port the proxy listens on (0 picks a free one)',
    default: 8788,
    flag: '--port',
    use: { proxy: 'default' },
  }),
  proxyHost: setting({
    kind: text('host'),
    description: 'interface the proxy listens on',
    default: '127.0.0.1',
    flag: '--host',
    use: { proxy: 'default' },
  }),
  cacheFile: setting({
    kind: text('file'),
    description:
      "file holding the proxy's last good copy and its change history, so a restart does not start empty",
    default: '.catalog/proxy-cache.json',
    use: { proxy: 'default' },
  }),
  refreshSeconds: setting({
    kind: integer(5, 86_400, 'seconds'),
    description:
      "seconds between the proxy's refreshes, at least 5 (default: as long as the service's Cache-Control max-age says, 300 today)",
    use: { proxy: 'optional' },
  }),
  changesKept: setting({
    kind: integer(1, 10_000, 'n'),
    description:
      'how many change sets the proxy keeps for GET /changes?since=N (older ones answer 410: resync from /plans.json)',
    default: 100,
    use: { proxy: 'default' },
  }),
  notify: setting({
    kind: text(
      'url',
      z.string().regex(/^https?:\/\/[^\s/?#@]+(?:[/?][^\s#]*)?$/, {
        error: 'must be an http(s):// URL without user:password@ or a #fragment',
      }),
    ),
    description:
      "URL of the partner's application the proxy POSTs each new change set to (JSON), retried with back-off until it answers 2xx",
    env: 'CATALOG_NOTIFY_URL',
    redact: redactUrl,
    use: { proxy: 'optional' },
  }),

  // -------------------------------------------------------------------------------------------------------
  // Operations: `catalog status`, and the builder's propagation check after a pointer move
  // (docs/decisions.md#operations). Their contexts are also listed on bucket, kvsArn, origin, store, region,
  // maxAttempts, s3PathStyle and json above.
  maxAge: setting({
    kind: parsed('duration', z.string().pipe(Duration), formatDuration),
    description:
      'catalog status: degraded when the catalog was last built or confirmed against the source longer ago than this; catalog check: a warning when the served generatedAt is older',
    default: 25 * 3_600_000,
    use: { status: 'default', check: 'default' },
  }),

  // `catalog usage` and `catalog keys list --usage` (docs/decisions.md#usage). --json, --region and
  // --max-attempts are declared above.
  since: setting({
    kind: parsed('duration', z.string().pipe(Duration), formatDuration),
    description: 'how far back to count, such as 30d (up to the log group retention on AWS)',
    default: 30 * 86_400_000,
    use: { usage: 'default', 'keys-list': 'default' },
  }),
  accessLog: setting({
    kind: text('file'),
    description: 'a catalog serve access log to read (- for standard input) instead of the AWS log group',
    use: { usage: 'optional', 'keys-list': 'optional' },
  }),
  usageLogGroup: setting({
    kind: text(
      'name',
      z.string().regex(/^[A-Za-z0-9_./#-]{1,512}$/, {
        error: 'must be a CloudWatch Logs group name (stack output UsageLogGroupName)',
      }),
    ),
    description:
      'the log group the distribution delivers its usage records to (stack output UsageLogGroupName)',
    flag: '--log-group',
    output: 'UsageLogGroupName',
    use: { usage: 'optional', 'keys-list': 'optional' },
  }),

  withUsage: setting({
    kind: boolean,
    description:
      "add when each key's partner was last seen, from --access-log or --log-group (usage names partners, not keys)",
    default: false,
    flag: '--usage',
    env: false,
    use: { 'keys-list': 'default' },
  }),

  // `catalog check`: a deployment, row by row, from outside (docs/decisions.md#checking-a-deployment). The base
  // URL, --json and --max-age are declared above.
  checkKey: setting({
    kind: text(
      'key',
      z.string().regex(KEY_PATTERN, {
        error: 'is not an API key (tpc_ and 43 base64url characters); the value is not shown',
      }),
    ),
    description: 'the API key catalog check sends (never a flag, never printed)',
    flag: false,
    env: 'CATALOG_CHECK_KEY',
    secret: true,
    use: { check: 'required' },
  }),
  corsOrigin: setting({
    kind: text(
      'origin|off',
      z.string().transform((value, ctx) => {
        if (value === 'off') return null;
        const problem = originProblem(value);
        if (problem === undefined) return value;
        ctx.addIssue({ code: 'custom', message: `${problem} (or off: no CORS origin is set)` });
        return z.NEVER;
      }),
    ),
    description:
      'the CORS origin the operator set (catalog cors show), or off; not given: the CORS rows are skipped',
    use: { check: 'optional' },
  }),
  checkTimeout: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description: 'catalog check: the deadline of each answer, from connecting to its last byte',
    default: 10_000,
    flag: '--timeout',
    use: { check: 'default' },
  }),
  monitoringKeySecretArn: setting({
    kind: text(
      'arn',
      arn(
        'secretsmanager',
        /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/,
        'the complete ARN of a Secrets Manager secret, ending in -XXXXXX',
      ),
    ),
    description:
      'Secrets Manager secret holding an API key (the secret string is the key) with which the builder measures, after a publish, how long the edge takes to serve the new build; unset: not measured',
    flag: false,
    use: { lambda: 'optional', cdk: 'optional' },
  }),
  propagationMaxWait: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description:
      'how long the builder waits, after a publish, for the edge to serve the new build before it records a timeout',
    default: 120_000,
    flag: false,
    use: { lambda: 'default', cdk: 'optional' },
  }),
  propagationInterval: setting({
    kind: parsed('duration', TimeoutMs, formatMs),
    description: 'how often the builder asks the edge which build it serves while it waits',
    default: 5_000,
    flag: false,
    use: { lambda: 'default', cdk: 'optional' },
  }),
} as const;

/** A duration as the shortest exact text with a unit d, h, m or s (`25h`, `7d`, `90s`). */
function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

export type Registry = typeof SETTINGS;
export type SettingName = keyof Registry;
