/**
 * Test support for the key and CORS commands end to end: a `catalog serve` over a store file,
 * plain HTTP requests to it on 127.0.0.1, and polling with a bounded wait. Test support only.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EMPTY_STORE, runCatalog, scratchDir, startServe } from './cli.ts';

export interface LocalEdge {
  readonly url: string;
  readonly dir: string;
  /** The store file the edge reads; the commands under test write it. */
  readonly store: string;
  stop(): Promise<void>;
}

/** Builds an origin from the fixtures and starts `catalog serve --port 0` over a fresh (empty) store file. */
export async function startLocalEdge(): Promise<LocalEdge> {
  const { dir, remove } = await scratchDir('catalog-keys-e2e-');
  const origin = join(dir, 'origin');
  const store = join(dir, 'kvs.json');
  try {
    await writeFile(store, EMPTY_STORE);
    // The fixtures published into a new local deployment, as the gateway README serves a directory.
    const published = await runCatalog([
      'publish',
      '--origin',
      origin,
      '--store',
      store,
      '--source',
      'fixtures/plans.json',
      '--base-url',
      'http://127.0.0.1:8787',
    ]);
    if (published.code !== 0) throw new Error(`catalog publish failed: ${published.stderr}`);
    const server = await startServe(['--origin', origin, '--store', store]);
    return {
      url: server.url,
      dir,
      store,
      stop: async () => {
        await server.stop();
        await remove();
      },
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** One request on a fresh connection: `GET /api/plans` with a key, or any method and path. */
export function send(
  url: string,
  options: { method?: string; path?: string; key?: string; origin?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.origin !== undefined) headers.origin = options.origin;
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${options.path ?? '/api/plans'}`,
      { method: options.method ?? 'GET', headers, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve({ status: res.statusCode ?? 0, headers: flat });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The status `GET /api/plans` answers for a key. */
export async function statusFor(url: string, key: string): Promise<number> {
  return (await send(url, { key })).status;
}

/**
 * Polls `check` every 25 ms until it returns true; resolves with the milliseconds it took, or rejects once
 * `timeoutMs` have passed.
 */
export async function eventually(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(25);
  }
}

/** The Access-Control-* headers of an answer. */
export function corsHeaders(answer: Answer): Record<string, string> {
  return Object.fromEntries(
    Object.entries(answer.headers).filter(([name]) => name.startsWith('access-control-')),
  );
}
