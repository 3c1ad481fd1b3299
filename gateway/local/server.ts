/**
 * `catalog serve`: the local edge on node:http, with CloudFront's request and connection limits
 * (distribution.ts), one access-log line per request read (never the key) and graceful shutdown. A failure
 * while sending ends that one request (a 502, or a cut connection once the head is out), never the process.
 */

import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { DISTRIBUTION } from '../distribution.ts';
import { badGateway, type Edge, type EdgeResponse } from './edge.ts';
import type { RawRequest } from './event.ts';

const REQUEST_LIMITS = DISTRIBUTION.requestLimits;
const TOO_LARGE_STATUS = DISTRIBUTION.requestLimits.status;

/** The bytes of the request head as sent: request line, `Name: value` lines (+2 a part), blank line. */
function requestHeadBytes(raw: RawRequest, httpVersion: string): number {
  let bytes = Buffer.byteLength(`${raw.method} ${raw.target} HTTP/${httpVersion}\r\n\r\n`);
  for (const part of raw.rawHeaders) bytes += Buffer.byteLength(part) + 2;
  return bytes;
}

/** One access-log entry; `logData` is what viewer-request recorded with `cf.logCustomData` (null: nothing). */
export interface AccessLogEntry {
  readonly time: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly bytes: number;
  readonly ms: number;
  readonly partner: string | null;
  readonly logData: string | null;
  readonly error?: string;
}

/** The edge that answers, and where each request's access-log entry goes. */
export interface EdgeServerOptions {
  readonly edge: Pick<Edge, 'handle'>;
  readonly log: (entry: AccessLogEntry) => void;
}

/** How often Node looks for connections over a limit, per limit (its default, every 30 s, is far too late). */
const CHECKS_PER_LIMIT = 20;

/** Title-cases a header name the way CloudFront writes them (`content-type` → `Content-Type`; `ETag`). */
const headerNames = new Map<string, string>([['etag', 'ETag']]);
function headerName(name: string): string {
  let written = headerNames.get(name);
  if (written === undefined) {
    written = name.replace(/(^|-)[a-z]/g, (start) => start.toUpperCase());
    if (headerNames.size < 256) headerNames.set(name, written);
  }
  return written;
}

/** Sends an answer: its head in one `writeHead` (checked as `setHeader` checks), then its body. */
function send(res: ServerResponse, answer: EdgeResponse, head: boolean): void {
  // No prototype: a header a function named `__proto__` is a header like any other.
  const headers = Object.create(null) as OutgoingHttpHeaders;
  for (const name of Object.keys(answer.headers))
    headers[headerName(name)] = answer.headers[name] as string | string[];
  const noBody = answer.status === 204 || answer.status === 304;
  if (!noBody) headers['Content-Length'] = answer.body.length;
  res.writeHead(answer.status, headers);
  res.end(noBody || head ? undefined : answer.body);
}

/** Sends an answer, or when that throws, a 502 (or a cut once the head is out); returns what was given. */
function sendSafely(res: ServerResponse, answer: EdgeResponse, head: boolean): EdgeResponse {
  try {
    send(res, answer, head);
    return answer;
  } catch (error) {
    const reason = `sending the ${answer.status} failed: ${(error as Error).message}`;
    if (res.headersSent) {
      res.destroy();
      return { ...answer, error: reason };
    }
    const fallback = { ...badGateway(reason), partner: answer.partner, logData: answer.logData ?? null };
    try {
      send(res, fallback, head);
    } catch {
      res.destroy();
    }
    return fallback;
  }
}

/** The path for the log: without the query string, cut to a sane length. */
function logPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** Creates the HTTP server of the local edge (not yet listening). */
export function createEdgeServer(options: EdgeServerOptions): Server {
  const limits = DISTRIBUTION.connectionLimits;
  /** Connections whose request has been handed to the edge while its body is still coming in. */
  const readingBody = new WeakSet<object>();
  const server = createServer(
    {
      // Node counts the target, names and values against this (less than the head's bytes): anything it
      // refuses is over CloudFront's limit too, and the handler checks the exact count.
      maxHeaderSize: REQUEST_LIMITS.requestBytes,
      keepAliveTimeout: limits.keepAliveMs,
      requestTimeout: limits.requestMs,
      headersTimeout: limits.headersMs,
      connectionsCheckingInterval: Math.max(
        1,
        Math.floor(Math.min(limits.headersMs, limits.requestMs) / CHECKS_PER_LIMIT),
      ),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      const started = performance.now();
      // No method of this API has a body; drain whatever a client sends so keep-alive stays usable.
      req.resume();
      readingBody.add(req.socket);
      req.once('end', () => readingBody.delete(req.socket));
      const raw = {
        method: req.method ?? 'GET',
        target: req.url ?? '/',
        rawHeaders: req.rawHeaders,
        remoteAddress: req.socket.remoteAddress ?? '',
      };
      const log = (answer: EdgeResponse) =>
        options.log({
          time: new Date().toISOString(),
          method: raw.method,
          path: logPath(raw.target),
          status: answer.status,
          bytes: answer.status === 304 ? 0 : answer.body.length,
          ms: Math.round((performance.now() - started) * 100) / 100,
          partner: answer.partner,
          logData: answer.logData ?? null,
          ...(answer.error ? { error: answer.error } : {}),
        });
      if (
        // The URL CloudFront builds: `https://`, the Host header and the request target.
        Buffer.byteLength(`https://${req.headers.host ?? ''}${raw.target}`) > REQUEST_LIMITS.urlBytes ||
        requestHeadBytes(raw, req.httpVersion) > REQUEST_LIMITS.requestBytes
      ) {
        res.writeHead(TOO_LARGE_STATUS, { 'Content-Length': 0, Connection: 'close' });
        res.end();
        log({ status: TOO_LARGE_STATUS, headers: {}, body: Buffer.alloc(0), partner: null });
        return;
      }
      options.edge
        .handle(raw)
        .catch((error: unknown): EdgeResponse => badGateway(`edge failure: ${String(error)}`))
        .then((answer) => {
          if (res.destroyed) {
            // The client went away before the answer: nothing to send, but the request was read.
            log({
              ...answer,
              body: Buffer.alloc(0),
              error: 'the client closed the connection before the answer',
            });
            return;
          }
          log(sendSafely(res, answer, req.method === 'HEAD'));
        })
        .catch(() => {
          // Only the access log can still fail here; the answer has been sent or the connection cut.
          if (!res.destroyed && !res.writableEnded) res.destroy();
        });
    },
  );
  // A client that half-closes still gets its answer (Node's default ends the connection at once, dropping an
  // answer not ready yet); the connection ends once it is sent.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // A broken or garbage connection never takes the server down. Answer once (the parser reports every further
  // chunk), then linger — discard what still comes, cut after two seconds — so the answer is not reset unread.
  const rejected = new WeakSet<object>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (rejected.has(socket)) return;
    rejected.add(socket);
    // A request whose body broke off or came too slowly has its answer already: a second status line would be
    // garbage. Cut the connection.
    if (!socket.writable || readingBody.has(socket)) {
      socket.destroy();
      return;
    }
    const [status, reason] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [TOO_LARGE_STATUS, 'Request Entity Too Large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout']
          : [400, 'Bad Request'];
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
export async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  server.listen(port, host);
  await once(server, 'listening');
  return server.address() as AddressInfo;
}

/** How long a shutdown lets requests in flight finish before it cuts their connections. */
const SHUTDOWN_GRACE_MS = 5_000;

/** Stops accepting connections, closes idle ones, lets requests in flight finish, then cuts what is left. */
export function shutdown(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
