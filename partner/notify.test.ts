import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { refusedPort } from '../testing/postgres.ts';
import { until } from '../testing/until.ts';
import { ChangeLog, type ChangeSet } from './changes.ts';
import { ChangeNotifier, type NotifySource, notifyUrlProblem } from './notify.ts';

const PLAN = {
  id: '00000000-0000-4000-8000-000000000001',
  title: 'Base',
  summary: null,
  coverUrl: null,
  level: 'none',
  discipline: 'running',
  disciplineLabel: 'Outdoor',
  weeksCount: 4,
  daysPerWeek: null,
  estMinutesPerSession: null,
  webUrl: 'https://plans.example.com/plans/00000000-0000-4000-8000-000000000001',
  appUrl: 'trainingplans://plan/00000000-0000-4000-8000-000000000001',
} as const;

/** A history of `count` change sets (each retitles the one plan), keeping the last `limit`. */
function historyOf(count: number, limit = 100): ChangeLog {
  const log = new ChangeLog(limit);
  for (let i = 1; i <= count; i += 1) {
    const set = log.next(
      new Date(Date.UTC(2026, 10, 21, 8, i)),
      { generatedAt: '2026-11-21T08:00:00.000Z', plans: [{ ...PLAN, title: `Title ${i - 1}` }] },
      { generatedAt: '2026-11-21T08:00:00.000Z', plans: [{ ...PLAN, title: `Title ${i}` }] },
    );
    if (set) log.append(set);
  }
  return log;
}

function sourceOf(log: ChangeLog, delivered: number[] = []): NotifySource {
  return {
    changes: () => log,
    delivered: (sequence) => delivered.push(sequence),
  };
}

/** A receiver on 127.0.0.1 (on `port`, or a free one) answering every request with `status`. */
async function receiverOn(port: number, status: () => number) {
  const bodies: ChangeSet[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChangeSet);
      response.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

describe('the notify hook', () => {
  it('retries a receiver that cannot be reached until it listens, then delivers every change set in order', async () => {
    // Nothing listens there until the receiver starts (testing/postgres.ts refusedPort).
    const port = await refusedPort();
    const log = historyOf(2);
    const delivered: number[] = [];
    const logs: Record<string, unknown>[] = [];
    const notifier = new ChangeNotifier(
      { url: `http://127.0.0.1:${port}/hook`, minRetryMs: 50, maxRetryMs: 100 },
      sourceOf(log, delivered),
      0,
      (entry) => logs.push(entry),
    );
    notifier.kick();
    await until(() => notifier.health().consecutiveFailures >= 2, 'two failures');
    expect(notifier.health()).toMatchObject({
      status: 'retrying',
      delivered: 0,
      pending: 2,
      lastAttempt: { sequence: 1, outcome: 'failed', error: expect.stringMatching(/ECONNREFUSED/) },
    });
    const receiver = await receiverOn(port, () => 200);
    try {
      await until(() => delivered.length === 2, 'two deliveries');
      expect(delivered).toEqual([1, 2]);
      expect(receiver.bodies.map((body) => [body.sequence, body.changed])).toEqual([
        [1, [{ id: PLAN.id, title: 'Title 1', fields: ['title'] }]],
        [2, [{ id: PLAN.id, title: 'Title 2', fields: ['title'] }]],
      ]);
      expect(notifier.health()).toMatchObject({
        status: 'ok',
        delivered: 2,
        pending: 0,
        consecutiveFailures: 0,
      });
      expect(logs.filter((l) => l.outcome === 'failed')[0]).toMatchObject({
        event: 'notify',
        sequence: 1,
        attempt: 1,
        nextAttemptInSeconds: 0.05,
      });
    } finally {
      await notifier.close();
      await receiver.close();
    }
  });

  it('skips the change sets that left the history before they were delivered, and says so', async () => {
    const receiver = await receiverOn(0, () => 204);
    const log = historyOf(5, 2);
    const logs: Record<string, unknown>[] = [];
    const notifier = new ChangeNotifier({ url: receiver.url }, sourceOf(log), 1, (entry) => logs.push(entry));
    try {
      expect(notifier.health()).toMatchObject({ delivered: 1, pending: 2 });
      notifier.kick();
      await until(() => notifier.health().delivered === 5, 'five deliveries');
      expect(receiver.bodies.map((body) => body.sequence)).toEqual([4, 5]);
      expect(logs[0]).toMatchObject({ event: 'notify', outcome: 'skipped', sequences: [2, 3] });
    } finally {
      await notifier.close();
      await receiver.close();
    }
  });

  it('stops at once when closed, even while it waits to retry', async () => {
    const receiver = await receiverOn(0, () => 503);
    const notifier = new ChangeNotifier(
      { url: receiver.url, minRetryMs: 60_000 },
      sourceOf(historyOf(1)),
      0,
      () => {},
    );
    try {
      notifier.kick();
      await until(() => notifier.health().consecutiveFailures === 1, 'a failure');
      const started = performance.now();
      await notifier.close();
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(receiver.bodies).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('takes only http(s) URLs without credentials or a fragment', () => {
    expect(notifyUrlProblem('https://app.example.com/hooks/catalog?token=x')).toBeUndefined();
    expect(notifyUrlProblem('/hooks/catalog')).toBe('must be an absolute http(s):// URL');
    expect(notifyUrlProblem('ftp://app.example.com/')).toBe('must be an http(s):// URL');
    expect(notifyUrlProblem('https://user:pw@app.example.com/')).toBe(
      'must not hold user:password@ (put a secret in the path or the query)',
    );
    expect(notifyUrlProblem('https://app.example.com/#x')).toBe('must not have a #fragment');
    expect(() => new ChangeNotifier({ url: 'mailto:x' }, sourceOf(historyOf(0)), 0, () => {})).toThrow(
      'notify URL must be an http(s):// URL',
    );
  });
});
