/**
 * A stand-in for the CloudFront KeyValueStore data-plane API on 127.0.0.1 (the API has no local peer), and the
 * production client pointed at it. Test support only.
 */
import dns from 'node:dns';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
// The production clients' module: it registers the SigV4A signer the client needs, as in production.
import '../app/clients.ts';
import { EDGE_REGION } from '../contract/index.ts';

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A stand-in for the KeyValueStore data-plane API on 127.0.0.1: the same paths, JSON bodies and ETag
 * headers, ListKeys in pages of two, GetKey (404 ResourceNotFoundException for a key it does not hold), and
 * IfMatch enforced with 412. It records every request.
 */
export class FakeKvs {
  entries = new Map<string, string>();
  version = 1;
  requests: Recorded[] = [];
  /** Called before an UpdateKeys is applied: a test can play another writer here. */
  beforeUpdate: (() => void) | undefined;
  /** Answer every UpdateKeys with this status and error type instead. */
  failUpdatesWith: { status: number; type: string } | undefined;
  readonly server: Server;
  /** The status an UpdateKeys with a stale IfMatch gets: 409 ConflictException, as the service answers. */
  conflict: { status: number; type: string } = { status: 409, type: 'ConflictException' };
  constructor(arn: string) {
    const STORE_PATH = `/key-value-stores/${encodeURIComponent(arn)}`;
    const ARN = arn;
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        this.requests.push({
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body,
        });
        const answer = (status: number, json: object, headers: Record<string, string> = {}) => {
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(JSON.stringify(json));
        };
        const etag = `ETAG${this.version}`;
        if (req.method === 'GET' && url.pathname === STORE_PATH) {
          return answer(
            200,
            { KvsARN: ARN, ItemCount: this.entries.size, TotalSizeInBytes: 0, Created: 1_700_000_000 },
            { etag },
          );
        }
        if (req.method === 'GET' && url.pathname === `${STORE_PATH}/keys`) {
          const all = [...this.entries].sort(([a], [b]) => (a < b ? -1 : 1));
          const start = Number(url.searchParams.get('NextToken') ?? '0');
          const items = all.slice(start, start + 2).map(([Key, Value]) => ({ Key, Value }));
          return answer(200, {
            Items: items,
            ...(start + 2 < all.length ? { NextToken: String(start + 2) } : {}),
          });
        }
        if (req.method === 'GET' && url.pathname.startsWith(`${STORE_PATH}/keys/`)) {
          const key = decodeURIComponent(url.pathname.slice(`${STORE_PATH}/keys/`.length));
          const value = this.entries.get(key);
          if (value === undefined)
            return answer(
              404,
              { message: `Key ${key} not found` },
              { 'x-amzn-errortype': 'ResourceNotFoundException' },
            );
          return answer(200, { Key: key, Value: value, ItemCount: this.entries.size, TotalSizeInBytes: 0 });
        }
        if (req.method === 'POST' && url.pathname === `${STORE_PATH}/keys`) {
          this.beforeUpdate?.();
          this.beforeUpdate = undefined;
          if (this.failUpdatesWith) {
            const { status, type } = this.failUpdatesWith;
            return answer(status, { message: `${type} from the fake` }, { 'x-amzn-errortype': type });
          }
          if (req.headers['if-match'] !== `ETAG${this.version}`) {
            return answer(
              this.conflict.status,
              { message: 'The ETag does not match' },
              { 'x-amzn-errortype': this.conflict.type },
            );
          }
          const parsed = JSON.parse(body) as {
            Puts?: { Key: string; Value: string }[];
            Deletes?: { Key: string }[];
          };
          for (const put of parsed.Puts ?? []) this.entries.set(put.Key, put.Value);
          for (const del of parsed.Deletes ?? []) this.entries.delete(del.Key);
          this.version += 1;
          return answer(
            200,
            { ItemCount: this.entries.size, TotalSizeInBytes: 0 },
            { etag: `ETAG${this.version}` },
          );
        }
        return answer(404, { message: 'no such route' }, { 'x-amzn-errortype': 'ResourceNotFoundException' });
      });
    });
  }

  /** The UpdateKeys bodies received, parsed. */
  updates(): unknown[] {
    return this.requests.filter((r) => r.method === 'POST').map((r) => JSON.parse(r.body));
  }

  /** The sequence of calls: describe, list, get, update. */
  calls(): string[] {
    return this.requests.map((r) =>
      r.method === 'POST'
        ? 'update'
        : r.path.endsWith('/keys')
          ? 'list'
          : r.path.includes('/keys/')
            ? 'get'
            : 'describe',
    );
  }
}

/**
 * The production client, pointed at a local port. The SDK puts the account id in front of the endpoint's
 * host (123456789012.kvs.test), so the endpoint is a name, and a step after signing sends the signed request
 * to 127.0.0.1 instead (the signed Host header stays as it was).
 */
export function kvsClientFor(port: number): CloudFrontKeyValueStoreClient {
  // The production client's configuration (app/clients.ts, which also registers the SigV4A signer), pointed here.
  const client = new CloudFrontKeyValueStoreClient({
    region: EDGE_REGION,
    maxAttempts: 3,
    retryMode: 'standard',
    endpoint: `http://kvs.test:${port}`,
    credentials: {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    },
  });
  type Middleware = Parameters<typeof client.middlewareStack.addRelativeTo>[0];
  const toLocalListener =
    (next: (args: { request: unknown }) => Promise<unknown>) => (args: { request: unknown }) => {
      (args.request as { hostname: string }).hostname = '127.0.0.1';
      return next(args);
    };
  client.middlewareStack.addRelativeTo(toLocalListener as unknown as Middleware, {
    relation: 'after',
    toMiddleware: 'httpSigningMiddleware',
    name: 'toLocalListener',
  });
  return client;
}

/**
 * {@link resolveKvsTestHost} for another process: a module to preload (`node --import <this> …`) into a
 * `catalog` child whose KeyValueStore endpoint is `http://kvs.test:<port>`.
 */
export const RESOLVE_KVS_TEST_HOST = `data:text/javascript,${encodeURIComponent(
  "import dns from 'node:dns'; const lookup = dns.lookup; dns.lookup = (host, ...rest) => lookup(host.endsWith('.kvs.test') ? '127.0.0.1' : host, ...rest);",
)}`;

/**
 * The KeyValueStore client puts the account id in front of the endpoint's host (`123456789012.kvs.test`):
 * the harness resolves that name to the stand-in on 127.0.0.1, as the Lambda bundle's test does. Returns how
 * to undo it.
 */
export function resolveKvsTestHost(): () => void {
  const original = dns.lookup;
  const patched = ((host: string, ...rest: unknown[]) =>
    (original as (...args: unknown[]) => unknown)(
      host.endsWith('.kvs.test') ? '127.0.0.1' : host,
      ...rest,
    )) as typeof dns.lookup;
  dns.lookup = patched;
  return () => {
    dns.lookup = original;
  };
}
