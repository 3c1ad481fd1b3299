/**
 * The deploy's release step (lambda/README.md, infra/README.md "Verifying the function"): the handler of the
 * stack's `FunctionRelease` custom resource (CDK's provider framework calls it on create, update and delete).
 * On create and update it runs app/release.ts on the gateway's two functions: each whose DEVELOPMENT differs from
 * LIVE is verified against the whole request-case table through TestFunction and, when every case passes,
 * published; a case that fails fails the deploy with the cases named and what came back, so CloudFormation rolls
 * back and LIVE keeps what partners were served. Delete does nothing (the functions go with the stack). Its role
 * may describe, get, test and publish those two functions and write the release's keys into that one store.
 */
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import { z } from 'zod';
import { createCloudFrontClient, createKvsClient } from '../app/clients.ts';
import {
  RELEASE_DEADLINE_MS,
  RELEASE_RESERVE_MS,
  ReleaseError,
  type ReleaseOptions,
  type ReleaseOutcome,
  releaseFunctions,
} from '../app/release.ts';
import { CloudFrontKeyValueStore } from '../keys/kvs-store.ts';
import { KvsArn } from '../keys/store.ts';

/** The resource's one physical id: the release is of the stack's two functions, whatever their code. */
export const RELEASE_RESOURCE_ID = 'gateway-functions-release';

/** What the stack passes (CloudFormation gives every value as text). */
export const ReleaseProperties = z.looseObject({
  Functions: z
    .array(
      z.looseObject({
        Name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
        Kind: z.enum(['viewer-request', 'viewer-response']),
        // What makes CloudFormation call again when (and only when) the code changes.
        CodeSha256: z.string().regex(/^[0-9a-f]{64}$/),
      }),
    )
    .min(1),
  KeyValueStoreArn: KvsArn,
  Publish: z.enum(['true', 'false']),
});

/** The part of a custom resource event the handler reads. */
const ReleaseEvent = z.looseObject({
  RequestType: z.enum(['Create', 'Update', 'Delete']),
  PhysicalResourceId: z.string().optional(),
  ResourceProperties: z.unknown(),
});

/** What the provider framework is answered: the resource's id, and what became of each function. */
export interface ReleaseAnswer {
  readonly PhysicalResourceId: string;
  readonly Data?: Readonly<Record<string, string>>;
}

/** The clients the release uses: CloudFront's functions API, the store's data plane. */
export interface ReleaseClients {
  readonly cloudfront: CloudFrontClient;
  readonly kvs: CloudFrontKeyValueStoreClient;
}

/** The part of the Lambda context the handler reads. */
export interface ReleaseContext {
  getRemainingTimeInMillis?(): number;
}

/** How many failed cases the log lists one per line. */
const LOGGED_FAILURES = 50;

/** The log lines of a release: one per failed case (the first 50) and one for the run; never a key. */
function logLines(
  reports: ReleaseOutcome['reports'],
  outcome: ReleaseOutcome | undefined,
  error: Error | undefined,
) {
  const lines: Record<string, unknown>[] = [];
  for (const report of reports)
    for (const c of report.cases.filter((each) => each.verdict === 'fail').slice(0, LOGGED_FAILURES))
      lines.push({
        level: 'error',
        message: 'release case failed',
        function: report.name,
        stage: report.stage,
        case: c.name,
        request: c.request,
        expected: c.expected,
        got: c.actual,
      });
  lines.push({
    level: error ? 'error' : 'info',
    message: error ? `release refused: ${error.message}` : 'release done',
    functions:
      outcome?.functions ??
      reports.map((report) => ({ name: report.name, kind: report.kind, etag: report.etag })),
    ...(outcome ? { keys: outcome.keys } : {}),
  });
  return lines;
}

/**
 * Creates the handler; its clients are made on the first run and serve every later one. `release` adjusts the
 * release's timing (tests wait less for the store).
 */
export function createReleaseHandler(options: {
  readonly clients: () => ReleaseClients;
  readonly log?: (line: Readonly<Record<string, unknown>>) => void;
  readonly release?: Pick<ReleaseOptions, 'keyWaitMs' | 'keyProbeMs' | 'now'>;
}): (event: unknown, context?: ReleaseContext) => Promise<ReleaseAnswer> {
  const log = options.log ?? ((line) => console.log(JSON.stringify(line)));
  let clients: ReleaseClients | undefined;
  return async (rawEvent, context) => {
    const event = ReleaseEvent.parse(rawEvent);
    if (event.RequestType === 'Delete')
      return { PhysicalResourceId: event.PhysicalResourceId ?? RELEASE_RESOURCE_ID };
    const parsed = ReleaseProperties.safeParse(event.ResourceProperties);
    if (!parsed.success)
      throw new Error(`the release's properties are not the stack's: ${z.prettifyError(parsed.error)}`);
    const properties = parsed.data;
    clients ??= options.clients();
    const remaining = context?.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY;
    const store = new CloudFrontKeyValueStore(clients.kvs, properties.KeyValueStoreArn);
    let outcome: ReleaseOutcome;
    try {
      outcome = await releaseFunctions(
        { cloudfront: clients.cloudfront, store },
        {
          ...options.release,
          functions: properties.Functions.map((fn) => ({ name: fn.Name, kind: fn.Kind })),
          publish: properties.Publish === 'true',
          deadlineMs: Math.max(1_000, Math.min(RELEASE_DEADLINE_MS, remaining - RELEASE_RESERVE_MS)),
          log: (line) => log({ level: 'info', ...line }),
        },
      );
    } catch (error) {
      const reports = error instanceof ReleaseError ? error.reports : [];
      for (const line of logLines(reports, undefined, error as Error)) log(line);
      // The provider framework reports the message to CloudFormation, which shows it and rolls back.
      throw new Error((error as Error).message);
    }
    for (const line of logLines(outcome.reports, outcome, undefined)) log(line);
    return {
      PhysicalResourceId: RELEASE_RESOURCE_ID,
      Data: Object.fromEntries(
        outcome.functions.map((fn) => [
          fn.kind === 'viewer-request' ? 'ViewerRequest' : 'ViewerResponse',
          fn.result,
        ]),
      ),
    };
  };
}

/** The step's clients, from the SDK's default chain; CloudFront's retries more (it throttles TestFunction). */
export function releaseClients(): ReleaseClients {
  return {
    cloudfront: createCloudFrontClient({ maxAttempts: 10 }),
    kvs: createKvsClient({ maxAttempts: 5 }),
  };
}

/** The Lambda entry point. */
export const handler = createReleaseHandler({ clients: releaseClients });
