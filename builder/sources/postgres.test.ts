import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CONTACT_ADDRESS } from '../../app/settings/registry.ts';
import { SourceError, settingRef } from '../../contract/errors.ts';
import { ROOT, runCatalog } from '../../testing/cli.ts';
import { planCountsText } from '../../testing/counts.ts';
import { buildCatalog } from '../../testing/plans.ts';
import { refusedPort, startPostgres, type TestPostgres } from '../../testing/postgres.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import type { BuildOptions } from '../build.ts';
import { InvalidRowsError } from '../errors.ts';
import { Catalog, DEFAULT_LINKS } from '../model.ts';
import { openSource } from './index.ts';
import { describePostgresError, PostgresSource, readStatements } from './postgres.ts';

const openapiTemplate = readFileSync(join(ROOT, 'openapi.yaml'), 'utf8');
const buildOptions = (overrides: Partial<BuildOptions> = {}): BuildOptions => ({
  links: DEFAULT_LINKS,
  skipInvalid: false,
  now: new Date('2026-11-21T08:00:00.000Z'),
  openapiTemplate,
  contactAddress: LOCAL_CONTACT_ADDRESS,
  ...overrides,
});

/** Ids of the example rows, one per case. */
const ID = {
  strength: '0a1b2c3d-0000-4000-8000-000000000001',
  running: '0a1b2c3d-0000-4000-8000-000000000002',
  draft: '0a1b2c3d-0000-4000-8000-000000000003',
  pending: '0a1b2c3d-0000-4000-8000-000000000004',
  blankTitle: '0a1b2c3d-0000-4000-8000-000000000005',
  httpCover: '0a1b2c3d-0000-4000-8000-000000000006',
  withdrawnInvalid: '0a1b2c3d-0000-4000-8000-000000000007',
  yoga: '0a1b2c3d-0000-4000-8000-000000000008',
  noStates: '0a1b2c3d-0000-4000-8000-000000000009',
  eliteLevel: '0a1b2c3d-0000-4000-8000-00000000000a',
} as const;

/**
 * The example database's plans: two valid published and approved plans, plans that are not both published
 * and approved (one of them invalid, never reported), a discipline the view leaves out, and three published,
 * approved plans that break a rule.
 */
const SEED = `
INSERT INTO levels (id, code, name) VALUES (9, 'elite', 'Elite');
INSERT INTO plans (id, title, summary, cover_image_url, level_id, discipline_id, duration_weeks,
                   sessions_per_week, minutes_per_session) VALUES
  ('${ID.strength}', '  Barbell Basics ', '  Three lifts, done well.  ', 'https://img.example/b.jpg', 1, 1, 12, 3, 45),
  ('${ID.running}', 'First 5K', '', NULL, NULL, 2, 8, NULL, NULL),
  ('${ID.draft}', 'Draft Plan', NULL, NULL, 2, 1, 4, 3, 30),
  ('${ID.pending}', 'Pending Plan', NULL, NULL, 3, 2, 6, 4, 50),
  ('${ID.blankTitle}', '   ', NULL, NULL, 1, 1, 4, 3, 30),
  ('${ID.httpCover}', 'Hill Repeats', NULL, 'http://img.example/h.jpg', 2, 2, 6, 4, 40),
  ('${ID.withdrawnInvalid}', '', NULL, NULL, NULL, 1, 0, 9, 0),
  ('${ID.yoga}', 'Morning Flow', NULL, NULL, 1, 3, 4, 7, 20),
  ('${ID.noStates}', 'Unreviewed', NULL, NULL, 1, 1, 4, 3, 30),
  ('${ID.eliteLevel}', 'Elite Block', NULL, NULL, 9, 1, 4, 5, 60);
INSERT INTO plan_publications (plan_id, state) VALUES
  ('${ID.strength}', 'published'), ('${ID.running}', 'published'), ('${ID.draft}', 'draft'),
  ('${ID.pending}', 'published'), ('${ID.blankTitle}', 'published'), ('${ID.httpCover}', 'published'),
  ('${ID.withdrawnInvalid}', 'withdrawn'), ('${ID.yoga}', 'published'), ('${ID.eliteLevel}', 'published');
INSERT INTO plan_approvals (plan_id, state) VALUES
  ('${ID.strength}', 'approved'), ('${ID.running}', 'approved'), ('${ID.draft}', 'approved'),
  ('${ID.pending}', 'pending'), ('${ID.blankTitle}', 'approved'), ('${ID.httpCover}', 'approved'),
  ('${ID.withdrawnInvalid}', 'approved'), ('${ID.yoga}', 'approved'), ('${ID.eliteLevel}', 'approved');

-- Relations for the failure cases, readable by the catalog role.
CREATE VIEW catalog_source_slow AS SELECT p.* FROM catalog_source_plans AS p, pg_sleep(5);
CREATE TABLE read_attempts (at timestamptz);
CREATE FUNCTION record_read() RETURNS boolean LANGUAGE sql SECURITY DEFINER
  AS 'INSERT INTO read_attempts VALUES (now()) RETURNING true';
CREATE VIEW catalog_source_writes AS SELECT p.* FROM catalog_source_plans AS p WHERE record_read();
CREATE TABLE private_plans AS SELECT * FROM catalog_source_plans WITH NO DATA;
CREATE SCHEMA reporting;
CREATE VIEW reporting."Valid Plans" AS
  SELECT * FROM catalog_source_plans WHERE id IN ('${ID.strength}', '${ID.running}');
GRANT USAGE ON SCHEMA reporting TO catalog;
-- 4,001 rows: two whole batches of 2,000 and one row.
CREATE VIEW catalog_source_many AS
  SELECT p.* FROM catalog_source_plans AS p, generate_series(1, 4001) WHERE p.id = '${ID.strength}';
GRANT SELECT ON catalog_source_slow, catalog_source_writes, catalog_source_many, reporting."Valid Plans" TO catalog;
`;

let server: TestPostgres;
let admin: pg.Client;

beforeAll(async () => {
  server = await startPostgres();
  admin = await server.admin();
  await admin.query(SEED);
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

/** The SourceError a read fails with; its message never holds a password. */
async function failure(source: PostgresSource | Promise<unknown>): Promise<SourceError> {
  try {
    if (source instanceof PostgresSource) for await (const _ of source.batches());
    else await source;
  } catch (error) {
    expect(error).toBeInstanceOf(SourceError);
    const message = (error as Error).message;
    expect(message).not.toContain(server.reader.password);
    expect(message).not.toMatch(/hunter2|wrong-password/);
    return error as SourceError;
  }
  throw new Error('expected a SourceError');
}

/** Sessions of the builder still connected (it names itself `catalog-build`). */
async function builderSessions(): Promise<number> {
  for (let i = 0; i < 40; i += 1) {
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'catalog-build'",
    );
    if (rows[0]?.n === 0) return 0;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'catalog-build'",
  );
  return rows[0]?.n ?? -1;
}

describe('the example schema and view', () => {
  it('fails the build on the published, approved rows that break a rule, naming each, and no others', async () => {
    const source = await openSource(server.url());
    const error = await buildCatalog(source, buildOptions()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRowsError);
    const invalid = (error as InvalidRowsError).invalid;
    expect(invalid.map((p) => [p.id, p.field])).toEqual(
      expect.arrayContaining([
        [ID.blankTitle, 'title'],
        [ID.httpCover, 'cover_url'],
        [ID.eliteLevel, 'level'],
      ]),
    );
    expect(invalid).toHaveLength(3);
    expect((error as Error).message).toBe(
      `source postgres://catalog:***@127.0.0.1:${server.port}/plans: 3 invalid rows; nothing was written (${settingRef('skipInvalid')} publishes the valid rows)`,
    );
  });

  it('builds the catalog of the valid published, approved plans, converted by the row rules', async () => {
    const source = await openSource(server.url());
    const result = await buildCatalog(source, buildOptions({ skipInvalid: true }));
    const catalog = Catalog.parse(
      JSON.parse(result.objects.find((f) => f.key === 'catalog.json')?.body.toString() ?? ''),
    );
    expect(catalog.plans).toEqual([
      {
        id: ID.running,
        title: 'First 5K',
        summary: null,
        coverUrl: null,
        level: 'none',
        discipline: 'running',
        disciplineLabel: 'Outdoor',
        weeksCount: 8,
        daysPerWeek: null,
        estMinutesPerSession: null,
        webUrl: `http://127.0.0.1:8787/plans/${ID.running}`,
        appUrl: `trainingplans://plan/${ID.running}`,
      },
      {
        id: ID.strength,
        title: 'Barbell Basics',
        summary: 'Three lifts, done well.',
        coverUrl: 'https://img.example/b.jpg',
        level: 'beginner',
        discipline: 'strength',
        disciplineLabel: 'Workouts',
        weeksCount: 12,
        daysPerWeek: 3,
        estMinutesPerSession: 45,
        webUrl: `http://127.0.0.1:8787/plans/${ID.strength}`,
        appUrl: `trainingplans://plan/${ID.strength}`,
      },
    ]);
    // Only published, approved rows leave the database: 2 valid + 3 invalid.
    expect(result.total).toBe(5);
    expect(result.warnings.map((w) => w.id).sort()).toEqual(
      [ID.blankTitle, ID.httpCover, ID.eliteLevel].sort(),
    );
  });

  it('delivers bigint and numeric columns as strings, which the row rules accept as integers', async () => {
    const source = new PostgresSource(server.url(), { sourceRelation: 'reporting."Valid Plans"' });
    const rows: Record<string, unknown>[] = [];
    for await (const batch of source.batches()) rows.push(...(batch as Record<string, unknown>[]));
    const strength = rows.find((row) => row.id === ID.strength);
    expect(strength).toMatchObject({ weeks_count: '12', est_minutes_per_session: '45', days_per_week: 3 });
    expect(Object.keys(strength ?? {}).sort()).toEqual(
      [
        'approved',
        'cover_url',
        'days_per_week',
        'discipline',
        'est_minutes_per_session',
        'id',
        'level',
        'published',
        'summary',
        'title',
        'weeks_count',
      ].sort(),
    );
  });

  it('reads through a cursor in batches of 2,000 rows and then releases the connection', async () => {
    const source = new PostgresSource(server.url(), { sourceRelation: 'catalog_source_many' });
    const sizes: number[] = [];
    for await (const batch of source.batches()) sizes.push(batch.length);
    expect(sizes).toEqual([2000, 2000, 1]);
    expect(await builderSessions()).toBe(0);
  });

  it('releases the connection when the reader stops early', async () => {
    const source = new PostgresSource(server.url(), { sourceRelation: 'catalog_source_many' });
    for await (const batch of source.batches()) {
      expect(batch).toHaveLength(2000);
      break;
    }
    expect(await builderSessions()).toBe(0);
  });

  it('reads in a read-only transaction: a relation that writes fails', async () => {
    const error = await failure(
      new PostgresSource(server.url(), { sourceRelation: 'catalog_source_writes' }),
    );
    expect(error.message).toContain('read-only transaction');
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM read_attempts');
    expect(rows[0]?.n).toBe(0);
    expect(await builderSessions()).toBe(0);
  });
});

describe('failures name the source without its password', () => {
  it('fails on a refused connection', async () => {
    const port = await refusedPort();
    const url = `postgres://catalog:hunter2-secret@127.0.0.1:${port}/plans`;
    const error = await failure(new PostgresSource(url, { sourceConnectTimeout: 2_000 }));
    expect(error.message).toMatch(
      new RegExp(
        `^source postgres://catalog:\\*\\*\\*@127\\.0\\.0\\.1:${port}/plans: cannot connect \\(connection refused`,
      ),
    );
  });

  it('fails on a wrong password as refused credentials', async () => {
    const url = server.url({ password: 'wrong-password-4711' });
    const error = await failure(new PostgresSource(url));
    expect(error.message).toBe(
      `source postgres://catalog:***@127.0.0.1:${server.port}/plans: refused the credentials (password authentication failed for user "catalog")`,
    );
  });

  it('redacts a password given as a query parameter', async () => {
    const url = `postgres://catalog@127.0.0.1:${server.port}/plans?password=wrong-password-0815&sslmode=disable`;
    const error = await failure(new PostgresSource(url));
    expect(error.message).toContain(
      `postgres://catalog@127.0.0.1:${server.port}/plans?password=***&sslmode=disable:`,
    );
    expect(error.message).toContain('refused the credentials');
  });

  it('fails when the statement timeout passes', async () => {
    const started = performance.now();
    const error = await failure(
      new PostgresSource(server.url(), {
        sourceRelation: 'catalog_source_slow',
        sourceStatementTimeout: 300,
      }),
    );
    expect(error.message).toContain('the read timed out after 300 ms (statement_timeout');
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(await builderSessions()).toBe(0);
  });

  it('fails on a missing relation, naming it', async () => {
    const error = await failure(
      new PostgresSource(server.url(), { sourceRelation: 'reporting.no_such_view' }),
    );
    expect(error.message).toContain(
      `relation "reporting.no_such_view" does not exist; set ${settingRef('sourceRelation')}, or create the view`,
    );
  });

  it('fails on a relation the role may not read', async () => {
    const error = await failure(new PostgresSource(server.url(), { sourceRelation: 'private_plans' }));
    expect(error.message).toContain(
      "permission denied for table private_plans; grant SELECT on private_plans to the source's user",
    );
  });

  it('fails on a relation without the contract columns, naming the first missing one', async () => {
    const error = await failure(new PostgresSource(server.url(), { sourceRelation: 'plans' }));
    expect(error.message).toContain(
      'relation plans lacks a column of the row contract (column "cover_url" does not exist)',
    );
  });

  it('asks for TLS when the URL says sslmode=verify-full', async () => {
    const error = await failure(new PostgresSource(`${server.url()}?sslmode=verify-full`));
    expect(error.message).toBe(
      `source postgres://catalog:***@127.0.0.1:${server.port}/plans?sslmode=verify-full: cannot connect (The server does not support SSL connections)`,
    );
  });

  it('fails on a database that does not exist', async () => {
    const error = await failure(new PostgresSource(server.url({ database: 'nope' })));
    expect(error.message).toContain('cannot connect (database "nope" does not exist)');
  });
});

describe('catalog build --source postgres://…', () => {
  const scratch = useScratchDir();

  it('builds from the example view', async () => {
    const result = await runCatalog([
      'build',
      '--out',
      scratch.dir,
      '--source',
      server.url(),
      '--source-relation',
      'reporting."Valid Plans"',
    ]);
    expect(result.stderr).toContain(
      `built 2 plans (${planCountsText({ running: 1, strength: 1 })}) from 2 rows into`,
    );
    expect(result.code).toBe(0);
    const catalog = Catalog.parse(JSON.parse(await readFile(join(scratch.dir, 'catalog.json'), 'utf8')));
    expect(catalog.plans.map((p) => p.id)).toEqual([ID.running, ID.strength]);
    expect(result.stderr).not.toContain(server.reader.password);
  });

  it('fails with one line naming the redacted source, and writes nothing, on a wrong password', async () => {
    const result = await runCatalog(['build', '--out', scratch.dir], {
      env: { CATALOG_SOURCE: server.url({ password: 'wrong-password-cli' }) },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `catalog: source postgres://catalog:***@127.0.0.1:${server.port}/plans: refused the credentials (password authentication failed for user "catalog")\n`,
    );
    expect(await readdir(scratch.dir)).toEqual([]);
  });

  it('takes the statement timeout and relation from the environment', async () => {
    const result = await runCatalog(['build', '--out', scratch.dir, '--source', server.url()], {
      env: { CATALOG_SOURCE_STATEMENT_TIMEOUT: '300ms', CATALOG_SOURCE_RELATION: 'catalog_source_slow' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^catalog: source postgres:\/\/catalog:\*\*\*@.*: the read timed out after 300 ms/,
    );
    expect(result.stderr).not.toContain(server.reader.password);
    expect(await readdir(scratch.dir)).toEqual([]);
  });
});

describe('the read', () => {
  it('selects the contract columns of the quoted relation, published and approved only, read-only', () => {
    const sql = readStatements({ schema: 'reporting', name: 'Valid "Plans"' }, 1500);
    expect(sql).toEqual({
      begin: 'BEGIN READ ONLY',
      timeout: 'SET LOCAL statement_timeout = 1500',
      declare:
        'DECLARE catalog_source_rows NO SCROLL CURSOR FOR SELECT id, title, summary, cover_url, level, discipline, weeks_count, days_per_week, est_minutes_per_session, published, approved FROM "reporting"."Valid ""Plans""" WHERE published AND approved',
      fetch: 'FETCH FORWARD 2000 FROM catalog_source_rows',
      end: 'COMMIT',
    });
  });

  it('refuses a relation name that is not one, before connecting', () => {
    expect(
      () => new PostgresSource('postgres://x@127.0.0.1/db', { sourceRelation: 'plans; DROP TABLE plans' }),
    ).toThrow(/relation "plans; DROP TABLE plans": must be a table or view name/);
  });

  it.each([
    ['ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:5432', 'connect', 'cannot connect (connection refused'],
    ['28P01', 'password authentication failed for user "x"', 'connect', 'refused the credentials'],
    [
      '42P01',
      'relation "v" does not exist',
      'read',
      `relation "v" does not exist; set ${settingRef('sourceRelation')}`,
    ],
    ['42703', 'column "cover_url" does not exist', 'read', 'lacks a column of the row contract'],
    ['57014', 'canceling statement due to statement timeout', 'read', 'timed out after 900 ms'],
    [undefined, 'Connection terminated due to connection timeout', 'connect', 'no answer within 100 ms'],
  ] as const)('describes a %s error (%s)', (code, message, stage, reason) => {
    const described = describePostgresError(Object.assign(new Error(message), { code }), {
      stage,
      relation: 'v',
      connectTimeoutMs: 100,
      statementTimeoutMs: 900,
    });
    expect(described).toContain(reason);
  });
});
