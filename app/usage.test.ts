import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  foldUsage,
  groupAccessLog,
  groupsOfResults,
  linesOf,
  readLogValue,
  type UsageGroup,
} from './usage.ts';

describe('reading a recorded value', () => {
  it.each([
    ['acme', { kind: 'partner', partner: 'acme', reason: null }],
    ['globex-eu', { kind: 'partner', partner: 'globex-eu', reason: null }],
    ['acme.expired-key', { kind: 'partner', partner: 'acme', reason: 'expired-key' }],
    ['acme.discipline', { kind: 'partner', partner: 'acme', reason: 'discipline' }],
    ['no-key', { kind: 'unnamed', reason: 'no-key' }],
    ['unknown-key', { kind: 'unnamed', reason: 'unknown-key' }],
    ['many-keys', { kind: 'unnamed', reason: 'many-keys' }],
    ['method', { kind: 'unnamed', reason: 'method' }],
    ['path', { kind: 'unnamed', reason: 'path' }],
    ['page', { kind: 'page' }],
    // The canary's marker: every request of the deployment's own checks under the monitoring partner.
    ['monitoring', { kind: 'partner', partner: 'monitoring', reason: null }],
    ['monitoring.no-key', { kind: 'partner', partner: 'monitoring', reason: 'no-key' }],
    ['monitoring.path', { kind: 'partner', partner: 'monitoring', reason: 'path' }],
    ['monitoring.page', { kind: 'partner', partner: 'monitoring', reason: 'page' }],
    // No gateway records a partner's page view (a page takes no key).
    ['acme.page', { kind: 'unreadable' }],
    // CloudFront URL-encodes the value; ours need no encoding, but a decoded one reads the same.
    ['acme%2Eexpired-key', { kind: 'partner', partner: 'acme', reason: 'expired-key' }],
    ['acme.nonsense', { kind: 'unreadable' }],
    ['Acme', { kind: 'unreadable' }],
    ['%E0%A4%A', { kind: 'unreadable' }],
  ])('%s', (value, reading) => {
    expect(readLogValue(value)).toEqual(reading);
  });

  it.each([['-'], [''], [null], [undefined]])('%j is a request with nothing recorded', (value) => {
    expect(readLogValue(value)).toBeNull();
  });
});

describe('the same report from an access log and from Logs Insights rows', () => {
  const since = new Date('2026-11-01T00:00:00.000Z');
  const until = new Date('2026-12-01T00:00:00.000Z');
  const entries = [
    ['2026-11-02T10:00:00.000Z', 200, 1000, 'acme'],
    ['2026-11-03T10:00:00.000Z', 200, 1000, 'acme'],
    ['2026-11-04T10:00:00.000Z', 304, 0, 'acme'],
    ['2026-11-05T10:00:00.000Z', 500, 90, 'acme'],
    ['2026-11-06T10:00:00.000Z', 400, 200, 'acme.discipline'],
    ['2026-11-07T10:00:00.000Z', 401, 150, 'globex.expired-key'],
    ['2026-11-08T10:00:00.000Z', 401, 150, 'no-key'],
    ['2026-11-09T10:00:00.000Z', 404, 120, 'path'],
    ['2026-11-10T10:00:00.000Z', 200, 5000, 'page'],
    ['2026-11-11T10:00:00.000Z', 200, 5000, null],
    ['2026-10-01T10:00:00.000Z', 200, 1000, 'initech'],
  ] as const;
  const accessLog = entries
    .map(([time, status, bytes, logData]) =>
      JSON.stringify({
        time,
        method: 'GET',
        path: '/api/plans',
        status,
        bytes,
        ms: 1,
        partner: null,
        logData,
      }),
    )
    .join('\nan unrelated line of the server\n');

  it('folds both to the same counts', async () => {
    const { groups: local } = await groupAccessLog(linesOf(Readable.from([accessLog])), { since, until });
    // What Logs Insights answers for the same records: one row per value and status, within the window.
    const rows = new Map<string, UsageGroup>();
    for (const [time, status, bytes, logData] of entries) {
      const at = new Date(time);
      if (logData === null || at < since) continue;
      const key = `${logData} ${status}`;
      const row = rows.get(key);
      rows.set(key, {
        logData,
        status,
        requests: (row?.requests ?? 0) + 1,
        bytes: (row?.bytes ?? 0) + bytes,
        first: row && row.first < at ? row.first : at,
        last: row && row.last > at ? row.last : at,
      });
    }
    const insightsTime = (date: Date) => date.toISOString().replace('T', ' ').replace('Z', '');
    const remote = groupsOfResults(
      [...rows.values()].map((row) => [
        { field: 'data', value: row.logData },
        { field: 'status', value: String(row.status) },
        { field: 'requests', value: String(row.requests) },
        { field: 'bytes', value: String(row.bytes) },
        { field: 'first', value: insightsTime(row.first) },
        { field: 'last', value: insightsTime(row.last) },
      ]),
    );
    const window = { source: 'x', since, until };
    const report = foldUsage(local, window);
    expect(foldUsage(remote, window)).toEqual(report);
    expect(report.partners).toEqual([
      {
        partner: 'acme',
        requests: 5,
        ok: 2,
        notModified: 1,
        refused: { discipline: 1 },
        other: 1,
        bytes: 2290,
        firstSeen: '2026-11-02T10:00:00.000Z',
        lastSeen: '2026-11-06T10:00:00.000Z',
      },
      {
        partner: 'globex',
        requests: 1,
        ok: 0,
        notModified: 0,
        refused: { 'expired-key': 1 },
        other: 0,
        bytes: 150,
        firstSeen: '2026-11-07T10:00:00.000Z',
        lastSeen: '2026-11-07T10:00:00.000Z',
      },
    ]);
    expect(report.unnamed).toEqual([
      { reason: 'no-key', requests: 1 },
      { reason: 'path', requests: 1 },
    ]);
    expect(report.pages).toBe(1);
  });

  it("counts the deployment's own checks apart: answers (2xx with a preflight's 204), refusals, pages", () => {
    const at = new Date('2026-11-02T10:00:00.000Z');
    const group = (logData: string, status: number, requests: number): UsageGroup => ({
      logData,
      status,
      requests,
      bytes: requests * 10,
      first: at,
      last: at,
    });
    const report = foldUsage(
      [
        group('monitoring', 200, 20),
        group('monitoring', 204, 2),
        group('monitoring', 304, 3),
        group('monitoring.no-key', 401, 4),
        group('monitoring.method', 405, 5),
        group('monitoring.page', 200, 6),
        group('monitoring.page', 404, 1),
        group('no-key', 401, 7),
        group('page', 200, 8),
      ],
      { source: 'x', since, until },
    );
    expect(report.partners).toEqual([]);
    expect(report.monitoring).toMatchObject({
      partner: 'monitoring',
      requests: 41,
      ok: 22,
      notModified: 3,
      refused: { 'no-key': 4, method: 5 },
      pages: 7,
      other: 0,
      bytes: 410,
    });
    expect(report.unnamed).toEqual([{ reason: 'no-key', requests: 7 }]);
    expect(report.pages).toBe(8);
  });

  it('counts an entry written before the log recorded logData by its partner', async () => {
    const old = JSON.stringify({ time: '2026-11-02T10:00:00.000Z', status: 200, bytes: 7, partner: 'acme' });
    const { groups } = await groupAccessLog(linesOf(Readable.from([old])), { since, until });
    expect(foldUsage(groups, { source: 'x', since, until }).partners[0]).toMatchObject({
      partner: 'acme',
      ok: 1,
    });
  });
});

describe('the lines of an access log', () => {
  const lines = async (...chunks: (string | Buffer)[]) => {
    const read: (string | null)[] = [];
    for await (const line of linesOf(Readable.from(chunks))) read.push(line);
    return read;
  };

  it('are split across chunks (UTF-8 too), the last one without a newline included', async () => {
    const text = Buffer.from('{"a":"é"}\n\nb');
    expect(await lines(text.subarray(0, 7), text.subarray(7, 10), text.subarray(10))).toEqual([
      '{"a":"é"}',
      '',
      'b',
    ]);
    expect(await lines('a\n', 'b\n')).toEqual(['a', 'b']);
    expect(await lines()).toEqual([]);
  });

  it('give a line longer than 1 MiB as null, however it is cut, and go on', async () => {
    const MiB = 1024 * 1024;
    expect(await lines('x'.repeat(MiB), '\nnext\n')).toEqual(['x'.repeat(MiB), 'next']);
    expect(await lines('x'.repeat(MiB), 'y\nnext\n', 'z'.repeat(MiB + 1))).toEqual([null, 'next', null]);
  });
});
