/**
 * `catalog serve`: the local edge on node:http. Keep-alive, bounded header size (a larger request gets 431, as
 * a too-long URL does), one JSON access-log line per request (never the key), graceful shutdown.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Edge, EdgeResponse } from './edge.ts';

/** Largest request head accepted, in bytes (Node answers 431 beyond it). CloudFront allows about 20 KB. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** One access-log entry. */
export interface AccessLogEntry {
  readonly time: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly bytes: number;
  readonly ms: number;
  readonly partner: string | null;
  readonly error?: string;
}

export interface EdgeServerOptions {
  readonly edge: Edge;
  /** Receives one entry per request (the CLI writes it as a JSON line to stderr). */
  readonly log: (entry: AccessLogEntry) => void;
}

/** Title-cases a header name the way CloudFront writes them (`content-type` → `Content-Type`; `ETag`). */
const headerNames = new Map<string, string>([['etag', 'ETag']]);
function headerName(name: string): string {
  let written = headerNames.get(name);
  if (written === undefined) {
    written = name.replace(
      /(^|-)([a-z])/g,
      (_m, dash: string, letter: string) => dash + letter.toUpperCase(),
    );
    if (headerNames.size < 256) headerNames.set(name, written);
  }
  return written;
}

function send(res: ServerResponse, answer: EdgeResponse, head: boolean): void {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(headerName(name), value);
  const noBody = answer.status === 204 || answer.status === 304;
  if (!noBody) res.setHeader('Content-Length', answer.body.length);
  res.writeHead(answer.status);
  res.end(noBody || head ? undefined : answer.body);
}

/** The path for the log: without the query string, cut to a sane length. */
function logPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** Creates the HTTP server of the local edge (not yet listening). */
export function createEdgeServer(options: EdgeServerOptions): Server {
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      keepAliveTimeout: 5_000,
      requestTimeout: 30_000,
      headersTimeout: 10_000,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      const started = performance.now();
      // No method of this API has a body; drain whatever a client sends so keep-alive stays usable.
      req.resume();
      const raw = {
        method: req.method ?? 'GET',
        target: req.url ?? '/',
        rawHeaders: req.rawHeaders,
        remoteAddress: req.socket.remoteAddress ?? '',
      };
      options.edge
        .handle(raw)
        .catch(
          (error: unknown): EdgeResponse => ({
            status: 502,
            headers: { 'content-type': 'text/plain; charset=utf-8' },
            body: Buffer.from('502 Bad Gateway\n'),
            partner: null,
            error: `edge failure: ${String(error)}`,
          }),
        )
        .then((answer) => {
          if (res.destroyed) return;
          send(res, answer, req.method === 'HEAD');
          options.log({
            time: new Date().toISOString(),
            method: raw.method,
            path: logPath(raw.target),
            status: answer.status,
            bytes: answer.status === 304 ? 0 : answer.body.length,
            ms: Math.round((performance.now() - started) * 100) / 100,
            partner: answer.partner,
            ...(answer.error ? { error: answer.error } : {}),
          });
        });
    },
  );
  // A connection that breaks or sends garbage must never take the server down. The parser reports an error
  // again for every further chunk of a bad request: answer once. Then linger — read and discard what the
  // client still sends, end when it ends, cut after two seconds — so that closing does not reset the
  // connection and destroy the answer before the client has read it.
  const rejected = new WeakSet<object>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (rejected.has(socket)) return;
    rejected.add(socket);
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const status =
      error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason =
      status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    socket.on('data', () => {});
    socket.once('end', () => socket.end());
    socket.resume();
    setTimeout(() => socket.destroy(), 2_000).unref();
  });
  // CONNECT is not an HTTP method this edge (or CloudFront) serves: answer 400 as CloudFront does.
  server.on('connect', (_req, socket) => {
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  return server;
}

/** Starts listening and resolves with the bound address. */
export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops accepting connections, lets requests in flight finish, closes idle keep-alive connections, and
 * after `graceMs` cuts whatever is left.
 */
export function shutdown(server: Server, graceMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
