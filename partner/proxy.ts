/**
 * The reference partner proxy (README.md): a `node:http` server for the partner's own frontend that serves
 * `GET /plans.json` from a server-side copy, refreshed with the key (never sent to the browser, never logged)
 * as often as the service's `max-age` says, and kept whenever a refresh fails in any way (502, at once, only
 * when there is no copy). Each new copy is saved to disk before it is served, numbered or notified, and diffed
 * into the change sets of `GET /changes?since=N` (changes.ts) and the notify hook (notify.ts). A copy that
 * cannot be saved is a failed refresh while a saved one is served; while none is (a first start on a full disk),
 * it is served all the same, numbered only once it is saved. Every refresh has a total deadline; `GET /healthz`
 * reports the state.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChangeLog, type ChangeSet, type StoredChanges } from './changes.ts';
import { CatalogClient, type CatalogClientOptions, type CatalogDocument } from './client.ts';
import { loadState, type StoredCopy, saveState } from './copy-file.ts';
import { ChangeNotifier, type NotifyHealth, type NotifyOptions, notifyUrlProblem } from './notify.ts';
import { DISCIPLINES, type Discipline } from './schema.ts';

/** Seconds between refreshes when the service does not say (its documented lifetime). */
const DEFAULT_FRESH_SECONDS = 300;
/** The bounds of the wait between two refreshes, whatever the service says. */
export const MIN_REFRESH_SECONDS = 5;
const MAX_REFRESH_SECONDS = 3_600;
/** The first retry after a failed refresh; it doubles, up to the usual interval or the default if longer. */
const RETRY_BASE_SECONDS = 5;
export const DEFAULT_CHANGES_KEPT = 100;
/** How many change sets one `GET /changes` answer holds when the request does not say, and at most. */
export const CHANGES_PAGE = { default: 20, max: 100 } as const;
/** The headers of `/plans.json` naming the change set the copy served ends with, and its history. */
export const CHANGES_SEQUENCE_HEADER = 'catalog-changes-sequence';
export const CHANGES_HISTORY_HEADER = 'catalog-changes-history';

/** One line of the proxy's log (JSON on stderr by default). */
export type LogEntry = Readonly<Record<string, unknown>>;

/** How the proxy is run; `timeouts.totalMs` is each refresh's deadline. */
export interface ProxyOptions extends CatalogClientOptions {
  /** Where the last good copy is saved; no file: the copy lives in memory only. */
  readonly cacheFile?: string;
  /** Where to listen: default 127.0.0.1:8788 (port 0 picks a free one). */
  readonly port?: number;
  readonly host?: string;
  /** Refresh at start, then on schedule (the default); off: only {@link RunningProxy.refresh} refreshes. */
  readonly autoRefresh?: boolean;
  /** Receives every log line; default: one JSON line on stderr. */
  readonly log?: (entry: LogEntry) => void;
  /** Seconds between refreshes (at least 5); default: the service's `max-age` less `Age`, 5 s to an hour. */
  readonly refreshSeconds?: number;
  /** How many change sets the history keeps (default {@link DEFAULT_CHANGES_KEPT}). */
  readonly changesKept?: number;
  /** POST each new change set to the partner's application (notify.ts). */
  readonly notify?: NotifyOptions;
}

/** The outcome of one refresh. */
export interface RefreshRecord {
  readonly at: string;
  readonly outcome: 'fetched' | 'not-modified' | 'failed';
  readonly status?: number;
  readonly problemType?: string;
  readonly error?: string;
  readonly durationMs: number;
}

/** What `GET /healthz` answers. */
export interface Health {
  /**
   * `degraded`: the last refresh failed (or one is overdue) and the last good copy is served, or the last save to
   * the cache file failed; `empty`: no copy.
   */
  readonly status: 'ok' | 'degraded' | 'empty';
  readonly upstream: string;
  readonly copy: {
    readonly generatedAt: string;
    readonly plans: number;
    readonly etag: string | null;
    readonly fetchedAt: string;
    /** When the service last confirmed the copy (a 200 or a 304), and the seconds since. */
    readonly validatedAt: string;
    readonly ageSeconds: number;
    /** Where the copy came from since the proxy started: the service, or the disk copy of a previous run. */
    readonly source: 'service' | 'disk';
  } | null;
  readonly lastRefresh: RefreshRecord | null;
  /**
   * The cache file (null: none, the copy lives in memory only): whether the copy served is saved in it (false: a
   * restart would start without it), when a save last succeeded, and why the last save failed (null: it did not).
   */
  readonly cacheFile: {
    readonly saved: boolean;
    readonly savedAt: string | null;
    readonly error: string | null;
  } | null;
  readonly consecutiveFailures: number;
  readonly nextRefreshAt: string | null;
  /** The change history: its id, the latest sequence (0: none yet), the first one held (null: none), how many. */
  readonly changes: Readonly<{ history: string; latest: number; oldest: number | null; kept: number }>;
  readonly notify: NotifyHealth | null;
}

/** A running proxy, at `http://host:port`. */
export interface RunningProxy {
  readonly url: string;
  /** Refreshes now (joining a refresh already in flight). */
  refresh(): Promise<RefreshRecord>;
  health(): Health;
  /** Stops listening, stops refreshing, closes the connections to the service. */
  close(): Promise<void>;
}

const proxyProblem = (name: string, title: string, status: number) =>
  ({ type: `tag:training-plan-catalog,2026:partner-proxy:${name}`, title, status }) as const;

/** RFC 9457 problem types of the proxy's own error answers. */
export const PROXY_PROBLEMS = {
  notFound: proxyProblem('not-found', 'Not Found', 404),
  methodNotAllowed: proxyProblem('method-not-allowed', 'Method Not Allowed', 405),
  invalidDiscipline: proxyProblem('invalid-discipline', 'Bad Request', 400),
  invalidChangesQuery: proxyProblem('invalid-changes-query', 'Bad Request', 400),
  changesGone: proxyProblem('changes-gone', 'Gone', 410),
  noCatalog: proxyProblem('no-catalog', 'Bad Gateway', 502),
  internal: proxyProblem('internal-error', 'Internal Server Error', 500),
};

/** One answer the proxy serves from its copy: the bytes and their entity tag. */
type Variant = { readonly body: Buffer; readonly etag: string };

interface Copy extends StoredCopy {
  readonly catalog: CatalogDocument;
  readonly source: 'service' | 'disk';
  /** Whether it is the copy the cache file holds (always, without a cache file). */
  readonly saved: boolean;
  readonly variants: ReadonlyMap<Discipline | 'all', Variant>;
}

const variant = (text: string): Variant => {
  const body = Buffer.from(text, 'utf8');
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
};

/** The copy with its three answers: the service's body as sent, and each discipline's plans in the same order. */
function withVariants(
  stored: StoredCopy,
  source: Copy['source'],
  catalog: CatalogDocument,
  saved: boolean,
): Copy {
  const variants = new Map<Discipline | 'all', Variant>([['all', variant(stored.body)]]);
  for (const discipline of DISCIPLINES) {
    const plans = catalog.plans.filter((plan) => plan.discipline === discipline);
    variants.set(discipline, variant(JSON.stringify({ ...catalog, plans })));
  }
  return { ...stored, catalog, source, saved, variants };
}

/** The proxy's state and behaviour, apart from listening (see {@link startProxy}). */
export class CatalogProxy {
  readonly #options: ProxyOptions;
  readonly #client: CatalogClient;
  readonly #log: (entry: LogEntry) => void;
  /** Logs `entry` with the time it is logged. */
  readonly #logNow = (entry: LogEntry) => this.#log({ time: new Date().toISOString(), ...entry });
  readonly #changesKept: number;
  #copy: Copy | undefined;
  #changes: ChangeLog;
  /** The sequence of the last change set the notify hook delivered, once there has been a hook. */
  #notified: number | undefined;
  #notifier: ChangeNotifier | undefined;
  /** Valid empty catalogs the service answered in a row while the copy had plans. */
  #emptyAnswers = 0;
  #lastRefresh: RefreshRecord | undefined;
  /** When a save to the cache file last succeeded, and why the last one failed (undefined: it did not). */
  #savedAt: string | undefined;
  #saveError: string | undefined;
  #failures = 0;
  #inFlight: Promise<RefreshRecord> | undefined;
  /** The state updates, one at a time: each saves the state, then makes it the one served. */
  #updates: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #nextRefreshAt: Date | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: ProxyOptions) {
    const { refreshSeconds, changesKept, notify } = options;
    if (
      refreshSeconds !== undefined &&
      !(Number.isFinite(refreshSeconds) && refreshSeconds >= MIN_REFRESH_SECONDS)
    )
      throw new RangeError(`refreshSeconds must be at least ${MIN_REFRESH_SECONDS}, not ${refreshSeconds}`);
    const notifyProblem = notify === undefined ? undefined : notifyUrlProblem(notify.url);
    if (notifyProblem !== undefined) throw new TypeError(`the notify URL ${notifyProblem}`);
    if (/^[^/]*\/\/[^/?#]*@/.test(options.upstream))
      throw new TypeError('the upstream URL must not hold user:password@ (the key is the credential)');
    this.#options = options;
    this.#changesKept = changesKept ?? DEFAULT_CHANGES_KEPT;
    this.#changes = new ChangeLog(this.#changesKept);
    this.#client = new CatalogClient(options);
    this.#log = options.log ?? ((entry) => process.stderr.write(`${JSON.stringify(entry)}\n`));
  }

  /** Takes the state a previous run saved, when it is valid. */
  async load(): Promise<void> {
    if (this.#options.cacheFile === undefined) return;
    const loaded = await loadState(this.#options.cacheFile);
    if (loaded === undefined) return;
    if ('error' in loaded) return this.#logNow({ event: 'load', outcome: 'ignored', error: loaded.error });
    this.#copy = withVariants(loaded.copy, 'disk', JSON.parse(loaded.copy.body) as CatalogDocument, true);
    this.#changes = new ChangeLog(this.#changesKept, loaded.changes);
    this.#notified = loaded.notified;
    this.#logNow({
      event: 'load',
      outcome: 'loaded',
      plans: this.#copy.catalog.plans.length,
      fetchedAt: loaded.copy.fetchedAt,
      changesSequence: this.#changes.latest,
    });
  }

  /** Starts refreshing (now, then on schedule) and the notify hook (delivering what waits from a previous run). */
  start(): void {
    const notify = this.#options.notify;
    if (notify !== undefined && this.#notifier === undefined && !this.#closed) {
      // A first hook starts with the next change set, not with the history from before it existed.
      this.#notified ??= this.#changes.latest;
      this.#notifier = new ChangeNotifier(
        notify,
        {
          changes: () => this.#changes,
          delivered: (sequence) => {
            // Saved so a restart does not send it again; a failed save only means it may be sent again.
            this.#queue(async () => {
              this.#notified = Math.max(this.#notified ?? 0, sequence);
              if (this.#copy?.saved) await this.#save(this.#copy, this.#changes.stored());
            }).catch(() => {});
          },
        },
        this.#notified,
        this.#log,
      );
      this.#notifier.kick();
    }
    if (this.#options.autoRefresh !== false && !this.#closed) {
      this.#nextRefreshAt = new Date();
      void this.refresh();
    }
  }

  /** Refreshes now, or joins the refresh in flight. Never throws: a failure is its record. */
  refresh(): Promise<RefreshRecord> {
    this.#inFlight ??= this.#refresh().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #refresh(): Promise<RefreshRecord> {
    const started = performance.now();
    const at = new Date();
    const now = at.toISOString();
    const result = await this.#client.fetch(this.#copy?.etag);
    let outcome: Omit<RefreshRecord, 'at' | 'durationMs'>;
    let freshFor: number | undefined;
    let recorded: ChangeSet | undefined;
    const previous = this.#copy;
    // An empty catalog in place of one with plans is taken only when the next refresh says the same.
    const held = previous?.catalog.plans.length ?? 0;
    const emptied = result.kind === 'fetched' && result.catalog.plans.length === 0 && held > 0;
    this.#emptyAnswers = emptied ? this.#emptyAnswers + 1 : 0;
    if (emptied && this.#emptyAnswers < 2) {
      outcome = {
        outcome: 'failed',
        status: 200,
        error: `the service answered an empty catalog where the copy has ${held} plans: the copy is kept until the next refresh confirms it`,
      };
    } else if (result.kind === 'fetched') {
      this.#emptyAnswers = 0;
      const stored: StoredCopy = { body: result.body, etag: result.etag, fetchedAt: now, validatedAt: now };
      const taken = await this.#take(stored, result.catalog, at);
      if ('kept' in taken) {
        outcome = {
          outcome: 'failed',
          status: 200,
          error: `the new copy could not be saved, so the last saved one is served: ${taken.kept.message}`,
        };
      } else {
        recorded = taken.recorded;
        outcome = { outcome: 'fetched', status: 200 };
        freshFor = result.freshForSeconds;
      }
    } else if (result.kind === 'not-modified' && this.#copy) {
      const copy = { ...this.#copy, validatedAt: now };
      this.#copy = copy;
      // A copy served without being saved is saved at each refresh until it is, then numbered.
      if (!copy.saved) {
        const taken = await this.#take(copy, copy.catalog, at);
        if (!('kept' in taken)) recorded = taken.recorded;
      }
      outcome = { outcome: 'not-modified', status: 304 };
      freshFor = result.freshForSeconds;
    } else if (result.kind === 'failed') {
      const { kind: _, ...failure } = result;
      outcome = { outcome: 'failed', ...failure };
    } else {
      outcome = { outcome: 'failed', status: 304, error: '304 without a copy' };
    }
    const record: RefreshRecord = {
      at: now,
      ...outcome,
      durationMs: Math.round(performance.now() - started),
    };
    const failed = record.outcome === 'failed';
    this.#lastRefresh = record;
    this.#failures = failed ? this.#failures + 1 : 0;
    const next = this.#schedule(failed ? undefined : (freshFor ?? DEFAULT_FRESH_SECONDS));
    this.#log({
      time: now,
      event: 'refresh',
      ...outcome,
      ...(failed ? { serving: this.#copy ? 'last good copy' : 'nothing (502)' } : {}),
      ...(this.#copy?.saved === false ? { saved: false } : {}),
      plans: this.#copy?.catalog.plans.length ?? 0,
      ...(recorded && {
        changes: {
          sequence: recorded.sequence,
          resync: recorded.resync,
          added: recorded.added.length,
          changed: recorded.changed.length,
          removed: recorded.removed.length,
        },
      }),
      ms: record.durationMs,
      ...(next === undefined ? {} : { nextRefreshInSeconds: next }),
    });
    return record;
  }

  /**
   * Takes a copy the service sent (or confirmed): saves it with its change set — against the copy the history
   * ends with, the saved one, or a resync when none is saved — and only then serves, numbers and notifies it, so
   * a restart never gives a sequence number that was seen to another change set. When it cannot be saved, a
   * saved copy served stays served (`kept`: why; the refresh failed and is retried). When none is (a first start
   * on a full disk), the new copy is served all the same, unnumbered: a frontend gets the plans, a restart would
   * start without them, `/healthz` says so, and each refresh saves it again until it is saved.
   */
  async #take(
    stored: StoredCopy,
    catalog: CatalogDocument,
    at: Date,
  ): Promise<{ readonly recorded: ChangeSet | undefined } | { readonly kept: Error }> {
    let result: { recorded: ChangeSet | undefined } | { kept: Error } = { recorded: undefined };
    await this.#queue(async () => {
      const saved = this.#copy?.saved === true ? this.#copy : undefined;
      const next = this.#changes.next(at, saved?.catalog, catalog);
      try {
        await this.#save(stored, this.#changes.stored(next));
      } catch (error) {
        if (saved) result = { kept: error as Error };
        else this.#copy = withVariants(stored, 'service', catalog, false);
        return;
      }
      this.#copy = withVariants(stored, 'service', catalog, true);
      if (next) this.#changes.append(next);
      result = { recorded: next };
    });
    if ('recorded' in result && result.recorded) this.#notifier?.kick();
    return result;
  }

  /** Runs `task` after the state updates before it (saving and swapping the state never interleave). */
  #queue(task: () => Promise<void>): Promise<void> {
    const run = this.#updates.then(task);
    this.#updates = run.catch(() => {});
    return run;
  }

  /** Saves the copy, `changes` and the notify progress to the cache file, if any; a failure is logged, thrown. */
  async #save(copy: StoredCopy, changes: StoredChanges): Promise<void> {
    if (this.#options.cacheFile === undefined) return;
    const { body, etag, fetchedAt, validatedAt } = copy;
    try {
      await saveState(this.#options.cacheFile, {
        copy: { body, etag, fetchedAt, validatedAt },
        changes,
        ...(this.#notified === undefined ? {} : { notified: this.#notified }),
      });
      this.#savedAt = new Date().toISOString();
      this.#saveError = undefined;
    } catch (error) {
      this.#saveError = (error as Error).message;
      this.#logNow({ event: 'save', outcome: 'failed', error: this.#saveError });
      throw error;
    }
  }

  /** Schedules the next refresh: after `refreshSeconds` or `freshFor`; after a failure, with a back-off. */
  #schedule(freshFor: number | undefined): number | undefined {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#nextRefreshAt = undefined;
    if (this.#options.autoRefresh === false || this.#closed) return undefined;
    const usual = this.#options.refreshSeconds;
    const backOff = RETRY_BASE_SECONDS * 2 ** Math.min(this.#failures - 1, 16);
    const seconds =
      freshFor === undefined
        ? Math.min(backOff, Math.max(usual ?? 0, DEFAULT_FRESH_SECONDS))
        : (usual ?? Math.min(Math.max(freshFor, MIN_REFRESH_SECONDS), MAX_REFRESH_SECONDS));
    this.#nextRefreshAt = new Date(Date.now() + seconds * 1000);
    this.#timer = setTimeout(() => void this.refresh(), seconds * 1000);
    this.#timer.unref();
    return seconds;
  }

  health(): Health {
    const copy = this.#copy;
    const { history, latest, oldest, size } = this.#changes;
    const now = Date.now();
    const overdue = now > (this.#nextRefreshAt?.getTime() ?? now) + this.#client.deadlineMs;
    const failed = this.#lastRefresh?.outcome === 'failed' || overdue || this.#saveError !== undefined;
    return {
      status: copy === undefined ? 'empty' : failed ? 'degraded' : 'ok',
      upstream: this.#options.upstream,
      copy:
        copy === undefined
          ? null
          : {
              generatedAt: copy.catalog.generatedAt,
              plans: copy.catalog.plans.length,
              etag: copy.etag ?? null,
              fetchedAt: copy.fetchedAt,
              validatedAt: copy.validatedAt,
              ageSeconds: Math.max(0, Math.floor((now - Date.parse(copy.validatedAt)) / 1000)),
              source: copy.source,
            },
      lastRefresh: this.#lastRefresh ?? null,
      cacheFile:
        this.#options.cacheFile === undefined
          ? null
          : {
              saved: copy?.saved === true,
              savedAt: this.#savedAt ?? null,
              error: this.#saveError ?? null,
            },
      consecutiveFailures: this.#failures,
      nextRefreshAt: this.#nextRefreshAt?.toISOString() ?? null,
      changes: { history, latest, oldest, kept: size },
      notify: this.#notifier?.health() ?? null,
    };
  }

  /** The `node:http` request handler. */
  readonly handle = (request: IncomingMessage, response: ServerResponse): void => {
    this.#answer(request, response).catch((error: unknown) => {
      this.#logNow({ event: 'request', error: (error as Error).message });
      if (!response.headersSent) problem(response, PROXY_PROBLEMS.internal, 'The proxy failed.');
      else response.destroy();
    });
  };

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://proxy.invalid');
    if (url.pathname !== '/plans.json' && url.pathname !== '/healthz' && url.pathname !== '/changes')
      return problem(
        response,
        PROXY_PROBLEMS.notFound,
        'The proxy serves GET /plans.json, GET /changes?since=N and GET /healthz.',
      );
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return problem(response, PROXY_PROBLEMS.methodNotAllowed, 'Only GET and HEAD are accepted.', {
        allow: 'GET, HEAD',
      });
    if (url.pathname === '/healthz') {
      const health = this.health();
      // 503 when empty; with `?strict` (a load balancer that should send no traffic to a degraded proxy), unless ok.
      const strict = url.searchParams.has('strict');
      const unready = health.status === 'empty' || (strict && health.status !== 'ok');
      return send(response, unready ? 503 : 200, JSON.stringify(health), NO_STORE_JSON);
    }
    if (url.pathname === '/changes') return this.#answerChanges(url, response);
    const [discipline, ...others] = url.searchParams.getAll('discipline');
    if (others.length > 0 || (discipline !== undefined && !DISCIPLINES.includes(discipline as Discipline)))
      return problem(
        response,
        PROXY_PROBLEMS.invalidDiscipline,
        `discipline, when present, must be exactly ${DISCIPLINES.join(' or ')}, once.`,
      );
    // No copy: 502 at once, whatever a refresh is doing (it goes on, bounded by its own deadline). Waiting
    // for it made a caller wait up to that deadline behind a service that trickles.
    const copy = this.#copy;
    if (copy === undefined)
      return problem(
        response,
        PROXY_PROBLEMS.noCatalog,
        this.#inFlight
          ? 'No copy of the catalog yet: the call to the catalog service is under way (GET /healthz says how it ends).'
          : 'No copy of the catalog yet: the catalog service could not be reached or refused the call.',
      );
    const answer = copy.variants.get((discipline as Discipline | undefined) ?? 'all');
    if (answer === undefined) throw new Error('a variant of the copy is missing');
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-cache',
      etag: answer.etag,
      [CHANGES_SEQUENCE_HEADER]: String(this.#changes.latest),
      [CHANGES_HISTORY_HEADER]: this.#changes.history,
    };
    const conditional = request.headers['if-none-match'];
    if (conditional?.split(',').some((tag) => tag.trim() === answer.etag || tag.trim() === '*'))
      return send(response, 304, undefined, headers);
    return send(response, 200, answer.body, headers);
  }

  /** `GET /changes?since=N[&limit=M]`: the change sets after N, or 410 when the history cannot say. */
  #answerChanges(url: URL, response: ServerResponse) {
    const since = wholeParameter(url, 'since', 0, Number.MAX_SAFE_INTEGER);
    const limit = wholeParameter(url, 'limit', 1, CHANGES_PAGE.max) ?? CHANGES_PAGE.default;
    if (since === undefined || since === 'bad' || limit === 'bad')
      return problem(
        response,
        PROXY_PROBLEMS.invalidChangesQuery,
        `since must be given once, a whole number of at least 0 (the sequence of the last change set you applied; 0 for none); limit, when given, once, from 1 to ${CHANGES_PAGE.max}.`,
      );
    const page = this.#changes.page(since, limit);
    if (!('gone' in page)) return send(response, 200, JSON.stringify(page), NO_STORE_JSON);
    const resync = `Resync from GET /plans.json, then ask for the changes since the sequence in its ${CHANGES_SEQUENCE_HEADER} header (now ${page.latest}).`;
    problem(
      response,
      PROXY_PROBLEMS.changesGone,
      page.gone === 'behind'
        ? `The change sets after ${since} are no longer held (the history starts at ${page.oldest}). ${resync}`
        : `Sequence ${since} is after the latest change set (${page.latest}): the proxy's history was started again. ${resync}`,
      {},
      { latest: page.latest, oldest: page.oldest, resync: '/plans.json' },
    );
  }

  /** Stops refreshing (a call under way is ended) and notifying, and waits for a save under way. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#schedule(undefined);
      await this.#client.close();
      await this.#inFlight;
      await this.#notifier?.close();
      await this.#updates;
    })();
    return this.#closing;
  }
}

/** The headers of an answer that is never cached: the health report, a page of changes. */
const NO_STORE_JSON = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A query parameter holding a whole number from `min` to `max`: undefined when absent, `bad` when not that. */
function wholeParameter(url: URL, name: string, min: number, max: number): number | 'bad' | undefined {
  const [value, ...others] = url.searchParams.getAll(name);
  if (value === undefined) return undefined;
  if (others.length > 0 || !/^\d{1,16}$/.test(value)) return 'bad';
  const number = Number(value);
  return number >= min && number <= max ? number : 'bad';
}

function send(
  response: ServerResponse,
  status: number,
  body: string | Buffer | undefined,
  headers: Record<string, string>,
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  response.writeHead(status, {
    'x-content-type-options': 'nosniff',
    ...headers,
    ...(bytes === undefined ? {} : { 'content-length': String(bytes.length) }),
  });
  response.end(bytes);
}

function problem(
  response: ServerResponse,
  kind: (typeof PROXY_PROBLEMS)[keyof typeof PROXY_PROBLEMS],
  detail: string,
  headers: Record<string, string> = {},
  extensions: Record<string, unknown> = {},
): void {
  send(response, kind.status, JSON.stringify({ ...kind, detail, ...extensions }), {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
    ...headers,
  });
}

/** Starts the proxy: takes the disk copy, listens, starts refreshing (a request before a first copy gets 502). */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const proxy = new CatalogProxy(options);
  await proxy.load();
  const server = createServer(proxy.handle);
  server.listen(options.port ?? 8788, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  proxy.start();
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    refresh: () => proxy.refresh(),
    health: () => proxy.health(),
    close: () => {
      // Both at once: stop listening, and end the refresh under way rather than wait for it.
      closing ??= Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
        proxy.close(),
      ]).then(() => undefined);
      return closing;
    },
  };
}
