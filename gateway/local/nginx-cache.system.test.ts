/**
 * A real shared cache in front of `catalog serve`: Debian's nginx with `proxy_cache`, which keeps one entry per
 * URL and tells variants apart only by the headers the answer names in `Vary`. The catalog's body is brotli,
 * gzip or identity depending on `Accept-Encoding`, so without `Accept-Encoding` in `Vary` the cache hands a
 * brotli body to a client that asked for gzip. `.ci/run` installs nginx-light; this suite runs in
 * `npm run test:system`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HttpAnswer,
  httpRequest,
  type ServeProcess,
  scratchDir,
  startServe,
} from '../../testing/cli.ts';
import { createTestWorld, type TestWorld } from '../../testing/world.ts';

const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** Resolves once something accepts connections on the port (or rejects after `ms`). */
async function listening(port: number, ms: number): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port} after ${ms} ms`);
}

/** The body as the client decodes it, by its Content-Encoding. */
function decoded(answer: HttpAnswer): Buffer {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(answer.body);
  if (encoding === 'gzip') return gunzipSync(answer.body);
  if (encoding === undefined) return answer.body;
  throw new Error(`unexpected Content-Encoding ${encoding}`);
}

describe('an nginx proxy_cache in front of catalog serve', () => {
  let world: TestWorld;
  let serve: ServeProcess;
  let nginx: ChildProcess | undefined;
  const killNginx = () => nginx?.kill('SIGKILL');
  let scratch: { dir: string; remove: () => Promise<void> };
  let url: string;

  beforeAll(async () => {
    world = await createTestWorld();
    serve = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    scratch = await scratchDir('catalog-nginx-');
    const dir = scratch.dir;
    for (const sub of ['cache', 'tmp']) await mkdir(join(dir, sub));
    const port = await freePort();
    const upstream = new URL(serve.url);
    // One process (no master, no user switch): it can write the scratch directory whoever runs the tests.
    await writeFile(
      join(dir, 'nginx.conf'),
      `master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  proxy_cache_path ${dir}/cache levels=1:2 keys_zone=catalog:1m max_size=10m inactive=10m use_temp_path=off;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://${upstream.host};
      proxy_http_version 1.1;
      proxy_cache catalog;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`,
    );
    nginx = spawn(NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', 'nginx.conf', '-g', 'daemon off;'], {
      stdio: 'ignore',
    });
    // Never outlive the test process.
    process.once('exit', killNginx);
    await listening(port, 10_000).catch(async (error: Error) => {
      const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
      throw new Error(`${error.message}\n${log}`);
    });
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    process.off('exit', killNginx);
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx?.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    await serve?.stop();
    await scratch?.remove();
    await world?.remove();
  });

  const ask = (target: string, key: string, acceptEncoding: string) =>
    httpRequest(url, {
      method: 'GET',
      target,
      headers: [
        ['X-Api-Key', key],
        ['Accept-Encoding', acceptEncoding],
      ],
    });

  it('gives a gzip client a body it can decode after a brotli client filled the cache', async () => {
    const target = '/api/plans?discipline=strength';
    const br = await ask(target, world.keys.valid, 'br');
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    // The cache works: the same request again is a hit.
    const brAgain = await ask(target, world.keys.valid, 'br');
    expect(brAgain.headers['x-cache-status']).toBe('HIT');
    expect(decoded(brAgain).equals(world.objects.strength)).toBe(true);

    const gzip = await ask(target, world.keys.valid, 'gzip');
    expect(gzip.status).toBe(200);
    expect([undefined, 'gzip']).toContain(gzip.headers['content-encoding']);
    expect(decoded(gzip).equals(world.objects.strength)).toBe(true);

    const identity = await ask(target, world.keys.valid, 'identity');
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(world.objects.strength)).toBe(true);
    // What lets the cache tell them apart.
    expect(br.headers.vary).toBe('X-Api-Key, Accept-Encoding');
  });

  it('never serves a cached catalog to another key, a forged one included', async () => {
    const target = '/api/plans?discipline=running';
    const valid = await ask(target, world.keys.valid, 'gzip');
    expect(valid.status).toBe(200);
    expect((await ask(target, world.keys.valid, 'gzip')).headers['x-cache-status']).toBe('HIT');
    const forged = await ask(target, world.keys.forged, 'gzip');
    expect(forged.status).toBe(401);
    const other = await ask(target, world.keys.other, 'gzip');
    expect(other.status).toBe(200);
    expect(other.headers['x-cache-status']).not.toBe('HIT');
    expect(decoded(other).equals(world.objects.running)).toBe(true);
  });
});
