import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { copyFile, type FileHandle, open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KVS_CORS_ORIGIN } from '../../contract/index.ts';
import { FileKeyValueStore } from '../../keys/file-store.ts';
import { hashKey, storeKeyOf } from '../../keys/keys.ts';
import { issueKey, revokeKeys } from '../../keys/manage.ts';
import { httpRequest, runCatalog, type ServeProcess, startServe } from '../../testing/cli.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { createTestWorld, type TestWorld } from '../../testing/world.ts';
import { WatchedKeyValueStore } from './store.ts';

/** A store file in the import format holding `entries`, written in place. */
const storeText = (entries: Record<string, string>) =>
  JSON.stringify({ data: Object.entries(entries).map(([key, value]) => ({ key, value })) });

const RECORD_A = JSON.stringify({ partner: 'acme', created: '2026-01-01T00:00:00.000Z' });
const RECORD_B = JSON.stringify({ partner: 'globex', created: '2026-01-02T00:00:00.000Z' });

/** What a function run that starts now finds for a key (undefined: none), as the local runtime looks. */
async function lookup(store: WatchedKeyValueStore, key: string): Promise<string | undefined> {
  await store.refresh();
  return store.peek(key);
}

/**
 * Opens the write end of the FIFO at `path` once a reader has opened it (ENXIO until then), so the caller
 * knows a reload has started reading and is waiting for the data.
 */
async function openWhenRead(path: string): Promise<FileHandle> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    try {
      return await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
      await sleep(10);
    }
  }
  throw new Error(`nothing opened ${path} for reading`);
}

describe('the local edge’s key store (WatchedKeyValueStore)', () => {
  const scratch = useScratchDir({ prefix: 'catalog-edge-store-' });
  const pathIn = () => join(scratch.dir, 'kvs.json');

  it('makes every run that starts during a slow reload wait for it, and answers from the new file', async () => {
    const path = pathIn();
    await writeFile(path, storeText({ 'key:a': RECORD_A }));
    const store = new WatchedKeyValueStore(path);
    await store.load();
    expect(await lookup(store, 'key:a')).toBe(RECORD_A);

    // Replace the file with a FIFO: a reload that opens it reads nothing until this test writes the data.
    const fifo = join(scratch.dir, 'slow');
    execFileSync('mkfifo', [fifo]);
    await rename(fifo, path);
    const reloading = store.load();
    const writer = await openWhenRead(path);
    // The reload has opened the new file and waits for its data: six runs start now.
    const during = ['key:a', 'key:b', 'key:b', 'key:a', 'key:b', 'key:a'].map((key) => lookup(store, key));
    const newFile = storeText({ 'key:b': RECORD_B });
    // Leave a regular file with the same content behind the FIFO, then let the reload finish.
    await writeFile(`${path}.next`, newFile);
    await writer.write(newFile);
    await rename(`${path}.next`, path);
    await writer.close();
    await reloading;
    expect(await Promise.all(during)).toEqual([
      undefined,
      RECORD_B,
      RECORD_B,
      undefined,
      RECORD_B,
      undefined,
    ]);
  });

  it('sees a key issued right after a lookup on the very next run, and refuses it on the next run after it is revoked', async () => {
    const path = pathIn();
    const writer = new FileKeyValueStore(path, { create: true });
    const first = await issueKey(writer, { partner: 'acme', now: new Date() });
    const store = new WatchedKeyValueStore(path);
    await store.load();
    expect(JSON.parse(String(await lookup(store, storeKeyOf(hashKey(first.key)))))).toMatchObject({
      partner: 'acme',
    });
    const second = await issueKey(writer, { partner: 'globex', now: new Date() });
    expect(JSON.parse(String(await lookup(store, storeKeyOf(hashKey(second.key)))))).toMatchObject({
      partner: 'globex',
    });
    await revokeKeys(writer, { target: { partner: 'acme' }, now: new Date() });
    expect(await lookup(store, storeKeyOf(hashKey(first.key)))).toBeUndefined();
    expect(await lookup(store, storeKeyOf(hashKey(first.key)))).toBeUndefined();
    expect(await lookup(store, storeKeyOf(hashKey(second.key)))).toBeDefined();
  });

  it('sees a file changed in place (same inode) on the next run', async () => {
    const path = pathIn();
    await writeFile(path, storeText({ 'key:a': RECORD_A }));
    const store = new WatchedKeyValueStore(path);
    expect(await lookup(store, 'key:a')).toBeDefined();
    await writeFile(path, storeText({ 'key:a': RECORD_A, 'key:b': RECORD_B }));
    expect(await lookup(store, 'key:b')).toBe(RECORD_B);
  });

  it('reads a missing file as an empty store, and the file once it appears', async () => {
    const path = pathIn();
    const store = new WatchedKeyValueStore(path);
    await store.load();
    expect(await lookup(store, 'key:a')).toBeUndefined();
    await writeFile(path, storeText({ 'key:a': RECORD_A }));
    expect(await lookup(store, 'key:a')).toBe(RECORD_A);
  });

  it('keeps the last good store when the file turns corrupt, and reports it once per change', async () => {
    const path = pathIn();
    await writeFile(path, storeText({ 'key:a': RECORD_A }));
    const errors: string[] = [];
    const store = new WatchedKeyValueStore(path, { onError: (message) => errors.push(message) });
    await store.load();
    await writeFile(`${path}.new`, '{"data": [ not json');
    await rename(`${path}.new`, path);
    for (let i = 0; i < 3; i += 1) expect(await lookup(store, 'key:a')).toBe(RECORD_A);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/is not valid JSON .*; keeping the last good key store$/);
  });

  it('refuses a cors:origin that is not an origin on its own: CORS is off, the keys still load, and it is reported', async () => {
    const path = pathIn();
    const errors: string[] = [];
    const store = new WatchedKeyValueStore(path, { onError: (message) => errors.push(message) });
    for (const bad of ['https://a.example\u0001', 'https://a.example/app', 'https://*.a.example', '*']) {
      errors.length = 0;
      await writeFile(path, storeText({ [KVS_CORS_ORIGIN]: bad, 'key:b': RECORD_B }));
      expect(await lookup(store, KVS_CORS_ORIGIN)).toBeUndefined();
      expect(await lookup(store, 'key:b')).toBe(RECORD_B);
      expect(errors).toHaveLength(1);
      expect(errors[0]?.startsWith(`${path}: refusing cors:origin ${JSON.stringify(bad)}: `)).toBe(true);
      expect(errors[0]?.endsWith('; CORS stays off until it is fixed')).toBe(true);
    }
    await writeFile(path, storeText({ [KVS_CORS_ORIGIN]: 'https://a.example', 'key:b': RECORD_B }));
    expect(await lookup(store, KVS_CORS_ORIGIN)).toBe('https://a.example');
  });

  it('refuses a key record whose expires is hand-written as "Dec 1 2026", keeps the other keys, and reports it', async () => {
    const path = pathIn();
    const hash = 'c'.repeat(64);
    const errors: string[] = [];
    await writeFile(
      path,
      storeText({
        [`key:${hash}`]: JSON.stringify({
          partner: 'acme',
          created: '2026-01-01T00:00:00.000Z',
          expires: 'Dec 1 2026',
        }),
        'key:b': RECORD_B,
      }),
    );
    const store = new WatchedKeyValueStore(path, { onError: (message) => errors.push(message) });
    await store.load();
    expect(await lookup(store, `key:${hash}`)).toBeUndefined();
    expect(await lookup(store, 'key:b')).toBe(RECORD_B);
    expect(errors).toEqual([
      `${path}: refusing key cccccccccccc: expires must be ISO 8601 UTC exactly as the commands write it (2026-12-01T00:00:00.000Z); the key gets 401 until it is fixed`,
    ]);
  });

  it.each([
    ['created without milliseconds', { partner: 'acme', created: '2026-01-01T00:00:00Z' }],
    [
      'expires with an offset',
      { partner: 'acme', created: '2026-01-01T00:00:00.000Z', expires: '2026-12-01T00:00:00.000+00:00' },
    ],
    ['expires as a number', { partner: 'acme', created: '2026-01-01T00:00:00.000Z', expires: 1796083200000 }],
    ['no partner', { created: '2026-01-01T00:00:00.000Z' }],
  ])('refuses a key record with %s', async (_name, record) => {
    const path = pathIn();
    await writeFile(path, storeText({ 'key:d': JSON.stringify(record), 'key:b': RECORD_B }));
    const store = new WatchedKeyValueStore(path);
    expect(await lookup(store, 'key:d')).toBeUndefined();
    expect(await lookup(store, 'key:b')).toBeDefined();
  });
});

describe('catalog serve while keys are issued and revoked', () => {
  let world: TestWorld;
  let server: ServeProcess;
  let store: string;
  beforeAll(async () => {
    world = await createTestWorld();
    store = join(world.dir, 'live-kvs.json');
    await copyFile(world.stores.plain, store);
    server = await startServe(['--origin', world.originDir, '--store', store]);
  });
  afterAll(async () => {
    await server?.stop();
    await world?.remove();
  });

  const statusOf = async (key: string) =>
    (await httpRequest(server.url, { method: 'GET', target: '/api/plans', headers: [['X-Api-Key', key]] }))
      .status;

  /**
   * Requests with a valid key, one after another until stopped, as a partner's traffic would send them: the
   * edge looks at its store all the time, so a change is never first seen by the requests under test.
   */
  function partnerTraffic(key: string): { stop(): Promise<number[]> } {
    let running = true;
    const statuses = (async () => {
      const seen: number[] = [];
      while (running) seen.push(await statusOf(key));
      return seen;
    })();
    return {
      stop: () => {
        running = false;
        return statuses;
      },
    };
  }

  it('answers 200 to six concurrent requests with six keys issued at once, and 401 at once to a revoked one', async () => {
    const traffic = partnerTraffic(world.keys.valid);
    try {
      const issued = await Promise.all(
        ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((partner) =>
          runCatalog(['keys', 'issue', '--partner', partner, '--store', store]),
        ),
      );
      for (const result of issued) expect(result).toMatchObject({ code: 0 });
      const keys = issued.map((result) => result.stdout.trim());
      expect(await Promise.all(keys.map(statusOf))).toEqual([200, 200, 200, 200, 200, 200]);

      const revoked = await runCatalog(['keys', 'revoke', '--partner', 'p3', '--store', store]);
      expect(revoked.code).toBe(0);
      expect(await Promise.all(keys.map(statusOf))).toEqual([200, 200, 401, 200, 200, 200]);
    } finally {
      const statuses = await traffic.stop();
      expect(statuses.length).toBeGreaterThan(0);
      expect(new Set(statuses)).toEqual(new Set([200]));
    }
  });

  it('never lets a hand-written cors:origin with a control character reach a response, and says why', async () => {
    const before = server.lines.length;
    const entries = await new FileKeyValueStore(store).read();
    entries.set(KVS_CORS_ORIGIN, 'https://a.example\r\nx-injected: 1');
    await writeFile(
      `${store}.new`,
      JSON.stringify({ data: [...entries].map(([key, value]) => ({ key, value })) }),
    );
    await rename(`${store}.new`, store);
    const answer = await httpRequest(server.url, {
      method: 'GET',
      target: '/api/plans',
      headers: [['X-Api-Key', world.keys.valid]],
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    expect(answer.headers['x-injected']).toBeUndefined();
    expect(server.lines.slice(before).join('\n')).toContain('refusing cors:origin');
  });
});
