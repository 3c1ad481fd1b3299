/**
 * What `catalog check` and the canary's probe send, counted at the local edge (the built bundles over the
 * published fixtures) from its access log: the check sends each distinct request once, and fetches a large body
 * in identity only where a row is about identity, every row keeping its verdict; the probe reads each catalog in
 * brotli, then only 304s while nothing changed, and tells a moved live pointer.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS, type CatalogName, DISCIPLINES } from '../contract/index.ts';
import { PARTNER_ORIGIN } from '../gateway/cases.ts';
import type { AccessLogEntry } from '../gateway/local/server.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { ROOT } from '../testing/cli.ts';
import { freePort } from '../testing/postgres.ts';
import { createTestWorld, type TestWorld } from '../testing/world.ts';
import { type CheckOptions, checkDeployment, probeDeployment } from './check.ts';
import { blackBoxCases, plannedRequests } from './check-rows.ts';
import { type RunningEdge, serveLocal } from './local.ts';
import { publish } from './run.ts';
import { defaultOf, parseSettings } from './settings/index.ts';

let world: TestWorld;
let port: number;
const edges: RunningEdge[] = [];
let log: AccessLogEntry[] = [];

beforeAll(async () => {
  port = await freePort();
  world = await createTestWorld({ baseUrl: `http://127.0.0.1:${port}` });
});
afterAll(async () => {
  for (const edge of edges) await edge.close();
  await world?.remove();
});

/** The local edge on the world's port over `store`, its access log in {@link log}. */
async function serve(store: string): Promise<RunningEdge> {
  for (const edge of edges.splice(0)) await edge.close();
  const edge = await serveLocal({ origin: world.originDir, store, port, host: '127.0.0.1' }, (entry) =>
    log.push(entry as AccessLogEntry),
  );
  edges.push(edge);
  return edge;
}

const options = (baseUrl: string, cors: string | null): CheckOptions => ({
  baseUrl,
  key: world.keys.valid,
  cors,
  maxAgeMs: defaultOf('maxAge'),
  timeoutMs: 10_000,
  deadlineMs: 60_000,
});

/** The access log's lines so far (the edge logs each answer as it is sent), then empties it. */
async function taken(): Promise<AccessLogEntry[]> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const lines = log;
  log = [];
  return lines;
}

/** How often each catalog's identity bytes were sent, by the size of the bodies served. */
function identityBodies(lines: readonly AccessLogEntry[]): Record<CatalogName, number> {
  const count = (name: CatalogName) =>
    lines.filter(
      (line) => line.method === 'GET' && line.status === 200 && line.bytes === world.objects[name].length,
    ).length;
  return Object.fromEntries(CATALOGS.map((name) => [name, count(name)])) as Record<CatalogName, number>;
}

describe('catalog check at the fixtures', () => {
  it('sends each distinct request once, every row keeping its verdict (CORS off)', async () => {
    const edge = await serve(world.stores.plain);
    const report = await checkDeployment(options(edge.url, null));
    const lines = await taken();
    // Every row as before: each passes, but the rows that need an origin.
    const corsCases = blackBoxCases().filter((c) => c.cors !== undefined);
    expect(report.counts).toMatchObject({ fail: 0, 'not-run': 0, warn: 0, skip: corsCases.length });
    // The rows make 140 requests; 136 are distinct, and each is sent once.
    const plan = plannedRequests({ ...options(edge.url, null), forged: '', now: new Date() });
    expect({ rows: plan.rows, distinct: plan.uses.size }).toEqual({ rows: 140, distinct: 136 });
    expect(lines).toHaveLength(136);
    expect(report.requests).toBe(136);
    // The identity bytes: once per catalog for the rows that learn them, and the running catalog again for each
    // row about choosing identity (no brotli, no gzip, nothing it stores, garbage, identity asked for).
    expect(identityBodies(lines)).toEqual({ all: 1, [DISCIPLINES[0]]: 6, [DISCIPLINES[1]]: 1 });
  });

  it('with a CORS origin: every row passes, each distinct request sent once', async () => {
    const edge = await serve(world.stores.cors);
    const report = await checkDeployment(options(edge.url, PARTNER_ORIGIN));
    const lines = await taken();
    expect(report.counts).toMatchObject({ fail: 0, 'not-run': 0, warn: 0, skip: 0 });
    const plan = plannedRequests({ ...options(edge.url, PARTNER_ORIGIN), forged: '', now: new Date() });
    expect({ rows: plan.rows, distinct: plan.uses.size }).toEqual({ rows: 150, distinct: 139 });
    expect(lines).toHaveLength(139);
    expect(identityBodies(lines)).toEqual({ all: 1, [DISCIPLINES[0]]: 6, [DISCIPLINES[1]]: 1 });
  });
});

describe("the canary's probe", () => {
  it('reads each catalog in brotli, then gets 304s while nothing changes, and sees the pointer move', async () => {
    const edge = await serve(world.stores.plain);
    const first = await probeDeployment(options(edge.url, null), {});
    const firstLines = await taken();
    expect(first.report.counts).toMatchObject({ pass: DISCIPLINES.length + 2, fail: 0, skip: 1 });
    expect(first.changed).toBe(false);
    // Two reads (each catalog's brotli variant) and the refused key; the preflight needs an origin.
    expect(firstLines.map((line) => line.status)).toEqual([...DISCIPLINES.map(() => 200), 401]);
    expect(identityBodies(firstLines)).toEqual({ all: 0, [DISCIPLINES[0]]: 0, [DISCIPLINES[1]]: 0 });
    expect(Object.keys(first.seen).sort()).toEqual([...DISCIPLINES].sort());

    const second = await probeDeployment(options(edge.url, null), first.seen);
    const secondLines = await taken();
    expect(second.report.counts).toMatchObject({ fail: 0, 'not-run': 0 });
    expect(second.changed).toBe(false);
    expect(secondLines.map((line) => [line.status, line.bytes])).toEqual([
      ...DISCIPLINES.map(() => [304, 0]),
      [401, expect.any(Number)],
    ]);
    expect(second.seen).toEqual(first.seen);

    // A publish moves the live pointer: the next probe reads the new catalogs and says they changed.
    await publish(
      {
        ...parseSettings('build', () => undefined, String),
        baseUrl: edge.url,
        allowEmpty: false,
        minRatio: 0,
        keepBuilds: 5,
        source: join(ROOT, 'fixtures/plans.json'),
      },
      { origin: new DirectoryOrigin(world.originDir), kvs: new FileKeyValueStore(world.stores.plain) },
      { now: new Date(), force: true, report: () => {} },
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // the edge reads its store file again on change
    const third = await probeDeployment(options(edge.url, null), second.seen);
    await taken();
    expect(third.report.counts).toMatchObject({ fail: 0, 'not-run': 0 });
    expect(third.changed).toBe(true);
    expect(third.seen).not.toEqual(second.seen);
  });

  it('with a CORS origin also sends the preflight, and stays within a handful of requests', async () => {
    const edge = await serve(world.stores.cors);
    const probe = await probeDeployment(options(edge.url, PARTNER_ORIGIN), {});
    const lines = await taken();
    expect(probe.report.counts).toMatchObject({ pass: DISCIPLINES.length + 3, fail: 0, skip: 0 });
    expect(lines.map((line) => line.method)).toEqual([...DISCIPLINES.map(() => 'GET'), 'GET', 'OPTIONS']);
  });
});
