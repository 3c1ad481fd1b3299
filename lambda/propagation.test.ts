/**
 * The propagation check against a real HTTP server on 127.0.0.1 that plays the edge: it serves an old
 * `generatedAt` and switches to the new one after a delay (or never), answers 401 to a wrong key, or is not
 * there at all.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { refusedPort } from '../testing/postgres.ts';
import { measurePropagation } from './propagation.ts';

const OLD = '2026-03-01T09:00:00.000Z';
const NEW = '2026-03-01T10:00:00.000Z';
const KEY = `tpc_${'k'.repeat(43)}`;

interface Edge {
  readonly url: string;
  /** Each request: its target, its key and when it arrived (`performance.now()`, this process's clock). */
  readonly requests: { url: string; key: string | undefined; at: number }[];
  close(): Promise<void>;
}

let edge: Edge | undefined;
afterEach(async () => {
  await edge?.close();
  edge = undefined;
});

/** The server listening on 127.0.0.1: its URL, and how to stop it (its connections cut). */
async function listening(server: http.Server): Promise<Pick<Edge, 'url' | 'close'>> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An edge serving OLD until `flipAfterMs` after it started (never: Infinity), then NEW. */
async function startEdge(flipAfterMs: number): Promise<Edge> {
  const started = performance.now();
  const requests: Edge['requests'] = [];
  const server = http.createServer((req, res) => {
    const key = req.headers['x-api-key'] as string | undefined;
    requests.push({ url: req.url ?? '', key, at: performance.now() });
    if (key !== KEY) {
      res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"status":401}');
      return;
    }
    const generatedAt = performance.now() - started >= flipAfterMs ? NEW : OLD;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ generatedAt, plans: [] }));
  });
  return { ...(await listening(server)), requests };
}

/** An edge answering 200 with `write(res)` to the right key; `ended` settles when the probe's connection closes. */
async function startStreamingEdge(
  write: (res: http.ServerResponse) => void,
): Promise<Edge & { ended: Promise<number> }> {
  const requests: Edge['requests'] = [];
  let ended!: (bytes: number) => void;
  const endedPromise = new Promise<number>((resolve) => {
    ended = resolve;
  });
  const server = http.createServer((req, res) => {
    requests.push({
      url: req.url ?? '',
      key: req.headers['x-api-key'] as string | undefined,
      at: performance.now(),
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.on('close', () => ended(req.socket.bytesWritten));
    write(res);
  });
  return { ...(await listening(server)), requests, ended: endedPromise };
}

describe('the propagation check', () => {
  it('reads only the head of the catalog: a body that never ends is measured at once, and dropped', async () => {
    const streaming = await startStreamingEdge((res) => {
      res.write(`{"generatedAt":${JSON.stringify(NEW)},"plans":[`);
      const plan = `${JSON.stringify({ id: 'p', title: 'x'.repeat(1000) })},`;
      const more = () => {
        if (res.destroyed) return;
        res.write(plan.repeat(64), () => setImmediate(more));
      };
      more();
    });
    edge = streaming;
    const result = await measurePropagation({
      baseUrl: edge.url,
      key: KEY,
      generatedAt: NEW,
      since: performance.now(),
      maxWaitMs: 60_000,
      intervalMs: 1_000,
    });
    expect(result).toMatchObject({ outcome: 'measured', polls: 1 });
    // The probe closed the connection; what the edge had written by then is what the socket buffers took,
    // not the endless body.
    expect(await streaming.ended).toBeLessThan(16 * 1024 * 1024);
  });

  it('says so when a 200 answer does not start as a catalog, and waits on', async () => {
    edge = await startStreamingEdge((res) => res.end('<html>not a catalog</html>'));
    const result = await measurePropagation({
      baseUrl: edge.url,
      key: KEY,
      generatedAt: NEW,
      since: performance.now(),
      maxWaitMs: 300,
      intervalMs: 100,
    });
    expect(result).toMatchObject({ outcome: 'timeout', lastSeen: 'a 200 answer that is not a catalog' });
  });

  it('measures from the pointer move until the edge serves the new build: at least the delay', async () => {
    const since = performance.now();
    edge = await startEdge(400);
    const result = await measurePropagation({
      baseUrl: edge.url,
      key: KEY,
      generatedAt: NEW,
      since,
      maxWaitMs: 10_000,
      intervalMs: 50,
    });
    expect(result.outcome).toBe('measured');
    if (result.outcome !== 'measured') return;
    expect(result.seconds).toBeGreaterThanOrEqual(0.4);
    expect(result.polls).toBe(edge.requests.length);
    expect(result.polls).toBeGreaterThan(1);
    expect(new Set(edge.requests.map((request) => request.url))).toEqual(
      new Set(['/api/plans?discipline=running']),
    );
    expect(new Set(edge.requests.map((request) => request.key))).toEqual(new Set([KEY]));
  });

  it('records a timeout, and what the edge still served, when it never switches within the wait', async () => {
    edge = await startEdge(Number.POSITIVE_INFINITY);
    const since = performance.now();
    const result = await measurePropagation({
      baseUrl: `${edge.url}/`,
      key: KEY,
      generatedAt: NEW,
      since,
      maxWaitMs: 1_000,
      intervalMs: 100,
    });
    const waited = (performance.now() - since) / 1000;
    expect(result).toEqual({
      outcome: 'timeout',
      waitedSeconds: expect.any(Number),
      polls: edge.requests.length,
      lastSeen: `generatedAt ${OLD}`,
    });
    // It polled until the deadline, never past it by more than one answer, with a pause between polls.
    if (result.outcome !== 'timeout') return;
    expect(result.waitedSeconds).toBeGreaterThanOrEqual(1);
    // Rounded to the millisecond, as the result says it.
    expect(result.waitedSeconds).toBeLessThanOrEqual(Math.round(waited * 1000) / 1000 + 0.001);
    expect(result.polls).toBeGreaterThan(2);
    expect(result.polls).toBeLessThanOrEqual(11);
    // The last poll is at the deadline, not just before it: a timer that ends early (Node counts whole
    // milliseconds) left time for a twelfth poll, a millisecond after the eleventh.
    expect(edge.requests.at(-1)?.at).toBeGreaterThanOrEqual(since + 1_000);
  });

  it('stops at once when the edge refuses the key', async () => {
    edge = await startEdge(0);
    const result = await measurePropagation({
      baseUrl: edge.url,
      key: `tpc_${'x'.repeat(43)}`,
      generatedAt: NEW,
      since: 0,
      maxWaitMs: 120_000,
      intervalMs: 5_000,
    });
    expect(result).toEqual({
      outcome: 'failed',
      reason: `GET ${edge.url}/api/plans?discipline=running answered 401 (the monitoring key is not valid)`,
      polls: 1,
    });
  });

  it('waits out an edge it cannot reach, and says so when the wait runs out', async () => {
    const port = await refusedPort();
    const result = await measurePropagation({
      baseUrl: `http://127.0.0.1:${port}`,
      key: KEY,
      generatedAt: NEW,
      since: performance.now(),
      maxWaitMs: 1_000,
      intervalMs: 400,
    });
    expect(result).toMatchObject({ outcome: 'timeout', polls: expect.any(Number) });
    if (result.outcome === 'timeout') expect(result.waitedSeconds).toBeGreaterThanOrEqual(1);
    // Three polls: at 0, after 400 ms and 800 ms; a last one at the deadline.
    if (result.outcome === 'timeout') expect(result.polls).toBeGreaterThanOrEqual(3);
    if (result.outcome === 'timeout') expect(result.lastSeen).toMatch(/fetch failed|connection refused/);
  });
});
