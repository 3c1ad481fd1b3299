/**
 * Where the commands of the docs run (testing/doc-commands.ts reads them), and what their placeholders stand
 * for. The reader's shell is played faithfully: a working directory that looks like the repository's root
 * (its folders linked in) with a `.catalog/` of its own, the local target in it, and, for the AWS commands,
 * the local peers of the tests: s3rver for the bucket, the KeyValueStore stand-in (testing/kvs.ts), a Lambda
 * stand-in for `catalog rebuild` that answers a builder's summary, and the CloudFront TestFunction stand-in
 * (testing/cloudfront.ts) for `catalog verify-function`, `publish-functions` and the functions' rows of `catalog
 * status`, reached through the SDK's endpoint variables. Both
 * targets hold three published builds.
 *
 * To teach the docs test a new placeholder, variable or flag value, add it to {@link PLACEHOLDERS},
 * {@link VARIABLES} or {@link FLAG_VALUES}; a command that cannot run here at all goes in {@link CHECK_ONLY}
 * with the reason (its arguments are still checked by the real program). Test support only.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { inject } from 'vitest';
import { KVS_LIVE_BUILD } from '../contract/index.ts';
import { loadFunction, VIEWER_RESPONSE_RUNTIME } from '../gateway/local/sandbox.ts';
import {
  describeStacksAnswer,
  type Recorder,
  startRecorder,
  startS3,
  TEST_AWS_ENV,
  type TestS3,
} from './aws.ts';
import { type CdkAws, type CdkAwsRequest, startCdkAws } from './cdk-aws.ts';
import { EMPTY_STORE, ROOT, runCatalog } from './cli.ts';
import { FakeCloudFront } from './cloudfront.ts';
import {
  type Assignment,
  type CdkCommand,
  type DocCommand,
  literalOf,
  secretReadBy,
  type Word,
} from './doc-commands.ts';
import { type CdkResult, runCdk, scratchCheckout } from './infra/checkout.ts';
import { contextKey, DOC_CONTEXTS, DOC_DEPLOYMENTS, synthesisDone } from './infra/syntheses.ts';
import { FakeKvs, resolveKvsTestHost } from './kvs.ts';
import { builtFunctionCode } from './world.ts';

const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const BUILDER_FUNCTION = 'TrainingPlanCatalog-builder';
const VIEWER_REQUEST_FUNCTION = 'TrainingPlanCatalog-viewer-request';
const VIEWER_RESPONSE_FUNCTION = 'TrainingPlanCatalog-viewer-response';
const BASE_URL = 'https://plans.example.com';
/** The deployment the docs name (`--deployment NAME`): the stack the CloudFormation stand-in describes. */
const DEPLOYMENT = 'TrainingPlanCatalog';
/** The stack's usage log group (stack output UsageLogGroupName). */
const USAGE_LOG_GROUP = '/aws/vendedlogs/TrainingPlanCatalog/usage';
const FIXTURES = join(ROOT, 'fixtures', 'plans.json');
/** The deployment's contact address (stack output ContactAddress). */
const CONTACT_ADDRESS = 'api-keys@trainingplans.app';

/** The targets the docs' commands act on, and the stand-ins for the AWS APIs. */
export interface DocWorld {
  /** The reader's working directory: the repository's folders linked in, its own `.catalog/`. */
  readonly dir: string;
  readonly local: { readonly origin: string; readonly store: string };
  readonly aws: { readonly bucket: string; readonly arn: string; readonly s3: TestS3; readonly kvs: FakeKvs };
  /** The builds published on each target at the start, oldest first. */
  readonly builds: { readonly local: readonly string[]; readonly aws: readonly string[] };
  /** The Lambda API stand-in (`catalog rebuild`); it answers only the builder function's invocations. */
  readonly lambda: Recorder;
  readonly cloudfront: FakeCloudFront;
  /** The CloudWatch Logs API stand-in (`catalog usage --log-group`): every Logs Insights query completes. */
  readonly logs: Recorder;
  /** The CloudFormation API stand-in (`--deployment NAME`): the stack's outputs name the AWS target. */
  readonly cloudFormation: Recorder;
  /** A `catalog serve` access log with requests of two partners and refused ones (`--access-log FILE`). */
  readonly accessLog: string;
  /** The environment every command runs with (the stand-ins' endpoints, credentials, port 0). */
  readonly env: Readonly<Record<string, string>>;
  /** A new empty directory inside the working directory. */
  freshDir(): Promise<string>;
  /** The AWS APIs the CDK CLI calls, stood in for (bootstrap, diff, deploy, destroy). */
  readonly cdkAws: CdkAws;
  /**
   * Runs the CDK CLI (`npm run cdk -- …args`) in the checkout: the app synthesizes once per context the docs
   * give it, as the CLI runs it, offline (once per test run for the contexts of DOC_CONTEXTS, shared with the
   * infra tests: testing/infra/global-setup.ts); the command then runs on that assembly against the AWS stand-in.
   */
  cdk(args: readonly string[], env: Readonly<Record<string, string>>): Promise<CdkRun>;
  /** Runs `catalog keys …args` on a target with the real command (what a placeholder arranges). */
  keys(target: Target, args: readonly string[]): Promise<{ stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/** What a CDK command did: its exit code and output, and the requests it sent to the AWS stand-in. */
export interface CdkRun extends CdkResult {
  readonly requests: readonly CdkAwsRequest[];
}

/** The target a command acts on. */
export type Target = { readonly kind: 'aws' } | { readonly kind: 'local'; readonly store: string };

/** A TCP port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** Publishes the fixtures three times (forced: three builds) with the real command; returns their ids. */
async function seedBuilds(target: readonly string[], env: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const result = await runCatalog(
      ['publish', ...target, '--source', FIXTURES, '--base-url', BASE_URL, '--force'],
      { env },
    );
    if (result.code !== 0) throw new Error(`seeding a build failed: ${result.stderr}`);
    ids.push(String((JSON.parse(result.stdout) as { buildId: string }).buildId));
  }
  return ids;
}

/**
 * Starts the world: the working directory, s3rver, the stand-ins, three builds on each target. The caller
 * changes into {@link DocWorld.dir} to run the commands (a reader runs them from the repository's root).
 */
export async function startDocWorld(): Promise<DocWorld> {
  const checkout = await scratchCheckout(DOC_DEPLOYMENTS);
  const { dir } = checkout;
  await mkdir(join(dir, '.catalog'), { recursive: true });
  const local = { origin: join(dir, '.catalog', 'origin'), store: join(dir, '.catalog', 'kvs.json') };
  // The store `npm start` makes: the local commands read it, and refuse one that is not there.
  await writeFile(local.store, EMPTY_STORE);

  const undoDns = resolveKvsTestHost();
  const s3 = await startS3();
  const kvs = new FakeKvs(KVS_ARN);
  await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
  const kvsPort = (kvs.server.address() as { port: number }).port;

  const lambda = await startRecorder();
  lambda.answerWith((request) =>
    request.method === 'POST' &&
    request.url === `/2015-03-31/functions/${encodeURIComponent(BUILDER_FUNCTION)}/invocations`
      ? {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            command: 'publish',
            result: 'skipped-identical',
            buildId: kvs.entries.get(KVS_LIVE_BUILD) ?? '',
          }),
        }
      : {
          status: 404,
          headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' },
          body: JSON.stringify({ message: `Function not found: ${request.url}` }),
        },
  );
  // The deployed viewer-request function: the built bundle over the KeyValueStore stand-in's entries.
  const code = await builtFunctionCode('viewer-request');
  const reader = { refresh: () => undefined, peek: (key: string) => kvs.entries.get(key) };
  const cloudfront = new FakeCloudFront(loadFunction(code, { kvs: reader }), VIEWER_REQUEST_FUNCTION);
  // The viewer-response function holds a release in DEVELOPMENT (publishFunctions false): what catalog status
  // shows and catalog publish-functions publishes.
  const responseCode = await builtFunctionCode('viewer-response');
  const responseFunction = loadFunction(responseCode, { kvs: reader, ...VIEWER_RESPONSE_RUNTIME });
  cloudfront.define(VIEWER_RESPONSE_FUNCTION, {
    development: { code: responseCode, fn: responseFunction },
    live: { code: `${responseCode}\n// the code partners are served`, fn: responseFunction },
  });
  const cloudfrontUrl = await cloudfront.start();
  const logs = await startRecorder();
  logs.answerWith((request) => {
    const json = { 'content-type': 'application/x-amz-json-1.1' };
    const target = request.headers['x-amz-target'];
    if (target === 'Logs_20140328.StartQuery')
      return { status: 200, headers: json, body: '{"queryId":"q-docs"}' };
    if (target === 'Logs_20140328.GetQueryResults')
      return {
        status: 200,
        headers: json,
        body: JSON.stringify({
          status: 'Complete',
          results: [
            [
              { field: 'data', value: 'acme' },
              { field: 'status', value: '200' },
              { field: 'requests', value: '3' },
              { field: 'bytes', value: '4200' },
              { field: 'first', value: '2026-11-01 10:00:00.000' },
              { field: 'last', value: '2026-11-02 10:00:00.000' },
            ],
          ],
        }),
      };
    return { status: 400, headers: json, body: '{"__type":"InvalidParameterException","message":"unknown"}' };
  });
  const cdkAws = await startCdkAws();
  const cloudFormation = await startRecorder();
  cloudFormation.answerWith((request) => {
    const stack = new URLSearchParams(request.body).get('StackName') ?? '';
    return stack === DEPLOYMENT
      ? describeStacksAnswer(stack, {
          ApiUrl: BASE_URL,
          BucketName: s3.bucket,
          KeyValueStoreArn: KVS_ARN,
          BuilderFunctionName: BUILDER_FUNCTION,
          ViewerRequestFunctionName: VIEWER_REQUEST_FUNCTION,
          ViewerResponseFunctionName: VIEWER_RESPONSE_FUNCTION,
          UsageLogGroupName: USAGE_LOG_GROUP,
          ContactAddress: CONTACT_ADDRESS,
        })
      : describeStacksAnswer(stack);
  });
  const accessLog = join(dir, '.catalog', 'access.log');
  const now = Date.now();
  const line = (ago: number, status: number, logData: string) =>
    JSON.stringify({
      time: new Date(now - ago).toISOString(),
      method: 'GET',
      path: '/api/plans',
      status,
      bytes: 100,
      ms: 1,
      partner: null,
      logData,
    });
  await writeFile(
    accessLog,
    `${[line(60_000, 200, 'acme'), line(50_000, 200, 'globex'), line(40_000, 401, 'no-key'), line(30_000, 401, 'globex.expired-key')].join('\n')}\n`,
  );

  const env: Record<string, string> = {
    ...TEST_AWS_ENV,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    CATALOG_S3_PATH_STYLE: '1',
    AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${kvsPort}`,
    AWS_ENDPOINT_URL_LAMBDA: lambda.url,
    AWS_ENDPOINT_URL_CLOUDFRONT: cloudfrontUrl,
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: logs.url,
    AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url,
    AWS_EC2_METADATA_DISABLED: 'true',
    // Never the fixed 8787: a command that does not name a port takes any free one.
    CATALOG_PORT: '0',
  };
  const builds = {
    local: await seedBuilds(['--origin', local.origin, '--store', local.store], env),
    aws: await seedBuilds(
      ['--bucket', s3.bucket, '--kvs-arn', KVS_ARN, '--contact-address', CONTACT_ADDRESS],
      env,
    ),
  };
  let dirs = 0;
  /**
   * The cloud assembly the app made for each context the docs give the CLI, by that context: the run's shared
   * synthesis of it (testing/infra/syntheses.ts, DOC_CONTEXTS), else one made here.
   */
  const assemblies = new Map<string, Promise<CdkRun & { readonly dir: string }>>();
  /** The CDK commands run so far, by their arguments, environment and the AWS stand-in's state before them. */
  const runs = new Map<string, { readonly run: CdkRun; readonly after: string }>();
  const synthesized = (context: readonly string[]) => {
    const key = contextKey(context);
    let made = assemblies.get(key);
    if (!made) {
      const shared = DOC_CONTEXTS[key];
      const out = join(checkout.scratch, `assembly-${assemblies.size}`);
      made = shared
        ? synthesisDone(inject('infraSynthDir'), shared).then(({ code, output, outdir }) => ({
            code,
            stdout: '',
            stderr: output,
            requests: [],
            dir: outdir,
          }))
        : runCdk(checkout, [
            'synth',
            '--quiet',
            ...context.flatMap((pair) => ['-c', pair]),
            '--output',
            out,
          ]).then((result) => ({ ...result, requests: [], dir: out }));
      assemblies.set(key, made);
    }
    return made;
  };
  return {
    dir,
    local,
    aws: { bucket: s3.bucket, arn: KVS_ARN, s3, kvs },
    builds,
    lambda,
    cloudfront,
    logs,
    cloudFormation,
    accessLog,
    env,
    async freshDir() {
      dirs += 1;
      const made = join(dir, `out-${dirs}`);
      await mkdir(made);
      return made;
    },
    cdkAws,
    async cdk(args, env) {
      const context = contextOf(args);
      const assembly = await synthesized(context);
      if (assembly.code !== 0) return assembly;
      // The same command with the same environment, on the AWS stand-in as it was when it ran before, is that
      // run again (a doc repeats `deploy --all` after each change): its outcome and requests, and the state it left.
      const key = JSON.stringify([args, Object.entries(env).sort(), cdkAws.state()]);
      const ran = runs.get(key);
      if (ran) {
        cdkAws.restore(ran.after);
        return ran.run;
      }
      const verb = args.find((arg) => !arg.startsWith('-'));
      const before = cdkAws.requests.length;
      const result = await runCdk(
        checkout,
        [
          ...args,
          '--app',
          assembly.dir,
          // The answer an operator gives at the terminal, which this run has not.
          ...(verb === 'deploy' ? ['--require-approval', 'never'] : []),
          ...(verb === 'destroy' ? ['--force'] : []),
        ],
        {
          ...env,
          AWS_ACCESS_KEY_ID: 'AKIDOPERATOR',
          AWS_SECRET_ACCESS_KEY: 'operator-secret',
          AWS_REGION: env.AWS_REGION ?? 'us-east-1',
          AWS_ENDPOINT_URL: cdkAws.url,
        },
      );
      const run = { ...result, requests: cdkAws.requests.slice(before) };
      runs.set(key, { run, after: cdkAws.state() });
      return run;
    },
    async keys(target, args) {
      const where = target.kind === 'aws' ? ['--kvs-arn', KVS_ARN] : ['--store', target.store];
      const result = await runCatalog(['keys', ...args, ...where], { env });
      if (result.code !== 0) throw new Error(`catalog keys ${args.join(' ')}: ${result.stderr}`);
      return result;
    },
    async close() {
      undoDns();
      await cloudfront.stop();
      await lambda.close();
      await logs.close();
      await cloudFormation.close();
      await cdkAws.close();
      await new Promise<void>((resolve) => kvs.server.close(() => resolve()));
      await s3.stop();
      await checkout.remove();
    },
  };
}

/** The words `npm run synth` gives the CDK CLI: package.json's script after `cdk`. */
function synthScriptArgs(): string[] {
  const script = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { synth: string } }
  ).scripts.synth;
  const words = /\bcdk\s+(.*)$/.exec(script)?.[1];
  if (words === undefined) throw new Error(`package.json synth runs no cdk: ${script}`);
  return words.split(/\s+/);
}

/** The `-c KEY=VALUE` pairs of a CDK command line (`--context` too), in order. */
export function contextOf(args: readonly string[]): string[] {
  const pairs: string[] = [];
  args.forEach((arg, index) => {
    if ((arg === '-c' || arg === '--context') && args[index + 1] !== undefined)
      pairs.push(args[index + 1] as string);
    else if (arg.startsWith('--context=')) pairs.push(arg.slice('--context='.length));
  });
  return pairs;
}

/** What a placeholder's value may depend on. */
export interface PlaceholderContext {
  readonly world: DocWorld;
  /** The target of the command it appears in. */
  readonly target: Target;
}

type Value = (context: PlaceholderContext) => string | Promise<string>;

/** A partner that has a key on the command's target (one is issued when it has none). */
function partnerWithKeys(partner: string): Value {
  return async ({ world, target }) => {
    const listed = JSON.parse((await world.keys(target, ['list', '--json'])).stdout || '[]') as {
      partner: string | null;
    }[];
    if (!listed.some((key) => key.partner === partner))
      await world.keys(target, ['issue', '--partner', partner]);
    return partner;
  };
}

/** Placeholder words, by name: `--partner P`, `--key-id ID`, `cors set ORIGIN`. */
export const PLACEHOLDERS: Readonly<Record<string, Value>> = {
  /** A partner with keys. */
  P: partnerWithKeys('acme'),
  /** The id of a key that exists (a new key of another partner than P, so revoking P leaves it). */
  ID: async ({ world, target }) => {
    const { stderr } = await world.keys(target, ['issue', '--partner', 'globex']);
    const id = /issued key ([0-9a-f]{12}) /.exec(stderr)?.[1];
    if (!id) throw new Error(`no key id in: ${stderr}`);
    return id;
  },
  WHEN: () => '30d',
  DURATION: () => '1h',
  ORIGIN: () => 'https://app.partner.example',
  /** An earlier build of the target (the oldest: never the one live after a rollback). */
  BUILD: ({ world, target }) => world.builds[target.kind][0] as string,
  DIR: ({ world }) => world.freshDir(),
  BUCKET: ({ world }) => world.aws.bucket,
  ARN: ({ world }) => world.aws.arn,
};

/** A placeholder's value by the flag it follows (`--source …`, `--base-url https://…`, `--endpoint URL`). */
export const FLAG_VALUES: Readonly<Record<string, Value>> = {
  '--source': () => FIXTURES,
  '--base-url': () => BASE_URL,
  '--origin': ({ world }) => world.local.origin,
  '--store': ({ world }) => world.local.store,
  '--out': ({ world }) => world.freshDir(),
  '--endpoint': ({ world }) => world.aws.s3.endpoint,
  '--bucket': ({ world }) => world.aws.bucket,
  '--kvs-arn': ({ world }) => world.aws.arn,
  '--function': () => BUILDER_FUNCTION,
  '--name': () => VIEWER_REQUEST_FUNCTION,
  '--response-name': () => VIEWER_RESPONSE_FUNCTION,
  '--access-log': ({ world }) => world.accessLog,
  '--log-group': () => USAGE_LOG_GROUP,
  '--deployment': () => DEPLOYMENT,
};

/**
 * Shell variables a reader has set (the stack's outputs, infra/README.md) and the docs use without setting,
 * or set to `…` ("your value").
 */
export const VARIABLES: Readonly<Record<string, (world: DocWorld) => string>> = {
  AWS_REGION: () => 'us-east-1',
  DISTRIBUTION_ID: () => 'E2EXAMPLE0DIST',
  BUILD_SCHEDULE: () => 'TrainingPlanCatalog-build',
  CATALOG_PARTNER_KEY: () => 'tpc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  CATALOG_CHECK_KEY: () => 'tpc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  CATALOG_DEPLOYMENT: () => DEPLOYMENT,
  /** The key that leaked (infra/README.md, "A key leaked"). */
  LEAKED: () => 'tpc_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
};

/** A command as it will run: its arguments and environment, resolved. */
export interface ResolvedCommand {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Commands that cannot run here, with why: their arguments are checked by the real program (commander's
 * parsing and the settings' rules), but they are not run.
 */
export const CHECK_ONLY: readonly {
  readonly why: string;
  readonly applies: (run: ResolvedCommand) => boolean;
}[] = [
  {
    why: "it reads a PostgreSQL database at the reader's own address, over TLS with the reader's CA",
    applies: ({ args, env }) => {
      const flag = args.indexOf('--source');
      const source = flag === -1 ? env.CATALOG_SOURCE : args[flag + 1];
      return /^postgres(ql)?:/.test(source ?? '');
    },
  },
  {
    why:
      "it checks the reader's deployed distribution over the network (cli/commands/check.test.ts runs the " +
      'same command against the local edge)',
    applies: ({ args }) => args[0] === 'check',
  },
];

/** Upper-case words that are values, not placeholders (`--stage LIVE`). */
export const LITERAL_WORDS: ReadonlySet<string> = new Set(['LIVE', 'DEVELOPMENT']);

/** A placeholder word: `P`, `BUILD`, anything with `…`. */
function isPlaceholder(text: string): boolean {
  return text.includes('…') || (/^[A-Z][A-Z0-9_]*$/.test(text) && !LITERAL_WORDS.has(text));
}

const EMBEDDED = new RegExp(`(?<![A-Za-z0-9_])(${Object.keys(PLACEHOLDERS).join('|')})(?![A-Za-z0-9_])`, 'g');

/** The shell of one document: its variables, what it exported, and the files its commands wrote. */
export class DocShell {
  readonly #world: DocWorld;
  readonly #variables = new Map<string, string | Error>();
  readonly #exported = new Set<string>();
  readonly #files = new Map<string, string>();
  readonly #secrets = new Map<string, string>();

  constructor(world: DocWorld) {
    this.#world = world;
  }

  /** Applies `NAME=value` as the shell would; `…` in the value means "the reader's own value". */
  assign(assignment: Assignment, where: string): void {
    let value: string | Error;
    try {
      value = this.#expand(assignment.value, where).join(' ');
    } catch (error) {
      value = error as Error;
    }
    if (typeof value === 'string' && value.includes('…')) {
      const known = VARIABLES[assignment.name];
      value = known
        ? known(this.#world)
        : new Error(
            `${where}: ${assignment.name}=${value}: add ${assignment.name} to VARIABLES in testing/doc-world.ts`,
          );
    }
    if (assignment.exported && value instanceof Error) throw value;
    this.#variables.set(assignment.name, value);
    if (assignment.exported) this.#exported.add(assignment.name);
  }

  /** The words a shell word becomes: variables and `$(cat FILE)` filled in; an unquoted variable is split. */
  #expand(word: Word, where: string): string[] {
    let text = '';
    let split = false;
    for (const part of word.parts) {
      if (part.kind === 'text') text += part.text;
      else if (part.kind === 'var') {
        text += this.#variable(part.name, where);
        if (!part.quoted) split = true;
      } else {
        const cat = /^cat\s+(\S+)$/.exec(part.command);
        const secret = secretReadBy(part.command);
        const file = cat
          ? this.#files.get(cat[1] as string)
          : secret && this.#secrets.get(this.#expand(secret, where).join(' '));
        if (file === undefined)
          throw new Error(
            `${where}: $(${part.command}): only $(cat FILE) of a file, or $(aws secretsmanager get-secret-value --secret-id NAME …) of a secret, an earlier command wrote`,
          );
        text += file.replace(/\n+$/, '');
      }
    }
    return split ? text.split(/\s+/).filter((field) => field !== '') : [text];
  }

  #variable(name: string, where: string): string {
    const value = this.#variables.get(name);
    if (value instanceof Error) throw value;
    if (value !== undefined) return value;
    const known = VARIABLES[name];
    if (!known) throw new Error(`${where}: $${name} is never set: set it in the doc, or add it to VARIABLES`);
    return known(this.#world);
  }

  /** The environment of a command: the world's, what the doc exported, and the command's own prefix. */
  #environment(command: Pick<DocCommand, 'env'>, where: string): Record<string, string> {
    const env: Record<string, string> = { ...this.#world.env };
    for (const name of this.#exported) env[name] = this.#variable(name, where);
    for (const assignment of command.env) {
      const value = this.#expand(assignment.value, where).join(' ');
      const known = VARIABLES[assignment.name];
      env[assignment.name] = value.includes('…') && known ? known(this.#world) : value;
    }
    return env;
  }

  /** The target a command acts on, from its flags, then the environment. */
  #target(args: readonly string[], env: Record<string, string>): Target {
    const flag = (name: string) => {
      const index = args.indexOf(name);
      return index === -1 ? undefined : args[index + 1];
    };
    if (
      flag('--kvs-arn') !== undefined ||
      flag('--bucket') !== undefined ||
      flag('--deployment') !== undefined
    )
      return { kind: 'aws' };
    const store = flag('--store');
    if (store !== undefined && !isPlaceholder(store))
      return { kind: 'local', store: isAbsolute(store) ? store : join(this.#world.dir, store) };
    if (
      flag('--origin') === undefined &&
      (env.CATALOG_KVS_ARN || env.CATALOG_BUCKET || env.CATALOG_DEPLOYMENT)
    )
      return { kind: 'aws' };
    return { kind: 'local', store: this.#world.local.store };
  }

  /**
   * Each variant of a command, resolved when it is its turn (a placeholder such as `P` arranges what the
   * command needs, after the variant before it ran): placeholders given values, a named port made a free one.
   */
  async *resolve(command: DocCommand): AsyncGenerator<ResolvedCommand & { readonly port?: number }> {
    const where = `${command.file}:${command.line}`;
    for (const variant of command.variants) {
      const env = this.#environment(command, where);
      // Words as written, expanded; those written literally may be placeholders.
      const words = variant.flatMap((word) => {
        const literal = literalOf(word);
        return this.#expand(word, where).map((text) => ({ text, literal: literal !== undefined }));
      });
      const target = this.#target(
        words.filter((w) => !(w.literal && isPlaceholder(w.text))).map((w) => w.text),
        env,
      );
      const context = { world: this.#world, target };
      const args: string[] = [];
      let port: number | undefined;
      for (const [index, word] of words.entries()) {
        const flag = args[index - 1];
        if (flag === '--port' && /^\d+$/.test(word.text)) {
          // Never the doc's fixed port: a free one, which the command must then name.
          port = await freePort();
          args.push(String(port));
        } else if (word.literal && isPlaceholder(word.text)) {
          const value = (flag !== undefined && FLAG_VALUES[flag]) || PLACEHOLDERS[word.text];
          if (!value)
            throw new Error(
              `${where}: no value for the placeholder ${word.text}${flag ? ` after ${flag}` : ''}: add it to PLACEHOLDERS or FLAG_VALUES in testing/doc-world.ts`,
            );
          args.push(await value(context));
        } else if (word.literal) {
          let text = word.text;
          for (const match of word.text.matchAll(EMBEDDED)) {
            const value = PLACEHOLDERS[match[1] as string] as Value;
            text = text.replace(match[1] as string, await value(context));
          }
          args.push(text);
        } else args.push(word.text);
      }
      yield { args, env, ...(port !== undefined ? { port } : {}) };
    }
  }

  /**
   * A CDK CLI command as it will run: the words after `npm run cdk --` with the doc's variables filled in (for
   * `npm run synth`, package.json's script's own words first), and the variables the doc exported.
   */
  resolveCdk(command: CdkCommand): { readonly args: string[]; readonly env: Record<string, string> } {
    const where = `${command.file}:${command.line}`;
    const written = command.args.flatMap((word) => this.#expand(word, where));
    const script = command.script === 'synth' ? synthScriptArgs() : [];
    const env: Record<string, string> = {};
    for (const name of this.#exported) env[name] = this.#variable(name, where);
    for (const assignment of command.env)
      env[assignment.name] = this.#expand(assignment.value, where).join(' ');
    return { args: [...script, ...written], env };
  }

  /** Keeps what a command printed, for a later `$(cat FILE)` or secret read. */
  wrote(command: DocCommand, stdout: string): void {
    if (command.stdoutTo !== undefined) this.#files.set(command.stdoutTo, stdout);
    if (command.stdoutToSecret !== undefined)
      this.#secrets.set(
        this.#expand(command.stdoutToSecret, `${command.file}:${command.line}`).join(' '),
        stdout,
      );
  }
}
