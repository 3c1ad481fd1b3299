/**
 * A stand-in for the AWS APIs the CDK CLI calls to bootstrap, diff, deploy and destroy, on 127.0.0.1 (the CLI's
 * SDK reaches it through `AWS_ENDPOINT_URL`): STS (the caller's account; no role may be assumed, so the CLI goes on
 * with the caller's credentials, as it says), SSM (the bootstrap version), S3 (the bootstrap bucket takes every
 * asset and keeps it, as a bucket does: an asset one deploy put, a later one finds there and does not send again)
 * and CloudFormation, whose stacks live in memory — a change set executed creates or updates its stack at once, a
 * stack made only for a change set that is deleted (a diff's) goes with it, a deleted stack is gone; the bootstrap
 * stack, once made, has the outputs a deploy reads. Every request is recorded with its action, its stack and the
 * region it was signed for, so a test sees what a command acted on. Test support only: no AWS API has a local peer
 * for these.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The account the caller's credentials belong to. */
export const CDK_TEST_ACCOUNT = '123456789012';

/** One request as the CLI sent it. */
export interface CdkAwsRequest {
  /** `AssumeRole`, `CreateChangeSet`, `AmazonSSM.GetParameter`, `S3 PUT`… */
  readonly action: string;
  /** The stack it names, by name (an ARN is reduced to it), if any. */
  readonly stack?: string;
  /** The region its signature names. */
  readonly region?: string;
}

/** The running stand-in. */
export interface CdkAws {
  readonly url: string;
  readonly requests: CdkAwsRequest[];
  /** The stacks that exist, by name: their status. */
  readonly stacks: Map<string, string>;
  /**
   * What the stand-in holds (its stacks, change sets, deleted stacks and the bootstrap bucket's objects) as one
   * string: two commands that start from equal states are answered alike.
   */
  state(): string;
  /** Sets what the stand-in holds to a {@link CdkAws.state} it had. */
  restore(state: string): void;
  close(): Promise<void>;
}

const CFN = 'xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"';
const xml = (body: string) => ({ type: 'text/xml', body: `<?xml version="1.0" encoding="UTF-8"?>${body}` });
const stackArn = (name: string, region: string) =>
  `arn:aws:cloudformation:${region}:${CDK_TEST_ACCOUNT}:stack/${name}/1`;

/** The bootstrap stack's outputs, as a deploy reads them. */
function toolkitOutputs(region: string): string {
  const outputs = {
    BucketName: `cdk-hnb659fds-assets-${CDK_TEST_ACCOUNT}-${region}`,
    BucketDomainName: `cdk-hnb659fds-assets-${CDK_TEST_ACCOUNT}-${region}.s3.${region}.amazonaws.com`,
    FileAssetKeyArn: 'AWS_MANAGED_KEY',
    ImageRepositoryName: `cdk-hnb659fds-container-assets-${CDK_TEST_ACCOUNT}-${region}`,
    BootstrapVersion: '30',
  };
  return Object.entries(outputs)
    .map(
      ([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`,
    )
    .join('');
}

/** Starts the stand-in. */
export async function startCdkAws(): Promise<CdkAws> {
  const requests: CdkAwsRequest[] = [];
  const stacks = new Map<string, string>();
  const changeSets = new Set<string>();
  const deleted = new Set<string>();
  /** The bootstrap bucket's objects (`bucket/key`): their sizes. */
  const objects = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const region =
        /Credential=[^/]+\/\d{8}\/([a-z0-9-]+)\//.exec(String(req.headers.authorization))?.[1] ?? 'us-east-1';
      const form = new URLSearchParams(body);
      const target = req.headers['x-amz-target'];
      const url = req.url ?? '/';
      const s3 = url.startsWith('/cdk-');
      const action = s3 ? `S3 ${req.method}` : String(target ?? form.get('Action') ?? '');
      const stack = form
        .get('StackName')
        ?.replace(/^arn:[^:]*:cloudformation:[^:]*:\d*:stack\/([^/]+)\/.*$/, '$1');
      requests.push({ action, ...(stack ? { stack } : {}), region });
      const send = (status: number, answer: { type: string; body: string }) => {
        res.writeHead(status, { 'content-type': answer.type });
        res.end(answer.body);
      };
      const refuse = (code: string, message: string, status = 400) =>
        send(
          status,
          xml(
            `<ErrorResponse ${CFN}><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
          ),
        );
      if (s3) {
        const [path = '', query = ''] = url.split('?');
        const [, bucket = '', ...key] = path.split('/');
        if (req.method === 'GET') {
          // ListObjectsV2 by prefix (how the CLI asks whether an asset is there already): the objects put so far.
          const prefix = new URLSearchParams(query).get('prefix') ?? '';
          const found = [...objects]
            .filter(([name]) => name.startsWith(`${bucket}/${prefix}`))
            .map(
              ([name, size]) =>
                `<Contents><Key>${name.slice(bucket.length + 1)}</Key><Size>${size}</Size></Contents>`,
            );
          return send(
            200,
            xml(
              `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${found.join('')}<KeyCount>${found.length}</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`,
            ),
          );
        }
        if (req.method === 'PUT')
          objects.set(
            `${bucket}/${decodeURIComponent(key.join('/'))}`,
            chunks.reduce((n, c) => n + c.length, 0),
          );
        res.writeHead(200, { etag: '"0"' });
        return res.end();
      }
      const name = stack ?? '';
      switch (action) {
        case 'GetCallerIdentity':
          return send(
            200,
            xml(
              `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::${CDK_TEST_ACCOUNT}:user/operator</Arn><UserId>AIDAOPERATOR</UserId><Account>${CDK_TEST_ACCOUNT}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
            ),
          );
        case 'AssumeRole':
          return refuse('AccessDenied', 'the stand-in lets no role be assumed', 403);
        case 'AmazonSSM.GetParameter':
          return send(200, {
            type: 'application/x-amz-json-1.1',
            body: JSON.stringify({ Parameter: { Name: JSON.parse(body).Name, Type: 'String', Value: '30' } }),
          });
        case 'DescribeStacks': {
          // A deleted stack is found by its id (an ARN), as DELETE_COMPLETE; by its name, no longer.
          const byId = form.get('StackName')?.startsWith('arn:') ?? false;
          const status = stacks.get(name) ?? (byId && deleted.has(name) ? 'DELETE_COMPLETE' : undefined);
          if (status === undefined) return refuse('ValidationError', `Stack with id ${name} does not exist`);
          return send(
            200,
            xml(
              `<DescribeStacksResponse ${CFN}><DescribeStacksResult><Stacks><member><StackName>${name}</StackName><StackId>${stackArn(name, region)}</StackId><CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>${status}</StackStatus><Outputs>${name === 'CDKToolkit' ? toolkitOutputs(region) : ''}</Outputs></member></Stacks></DescribeStacksResult></DescribeStacksResponse>`,
            ),
          );
        }
        case 'GetTemplate':
          return send(
            200,
            xml(
              `<GetTemplateResponse ${CFN}><GetTemplateResult><TemplateBody>{}</TemplateBody></GetTemplateResult></GetTemplateResponse>`,
            ),
          );
        case 'CreateChangeSet':
          if (!stacks.has(name)) stacks.set(name, 'REVIEW_IN_PROGRESS');
          changeSets.add(name);
          return send(
            200,
            xml(
              `<CreateChangeSetResponse ${CFN}><CreateChangeSetResult><Id>${stackArn(name, region)}/changeSet</Id><StackId>${stackArn(name, region)}</StackId></CreateChangeSetResult></CreateChangeSetResponse>`,
            ),
          );
        case 'DescribeChangeSet':
          if (!changeSets.has(name))
            return refuse('ChangeSetNotFound', `ChangeSet of ${name} does not exist`);
          return send(
            200,
            xml(
              `<DescribeChangeSetResponse ${CFN}><DescribeChangeSetResult><ChangeSetName>change</ChangeSetName><ChangeSetId>${stackArn(name, region)}/changeSet</ChangeSetId><StackId>${stackArn(name, region)}</StackId><StackName>${name}</StackName><Status>CREATE_COMPLETE</Status><ExecutionStatus>AVAILABLE</ExecutionStatus><Changes><member><Type>Resource</Type><ResourceChange><Action>Add</Action><LogicalResourceId>Resource</LogicalResourceId><ResourceType>AWS::S3::Bucket</ResourceType></ResourceChange></member></Changes></DescribeChangeSetResult></DescribeChangeSetResponse>`,
            ),
          );
        case 'ExecuteChangeSet':
          changeSets.delete(name);
          deleted.delete(name);
          stacks.set(name, 'CREATE_COMPLETE');
          return send(
            200,
            xml(`<ExecuteChangeSetResponse ${CFN}><ExecuteChangeSetResult/></ExecuteChangeSetResponse>`),
          );
        case 'DescribeStackEvents':
          return send(
            200,
            xml(
              `<DescribeStackEventsResponse ${CFN}><DescribeStackEventsResult><StackEvents></StackEvents></DescribeStackEventsResult></DescribeStackEventsResponse>`,
            ),
          );
        case 'DeleteChangeSet':
          changeSets.delete(name);
          // A stack made only to hold a change set (a diff's) goes with it.
          if (stacks.get(name) === 'REVIEW_IN_PROGRESS') stacks.delete(name);
          return send(
            200,
            xml(`<DeleteChangeSetResponse ${CFN}><DeleteChangeSetResult/></DeleteChangeSetResponse>`),
          );
        case 'DeleteStack':
          stacks.delete(name);
          deleted.add(name);
          return send(200, xml(`<DeleteStackResponse ${CFN}></DeleteStackResponse>`));
        default:
          return refuse('AccessDenied', `the stand-in does not answer ${action}`);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stacks,
    state: () =>
      JSON.stringify({
        stacks: [...stacks].sort(),
        changeSets: [...changeSets].sort(),
        deleted: [...deleted].sort(),
        objects: [...objects].sort(),
      }),
    restore(state) {
      const held = JSON.parse(state) as {
        stacks: [string, string][];
        changeSets: string[];
        deleted: string[];
        objects: [string, number][];
      };
      stacks.clear();
      for (const [name, status] of held.stacks) stacks.set(name, status);
      changeSets.clear();
      for (const name of held.changeSets) changeSets.add(name);
      deleted.clear();
      for (const name of held.deleted) deleted.add(name);
      objects.clear();
      for (const [name, size] of held.objects) objects.set(name, size);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
