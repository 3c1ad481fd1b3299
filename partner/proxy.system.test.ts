/**
 * The partner proxy as real `catalog proxy` processes with their cache file on a full disk (a small tmpfs the test
 * fills; mounting it needs root) and killed with `kill -9`, in front of a real `catalog serve` whose live build
 * real publishes change: a copy it cannot save is not served over a saved one, and is served when none is.
 */

import { execFileSync } from 'node:child_process';
import { mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpRequest,
  localTargetEnv,
  ROOT,
  runCatalog,
  type ServeProcess,
  scratchDir,
  startCatalog,
  startServe,
} from '../testing/cli.ts';
import { until } from '../testing/until.ts';
import { type ChangeSet, ChangesPage } from './changes.ts';
import { CHANGES_SEQUENCE_HEADER } from './proxy.ts';

type Row = Record<string, unknown> & { id: string; title: string; published: boolean; approved: boolean };

/** Fills the filesystem of `path` with one file until it has no space left. */
async function fill(path: string): Promise<void> {
  const file = await open(path, 'w');
  const block = Buffer.alloc(4096);
  try {
    for (;;) await file.write(block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    await file.close();
  }
}

describe('the partner proxy on a full disk, killed with kill -9', () => {
  let scratch: { dir: string; remove: () => Promise<void> };
  let disk: string;
  let mounted = false;
  let serve: ServeProcess;
  let key: string;
  let rows: Row[];
  let published: Row[];
  const env = () => localTargetEnv(scratch.dir);

  async function publish(source: Row[]): Promise<void> {
    const path = join(scratch.dir, `rows-${Date.now()}.json`);
    await writeFile(path, JSON.stringify(source));
    const result = await runCatalog(['publish', '--source', path], { env: env() });
    expect(result.code, result.stderr).toBe(0);
  }

  beforeAll(async () => {
    scratch = await scratchDir('catalog-proxy-disk-');
    disk = join(scratch.dir, 'disk');
    await mkdir(disk);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', disk]);
    mounted = true;
    rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as Row[];
    published = rows.filter((row) => row.published && row.approved);
    await publish(rows);
    key = (await runCatalog(['keys', 'issue', '--partner', 'disk'], { env: env() })).stdout.trim();
    serve = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
  });
  afterAll(async () => {
    await serve?.stop();
    if (mounted) execFileSync('umount', ['-l', disk]);
    await scratch?.remove();
  });

  const startProxy = (cacheFile = join(disk, 'cache.json')) =>
    startCatalog(
      [
        'proxy',
        ...['--upstream', serve.url, '--port', '0', '--cache-file', cacheFile],
        ...['--refresh-seconds', '5'],
      ],
      { ready: /catalog proxy: listening on (http:\/\/\S+)/, env: { CATALOG_PARTNER_KEY: key } },
    );
  const read = async (url: string, target: string) => {
    const answer = await httpRequest(url, { method: 'GET', target });
    return { ...answer, json: JSON.parse(answer.body.toString()) };
  };
  /** The refreshes a proxy process logged. */
  const refreshes = (lines: string[]) =>
    lines.filter((line) => line.includes('"event":"refresh"')).map((line) => JSON.parse(line));

  it('serves, numbers and notifies nothing it could not save, says so and retries; after kill -9 no sequence means two things', async () => {
    const served = new Map<number, ChangeSet>();
    /** The change sets a proxy serves: a sequence may never be served with two contents, whatever happens. */
    const changes = async (url: string) => {
      const page = ChangesPage.parse((await read(url, '/changes?since=0')).json);
      for (const set of page.changes) {
        expect(set, `sequence ${set.sequence}`).toEqual(served.get(set.sequence) ?? set);
        served.set(set.sequence, set);
      }
      return page;
    };
    const first = await startProxy();
    try {
      await until(async () => (refreshes(first.lines).length > 0 ? true : undefined), 'the first refresh');
      const saved = await changes(first.url);
      expect(saved).toMatchObject({ latest: 1, changes: [{ sequence: 1, resync: true }] });
      const copy = (await read(first.url, '/plans.json')).body;

      // The disk is full and a plan is retitled: the refreshes fetch it, cannot save it, and serve the saved state.
      await fill(join(disk, 'filler'));
      const logged = refreshes(first.lines).length;
      await publish(
        rows.map((row) => (row.id === published[2]?.id ? { ...row, title: 'Renamed On A Full Disk' } : row)),
      );
      // A refresh that asked before the pointer moved is told nothing changed; every later one fails.
      const since = () => refreshes(first.lines).slice(logged);
      await until(
        async () =>
          since().filter((refresh) => refresh.outcome !== 'not-modified').length >= 2 ? true : undefined,
        'a failed refresh and its retry',
      );
      const outcomes = since().map((refresh) => refresh.outcome);
      expect(outcomes.slice(outcomes.indexOf('failed'))).not.toContain('not-modified');
      for (const refresh of since().filter((refresh) => refresh.outcome !== 'not-modified'))
        expect(refresh).toMatchObject({
          outcome: 'failed',
          error: expect.stringMatching(
            /^the new copy could not be saved, so the last saved one is served: ENOSPC/,
          ),
          serving: 'last good copy',
        });
      expect((await read(first.url, '/healthz')).json).toMatchObject({
        status: 'degraded',
        lastRefresh: { outcome: 'failed', error: expect.stringContaining('ENOSPC') },
        changes: { latest: 1 },
      });
      expect(await changes(first.url)).toEqual(saved);
      const plans = await read(first.url, '/plans.json');
      expect([plans.body, plans.headers[CHANGES_SEQUENCE_HEADER]]).toEqual([copy, '1']);
      // No temporary file is left behind.
      expect((await readdir(disk)).sort()).toEqual(['cache.json', 'filler']);
    } finally {
      // Killed while the disk is full.
      process.kill(first.pid, 'SIGKILL');
      await first.stop();
    }

    // While it is down the title comes back and another plan goes; the disk has room again.
    const gone = published[6] as Row;
    await publish(rows.filter((row) => row.id !== gone.id));
    await rm(join(disk, 'filler'));
    const second = await startProxy();
    try {
      await until(async () => ((await changes(second.url)).latest === 2 ? true : undefined), 'change set 2');
      const page = await changes(second.url);
      expect(page.history).toBe(served.get(1)?.history);
      expect(page.changes[1]).toMatchObject({
        sequence: 2,
        resync: false,
        added: [],
        changed: [],
        removed: [{ id: gone.id, title: gone.title }],
      });
      expect((await read(second.url, '/healthz')).json).toMatchObject({
        status: 'ok',
        changes: { latest: 2 },
      });
      expect(await readdir(disk)).toEqual(['cache.json']);
    } finally {
      await second.stop();
    }
  });

  it('serves its first copy on a disk already full, says it is not saved, saves and numbers it once there is room; after kill -9 the restart serves it from the disk', async () => {
    const folder = join(disk, 'first');
    await mkdir(folder);
    await fill(join(disk, 'filler'));
    const catalog = (
      await httpRequest(serve.url, { method: 'GET', target: '/api/plans', headers: [['X-Api-Key', key]] })
    ).body;
    const first = await startProxy(join(folder, 'cache.json'));
    try {
      await until(async () => (refreshes(first.lines).length > 0 ? true : undefined), 'the first refresh');
      expect(refreshes(first.lines)[0]).toMatchObject({ outcome: 'fetched', status: 200, saved: false });
      const plans = await read(first.url, '/plans.json');
      expect([plans.status, plans.body]).toEqual([200, catalog]);
      expect(plans.headers[CHANGES_SEQUENCE_HEADER]).toBe('0');
      expect((await read(first.url, '/healthz')).json).toMatchObject({
        status: 'degraded',
        cacheFile: { saved: false, error: expect.stringContaining('ENOSPC') },
        changes: { latest: 0 },
      });
      expect((await read(first.url, '/healthz?strict')).status).toBe(503);
      expect(await readdir(folder)).toEqual([]);

      // Room again: a later refresh (every 5 s) saves the copy and gives it its change set.
      await rm(join(disk, 'filler'));
      await until(
        async () => ((await read(first.url, '/healthz')).json.cacheFile.saved ? true : undefined),
        'the copy saved',
      );
      expect((await read(first.url, '/healthz')).json).toMatchObject({
        status: 'ok',
        cacheFile: { saved: true, error: null },
        changes: { latest: 1 },
      });
      expect(ChangesPage.parse((await read(first.url, '/changes?since=0')).json).changes).toMatchObject([
        { sequence: 1, resync: true },
      ]);
    } finally {
      process.kill(first.pid, 'SIGKILL');
      await first.stop();
    }
    const history = JSON.parse(await readFile(join(folder, 'cache.json'), 'utf8')).changes.history;

    const second = await startProxy(join(folder, 'cache.json'));
    try {
      const plans = await read(second.url, '/plans.json');
      expect([plans.status, plans.body, plans.headers[CHANGES_SEQUENCE_HEADER]]).toEqual([200, catalog, '1']);
      expect((await read(second.url, '/healthz')).json).toMatchObject({
        copy: { source: 'disk' },
        changes: { history, latest: 1 },
      });
    } finally {
      await second.stop();
    }
  });
});
