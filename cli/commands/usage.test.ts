/**
 * `catalog usage` end to end: a real `catalog serve` answers the requests of two partners and refused ones,
 * its access log goes to the command; on AWS the command runs its Logs Insights query against a local
 * stand-in of the CloudWatch Logs API (reached by AWS_ENDPOINT_URL_CLOUDWATCH_LOGS), which records the exact
 * requests.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageReport } from '../../app/usage.ts';
import { MONITORING_PARTNER } from '../../contract/index.ts';
import { type Recorder, startRecorder } from '../../testing/aws.ts';
import { nextAccessLogEntry } from '../../testing/cases.suite.ts';
import {
  CATALOG_BIN,
  httpRequest,
  ROOT,
  runCatalog,
  type ServeProcess,
  startCatalog,
  startServe,
} from '../../testing/cli.ts';
import { freePort } from '../../testing/postgres.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { runLocalCanaryOnce, serveWorldLogged } from '../../testing/served-log.ts';
import { createTestWorld, type TestWorld } from '../../testing/world.ts';

const DAY_SECONDS = 86_400;

describe('catalog usage over a catalog serve access log', () => {
  let world: TestWorld;
  let server: ServeProcess;
  let logFile: string;
  /** Bytes each partner was sent, as the client counted them. */
  const sent: Record<string, number> = { acme: 0, globex: 0, umbrella: 0 };

  beforeAll(async () => {
    world = await createTestWorld();
    server = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    let seen = server.lines.length;
    const send = async (
      partner: string | null,
      method: string,
      target: string,
      headers: [string, string][] = [],
    ) => {
      const answer = await httpRequest(server.url, { method, target, headers });
      if (partner !== null) sent[partner] = (sent[partner] ?? 0) + answer.body.length;
      // Each request's line is written once its answer is out: wait for it, so the log is complete.
      seen = (await nextAccessLogEntry(server.lines, seen)).seen;
      return answer.status;
    };
    const acme: [string, string] = ['X-Api-Key', world.keys.valid];
    const globex: [string, string] = ['X-Api-Key', world.keys.other];
    const statuses = [
      await send('acme', 'GET', '/api/plans', [acme]),
      await send('acme', 'GET', '/api/plans?discipline=running', [acme]),
      await send('acme', 'GET', '/api/plans', [acme, ['If-None-Match', '*']]),
      await send('acme', 'GET', '/api/plans?discipline=walking', [acme]),
      await send('globex', 'GET', '/api/plans?discipline=strength', [globex]),
      await send('globex', 'GET', '/api/plans?discipline=strength', [globex]),
      await send('umbrella', 'GET', '/api/plans', [['X-Api-Key', world.keys.expired]]),
      await send(null, 'GET', '/api/plans'),
      await send(null, 'GET', '/api/plans', [['X-Api-Key', '']]),
      await send(null, 'GET', '/api/plans', [['X-Api-Key', world.keys.forged]]),
      await send(null, 'GET', '/api/plans', [['X-Api-Key', world.keys.revoked]]),
      await send(null, 'GET', '/api/plans', [acme, globex]),
      await send(null, 'POST', '/api/plans', [acme]),
      await send(null, 'GET', '/catalog.json', [acme]),
      await send(null, 'GET', '/plans/920c4400-79a6-5b26-9ac7-4c18aea7632c'),
      await send(null, 'GET', '/openapi.yaml'),
      await send(null, 'OPTIONS', '/api/plans'),
    ];
    expect(statuses).toEqual([
      200, 200, 304, 400, 200, 200, 401, 401, 401, 401, 401, 401, 405, 404, 200, 200, 204,
    ]);
    logFile = join(world.dir, 'access.log');
    await writeFile(logFile, `${server.lines.join('\n')}\n`);
  });
  afterAll(async () => {
    await server?.stop();
    await world?.remove();
  });

  it('counts each partner’s requests, answers and bytes, and the refusals that named no partner, exactly', async () => {
    const result = await runCatalog(['usage', '--access-log', logFile, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.source).toBe(logFile);
    expect(
      report.partners.map((p: Record<string, unknown>) => ({
        ...p,
        firstSeen: undefined,
        lastSeen: undefined,
      })),
    ).toEqual([
      {
        partner: 'acme',
        requests: 4,
        ok: 2,
        notModified: 1,
        refused: { discipline: 1 },
        other: 0,
        bytes: sent.acme,
        firstSeen: undefined,
        lastSeen: undefined,
      },
      {
        partner: 'globex',
        requests: 2,
        ok: 2,
        notModified: 0,
        refused: {},
        other: 0,
        bytes: sent.globex,
        firstSeen: undefined,
        lastSeen: undefined,
      },
      {
        partner: 'umbrella',
        requests: 1,
        ok: 0,
        notModified: 0,
        refused: { 'expired-key': 1 },
        other: 0,
        bytes: sent.umbrella,
        firstSeen: undefined,
        lastSeen: undefined,
      },
    ]);
    expect(report.unnamed).toEqual([
      { reason: 'no-key', requests: 2 },
      { reason: 'unknown-key', requests: 2 },
      { reason: 'many-keys', requests: 1 },
      { reason: 'method', requests: 1 },
      { reason: 'path', requests: 1 },
    ]);
    expect(report.pages).toBe(1);
    expect(report.unreadable).toBe(0);
    const acme = report.partners[0];
    expect(Date.parse(acme.firstSeen)).toBeLessThanOrEqual(Date.parse(acme.lastSeen));
    expect(Date.parse(acme.lastSeen)).toBeLessThanOrEqual(Date.now());
  });

  it('reads the same log from standard input and prints a table', async () => {
    const { readFile } = await import('node:fs/promises');
    const result = await runCatalog(['usage', '--access-log', '-'], {
      input: await readFile(logFile, 'utf8'),
    });
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^usage from \S+Z to \S+Z \(standard input\)$/);
    expect(lines.find((line) => line.startsWith('acme '))).toMatch(
      new RegExp(`^acme +4 +2 +1 +discipline 1 +0 +${sent.acme} +\\S+Z +\\S+Z$`),
    );
    expect(lines.find((line) => line.startsWith('umbrella '))).toMatch(
      /^umbrella +1 +0 +0 +expired-key 1 +0 /,
    );
    expect(lines.find((line) => line.startsWith('no-key '))).toMatch(/^no-key +2$/);
  });

  it('counts only the requests within --since', async () => {
    // A line from long ago, before the window.
    const old = JSON.stringify({
      time: '2020-01-01T00:00:00.000Z',
      method: 'GET',
      path: '/api/plans',
      status: 200,
      bytes: 5,
      ms: 1,
      partner: 'hooli',
      logData: 'hooli',
    });
    const { readFile } = await import('node:fs/promises');
    const input = `${old}\n${await readFile(logFile, 'utf8')}`;
    const recent = JSON.parse((await runCatalog(['usage', '--access-log', '-', '--json'], { input })).stdout);
    expect(recent.partners.map((p: { partner: string }) => p.partner)).toEqual([
      'acme',
      'globex',
      'umbrella',
    ]);
    const all = JSON.parse(
      (await runCatalog(['usage', '--access-log', '-', '--json', '--since', '3650d'], { input })).stdout,
    );
    expect(all.partners.map((p: { partner: string }) => p.partner)).toEqual([
      'acme',
      'globex',
      'hooli',
      'umbrella',
    ]);
  });

  it('adds to keys list when each key’s partner was last seen, and - for a partner not seen', async () => {
    const usage = JSON.parse((await runCatalog(['usage', '--access-log', logFile, '--json'])).stdout);
    const seen = Object.fromEntries(
      usage.partners.map((p: { partner: string; lastSeen: string }) => [p.partner, p.lastSeen]),
    );
    const store = ['--store', world.stores.plain];
    const listed = await runCatalog(['keys', 'list', ...store, '--usage', '--access-log', logFile, '--json']);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as { partner: string; lastSeen: string | null }[];
    expect(Object.fromEntries(rows.map((row) => [row.partner, row.lastSeen]))).toEqual({
      acme: seen.acme,
      globex: seen.globex,
      // Expired, and still sent: its refusals name it.
      umbrella: seen.umbrella,
      // Valid, never used: a candidate for revocation.
      initech: null,
      // The deployment's own checks made no request in this log.
      monitoring: null,
    });
    const table = (await runCatalog(['keys', 'list', ...store, '--usage', '--access-log', logFile])).stdout;
    const [header, ...lines] = table.trimEnd().split('\n');
    expect(header).toMatch(/^PARTNER +KEY ID +CREATED +EXPIRES +STATUS +LAST SEEN$/);
    expect(lines.find((line) => line.startsWith('initech '))).toMatch(/ -$/);
    expect(lines.find((line) => line.startsWith('acme '))).toMatch(
      new RegExp(` ${String(seen.acme).replace(/\.\d+Z$/, 'Z')}$`),
    );
    // Without --usage the listing is as before.
    expect((await runCatalog(['keys', 'list', ...store])).stdout.split('\n')[0]).toMatch(/STATUS$/);
    const noSource = await runCatalog(['keys', 'list', ...store, '--usage']);
    expect(noSource.code).toBe(1);
    expect(noSource.stderr).toMatch(/^catalog: nothing to read: give --access-log/);
  });

  it('fails naming the file it cannot read, and asks for a source when given none or two', async () => {
    const missing = await runCatalog(['usage', '--access-log', join(world.dir, 'nope.log')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^catalog: cannot read the access log .*nope\.log: .*ENOENT/);
    // With no target, the local stack's access log, as every command acts on the local stack: here there is none.
    const none = await runCatalog(['usage'], { cwd: world.dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      "catalog: the local stack has no access log yet (.catalog/access.log): npm start writes one as it serves; or give --access-log FILE, or --deployment NAME for a deployment's usage log group\n",
    );
    const both = await runCatalog(['usage', '--access-log', logFile, '--log-group', 'g']);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/^catalog: give either --access-log .* or --log-group .*, not both\n$/);
  });
});

describe('catalog usage on AWS (Logs Insights)', () => {
  let logs: Recorder;
  const env = () => ({
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: logs.url,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'eu-west-1',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  beforeAll(async () => {
    logs = await startRecorder();
  });
  afterAll(() => logs?.close());

  /** Answers StartQuery with q-1, then GetQueryResults Running once, then `final`. */
  const answerQuery = (final: Record<string, unknown>) => {
    let polls = 0;
    logs.answerWith((request) => {
      const target = request.headers['x-amz-target'];
      const json = { 'content-type': 'application/x-amz-json-1.1' };
      if (target === 'Logs_20140328.StartQuery')
        return { status: 200, headers: json, body: '{"queryId":"q-1"}' };
      polls += 1;
      return {
        status: 200,
        headers: json,
        body: JSON.stringify(polls === 1 ? { status: 'Running', results: [] } : final),
      };
    });
  };
  const field = (name: string, value: string) => ({ field: name, value });

  it('sends the exact query to the log group over the window, and folds its rows as the access log is folded', async () => {
    logs.requests.length = 0;
    answerQuery({
      status: 'Complete',
      results: [
        [
          field('data', 'acme'),
          field('status', '200'),
          field('requests', '2'),
          field('bytes', '3000'),
          field('first', '2026-11-20 10:00:00.000'),
          field('last', '2026-11-24 09:00:00.000'),
        ],
        [
          field('data', 'acme'),
          field('status', '304'),
          field('requests', '1'),
          field('bytes', '200'),
          field('first', '2026-11-21 10:00:00.000'),
          field('last', '2026-11-21 10:00:00.000'),
        ],
        [
          field('data', 'acme.discipline'),
          field('status', '400'),
          field('requests', '1'),
          field('bytes', '500'),
          field('first', '2026-11-19 08:00:00.000'),
          field('last', '2026-11-19 08:00:00.000'),
        ],
        [
          field('data', 'umbrella.expired-key'),
          field('status', '401'),
          field('requests', '7'),
          field('bytes', '3500'),
          field('first', '2026-11-01 00:00:00.000'),
          field('last', '2026-11-24 12:00:00.000'),
        ],
        [
          field('data', 'no-key'),
          field('status', '401'),
          field('requests', '3'),
          field('bytes', '1500'),
          field('first', '2026-11-02 00:00:00.000'),
          field('last', '2026-11-03 00:00:00.000'),
        ],
        [
          field('data', 'path'),
          field('status', '404'),
          field('requests', '4'),
          field('bytes', '900'),
          field('first', '2026-11-02 00:00:00.000'),
          field('last', '2026-11-03 00:00:00.000'),
        ],
        [
          field('data', 'page'),
          field('status', '200'),
          field('requests', '5'),
          field('bytes', '9000'),
          field('first', '2026-11-02 00:00:00.000'),
          field('last', '2026-11-03 00:00:00.000'),
        ],
      ],
    });
    const before = Math.floor(Date.now() / 1000);
    const result = await runCatalog(['usage', '--log-group', '/catalog/usage', '--since', '7d', '--json'], {
      env: env(),
    });
    const after = Math.ceil(Date.now() / 1000);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const [start, ...polls] = logs.requests;
    expect(start?.headers['x-amz-target']).toBe('Logs_20140328.StartQuery');
    expect(start?.url).toBe('/');
    const body = JSON.parse(start?.body ?? '{}');
    expect(body).toEqual({
      logGroupName: '/catalog/usage',
      startTime: body.startTime,
      endTime: body.endTime,
      queryString: [
        'fields `viewer-request-log-data` as data, `sc-status` as status, `sc-bytes` as sent',
        '| filter ispresent(data) and data != "-"',
        '| stats count(*) as requests, sum(sent) as bytes, min(@timestamp) as first, max(@timestamp) as last by data, status',
        '| limit 10000',
      ].join('\n'),
      limit: 10000,
    });
    expect(body.endTime).toBeGreaterThanOrEqual(before);
    expect(body.endTime).toBeLessThanOrEqual(after);
    expect(body.endTime - body.startTime).toBeGreaterThanOrEqual(7 * DAY_SECONDS);
    expect(body.endTime - body.startTime).toBeLessThanOrEqual(7 * DAY_SECONDS + 1);
    expect(polls.map((r) => [r.headers['x-amz-target'], JSON.parse(r.body)])).toEqual([
      ['Logs_20140328.GetQueryResults', { queryId: 'q-1' }],
      ['Logs_20140328.GetQueryResults', { queryId: 'q-1' }],
    ]);

    const report = JSON.parse(result.stdout);
    expect(report.source).toBe('log group /catalog/usage');
    expect(report.partners).toEqual([
      {
        partner: 'acme',
        requests: 4,
        ok: 2,
        notModified: 1,
        refused: { discipline: 1 },
        other: 0,
        bytes: 3700,
        firstSeen: '2026-11-19T08:00:00.000Z',
        lastSeen: '2026-11-24T09:00:00.000Z',
      },
      {
        partner: 'umbrella',
        requests: 7,
        ok: 0,
        notModified: 0,
        refused: { 'expired-key': 7 },
        other: 0,
        bytes: 3500,
        firstSeen: '2026-11-01T00:00:00.000Z',
        lastSeen: '2026-11-24T12:00:00.000Z',
      },
    ]);
    expect(report.unnamed).toEqual([
      { reason: 'no-key', requests: 3 },
      { reason: 'path', requests: 4 },
    ]);
    expect(report.pages).toBe(5);
  });

  it('fails with the query id when the query does not complete', async () => {
    logs.requests.length = 0;
    answerQuery({ status: 'Failed', results: [] });
    const result = await runCatalog(['usage', '--log-group', '/catalog/usage'], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('catalog: Logs Insights query q-1 on /catalog/usage ended Failed\n');
  });
});

describe('catalog usage over what is not a clean access log', () => {
  const scratch = useScratchDir({ prefix: 'catalog-usage-' });
  // A minute ago: the command's window ends when it starts, before the last line arrives.
  const entry = (logData: string) =>
    JSON.stringify({
      time: new Date(Date.now() - 60_000).toISOString(),
      method: 'GET',
      path: '/api/plans',
      status: 200,
      bytes: 10,
      logData,
    });

  it('counts a line too long to be a record as unreadable and reads on, never holding it (600 MB through a pipe)', async () => {
    const child = spawn(process.execPath, [CATALOG_BIN, 'usage', '--access-log', '-', '--json'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const megabyte = Buffer.alloc(1024 * 1024, 'a');
    await pipeline(
      Readable.from(
        (async function* () {
          yield `${entry('acme')}\n{"path":"`;
          for (let i = 0; i < 600; i += 1) yield megabyte;
          yield `"}\n${entry('globex')}\n`;
        })(),
      ),
      child.stdin,
    );
    expect(await exited, stderr).toBe(0);
    const report = JSON.parse(stdout) as UsageReport;
    expect(report.partners.map((p) => [p.partner, p.requests])).toEqual([
      ['acme', 1],
      ['globex', 1],
    ]);
    expect(report.unreadable).toBe(1);
  });

  it('says so and exits 1 when no line is an access-log record, naming where to get one', async () => {
    const notes = join(scratch.dir, 'notes.log');
    await writeFile(notes, 'catalog serve: listening on http://127.0.0.1:8787\n{"not":"a record"}\n');
    const result = await runCatalog(['usage', '--access-log', notes]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `catalog: ${notes} holds no access-log record (2 lines read): catalog usage reads the JSON lines catalog serve writes on its stderr, which npm start also appends to .catalog/access.log\n`,
    );
    const empty = await runCatalog(['usage', '--access-log', '-'], { input: '' });
    expect(empty.stderr).toMatch(/^catalog: standard input holds no access-log record \(0 lines read\)/);
  });

  it('counts what npm start served from .catalog/access.log, as the README says', async () => {
    const started = await startCatalog(['start'], {
      ready: /Local stack ready on (http:\/\/\S+)/,
      cwd: scratch.dir,
      env: { CATALOG_PORT: String(await freePort()) },
    });
    let stopped = false;
    try {
      const key = (await readFile(join(scratch.dir, '.catalog/dev-key'), 'utf8')).trim();
      const answer = await httpRequest(started.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', key]],
      });
      expect(answer.status).toBe(200);
      expect(await started.stop()).toBe(0);
      stopped = true;
      const result = await runCatalog(
        ['usage', '--access-log', '.catalog/access.log', '--since', '7d', '--json'],
        {
          cwd: scratch.dir,
        },
      );
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as UsageReport;
      expect(report.partners).toMatchObject([
        { partner: 'dev', requests: 1, ok: 1, bytes: answer.body.length },
      ]);
      // With no target: the same log, the local stack's; its canary's run reported apart, nobody else's.
      const local = await runCatalog(['usage', '--since', '7d', '--json'], { cwd: scratch.dir });
      expect(local.code, local.stderr).toBe(0);
      const window = { since: report.since, until: report.until };
      expect({ ...(JSON.parse(local.stdout) as UsageReport), ...window }).toEqual(report);
      expect(report.source).toBe('.catalog/access.log');
      expect(report.monitoring?.requests).toBeGreaterThan(100);
      expect(report.unnamed).toEqual([]);
      expect(report.pages).toBe(0);
    } finally {
      if (!stopped) await started.stop();
    }
  });
});

describe('catalog usage with the deployment’s own checks', () => {
  it('reports a whole catalog check with the monitoring key apart: its keyless, forged, wrong and page requests too', async () => {
    const world = await createTestWorld();
    const server = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    try {
      const acme = await httpRequest(server.url, {
        method: 'GET',
        target: '/api/plans',
        headers: [['X-Api-Key', world.keys.valid]],
      });
      expect(acme.status).toBe(200);
      const check = await runCatalog(['check', '--base-url', server.url, '--cors-origin', 'off', '--json'], {
        env: { CATALOG_CHECK_KEY: world.keys.monitoring },
      });
      expect(check.code).toBe(0);
      const rows = JSON.parse(check.stdout).rows as { requests?: unknown[] }[];
      expect(rows.length).toBeGreaterThan(100);
      await server.stop();
      const logFile = join(world.dir, 'access.log');
      await writeFile(logFile, `${server.lines.join('\n')}\n`);
      const result = await runCatalog(['usage', '--access-log', logFile, '--json']);
      const report = JSON.parse(result.stdout) as UsageReport;
      // The partners are the partners: acme's one request, nothing of the check's.
      expect(report.partners.map((p) => [p.partner, p.requests])).toEqual([['acme', 1]]);
      // The check's refusals and page views are its own, under the monitoring partner: none is nobody's.
      expect(report.unnamed).toEqual([]);
      expect(report.pages).toBe(0);
      expect(report.unreadable).toBe(0);
      const own = report.monitoring;
      expect(own?.partner).toBe(MONITORING_PARTNER);
      expect(Object.keys(own?.refused ?? {})).toEqual(
        expect.arrayContaining(['no-key', 'unknown-key', 'discipline', 'method', 'path']),
      );
      expect(own?.pages).toBeGreaterThan(5);
      expect(own?.ok).toBeGreaterThan(10);
      const refused = Object.values(own?.refused ?? {}).reduce((a, b) => a + b, 0);
      expect(own?.requests).toBe(
        (own?.ok ?? 0) + (own?.notModified ?? 0) + refused + (own?.pages ?? 0) + (own?.other ?? 0),
      );
      // Every request the check sent is there: the log's records less acme's one.
      const records = server.lines.filter((line) => line.startsWith('{') && line.includes('"status"'));
      expect(own?.requests).toBe(records.length - 1);
      const table = await runCatalog(['usage', '--access-log', logFile]);
      expect(table.stdout).not.toMatch(/^monitoring /m);
      expect(table.stdout).toMatch(
        /^apart, the deployment's own checks \(partner monitoring: the canary, catalog check, the builder's propagation check\):\nREQUESTS +2XX +304 +REFUSED +PAGES +OTHER +BYTES +FIRST SEEN +LAST SEEN\n\d+ /m,
      );
      expect(table.stdout).toMatch(/^no refusal named no partner$/m);
    } finally {
      await server.stop();
      await world.remove();
    }
  });

  it('after three runs of the local canary and no partner traffic: the canary apart, no refusal and no page of nobody', async () => {
    const served = await serveWorldLogged();
    try {
      const reports = [];
      for (let run = 0; run < 3; run += 1) reports.push(await runLocalCanaryOnce(served));
      const logFile = join(served.world.dir, 'access.log');
      await writeFile(logFile, served.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      const result = await runCatalog(['usage', '--access-log', logFile, '--json']);
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as UsageReport;
      expect(report.partners).toEqual([]);
      expect(report.unnamed).toEqual([]);
      expect(report.pages).toBe(0);
      expect(report.unreadable).toBe(0);
      // Every request of the three runs, each run the same: refusals of every kind, pages, all the canary's.
      expect(report.monitoring?.requests).toBe(served.entries.length);
      expect(served.entries.length % 3).toBe(0);
      expect(report.monitoring?.refused).toMatchObject({
        'no-key': expect.any(Number),
        'unknown-key': expect.any(Number),
        discipline: expect.any(Number),
        method: expect.any(Number),
        path: expect.any(Number),
      });
      expect(report.monitoring?.pages).toBeGreaterThan(0);
      const table = (await runCatalog(['usage', '--access-log', logFile])).stdout;
      expect(table).toMatch(/^no partner made a request$/m);
      expect(table).toMatch(/^no refusal named no partner$/m);
      expect(table).toMatch(/^pages for people \(plan pages, the home page\): 0$/m);
      expect(table).toMatch(new RegExp(`^${report.monitoring?.requests} +${report.monitoring?.ok} `, 'm'));
    } finally {
      await served.close();
    }
  });
});
