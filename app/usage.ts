/**
 * Per-partner usage (docs/decisions.md#usage): records grouped by (recorded value, status), on AWS by Logs
 * Insights (the records never leave AWS), then folded by one {@link foldUsage}, so both sources agree.
 */
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CloudWatchLogsClient,
  GetQueryResultsCommand,
  type ResultField,
  StartQueryCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { CatalogError, describeCause, settingRef } from '../contract/errors.ts';
import { LOG_REASONS, type LogReason, LogValue, MONITORING_PARTNER } from '../contract/index.ts';
import { LOCAL_STACK, localStackPath } from './paths.ts';

/** Requests with one recorded value (as recorded: URL-encoded on AWS) and one status, over the window. */
export interface UsageGroup {
  logData: string;
  status: number;
  requests: number;
  bytes: number;
  first: Date;
  last: Date;
}

/**
 * One partner's requests: answered 2xx (`ok`: a catalog's 200; for the monitoring partner also openapi.yaml and
 * its preflights' 204), 304, refused by reason, other (a 500, say); bytes as `sc-bytes` counts.
 */
export interface PartnerUsage {
  readonly partner: string;
  readonly requests: number;
  readonly ok: number;
  readonly notModified: number;
  readonly refused: Partial<Record<LogReason, number>>;
  readonly other: number;
  readonly bytes: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
}

/** The deployment's own checks: the monitoring partner's requests, its page views among them. */
export interface MonitoringUsage extends PartnerUsage {
  /** Pages for people (plan pages, the home page) the canary asked for, whatever the answer. */
  readonly pages: number;
}

/** The report: partners by label, refusals naming no partner, page requests, and what could not be read. */
export interface UsageReport {
  /** An access-log file, standard input, or a log group. */
  readonly source: string;
  readonly since: string;
  readonly until: string;
  readonly partners: readonly PartnerUsage[];
  /**
   * The deployment's own checks (the partner {@link MONITORING_PARTNER}: its key, or the canary's marker holding
   * it), apart from the partners; null when they made no request.
   */
  readonly monitoring: MonitoringUsage | null;
  /** Refusals that named no partner, by reason (never the deployment's own checks'). */
  readonly unnamed: readonly { readonly reason: LogReason; readonly requests: number }[];
  /** Pages for people (plan pages, the home page) requested, the deployment's own checks' apart. */
  readonly pages: number;
  readonly unreadable: number;
}

/**
 * A recorded value read: a partner, a reason, both, or a page; the monitoring partner's reason may also be a page
 * (`monitoring.page`: the canary's marker on a page request).
 */
export type LogReading =
  | {
      readonly kind: 'partner';
      readonly partner: string;
      readonly reason: LogReason | LogValue.Page | null;
    }
  | { readonly kind: 'unnamed'; readonly reason: LogReason }
  | { readonly kind: 'page' }
  | { readonly kind: 'unreadable' };

const REASONS = new Set<string>(LOG_REASONS);
const LABEL = /^[a-z0-9-]{1,64}$/;

/**
 * Reads a recorded value, URL-decoded: `acme`, `acme.expired-key` (acme refused), `no-key` (a refusal naming
 * no partner), `page`, and the canary's `monitoring.no-key`, `monitoring.page`; null for nothing recorded (`-`,
 * empty or absent).
 */
export function readLogValue(raw: string | null | undefined): LogReading | null {
  if (!raw || raw === '-') return null;
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return { kind: 'unreadable' };
  }
  if (value === LogValue.Page) return { kind: 'page' };
  if (REASONS.has(value)) return { kind: 'unnamed', reason: value as LogReason };
  const at = value.indexOf(LogValue.Separator);
  const partner = at < 0 ? value : value.slice(0, at);
  const reason = at < 0 ? null : value.slice(at + 1);
  const known =
    reason === null || REASONS.has(reason) || (reason === LogValue.Page && partner === MONITORING_PARTNER);
  if (!LABEL.test(partner) || !known) return { kind: 'unreadable' };
  return { kind: 'partner', partner, reason: reason as LogReason | LogValue.Page | null };
}

type Counted = Omit<UsageGroup, 'logData' | 'status'>;

/** Adds `group`'s requests, bytes and times to `into`. */
function merge(into: Counted, group: Counted) {
  into.requests += group.requests;
  into.bytes += group.bytes;
  if (group.first < into.first) into.first = group.first;
  if (group.last > into.last) into.last = group.last;
}

type PartnerTally = Counted &
  Record<'ok' | 'notModified' | 'other' | 'pages', number> & {
    refused: Partial<Record<LogReason, number>>;
  };

/** The report of the groups (in any order) over [since, until], read from `source`. */
export function foldUsage(
  groups: Iterable<UsageGroup>,
  window: { readonly source: string; readonly since: Date; readonly until: Date },
): UsageReport {
  const partners = new Map<string, PartnerTally>();
  const unnamed = new Map<LogReason, number>();
  let pages = 0;
  let unreadable = 0;
  const usageOf = (partner: string): PartnerUsage => {
    const { first, last, pages: _pages, ...tally } = partners.get(partner) as PartnerTally;
    const refused = LOG_REASONS.filter((reason) => reason in tally.refused);
    return {
      partner,
      ...tally,
      refused: Object.fromEntries(refused.map((reason) => [reason, tally.refused[reason]])),
      firstSeen: first.toISOString(),
      lastSeen: last.toISOString(),
    };
  };
  for (const group of groups) {
    const reading = readLogValue(group.logData);
    if (reading === null) continue;
    if (reading.kind === 'page') pages += group.requests;
    else if (reading.kind === 'unreadable') unreadable += group.requests;
    else if (reading.kind === 'unnamed')
      unnamed.set(reading.reason, (unnamed.get(reading.reason) ?? 0) + group.requests);
    else {
      let tally = partners.get(reading.partner);
      if (!tally) {
        const { first, last } = group;
        tally = {
          requests: 0,
          ok: 0,
          notModified: 0,
          refused: {},
          other: 0,
          pages: 0,
          bytes: 0,
          first,
          last,
        };
        partners.set(reading.partner, tally);
      }
      merge(tally, group);
      if (reading.reason === LogValue.Page) tally.pages += group.requests;
      else if (reading.reason !== null)
        tally.refused[reading.reason] = (tally.refused[reading.reason] ?? 0) + group.requests;
      else if (group.status >= 200 && group.status < 300) tally.ok += group.requests;
      else if (group.status === 304) tally.notModified += group.requests;
      else tally.other += group.requests;
    }
  }
  return {
    source: window.source,
    since: window.since.toISOString(),
    until: window.until.toISOString(),
    partners: [...partners.keys()]
      .filter((partner) => partner !== MONITORING_PARTNER)
      .sort()
      .map(usageOf),
    monitoring: partners.has(MONITORING_PARTNER)
      ? { ...usageOf(MONITORING_PARTNER), pages: (partners.get(MONITORING_PARTNER) as PartnerTally).pages }
      : null,
    unnamed: LOG_REASONS.flatMap((reason) => {
      const requests = unnamed.get(reason);
      return requests === undefined ? [] : [{ reason, requests }];
    }),
    pages,
    unreadable,
  };
}

// Locally: `catalog serve`'s access log (JSON lines on its stderr, among lines of other kinds).

/** Thrown when the usage cannot be read (a file, a query); names what failed. */
export class UsageError extends CatalogError {
  override name = 'UsageError';
}

/**
 * Groups the access-log entries within the window by (recorded value, status); an entry older than `logData`
 * counts by its `partner`. Counts the lines, the records and the lines too long to be one.
 */
export async function groupAccessLog(
  lines: AsyncIterable<string | null>,
  window: { readonly since: Date; readonly until: Date },
): Promise<{ groups: UsageGroup[]; lines: number; records: number; tooLong: number }> {
  const groups = new Map<string, UsageGroup>();
  const read = { lines: 0, records: 0, tooLong: 0 };
  for await (const line of lines) {
    read.lines += 1;
    if (line === null) read.tooLong += 1;
    if (!line?.startsWith('{')) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const { status, time, bytes } = entry;
    if (typeof status !== 'number' || typeof time !== 'string') continue;
    read.records += 1;
    const at = new Date(time);
    if (Number.isNaN(at.getTime()) || at < window.since || at > window.until) continue;
    const logData = entry.logData === undefined ? entry.partner : entry.logData;
    if (typeof logData !== 'string') continue;
    const key = `${status} ${logData}`;
    const request = { requests: 1, bytes: typeof bytes === 'number' ? bytes : 0, first: at, last: at };
    const group = groups.get(key);
    if (group) merge(group, request);
    else groups.set(key, { logData, status, ...request });
  }
  return { groups: [...groups.values()], ...read };
}

/** The longest line read as a record: an access-log record is a few hundred bytes. */
const MAX_LINE_BYTES = 1024 * 1024;

/** The lines of a stream; one longer than {@link MAX_LINE_BYTES} comes as null, never held whole. */
export async function* linesOf(stream: Readable): AsyncGenerator<string | null> {
  let held: Buffer[] = [];
  let size = 0;
  for await (const data of stream as AsyncIterable<Buffer | string>) {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    for (let start = 0; start < chunk.length; ) {
      const end = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      size += piece.length;
      if (size > MAX_LINE_BYTES) held = [];
      else held.push(piece);
      if (end === -1) break;
      yield size > MAX_LINE_BYTES ? null : Buffer.concat(held).toString('utf8');
      held = [];
      size = 0;
      start = end + 1;
    }
  }
  if (size > 0) yield size > MAX_LINE_BYTES ? null : Buffer.concat(held).toString('utf8');
}

// On AWS: Logs Insights over the log group of the distribution's standard logs (v2), whose record fields the
// delivery selects (infra/usage-logs.ts).

const USAGE_QUERY = [
  'fields `viewer-request-log-data` as data, `sc-status` as status, `sc-bytes` as sent',
  '| filter ispresent(data) and data != "-"',
  '| stats count(*) as requests, sum(sent) as bytes, min(@timestamp) as first, max(@timestamp) as last by data, status',
  '| limit 10000',
].join('\n');

/** Logs Insights writes times as `2026-11-24 15:04:05.123` (UTC). */
function insightsTime(text: string | undefined) {
  const time = new Date(`${(text ?? '').replace(' ', 'T')}Z`);
  if (Number.isNaN(time.getTime()))
    throw new UsageError(`Logs Insights returned a time that does not read: ${text}`);
  return time;
}

/** The groups of a finished query's results (one row per value and status). */
export function groupsOfResults(results: readonly (readonly ResultField[])[]): UsageGroup[] {
  return results.map((row) => {
    const field = (name: string) => row.find((f) => f.field === name)?.value;
    return {
      logData: field('data') ?? '',
      status: Number(field('status')),
      requests: Number(field('requests') ?? 0),
      bytes: Number(field('bytes') ?? 0),
      first: insightsTime(field('first')),
      last: insightsTime(field('last')),
    };
  });
}

/** How long to wait for the query, and between two GetQueryResults. */
const QUERY_TIMEOUT_MS = 300_000;
const QUERY_POLL_MS = 1000;

/** Runs {@link USAGE_QUERY} over the log group and window, and resolves with its groups. */
async function queryUsageGroups(client: CloudWatchLogsClient, logGroup: string, since: Date, until: Date) {
  const failed = (what: string) => (error: unknown) => {
    throw new UsageError(`Logs Insights ${what}: ${describeCause(error)}`, { cause: error });
  };
  const start = new StartQueryCommand({
    logGroupName: logGroup,
    startTime: Math.floor(since.getTime() / 1000),
    endTime: Math.ceil(until.getTime() / 1000),
    queryString: USAGE_QUERY,
    limit: 10000,
  });
  const { queryId } = await client.send(start).catch(failed(`could not query ${logGroup}`));
  if (!queryId) throw new UsageError(`Logs Insights started no query on ${logGroup}`);
  const query = `Logs Insights query ${queryId} on ${logGroup}`;
  const deadline = Date.now() + QUERY_TIMEOUT_MS;
  for (;;) {
    const answer = await client
      .send(new GetQueryResultsCommand({ queryId }))
      .catch(failed(`query ${queryId} failed`));
    if (answer.status === 'Complete') return groupsOfResults(answer.results ?? []);
    if (answer.status !== 'Scheduled' && answer.status !== 'Running')
      throw new UsageError(`${query} ended ${answer.status ?? 'without a status'}`);
    if (Date.now() > deadline) throw new UsageError(`${query} did not finish in time`);
    await sleep(QUERY_POLL_MS);
  }
}

/** The report over the last `settings.since` ms: from an access log (`-`: stdin) or the usage log group. */
export async function usageReport(
  settings: {
    readonly accessLog?: string | undefined;
    readonly usageLogGroup?: string | undefined;
    readonly since: number;
  },
  options: {
    readonly now: Date;
    readonly stdin: Readable;
    readonly logs: () => Promise<CloudWatchLogsClient>;
  },
): Promise<UsageReport> {
  const { accessLog: path, usageLogGroup: logGroup } = settings;
  const until = options.now;
  const since = new Date(until.getTime() - settings.since);
  if (path !== undefined && logGroup !== undefined)
    throw new UsageError(
      `give either ${settingRef('accessLog')} (a catalog serve access log) or ${settingRef('usageLogGroup')} (the usage log group on AWS), not both`,
    );
  if (path !== undefined) {
    const source = path === '-' ? 'standard input' : path;
    const stream = async () => (path === '-' ? options.stdin : (await open(path)).createReadStream());
    const read = await stream()
      .then((lines) => groupAccessLog(linesOf(lines), { since, until }))
      .catch((error: unknown) => {
        // With no target, the command reads the local stack's log, which its first `npm start` creates.
        if (
          (error as NodeJS.ErrnoException).code === 'ENOENT' &&
          path === localStackPath(LOCAL_STACK.accessLog)
        )
          throw new UsageError(
            `the local stack has no access log yet (${path}): npm start writes one as it serves; or give ${settingRef('accessLog')} FILE, or ${settingRef('deployment')} NAME for a deployment's usage log group`,
            { cause: error },
          );
        throw new UsageError(`cannot read the access log ${path}: ${describeCause(error)}`, { cause: error });
      });
    if (read.records === 0)
      throw new UsageError(
        `${source} holds no access-log record (${read.lines} lines read): catalog usage reads the JSON lines catalog serve writes on its stderr, which npm start also appends to ${LOCAL_STACK.accessLog}`,
      );
    const report = foldUsage(read.groups, { source, since, until });
    return { ...report, unreadable: report.unreadable + read.tooLong };
  }
  if (logGroup !== undefined) {
    const groups = await queryUsageGroups(await options.logs(), logGroup, since, until);
    return foldUsage(groups, { source: `log group ${logGroup}`, since, until });
  }
  throw new UsageError(
    `nothing to read: give ${settingRef('accessLog')} (a catalog serve access log, - for standard input) or ${settingRef('usageLogGroup')} (stack output UsageLogGroupName)`,
  );
}
