/**
 * Every AWS client of the service, built here and only here, once per entry point (a CLI command, the Lambda's
 * execution environment) and passed down. Regions follow the SDK's own chain (`AWS_REGION`, then the profile's
 * region) unless a `--region` is given; only CloudFront's global APIs (the distribution API and the
 * KeyValueStore data plane) are pinned to us-east-1. Endpoints come from the SDK's own variables
 * (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL_CLOUDFRONT`, …); credentials from its default chain.
 */
// Registers the SigV4A signer the KeyValueStore API needs (requests signed for every region).
import '@aws-sdk/signature-v4a';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import {
  CloudFrontKeyValueStoreClient,
  type CloudFrontKeyValueStoreClientConfig,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** The settings the clients read. */
export interface AwsSettings {
  /** A region to use instead of the SDK's chain. */
  readonly region?: string | undefined;
  /** Attempts per request, the first included; the SDK backs off (standard mode) on throttling and 5xx. */
  readonly maxAttempts: number;
  /** Path-style S3 addressing (`http://host/bucket/key`), for S3-compatible stores and test servers. */
  readonly s3PathStyle?: boolean | undefined;
  /** An S3-compatible endpoint (the local edge over a local store); else the SDK's endpoint variables. */
  readonly s3Endpoint?: string | undefined;
}

/** CloudFront's APIs are global, signed for us-east-1 whatever the caller's region. */
export const CLOUDFRONT_REGION = 'us-east-1';

function common(settings: AwsSettings) {
  return {
    ...(settings.region !== undefined ? { region: settings.region } : {}),
    maxAttempts: settings.maxAttempts,
    retryMode: 'standard',
  } as const;
}

/**
 * An S3 client. Checksums only where S3 requires them: S3-compatible stores (and s3rver) mishandle the SDK's
 * default flexible checksums (aws-chunked bodies stored raw); uploads carry their own checksums instead.
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

/** A CloudFormation client, for the outputs of a deployment's stack (`--deployment`). */
export function createCloudFormationClient(settings: AwsSettings): CloudFormationClient {
  return new CloudFormationClient(common(settings));
}

/** A CloudFront client (the distribution API: invalidations, TestFunction). */
export function createCloudFrontClient(settings: AwsSettings): CloudFrontClient {
  return new CloudFrontClient({ ...common(settings), region: CLOUDFRONT_REGION });
}

/** A Lambda client, for `catalog rebuild`. */
export function createLambdaClient(settings: AwsSettings): LambdaClient {
  return new LambdaClient(common(settings));
}

/** A CloudWatch Logs client, for the Logs Insights queries of `catalog usage`. */
export function createLogsClient(settings: AwsSettings): CloudWatchLogsClient {
  return new CloudWatchLogsClient(common(settings));
}

/** A Secrets Manager client, for the Lambda's source secret. */
export function createSecretsClient(settings: AwsSettings): SecretsManagerClient {
  return new SecretsManagerClient(common(settings));
}

/**
 * A CloudFront KeyValueStore client (the data-plane API: keys, the CORS origin, the live build). The store
 * is global and requests are signed with SigV4A for all regions; `config` lets tests point it elsewhere.
 */
export function createKvsClient(
  settings: Pick<AwsSettings, 'maxAttempts'>,
  config: CloudFrontKeyValueStoreClientConfig = {},
): CloudFrontKeyValueStoreClient {
  return new CloudFrontKeyValueStoreClient({
    region: CLOUDFRONT_REGION,
    maxAttempts: settings.maxAttempts,
    retryMode: 'standard',
    ...config,
  });
}
