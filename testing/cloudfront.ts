/**
 * A stand-in for CloudFront's functions API (node:http on 127.0.0.1, reached through AWS_ENDPOINT_URL_CLOUDFRONT),
 * for `catalog verify-function`, `catalog publish-functions`, `catalog status` and the deploy's release step. Each
 * function has a DEVELOPMENT stage and, once published, a LIVE one, each with its own code and ETag:
 * DescribeFunction and GetFunction read a stage, TestFunction runs a stage's code (a real built bundle in the local
 * runtime) on the event it received, PublishFunction copies DEVELOPMENT to LIVE when its If-Match is DEVELOPMENT's
 * ETag. It records every request, can answer TestFunction with CloudFront's throttling error (a number of times,
 * or beyond a rate), and can wait before each answer (an API's latency). Test support only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudFrontRequest, CloudFrontResponse } from '../gateway/functions/event.ts';
import type { SandboxedFunction } from '../gateway/local/sandbox.ts';

/** The function name the stand-in answers to by default. */
export const TEST_FUNCTION_NAME = 'TrainingPlanCatalog-viewer-request';
/** The ETag DescribeFunction answers and TestFunction requires, for a function made by the constructor. */
export const TEST_FUNCTION_ETAG = 'E2QWRUHEXAMPLE';

/** One request the stand-in received. */
export interface RecordedCloudFrontRequest {
  /** `DescribeFunction`, `GetFunction`, `TestFunction`, `PublishFunction`, or `unknown`. */
  readonly action: string;
  readonly method: string;
  readonly path: string;
  /** The function named. */
  readonly name: string;
  readonly ifMatch: string | undefined;
  readonly stage: string | undefined;
  /** The decoded EventObject of a TestFunction request. */
  readonly event: Record<string, unknown> | undefined;
  /**
   * What the function recorded with `cf.logCustomData` while the stand-in ran it on that event (null:
   * nothing; undefined: not run). AWS does not say whether TestFunction reports it, so the stand-in answers
   * nothing of it and tests read it here.
   */
  logData?: string | null;
}

/** One stage of a function: its code (what GetFunction answers), the code loaded in the local runtime, its ETag. */
export interface FakeStage {
  readonly code: string;
  readonly fn: SandboxedFunction;
  readonly etag: string;
}

/** A function's stages. */
export interface FakeFunction {
  development: FakeStage;
  live: FakeStage | null;
  readonly runtime: string;
  readonly keyValueStore: string;
}

const xmlEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const NS = 'http://cloudfront.amazonaws.com/doc/2020-05-31/';
const STORE_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/0f2b1c3d-1111-2222-3333-444455556666';

const errorBody = (code: string, message: string) =>
  `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`;

function functionSummary(name: string, fn: FakeFunction, stage: string): string {
  return `<FunctionSummary><Name>${name}</Name><Status>DEPLOYED</Status><FunctionConfig><Comment>gateway</Comment><Runtime>${fn.runtime}</Runtime><KeyValueStoreAssociations><Quantity>1</Quantity><Items><KeyValueStoreAssociation><KeyValueStoreARN>${fn.keyValueStore}</KeyValueStoreARN></KeyValueStoreAssociation></Items></KeyValueStoreAssociations></FunctionConfig><FunctionMetadata><FunctionARN>arn:aws:cloudfront::123456789012:function/${name}</FunctionARN><Stage>${stage}</Stage><CreatedTime>2026-01-01T00:00:00Z</CreatedTime><LastModifiedTime>2026-01-01T00:00:00Z</LastModifiedTime></FunctionMetadata></FunctionSummary>`;
}

const ROUTES: readonly [method: string, pattern: RegExp, action: string][] = [
  ['GET', /^\/2020-05-31\/function\/([^/]+)\/describe$/, 'DescribeFunction'],
  ['GET', /^\/2020-05-31\/function\/([^/]+)$/, 'GetFunction'],
  ['POST', /^\/2020-05-31\/function\/([^/]+)\/test$/, 'TestFunction'],
  ['POST', /^\/2020-05-31\/function\/([^/]+)\/publish$/, 'PublishFunction'],
];

type Answer = { status: number; headers: Record<string, string>; body: string | Buffer };

/**
 * The stand-in. The constructor's `fn` makes one function, `name`, both of whose stages run it with the ETag
 * {@link TEST_FUNCTION_ETAG}; {@link define} adds (or replaces) a function with stages of its own.
 * `tamper` may rewrite a function's result before it is returned.
 */
export class FakeCloudFront {
  readonly recorded: RecordedCloudFrontRequest[] = [];
  readonly functions = new Map<string, FakeFunction>();
  tamper: (result: CloudFrontRequest | CloudFrontResponse) => CloudFrontRequest | CloudFrontResponse = (r) =>
    r;
  /** How many of the next TestFunction calls get CloudFront's throttling error (HTTP 400, `Throttling`). */
  throttle = 0;
  /** At most this many TestFunction calls a second are answered; the others get the throttling error. */
  testsPerSecond = Number.POSITIVE_INFINITY;
  /** When the TestFunction calls of the last second were answered. */
  #answered: number[] = [];
  /** How long the stand-in waits before each answer, in milliseconds. */
  latencyMs = 0;
  /** The compute utilization TestFunction reports. */
  computeUtilization = 14;
  readonly #server: http.Server;
  #etags = 0;

  constructor(fn?: SandboxedFunction, name: string = TEST_FUNCTION_NAME) {
    if (fn) {
      const stage = { code: '// the built bundle', fn, etag: TEST_FUNCTION_ETAG };
      this.functions.set(name, {
        development: stage,
        live: stage,
        runtime: 'cloudfront-js-2.0',
        keyValueStore: STORE_ARN,
      });
    }
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.#answer(req, Buffer.concat(chunks).toString('utf8'))
          .then(async (answer) => {
            if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
            return answer;
          })
          .then(
            ({ status, headers, body }) => {
              res.writeHead(status, { 'content-type': 'text/xml', ...headers });
              res.end(body);
            },
            (error: unknown) => {
              res.writeHead(500, { 'content-type': 'text/plain' });
              res.end(String(error));
            },
          );
      });
    });
  }

  /** A new ETag, never given before. */
  nextEtag(): string {
    this.#etags += 1;
    return `E${String(this.#etags).padStart(4, '0')}EXAMPLE`;
  }

  /** Adds a function: its DEVELOPMENT stage, and its LIVE one (null: never published). */
  define(
    name: string,
    stages: {
      readonly development: { readonly code: string; readonly fn: SandboxedFunction };
      readonly live?: { readonly code: string; readonly fn: SandboxedFunction } | null;
    },
  ): FakeFunction {
    const fn: FakeFunction = {
      development: { ...stages.development, etag: this.nextEtag() },
      live: stages.live ? { ...stages.live, etag: this.nextEtag() } : null,
      runtime: 'cloudfront-js-2.0',
      keyValueStore: STORE_ARN,
    };
    this.functions.set(name, fn);
    return fn;
  }

  /** The requests of one action (`TestFunction`…), optionally of one function. */
  calls(action: string, name?: string): RecordedCloudFrontRequest[] {
    return this.recorded.filter((r) => r.action === action && (name === undefined || r.name === name));
  }

  async #answer(req: http.IncomingMessage, body: string): Promise<Answer> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = ROUTES.map(([method, pattern, action]) => {
      const match = req.method === method ? pattern.exec(url.pathname) : null;
      return match ? { action, name: decodeURIComponent(match[1] ?? '') } : null;
    }).find((found) => found !== null);
    const stageInBody = /<Stage>([^<]*)<\/Stage>/.exec(body)?.[1];
    const blob = /<EventObject>([^<]*)<\/EventObject>/.exec(body)?.[1];
    const event = blob
      ? (JSON.parse(Buffer.from(blob, 'base64').toString('utf8')) as Record<string, unknown>)
      : undefined;
    const stageName = url.searchParams.get('Stage') ?? stageInBody;
    const record: RecordedCloudFrontRequest = {
      action: route?.action ?? 'unknown',
      method: req.method ?? '',
      path: url.pathname,
      name: route?.name ?? '',
      ifMatch: req.headers['if-match'],
      stage: stageName,
      event,
    };
    this.recorded.push(record);
    const fn = route ? this.functions.get(route.name) : undefined;
    const missing = {
      status: 404,
      headers: {},
      body: errorBody('NoSuchFunctionExists', 'The function does not exist.'),
    };
    if (!route || !fn) return missing;
    const stage = (stageName ?? 'DEVELOPMENT') === 'LIVE' ? fn.live : fn.development;
    const stageLabel = stage === fn.live && stageName === 'LIVE' ? 'LIVE' : 'DEVELOPMENT';
    const summary = () =>
      `<?xml version="1.0"?>${functionSummary(route.name, fn, stageLabel).replace('<FunctionSummary>', `<FunctionSummary xmlns="${NS}">`)}`;
    const preconditionFailed = {
      status: 412,
      headers: {},
      body: errorBody(
        'PreconditionFailed',
        'The precondition given in one or more of the request-header fields evaluated to false.',
      ),
    };
    switch (route.action) {
      case 'DescribeFunction':
        if (!stage) return missing;
        return { status: 200, headers: { etag: stage.etag }, body: summary() };
      case 'GetFunction':
        if (!stage) return missing;
        return {
          status: 200,
          headers: { etag: stage.etag, 'content-type': 'application/octet-stream' },
          body: Buffer.from(stage.code),
        };
      case 'PublishFunction': {
        if (req.headers['if-match'] !== fn.development.etag) return preconditionFailed;
        fn.live = { ...fn.development, etag: this.nextEtag() };
        return {
          status: 200,
          headers: {},
          body: `<?xml version="1.0"?>${functionSummary(route.name, fn, 'LIVE').replace('<FunctionSummary>', `<FunctionSummary xmlns="${NS}">`)}`,
        };
      }
      default: {
        if (!stage) return missing;
        const now = performance.now();
        this.#answered = this.#answered.filter((at) => now - at < 1_000);
        if (this.throttle > 0 || this.#answered.length >= this.testsPerSecond) {
          this.throttle = Math.max(0, this.throttle - 1);
          return { status: 400, headers: {}, body: errorBody('Throttling', 'Rate exceeded') };
        }
        this.#answered.push(now);
        if (req.headers['if-match'] !== stage.etag) return preconditionFailed;
        let output: string;
        let error = '';
        try {
          const run = await stage.fn.runLogged(event as never);
          record.logData = run.logData;
          const result = this.tamper(run.result);
          output = JSON.stringify('statusCode' in result ? { response: result } : { request: result });
        } catch (thrown) {
          output = '';
          error = (thrown as Error).message;
        }
        return {
          status: 200,
          headers: {},
          body: `<?xml version="1.0"?><TestResult xmlns="${NS}">${functionSummary(route.name, fn, stageLabel)}<ComputeUtilization>${this.computeUtilization}</ComputeUtilization><FunctionExecutionLogs></FunctionExecutionLogs>${error ? `<FunctionErrorMessage>${xmlEscape(error)}</FunctionErrorMessage>` : ''}<FunctionOutput>${xmlEscape(output)}</FunctionOutput></TestResult>`,
        };
      }
    }
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
