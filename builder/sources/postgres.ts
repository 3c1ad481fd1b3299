/**
 * A PostgreSQL source: the published, approved rows of one relation whose columns are the row contract,
 * read in a read-only transaction through a server-side cursor, a batch at a time, so memory stays bounded
 * however many rows the relation holds. TLS follows the URL's `sslmode` (as libpq reads it).
 */
import pg from 'pg';
import { ConfigError, NETWORK_ERROR_CODES, SourceError, settingRef } from '../../contract/errors.ts';
import { SourceRow, SourceRowGate } from '../model.ts';
import type { PlanSource } from '../source.ts';
import { SOURCE_DEFAULTS, type SourceOptions } from './options.ts';
import { redactUrl, scrub, urlSecrets } from './redact.ts';
import { parseRelationName, type RelationName, relationLabel, relationSql } from './relation.ts';

/** The columns read: the row contract's (docs/decisions.md#source-rows), never the relation's others. */
const SOURCE_COLUMNS = [...Object.keys(SourceRow.shape), ...Object.keys(SourceRowGate.shape)];

/** The source settings that apply to PostgreSQL (`sourceStatementTimeout` bounds each FETCH too). */
export type PostgresSourceOptions = Pick<
  SourceOptions,
  'sourceRelation' | 'sourceStatementTimeout' | 'sourceConnectTimeout'
>;

const CURSOR = 'catalog_source_rows';
/** Rows per FETCH. At most two batches are held at once (one is read ahead). */
const BATCH_ROWS = 2_000;

/** The statements of one read, in order (the FETCH repeats until it returns fewer than {@link BATCH_ROWS}). */
export function readStatements(relation: RelationName, statementTimeoutMs: number) {
  if (!Number.isSafeInteger(statementTimeoutMs) || statementTimeoutMs < 1)
    throw new RangeError(`statement timeout must be a positive integer of ms (got ${statementTimeoutMs})`);
  return {
    begin: 'BEGIN READ ONLY',
    timeout: `SET LOCAL statement_timeout = ${statementTimeoutMs}`,
    declare: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR SELECT ${SOURCE_COLUMNS.join(', ')} FROM ${relationSql(
      relation,
    )} WHERE published AND approved`,
    fetch: `FETCH FORWARD ${BATCH_ROWS} FROM ${CURSOR}`,
    end: 'COMMIT',
  };
}

/**
 * The one-line reason for a driver or server error (SQLSTATE codes from PostgreSQL's errcodes), without the
 * source name. Pure, so each mapping is tested without a server.
 */
export function describePostgresError(
  error: unknown,
  context: {
    stage: 'connect' | 'read';
    relation: string;
    connectTimeoutMs: number;
    statementTimeoutMs: number;
  },
): string {
  const rawCode = (error as { code?: unknown } | null)?.code;
  const code = typeof rawCode === 'string' ? rawCode : undefined;
  const message = error instanceof Error ? error.message : String(error);
  const detail = message || code || 'unknown error';
  if (code !== undefined && NETWORK_ERROR_CODES[code] !== undefined)
    return `cannot connect (${NETWORK_ERROR_CODES[code]}${message ? `: ${message}` : ''})`;
  switch (code) {
    case '28P01':
    case '28000':
      return `refused the credentials (${detail})`;
    case '3D000':
      return `cannot connect (${detail})`;
    case '42P01':
    case '3F000':
      return `${detail}; set ${settingRef('sourceRelation')}, or create the view (builder/sql)`;
    case '42703':
      return `relation ${context.relation} lacks a column of the row contract (${detail})`;
    case '42804':
    case '42883':
      return `relation ${context.relation} has a column of the wrong type (${detail})`;
    case '42501':
      return `${detail}; grant SELECT on ${context.relation} to the source's user`;
    case '57014':
      return /statement timeout/i.test(message)
        ? `the read timed out after ${context.statementTimeoutMs} ms (statement_timeout; raise ${settingRef('sourceStatementTimeout')})`
        : `the read was cancelled (${detail})`;
    case '57P01':
    case '57P02':
    case '57P03':
      return `the server is shutting down or starting (${detail})`;
  }
  if (/timeout/i.test(message) && context.stage === 'connect')
    return `cannot connect (no answer within ${context.connectTimeoutMs} ms)`;
  if (/query read timeout/i.test(message))
    return `the server did not answer within the statement timeout (${context.statementTimeoutMs} ms)`;
  if (context.stage === 'connect') return `cannot connect (${detail})`;
  return `cannot be read (${detail}${code && !message.includes(code) ? `, SQLSTATE ${code}` : ''})`;
}

/** The rows of one relation of a PostgreSQL database. The connection lives only while `batches` runs. */
export class PostgresSource implements PlanSource {
  readonly name: string;
  readonly #url: string;
  readonly #relation: RelationName;
  readonly #statementTimeoutMs: number;
  readonly #connectTimeoutMs: number;

  /** Throws `ConfigError` for a relation name that is not one. Opens no connection. */
  constructor(url: string, options: PostgresSourceOptions = {}) {
    this.#url = url;
    this.name = redactUrl(url);
    const relationText = options.sourceRelation ?? SOURCE_DEFAULTS.sourceRelation;
    const relation = parseRelationName(relationText);
    if (typeof relation === 'string')
      throw new ConfigError(`relation ${JSON.stringify(relationText)}: ${relation}`);
    this.#relation = relation;
    this.#statementTimeoutMs = options.sourceStatementTimeout ?? SOURCE_DEFAULTS.sourceStatementTimeout;
    this.#connectTimeoutMs = options.sourceConnectTimeout ?? SOURCE_DEFAULTS.sourceConnectTimeout;
    // Fails early (as a programming error) on a bad timeout.
    readStatements(this.#relation, this.#statementTimeoutMs);
  }

  /** The relation read, as messages name it. */
  get relation(): string {
    return relationLabel(this.#relation);
  }

  async *batches(): AsyncGenerator<readonly unknown[]> {
    const sql = readStatements(this.#relation, this.#statementTimeoutMs);
    const secrets = urlSecrets(this.#url);
    let stage: 'connect' | 'read' = 'connect';
    let client: pg.Client | undefined;
    let lost: unknown;
    const fail = (error: unknown): SourceError => {
      const reason = describePostgresError(lost ?? error, {
        stage,
        relation: this.relation,
        connectTimeoutMs: this.#connectTimeoutMs,
        statementTimeoutMs: this.#statementTimeoutMs,
      });
      // The driver's errors never carry the password; scrub anyway, and keep the raw error out of `cause`
      // when it could hold it.
      const safe = scrub(reason, secrets);
      return new SourceError(this.name, safe, safe === reason ? { cause: error } : undefined);
    };
    try {
      client = new pg.Client({
        connectionString: this.#url,
        connectionTimeoutMillis: this.#connectTimeoutMs,
        // A backstop for a server that stops answering without closing the connection.
        query_timeout: this.#statementTimeoutMs + this.#connectTimeoutMs,
        keepAlive: true,
        application_name: 'catalog-build',
      });
      const password = client.password;
      if (typeof password === 'string' && password !== '') secrets.push(password);
      // Without a listener, a connection lost between two FETCHes would crash the process.
      client.on('error', (error) => {
        lost ??= error;
      });
      await client.connect();
      stage = 'read';
      await client.query(sql.begin);
      await client.query(sql.timeout);
      await client.query(sql.declare);
      // One batch is read ahead while the caller validates the last: the server's work and the transfer overlap
      // the validation, and at most two batches are held at once.
      const fetchBatch = (c: pg.Client) => {
        const next = c.query(sql.fetch);
        next.catch(() => undefined); // awaited below; ending early must not leave it unhandled
        return next;
      };
      let next = fetchBatch(client);
      for (;;) {
        const result = await next;
        const more = result.rows.length === BATCH_ROWS;
        if (more) next = fetchBatch(client);
        if (result.rows.length > 0) yield result.rows;
        if (!more) break;
      }
      await client.query(sql.end);
    } catch (error) {
      throw fail(error);
    } finally {
      // Ending the connection also ends the transaction and its cursor, when the read stopped early.
      await client?.end().catch(() => undefined);
    }
  }
}
