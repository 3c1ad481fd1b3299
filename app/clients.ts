/**
 * Every AWS client of the service, built here once per entry point and passed down. Regions, endpoints and
 * credentials follow the SDK's own chains unless a `--region` is given; CloudFront's global APIs are pinned
 * to us-east-1. A client resolves its middleware once per kind of command, not per request (`cacheMiddleware`):
 * a publish of 30,000 pages sends about as many requests, and nothing here changes a client's middleware.
 */
// Registers the SigV4A signer the KeyValueStore API needs (requests signed for every region).
import '@aws-sdk/signature-v4a';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { EDGE_REGION } from '../contract/index.ts';

/** The settings the clients read; `maxAttempts` counts the first, and the SDK backs off in standard mode. */
export interface AwsSettings {
  readonly region?: string | undefined;
  readonly maxAttempts: number;
  /** Path-style addressing and an endpoint, for S3-compatible stores (the local edge over a local store). */
  readonly s3PathStyle?: boolean | undefined;
  readonly s3Endpoint?: string | undefined;
}

function common({ region, maxAttempts }: AwsSettings) {
  const shared = { maxAttempts, retryMode: 'standard', cacheMiddleware: true } as const;
  return region !== undefined ? { ...shared, region } : shared;
}

/**
 * An S3 client, with checksums only where S3 requires them: S3-compatible stores mishandle the SDK's default
 * flexible checksums (aws-chunked bodies stored raw); uploads carry their own instead.
 */
export function createS3Client(settings: AwsSettings): S3Client {
  return new S3Client({
    ...common(settings),
    forcePathStyle: settings.s3PathStyle ?? false,
    ...(settings.s3Endpoint !== undefined ? { endpoint: settings.s3Endpoint } : {}),
    followRegionRedirects: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export function createCloudFormationClient(settings: AwsSettings): CloudFormationClient {
  return new CloudFormationClient(common(settings));
}

/**
 * CloudFront's API (its functions: TestFunction, publish), whose calls are rate-limited: the SDK's adaptive retry
 * backs off on its throttling errors and slows the client's own sending after one.
 */
export function createCloudFrontClient(settings: AwsSettings): CloudFrontClient {
  return new CloudFrontClient({ ...common(settings), retryMode: 'adaptive', region: EDGE_REGION });
}

export function createLambdaClient(settings: AwsSettings): LambdaClient {
  return new LambdaClient(common(settings));
}

export function createLogsClient(settings: AwsSettings): CloudWatchLogsClient {
  return new CloudWatchLogsClient(common(settings));
}

export function createSecretsClient(settings: AwsSettings): SecretsManagerClient {
  return new SecretsManagerClient(common(settings));
}

/** A KeyValueStore data-plane client: the store is global, requests signed with SigV4A for all regions. */
export function createKvsClient(settings: Pick<AwsSettings, 'maxAttempts'>): CloudFrontKeyValueStoreClient {
  return new CloudFrontKeyValueStoreClient({ ...common(settings), region: EDGE_REGION });
}
