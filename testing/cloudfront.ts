/**
 * A stand-in for CloudFront's API (node:http on 127.0.0.1, reached through AWS_ENDPOINT_URL_CLOUDFRONT), for
 * `catalog verify-function`: it records every DescribeFunction and TestFunction request and answers
 * TestFunction by running the real built bundle in the local runtime on the event it received, so the happy
 * path is what the real runtime should say. Test support only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudFrontRequest, CloudFrontResponse } from '../gateway/functions/event.ts';
import type { SandboxedFunction } from '../gateway/local/sandbox.ts';

/** The function name the stand-in answers to by default. */
export const TEST_FUNCTION_NAME = 'TrainingPlanCatalog-viewer-request';
/** The ETag DescribeFunction answers and TestFunction requires. */
export const TEST_FUNCTION_ETAG = 'E2QWRUHEXAMPLE';

/** One request the stand-in received. */
export interface RecordedCloudFrontRequest {
  readonly method: string;
  readonly path: string;
  readonly ifMatch: string | undefined;
  readonly stage: string | undefined;
  /** The decoded EventObject of a TestFunction request. */
  readonly event: Record<string, unknown> | undefined;
}

const xmlEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const NS = 'http://cloudfront.amazonaws.com/doc/2020-05-31/';

function functionSummary(name: string, stage: string): string {
  return `<FunctionSummary><Name>${name}</Name><Status>DEPLOYED</Status><FunctionConfig><Comment>gateway</Comment><Runtime>cloudfront-js-2.0</Runtime><KeyValueStoreAssociations><Quantity>1</Quantity><Items><KeyValueStoreAssociation><KeyValueStoreARN>arn:aws:cloudfront::123456789012:key-value-store/0f2b1c3d-1111-2222-3333-444455556666</KeyValueStoreARN></KeyValueStoreAssociation></Items></KeyValueStoreAssociations></FunctionConfig><FunctionMetadata><FunctionARN>arn:aws:cloudfront::123456789012:function/${name}</FunctionARN><Stage>${stage}</Stage><CreatedTime>2026-01-01T00:00:00Z</CreatedTime><LastModifiedTime>2026-01-01T00:00:00Z</LastModifiedTime></FunctionMetadata></FunctionSummary>`;
}

/**
 * The stand-in CloudFront API: DescribeFunction and TestFunction of one function, `name`, answered by running
 * `fn` (a built bundle in the local runtime) on the event received; any other function does not exist.
 * `tamper` may rewrite the function's result before it is returned.
 */
export class FakeCloudFront {
  readonly recorded: RecordedCloudFrontRequest[] = [];
  tamper: (result: CloudFrontRequest | CloudFrontResponse) => CloudFrontRequest | CloudFrontResponse = (r) =>
    r;
  readonly #server: http.Server;

  constructor(
    readonly fn: SandboxedFunction,
    readonly name: string = TEST_FUNCTION_NAME,
  ) {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.#answer(req, Buffer.concat(chunks).toString('utf8')).then(
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

  async #answer(req: http.IncomingMessage, body: string) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = /^\/2020-05-31\/function\/([^/]+)\/(describe|test)$/.exec(url.pathname);
    const stageInBody = /<Stage>([^<]*)<\/Stage>/.exec(body)?.[1];
    const blob = /<EventObject>([^<]*)<\/EventObject>/.exec(body)?.[1];
    const event = blob
      ? (JSON.parse(Buffer.from(blob, 'base64').toString('utf8')) as Record<string, unknown>)
      : undefined;
    this.recorded.push({
      method: req.method ?? '',
      path: url.pathname,
      ifMatch: req.headers['if-match'],
      stage: url.searchParams.get('Stage') ?? stageInBody,
      event,
    });
    if (!match || decodeURIComponent(match[1] ?? '') !== this.name) {
      return {
        status: 404,
        headers: {},
        body: `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>NoSuchFunctionExists</Code><Message>The function does not exist.</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`,
      };
    }
    const stage = url.searchParams.get('Stage') ?? stageInBody ?? 'DEVELOPMENT';
    if (match[2] === 'describe')
      return {
        status: 200,
        headers: { etag: TEST_FUNCTION_ETAG },
        body: `<?xml version="1.0"?>${functionSummary(this.name, stage).replace('<FunctionSummary>', `<FunctionSummary xmlns="${NS}">`)}`,
      };
    if (req.headers['if-match'] !== TEST_FUNCTION_ETAG)
      return {
        status: 412,
        headers: {},
        body: `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>PreconditionFailed</Code><Message>If-Match</Message></Error></ErrorResponse>`,
      };
    const result = this.tamper(await this.fn.run(event as never));
    const output = JSON.stringify('statusCode' in result ? { response: result } : { request: result });
    return {
      status: 200,
      headers: {},
      body: `<?xml version="1.0"?><TestResult xmlns="${NS}">${functionSummary(this.name, stage)}<ComputeUtilization>14</ComputeUtilization><FunctionExecutionLogs></FunctionExecutionLogs><FunctionOutput>${xmlEscape(output)}</FunctionOutput></TestResult>`,
    };
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
