import { describeCaseTable } from '../cases.suite.ts';
import { edgeFor, toAnswer } from '../testing.ts';

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
