import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../../testing/cli.ts';
import { type Answer, describeCaseTable } from '../cases.suite.ts';
import { loadFunction } from '../runtime/sandbox.ts';
import type { TestWorld } from '../testing.ts';
import { Edge, type EdgeResponse } from './edge.ts';
import { DirectoryOrigin } from './origin.ts';
import { WatchedKeyValueStore } from './store.ts';

/** The built bundles (npm run build), loaded into the local runtime over a world's store. */
export async function edgeFor(world: TestWorld, store: 'plain' | 'cors'): Promise<Edge> {
  const kvs = new WatchedKeyValueStore(world.stores[store]);
  await kvs.load();
  const code = (name: string) => readFile(join(ROOT, 'dist/gateway', `${name}.js`), 'utf8');
  return new Edge({
    viewerRequest: loadFunction(await code('viewer-request'), { kvs }),
    viewerResponse: loadFunction(await code('viewer-response'), { kvs }),
    origin: new DirectoryOrigin(world.originDir),
  });
}

export function toAnswer(response: EdgeResponse): Answer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return { status: response.status, headers, body: response.body };
}

describeCaseTable('the request-case table against the bundles in the local runtime', async (world) => {
  const edges = { plain: await edgeFor(world, 'plain'), cors: await edgeFor(world, 'cors') };
  return {
    async send(request, store) {
      const rawHeaders = request.headers.flat();
      const response = await edges[store].handle({
        method: request.method,
        target: request.target,
        rawHeaders,
        remoteAddress: '127.0.0.1',
      });
      // As the HTTP server does: no body on HEAD.
      return toAnswer(request.method === 'HEAD' ? { ...response, body: Buffer.alloc(0) } : response);
    },
    close: async () => {},
  };
});
