/**
 * Test peers of the publish tests, all on 127.0.0.1 and ephemeral ports: s3rver (a real S3-protocol server,
 * in-process, in its own temp dir), a recorder standing in for the CloudFront, Lambda and Secrets Manager
 * APIs (they have no local peer), and a proxy that plays an S3 server stopping mid-publish.
 */

import { once } from 'node:events';
import { cp, rm, rmdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { type BuildResult, completeBuild, type PreparedBuild, prepareBuild } from '../builder/build.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { FileSource } from '../builder/sources/file.ts';
import { ROOT, scratchDir } from './cli.ts';
import './s3rver-writes.ts';
import { LOCAL_CONTACT_ADDRESS } from '../app/settings/registry.ts';
import { testS3Client } from './s3-client.ts';

const require = createRequire(import.meta.url);

export { S3RVER_CREDENTIALS, TEST_AWS_ENV, testS3Client } from './s3-client.ts';

/** One S3 request as s3rver received it: the method, the key (empty for the bucket) and the query. */
export interface S3Request {
  readonly method: string;
  readonly key: string;
  readonly query: Readonly<Record<string, string>>;
  /** The body's length (Content-Length; 0 without one). */
  readonly bytes: number;
  /** The source of a CopyObject (`x-amz-copy-source`, decoded), else undefined. */
  readonly copyOf: string | undefined;
  /** The status s3rver answered. */
  readonly status: number;
}

export interface TestS3 {
  readonly endpoint: string;
  readonly bucket: string;
  readonly client: S3Client;
  /** Every request s3rver received, in order (tests clear it with `requests.length = 0`). */
  readonly requests: S3Request[];
  /** The object's bytes, or null when missing. */
  body(key: string): Promise<Buffer | null>;
  /** Every key of the bucket, sorted. */
  keys(): Promise<string[]>;
  /**
   * Stores objects (text, `text/plain`) through s3rver's own store, as its PutObject stores them, without a
   * request each: for a test whose subject is what it does with many objects, not putting them.
   */
  seed(objects: Readonly<Record<string, string>>): Promise<void>;
  /**
   * Copies the bucket as it is now (its files in s3rver's folder: a world built once and then copied, not
   * published again); `restore` puts that copy back in place of whatever the bucket then holds. Call both
   * while no request is under way.
   */
  snapshot(): Promise<{ restore(): Promise<void> }>;
  stop(): Promise<void>;
}

/** The part of s3rver's Koa context the middleware below reads. */
interface S3rverContext {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
  type: string;
  readonly store: { getMetadata(bucket: string, key: string): Promise<{ etag?: string }> };
}

/** The part of s3rver's file store the fixes below use. */
interface S3rverStore {
  putObject(object: unknown): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<void>;
  getResourcePath(bucket: string, key: string, resource: string): string;
  getBucketPath(bucket: string): string;
  getSubresource(bucket: string, key: string | undefined, type: string): Promise<unknown>;
  putSubresource(bucket: string, key: string | undefined, resource: unknown): Promise<unknown>;
  deleteSubresource(bucket: string, key: string | undefined, type: string): Promise<unknown>;
}

/**
 * s3rver reads a bucket's CORS and website configurations from its folder on every request (two failed file
 * reads when there are none): about a quarter of what a GET or HEAD costs it. This keeps what it read until
 * s3rver itself puts or deletes a configuration, so each request is answered as before.
 */
function rememberBucketConfigurations(store: S3rverStore): void {
  const read = new Map<string, unknown>();
  const { getSubresource, putSubresource, deleteSubresource } = store;
  store.getSubresource = async (bucket, key, type) => {
    if (key !== undefined) return getSubresource.call(store, bucket, key, type);
    const id = `${bucket}\n${type}`;
    if (!read.has(id)) read.set(id, await getSubresource.call(store, bucket, key, type));
    return read.get(id);
  };
  const forgetting =
    <A extends unknown[]>(change: (...args: A) => Promise<unknown>) =>
    async (...args: A) => {
      read.clear();
      try {
        return await change.apply(store, args);
      } finally {
        read.clear();
      }
    };
  store.putSubresource = forgetting(putSubresource);
  store.deleteSubresource = forgetting(deleteSubresource);
}

/**
 * S3's conditional writes, which s3rver 3.7 ignores: a PutObject with `If-None-Match: *` is refused (412) when
 * the key exists, one with `If-Match: <etag>` when it is missing (404) or holds another ETag (412), and a
 * CopyObject with `x-amz-copy-source-if-match: <etag>` when its source holds another ETag (412). Writes to one
 * key are checked and made one at a time, as S3 serialises them.
 */
function conditionalWrites(bucket: string) {
  const queues = new Map<string, Promise<unknown>>();
  return async (ctx: S3rverContext, next: () => Promise<unknown>): Promise<unknown> => {
    const prefix = `/${bucket}/`;
    const ifNoneMatch = ctx.headers['if-none-match'];
    const ifMatch = ctx.headers['if-match'];
    const sourceIfMatch = ctx.headers['x-amz-copy-source-if-match'];
    const source = ctx.headers['x-amz-copy-source'];
    if (ctx.method !== 'PUT' || !ctx.path.startsWith(prefix) || (!ifNoneMatch && !ifMatch && !sourceIfMatch))
      return next();
    const key = decodeURIComponent(ctx.path.slice(prefix.length));
    const before = queues.get(key) ?? Promise.resolve();
    const turn = before.then(async () => {
      const etag = await ctx.store.getMetadata(bucket, key).then(
        (metadata) => metadata.etag ?? null,
        () => null,
      );
      const refuse = (status: number, code: string) => {
        ctx.status = status;
        ctx.type = 'application/xml';
        ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code}</Message><Key>${key}</Key></Error>`;
      };
      const sourceEtag =
        typeof sourceIfMatch === 'string' && typeof source === 'string'
          ? await ctx.store.getMetadata(bucket, decodeURIComponent(source).replace(`${bucket}/`, '')).then(
              (metadata) => metadata.etag ?? null,
              () => null,
            )
          : undefined;
      if (ifNoneMatch === '*' && etag !== null) refuse(412, 'PreconditionFailed');
      else if (sourceEtag !== undefined && sourceEtag !== sourceIfMatch) refuse(412, 'PreconditionFailed');
      else if (typeof ifMatch === 'string' && etag === null) refuse(404, 'NoSuchKey');
      else if (typeof ifMatch === 'string' && ifMatch !== etag) refuse(412, 'PreconditionFailed');
      else await next();
    });
    queues.set(
      key,
      turn.catch(() => undefined),
    );
    return turn;
  };
}

/**
 * s3rver makes ListObjectsV2 continuation tokens with single DES, which OpenSSL 3 keeps in its legacy provider:
 * any listing of more than one page fails with a 500. Two-key triple DES with the key twice is single DES, and
 * is in the default provider: s3rver's `des` is served by it (nothing else in the process asks for `des`).
 */
function serveSingleDes(): void {
  const crypto = require('node:crypto') as typeof import('node:crypto') & {
    __singleDes?: boolean;
  };
  if (crypto.__singleDes) return;
  const cipheriv = crypto.createCipheriv;
  const decipheriv = crypto.createDecipheriv;
  const asEde = (algorithm: string, key: Buffer) =>
    algorithm === 'des' && key.length === 8 ? (['des-ede-cbc', Buffer.concat([key, key])] as const) : null;
  Object.assign(crypto, {
    __singleDes: true,
    createCipheriv: (algorithm: string, key: Buffer, ...rest: unknown[]) => {
      const ede = asEde(algorithm, key);
      return Reflect.apply(cipheriv, crypto, ede ? [...ede, ...rest] : [algorithm, key, ...rest]);
    },
    createDecipheriv: (algorithm: string, key: Buffer, ...rest: unknown[]) => {
      const ede = asEde(algorithm, key);
      return Reflect.apply(decipheriv, crypto, ede ? [...ede, ...rest] : [algorithm, key, ...rest]);
    },
  });
}

/** Starts s3rver with one empty bucket, in a temp dir removed by `stop`. */
export async function startS3(bucket = 'catalog-origin'): Promise<TestS3> {
  serveSingleDes();
  const { dir, remove } = await scratchDir('catalog-s3rver-');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const requests: S3Request[] = [];
  const recordRequest = async (ctx: S3rverContext, next: () => Promise<unknown>) => {
    const prefix = `/${bucket}`;
    if (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`)) return next();
    const source = ctx.headers['x-amz-copy-source'];
    const request = {
      method: ctx.method,
      key: decodeURIComponent(ctx.path.slice(prefix.length + 1)),
      query: { ...ctx.query },
      bytes: Number(ctx.headers['content-length'] ?? 0),
      copyOf: typeof source === 'string' ? decodeURIComponent(source).replace(`${bucket}/`, '') : undefined,
      status: 0,
    };
    requests.push(request);
    try {
      return await next();
    } finally {
      request.status = ctx.status;
    }
  };
  // s3rver answers a PutObject only once the object is stored: testing/s3rver-writes.ts.
  const store = (server as unknown as { store: S3rverStore }).store;
  rememberBucketConfigurations(store);
  // s3rver removes the folders a deletion empties by reading the whole folder after each deleted object: a
  // build of 30,000 pages takes it tens of minutes to delete. This deletes the object's files, then removes
  // each folder up the key only while it is empty (rmdir refuses a folder that is not), a deletion racing
  // another for the same folder included. S3 has no folders.
  store.deleteObject = async (bucketName, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        rm(store.getResourcePath(bucketName, key, resource), { force: true }),
      ),
    );
    const parts = key.split('/').slice(0, -1);
    for (; parts.length > 0; parts.pop()) {
      try {
        await rmdir(join(store.getBucketPath(bucketName), ...parts));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST') return;
        if (code !== 'ENOENT') throw error;
      }
    }
  };
  // Before s3rver's own middleware: Koa composes the list when the server starts. Its first is koa-logger, which
  // formats and measures every response even when `silent` drops the line: it goes (tests record requests above).
  const middleware = (server as unknown as { middleware: { name: string }[] }).middleware;
  if (middleware[0]?.name !== 'logger')
    throw new Error(`s3rver's first middleware is ${middleware[0]?.name}, not koa-logger's logger`);
  middleware.splice(0, 1, recordRequest, conditionalWrites(bucket));
  const address = await server.run();
  let snapshots: { dir: string; remove(): Promise<void> } | undefined;
  let snapshotCount = 0;
  const endpoint = `http://127.0.0.1:${address.port}`;
  const client = testS3Client(endpoint);
  return {
    endpoint,
    bucket,
    client,
    requests,
    async body(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') return null;
        throw error;
      }
    },
    async keys() {
      const answer = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (answer.Contents ?? []).map((item) => item.Key ?? '').sort();
    },
    async seed(objects) {
      const S3Object = require('s3rver/lib/models/object.js') as new (
        bucket: string,
        key: string,
        content: Buffer,
        metadata: Record<string, string>,
      ) => unknown;
      await Promise.all(
        Object.entries(objects).map(([key, text]) =>
          store.putObject(new S3Object(bucket, key, Buffer.from(text), { 'content-type': 'text/plain' })),
        ),
      );
    },
    async snapshot() {
      snapshots ??= await scratchDir('catalog-s3rver-snapshots-');
      const copy = join(snapshots.dir, String(++snapshotCount));
      const live = store.getBucketPath(bucket);
      await cp(live, copy, { recursive: true });
      return {
        async restore() {
          await rm(live, { recursive: true, force: true });
          await cp(copy, live, { recursive: true });
        },
      };
    },
    async stop() {
      client.destroy();
      await server.close();
      await Promise.all([remove(), snapshots?.remove()]);
    },
  };
}

/** One request as the recorder received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** How the recorder answers one request. */
export interface RecordedAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body: string;
}

export interface Recorder {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** The CloudFront invalidation requests recorded so far, parsed. */
  invalidations(): { distributionId: string; paths: string[]; callerReference: string }[];
  /** Replaces the answer for the requests that follow. */
  answerWith(answer: (request: RecordedRequest) => RecordedAnswer): void;
  close(): Promise<void>;
}

/** CloudFront's answer to CreateInvalidation: 201 with the invalidation (id `I<n>`). */
export function invalidationAnswer(request: RecordedRequest, n: number): RecordedAnswer {
  const batch = /<InvalidationBatch[^>]*>([\s\S]*)<\/InvalidationBatch>/.exec(request.body)?.[1] ?? '';
  return {
    status: 201,
    headers: { 'content-type': 'text/xml', location: `https://cloudfront.amazonaws.com/I${n}` },
    body: `<?xml version="1.0" encoding="UTF-8"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>I${n}</Id><Status>InProgress</Status><CreateTime>2026-01-01T00:00:00Z</CreateTime><InvalidationBatch>${batch}</InvalidationBatch></Invalidation>`,
  };
}

/**
 * Starts an HTTP listener that records every request. By default it answers CloudFront CreateInvalidation
 * with 201 and anything else with 404.
 */
export async function startRecorder(): Promise<Recorder> {
  const requests: RecordedRequest[] = [];
  let answer = (request: RecordedRequest): RecordedAnswer =>
    /\/distribution\/[^/]+\/invalidation$/.test(request.url)
      ? invalidationAnswer(request, requests.length)
      : { status: 404, body: '' };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      const reply = answer(request);
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    invalidations() {
      return requests
        .filter((request) => request.method === 'POST' && request.url.endsWith('/invalidation'))
        .map((request) => ({
          distributionId: /\/distribution\/([^/]+)\/invalidation$/.exec(request.url)?.[1] ?? '',
          paths: [...request.body.matchAll(/<Path>([^<]*)<\/Path>/g)].map((match) => match[1] ?? ''),
          callerReference: /<CallerReference>([^<]*)<\/CallerReference>/.exec(request.body)?.[1] ?? '',
        }));
    },
    answerWith(next) {
      answer = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Forwards `req` to `upstream` and its answer (amended by `amend`, if given) to `res`; a failure drops it. */
function relay(
  upstream: URL,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  amend?: (request: http.IncomingMessage, answer: http.IncomingMessage) => void,
): void {
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      amend?.(req, answer);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on('error', () => req.socket.destroy());
  req.pipe(forward);
}

export interface CutProxy {
  readonly url: string;
  /** Whether the proxy has stopped. */
  readonly cut: boolean;
  close(): Promise<void>;
}

/**
 * A proxy to `target` that stops (closes its port and drops every connection, as a stopped server does) right
 * after it has relayed the answer to the first request matching `stopAfter`. Requests then fail to connect.
 */
export async function startCutProxy(
  target: string,
  stopAfter: (request: http.IncomingMessage) => boolean,
): Promise<CutProxy> {
  const upstream = new URL(target);
  let cut = false;
  const server = http.createServer((req, res) => {
    if (cut) {
      req.socket.destroy();
      return;
    }
    relay(upstream, req, res);
    res.on('finish', () => {
      if (cut || !stopAfter(req) || (res.statusCode ?? 0) >= 300) return;
      cut = true;
      server.close();
      setTimeout(() => server.closeAllConnections(), 20);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get cut() {
      return cut;
    },
    async close() {
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A proxy that holds a request unanswered, so that a test can kill its sender at that very point. */
export interface HoldingProxy {
  readonly url: string;
  /** Resolves with the first request held (`METHOD path`). */
  readonly held: Promise<string>;
  close(): Promise<void>;
}

/**
 * A proxy to `target` that forwards every request until `holds` picks one: that one and every one after it
 * are held unanswered, and `held` resolves. `amend` may change an answer's headers before they are sent on.
 */
export async function startHoldingProxy(
  target: string,
  holds: (request: http.IncomingMessage) => boolean,
  amend?: (request: http.IncomingMessage, answer: http.IncomingMessage) => void,
): Promise<HoldingProxy> {
  const upstream = new URL(target);
  let hold: ((line: string) => void) | undefined;
  const held = new Promise<string>((resolve) => {
    hold = resolve;
  });
  let holding = false;
  const server = http.createServer((req, res) => {
    if (holding || holds(req)) {
      holding = true;
      hold?.(`${req.method} ${req.url}`);
      return;
    }
    relay(upstream, req, res, amend);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Whether a request is the upload (not a copy) of a live object `key` of `bucket`, path-style. */
export function isUploadOf(bucket: string, key: string): (request: http.IncomingMessage) => boolean {
  return (request) =>
    request.method === 'PUT' &&
    request.url?.split('?')[0] === `/${bucket}/${key}` &&
    request.headers['x-amz-copy-source'] === undefined;
}

/** A source over raw rows in memory. */
const rowsSource = (rows: readonly unknown[]) => ({
  name: 'test rows',
  async *batches() {
    yield rows;
  },
});

const TEST_LINKS = { baseUrl: 'https://plans.example.com', appScheme: 'trainingplans' };

/**
 * Builds in memory from raw rows, as the Lambda does (the bundled openapi template): the prepared build that
 * publish/publish.ts `publishBuild` takes, with what completing it makes (its objects, to compare with).
 */
export async function buildRows(rows: readonly unknown[], now: Date): Promise<PreparedBuild & BuildResult> {
  const prepared = await prepareRows(rows, now);
  return { ...prepared, ...(await completeBuild(prepared)) };
}

/**
 * The first step of a build from raw rows (builder/build.ts `prepareBuild`), links overridable; with
 * `completable: false`, completing it throws (a publish that would compress or render pages fails the test).
 */
export async function prepareRows(
  rows: readonly unknown[],
  now: Date,
  options: { readonly baseUrl?: string; readonly completable?: boolean } = {},
): Promise<PreparedBuild> {
  const prepared = await prepareBuild(rowsSource(rows), {
    links: { ...TEST_LINKS, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) },
    skipInvalid: false,
    now,
    openapiTemplate: OPENAPI_TEMPLATE,
    contactAddress: LOCAL_CONTACT_ADDRESS,
  });
  if (options.completable ?? true) return prepared;
  return Object.defineProperty({ ...prepared }, 'parts', {
    get() {
      throw new Error(`build ${prepared.buildId} was completed: it compressed and rendered its pages`);
    },
  });
}

/** The rows of fixtures/plans.json (49 rows, 44 published and approved plans: 22 running, 22 strength). */
export async function fixtureRows(): Promise<unknown[]> {
  const rows: unknown[] = [];
  for await (const batch of new FileSource(join(ROOT, 'fixtures', 'plans.json')).batches())
    rows.push(...batch);
  return rows;
}

/**
 * 19 rows of fixtures/plans.json, 14 plans (4 strength, 10 running): its first four rows and its last 15, so that
 * `slice(0, n)` holds n plans up to 14, and the tail keeps the fixtures' rows that are not published. For the
 * tests of what runs and publishes do, which need a few plans, not the fixtures' 44: every build compresses its
 * catalogs and renders a page per plan, and a first publish writes every page. A catalog of all the fixtures is
 * builder/build.test.ts's.
 */
export async function fewRows(): Promise<unknown[]> {
  const rows = await fixtureRows();
  return [...rows.slice(0, 4), ...rows.slice(34)];
}

let fewFile: Promise<string> | undefined;
/** {@link fewRows} as a JSON file, a source of its own: written once per process under the run's scratch root. */
export function fewPlansFile(): Promise<string> {
  fewFile ??= (async () => {
    const file = join(tmpdir(), `catalog-few-plans-${process.pid}.json`);
    await writeFile(file, `${JSON.stringify(await fewRows(), null, 2)}\n`);
    return file;
  })();
  return fewFile;
}

/**
 * CloudFormation's answer to DescribeStacks (Query protocol, XML): the stack `name` with its `outputs`, or,
 * without outputs, the ValidationError of a stack that does not exist.
 */
export function describeStacksAnswer(name: string, outputs?: Record<string, string>): RecordedAnswer {
  const xmlns = 'xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"';
  if (!outputs)
    return {
      status: 400,
      headers: { 'content-type': 'text/xml' },
      body: `<ErrorResponse ${xmlns}><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${name} does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
    };
  const members = Object.entries(outputs)
    .map(
      ([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`,
    )
    .join('');
  return {
    status: 200,
    headers: { 'content-type': 'text/xml' },
    body: `<DescribeStacksResponse ${xmlns}><DescribeStacksResult><Stacks><member><StackName>${name}</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/${name}/1</StackId><CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>`,
  };
}
