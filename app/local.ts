/** The local stack (`catalog serve`, `catalog start`): the local edge over an origin and a store, the dev key. */
import { access, chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Catalog } from '../builder/model.ts';
import { DEFAULT_LINKS } from '../builder/model.ts';
import { CatalogError, ConfigError, describeCause, settingRef } from '../contract/errors.ts';
import {
  BUILDS_PREFIX,
  type CanaryBeat,
  KVS_LIVE_BUILD,
  LogValue,
  MANIFEST,
  MONITORING_PARTNER,
  ORIGIN_FILES,
} from '../contract/index.ts';
import { isAlive } from '../files/alive.ts';
import { bucketOf, type OriginStore } from '../publish/origin.ts';
import { LOCAL_STACK, localStackPath, repoRoot } from './paths.ts';
import type { PublishSettings, PublishSummary } from './run.ts';
import { defaultOf, parseSettings } from './settings/index.ts';

export { LOCAL_STACK } from './paths.ts';

/** Where the local edge listens and what it serves: a directory, or `s3://bucket` (at `endpoint`, if given). */
export interface LocalEdgeSettings {
  readonly origin: string;
  readonly endpoint?: string | undefined;
  readonly store: string;
  readonly port: number;
  readonly host: string;
  /** Where the 401 tells partners to ask for a key (default: the local stack's, `contactAddress`'s default). */
  readonly contactAddress?: string | undefined;
}

/** A running local edge; `close` lets requests in flight finish. */
export interface RunningEdge {
  readonly url: string;
  close(): Promise<void>;
}

/** One log entry (the command line writes each as a JSON line on stderr). */
export type LogEntry = object;

/**
 * Whether a log entry is the access-log line of a request of the deployment's own checks (recorded under the
 * monitoring partner: `monitoring`, `monitoring.no-key`…; docs/decisions.md#usage), such as the local
 * canary's: `npm start` keeps those in its access log file, off the terminal.
 */
export function isOwnCheckEntry(entry: LogEntry): boolean {
  const logData = (entry as { logData?: unknown }).logData;
  return (
    typeof logData === 'string' &&
    (logData === MONITORING_PARTNER || logData.startsWith(`${MONITORING_PARTNER}${LogValue.Separator}`))
  );
}

/** What `npm start` advises for another port (npm passes a script's options after `--`). */
const ANOTHER_PORT = 'npm start -- --port 8790';

/**
 * Why the local edge cannot listen on `host`:`port`, said as what happened (the error a listen failed with):
 * the address is not one of this machine's, the host is neither an IP address nor a name the resolver knows,
 * or the port is one this process may not bind. `inUse` says it for a port another program holds. `names` are
 * the settings that chose the host and port (the local edge's `host` and `port`, the proxy's `proxyHost`…).
 */
export function cannotListen(
  host: string,
  port: number,
  error: NodeJS.ErrnoException,
  inUse: string,
  names: { readonly host: string; readonly port: string } = { host: 'host', port: 'port' },
): ConfigError {
  const where = `cannot listen on ${host}:${port}`;
  const other = `give a ${settingRef(names.host)} this machine has, such as 127.0.0.1 (0.0.0.0: all of them)`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(inUse, { cause: error });
    case 'EADDRNOTAVAIL':
      return new ConfigError(`${where}: ${host} is no address of this machine (EADDRNOTAVAIL); ${other}`, {
        cause: error,
      });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return new ConfigError(
        `${where}: ${host} is not an IP address, and no host of that name is known (${error.code}); ${other}`,
        { cause: error },
      );
    case 'EACCES':
      if (port > 0 && port < 1024)
        return new ConfigError(
          `${where}: this process may not use port ${port} (EACCES: below 1024, a port needs privileges); give a ${settingRef(names.port)} from 1024`,
          { cause: error },
        );
      return new ConfigError(`${where}: ${describeCause(error)}`, { cause: error });
    default:
      return new ConfigError(`${where}: ${describeCause(error)}`, { cause: error });
  }
}

/**
 * Refuses a taken port before anything is built: a second `npm start` must not rebuild under a running one.
 * Called once the checkout's own stack is known not to be running: the port is another program's.
 */
async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        cannotListen(
          host,
          port,
          error,
          `${host}:${port} is in use by another program (not this checkout's local stack); stop it, or start on another port: ${ANOTHER_PORT}`,
        ),
      );
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** The record of the `catalog start` serving the local stack (it also holds `since`). */
const RunningStack = z.object({ pid: z.number(), url: z.string() });

async function readRunning(): Promise<z.infer<typeof RunningStack> | null> {
  try {
    return RunningStack.parse(JSON.parse(await readFile(localStackPath(LOCAL_STACK.running), 'utf8')));
  } catch {
    return null;
  }
}

/** The claim of the `catalog start` running now (its process lives), or null. */
async function runningStack(): Promise<z.infer<typeof RunningStack> | null> {
  const held = await readRunning();
  return held && isAlive(held.pid) ? held : null;
}

/** The refusal of a second `npm start` while the first runs, whatever port it asks for: use the first. */
function alreadyRunning(held: z.infer<typeof RunningStack>): ConfigError {
  return new ConfigError(
    `the local stack is already running: process ${held.pid} serves ${held.url} from .catalog/ (one local stack per checkout); use it at ${held.url}, or stop it first (Ctrl-C where it runs, or kill ${held.pid}), then start again`,
  );
}

/** The base URL the running (or last) `catalog start` serves, else the default port's. */
export async function localStackUrl(): Promise<string> {
  return (await readRunning())?.url ?? DEFAULT_LINKS.baseUrl;
}

/**
 * Claims the checkout's one `.catalog/`: refused while another start's process lives, else taken over. The record
 * appears whole or not at all (written aside, then linked). Resolves how to release it.
 */
async function claimLocalStack(url: string): Promise<() => Promise<void>> {
  const file = LOCAL_STACK.running;
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify({ pid: process.pid, url, since: new Date().toISOString() })}\n`);
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await link(temp, file);
        return () => rm(file, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      }
      const held = await runningStack();
      if (held) throw alreadyRunning(held);
      await rm(file, { force: true });
    }
  } finally {
    await rm(temp, { force: true });
  }
}

/** Whether `path` exists (any error but "no such file" counts as existing: a later read says why). */
async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/**
 * What the local edge would serve from `origin` with `store`, judged before it listens
 * (docs/decisions.md#command-line): refused (a {@link ConfigError}) when the origin directory does not exist or
 * is not a directory, when the store file does not exist, and when the origin is a flat `catalog build --out`
 * directory while the store names a live build (every catalog request would be the 500 page: the edge serves a
 * published origin). Resolves warnings for a pair that would serve the 500 page for another reason. An
 * `s3://` origin is not looked at.
 */
export async function checkServable(
  settings: Pick<LocalEdgeSettings, 'origin' | 'store'>,
): Promise<string[]> {
  const { origin, store } = settings;
  const { requireStoreFile, FileKeyValueStore } = await import('../keys/file-store.ts');
  await requireStoreFile(store);
  if (!bucketOf(origin)) {
    const found = await stat(origin).catch((error: NodeJS.ErrnoException) => error);
    if (found instanceof Error) {
      if (found.code === 'ENOENT' || found.code === 'ENOTDIR')
        throw new ConfigError(
          `${settingRef('origin')} ${origin}: does not exist (the local stack's is ${LOCAL_STACK.origin}, which npm start creates); nothing was started`,
        );
      throw new ConfigError(`${settingRef('origin')} ${origin}: cannot be read (${found.message})`);
    }
    if (!found.isDirectory())
      throw new ConfigError(
        `${settingRef('origin')} ${origin}: is not a directory (an origin is a directory, or s3://BUCKET); nothing was started`,
      );
  }
  if (bucketOf(origin)) return [];
  const live = (await new FileKeyValueStore(store).read()).get(KVS_LIVE_BUILD) ?? null;
  const published = await exists(join(origin, BUILDS_PREFIX));
  const flat = !published && (await exists(join(origin, ORIGIN_FILES.all)));
  if (flat)
    throw new ConfigError(
      `${settingRef('origin')} ${origin} is a flat build (catalog build --out), for reading, not a served layout: catalog serve serves a published origin, and every catalog request would be the 500 page. To serve a build, publish it: to the local stack (npm start, or catalog publish --source FILE), or to a new local deployment (catalog keys issue --partner dev --store NEW/kvs.json, then catalog publish --origin NEW/origin --store NEW/kvs.json --source FILE, then catalog serve --origin NEW/origin --store NEW/kvs.json); nothing was started`,
    );
  if (live !== null && !(await exists(join(origin, BUILDS_PREFIX, live, MANIFEST))))
    return [
      `${settingRef('store')} ${store} names the live build ${live}, which ${settingRef('origin')} ${origin} does not hold: every catalog request gets the 500 page (catalog status --origin ${origin} --store ${store} says more)`,
    ];
  if (live === null)
    return [
      `${settingRef('store')} ${store} names no live build: every catalog request gets the 500 page until a publish (catalog publish --origin ${origin} --store ${store} --source FILE)`,
    ];
  return [];
}

/** Starts the local edge and resolves once it listens. */
export async function serveLocal(
  settings: LocalEdgeSettings,
  log: (entry: LogEntry) => void,
): Promise<RunningEdge> {
  const [
    { Edge },
    { WatchedKeyValueStore },
    { EdgeOrigin },
    server,
    { loadBuiltFunction },
    { VIEWER_RESPONSE_RUNTIME },
  ] = await Promise.all([
    import('../gateway/local/edge.ts'),
    import('../gateway/local/store.ts'),
    import('../gateway/local/origin.ts'),
    import('../gateway/local/server.ts'),
    import('../gateway/local/load.ts'),
    import('../gateway/local/sandbox.ts'),
  ]);
  const time = () => new Date().toISOString();
  const kvs = new WatchedKeyValueStore(settings.store, {
    onError: (message) => log({ time: time(), level: 'error', message }),
  });
  await kvs.load();
  const root = repoRoot();
  const functionLog = (line: string) => log({ time: time(), function: line });
  const onStale = (message: string) => log({ time: time(), level: 'warning', message });
  const contactAddress = settings.contactAddress ?? defaultOf('contactAddress');
  const [viewerRequest, viewerResponse] = await Promise.all([
    loadBuiltFunction(root, 'viewer-request', { kvs, log: functionLog, onStale, contactAddress }),
    loadBuiltFunction(root, 'viewer-response', {
      kvs,
      log: functionLog,
      onStale,
      contactAddress,
      ...VIEWER_RESPONSE_RUNTIME,
    }),
  ]);
  const bucket = bucketOf(settings.origin);
  let store: OriginStore;
  if (bucket) {
    const [{ createS3Client }, { S3Origin }] = await Promise.all([
      import('./clients.ts'),
      import('../publish/s3-origin.ts'),
    ]);
    // A local S3-compatible store ignores the region; without an endpoint the SDK's chain decides it.
    const client = createS3Client({
      maxAttempts: 3,
      ...(settings.endpoint ? { region: 'us-east-1', s3PathStyle: true, s3Endpoint: settings.endpoint } : {}),
    });
    store = new S3Origin(client, bucket);
  } else {
    const { DirectoryOrigin } = await import('../publish/dir-origin.ts');
    store = new DirectoryOrigin(settings.origin);
  }
  const origin = new EdgeOrigin(store);
  const { withFixtureCovers } = await import('./covers.ts');
  const edge = withFixtureCovers(new Edge({ viewerRequest, viewerResponse, origin }));
  const http = server.createEdgeServer({ edge, log });
  const address = await server.listen(http, settings.port, settings.host).catch((error: unknown) => {
    throw cannotListen(
      settings.host,
      settings.port,
      error as NodeJS.ErrnoException,
      `${settings.host}:${settings.port} is in use (another catalog serve, npm start, or another program); stop it, or pass another ${settingRef('port')}`,
    );
  });
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, close: () => server.shutdown(http) };
}

/** The local publish: defaults, fixtures, no shrink guard (fixtures edited down are the developer's business). */
function devPublishSettings(host: string, port: number): PublishSettings {
  const defaults = parseSettings('build', () => undefined, String);
  const baseUrl = port === 0 ? defaults.baseUrl : `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    ...defaults,
    source: join(repoRoot(), defaults.source),
    baseUrl,
    allowEmpty: defaultOf('allowEmpty'),
    minRatio: 0,
    keepBuilds: defaultOf('keepBuilds'),
  };
}

export const DEV_PARTNER = 'dev';

/** Reuses the saved dev key while the store still accepts it; otherwise issues a new one and saves it. */
export function ensureDevKey(storePath: string, now: Date): Promise<string> {
  return ensureLocalKey(storePath, DEV_PARTNER, LOCAL_STACK.devKey, now);
}

/** Reuses the key saved in `file` while the store still accepts it; otherwise issues one to `partner` and saves it. */
async function ensureLocalKey(storePath: string, partner: string, file: string, now: Date): Promise<string> {
  const [{ FileKeyValueStore }, { issueKey, lookupKey }] = await Promise.all([
    import('../keys/file-store.ts'),
    import('../keys/manage.ts'),
  ]);
  // The local stack starts its store: the one command besides keys issue and cors set that creates it.
  const store = new FileKeyValueStore(storePath, { create: true });
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (saved !== '') {
    const record = await lookupKey(store, saved);
    if (
      record &&
      record.partner === partner &&
      (!record.expires || Date.parse(record.expires) > now.getTime())
    )
      return saved;
  }
  const issued = await issueKey(store, { partner, now });
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${issued.key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return issued.key;
}

/** The local stack, running: the dev key in clear, how the publish went, one plan's page to try (if any). */
export interface LocalStack {
  /** The edge; its `close` stops the canary first. */
  readonly edge: RunningEdge;
  readonly key: string;
  readonly summary: PublishSummary;
  readonly samplePage: string | null;
}

/** What `npm start` runs: port check, claim, dev key, a publish of the fixtures as production does, the edge. */
export async function startLocalStack(options: {
  readonly host: string;
  readonly port: number;
  readonly now: Date;
  readonly report: (line: string) => void;
  readonly log: (entry: LogEntry) => void;
  /**
   * Where the canary's log lines go (each failing row, what it expected and got): the log file, not the
   * terminal, where each canary run says one line through `report`.
   */
  readonly canaryLog: (entry: LogEntry) => void;
  /**
   * How often the canary runs each beat (`canaryRateMinutes`, `canaryFullRateMinutes`); it runs the full table
   * once as soon as the edge serves.
   */
  readonly canaryPeriodsMs: Readonly<Record<CanaryBeat, number>>;
}): Promise<LocalStack> {
  const { host, port, now } = options;
  const { origin, store } = LOCAL_STACK;
  const settings = devPublishSettings(host, port);
  // This checkout's stack first: a second npm start is told to use the first, on any port.
  const held = await runningStack();
  if (held) throw alreadyRunning(held);
  await checkPortFree(host, port);
  const release = await claimLocalStack(settings.baseUrl);
  try {
    const key = await ensureDevKey(store, now);
    const [run, { openTarget }] = await Promise.all([import('./run.ts'), import('./target.ts')]);
    const target = await openTarget({ origin, store }, () => {
      throw new ConfigError('the local stack needs no AWS client');
    });
    const { summary } = await run.publish(settings, target, {
      now,
      force: false,
      // Its own fixed origin and store: a live build deleted from .catalog/origin is simply replaced.
      recover: true,
      report: options.report,
      actor: 'catalog start',
    });
    if (summary.result === 'busy') throw new CatalogError(`${origin}: ${summary.reason}`);
    const live = summary.result === 'published' ? summary.buildId : summary.previousBuildId;
    const catalog = live ? await target.origin.get(`${BUILDS_PREFIX}${live}/${ORIGIN_FILES.all}`) : null;
    const first = catalog ? (JSON.parse(catalog.body.toString('utf8')) as Catalog).plans[0] : undefined;
    const edge = await serveLocal({ origin, store, port, host }, options.log);
    const [{ startLocalCanary }, { FileKeyValueStore }, { showCorsOrigin }] = await Promise.all([
      import('./local-canary.ts'),
      import('../keys/file-store.ts'),
      import('../keys/cors.ts'),
    ]);
    const canary = startLocalCanary({
      baseUrl: edge.url,
      key: await ensureLocalKey(store, MONITORING_PARTNER, LOCAL_STACK.monitoringKey, now),
      origin: target.origin,
      cors: () => showCorsOrigin(new FileKeyValueStore(store)),
      periodsMs: options.canaryPeriodsMs,
      report: options.report,
      log: options.canaryLog,
    });
    canary.first.catch((error: unknown) =>
      options.report(`catalog: warning: the canary failed: ${String(error)}`),
    );
    const close = () =>
      canary
        .stop()
        .then(() => edge.close())
        .finally(release);
    return {
      edge: { ...edge, close },
      key,
      summary,
      samplePage: first ? new URL(first.webUrl).pathname : null,
    };
  } catch (error) {
    await release();
    throw error;
  }
}
