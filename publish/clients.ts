/**
 * The AWS clients, created once by an entry point (a CLI command, the Lambda handler) and passed to the
 * pipeline. Endpoints come from the SDK's own variables (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL_CLOUDFRONT`,
 * `AWS_ENDPOINT_URL_LAMBDA`, `AWS_ENDPOINT_URL_SECRETS_MANAGER`), which the SDK reads itself; credentials from
 * its default chain.
 */
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** Settings shared by the clients. */
export interface AwsSettings {
  readonly region: string;
  /** Path-style S3 addressing (`http://host/bucket/key`), for S3-compatible stores and test servers. */
  readonly s3PathStyle: boolean;
  /** Attempts per request, the first included; the SDK backs off (standard mode) on throttling and 5xx. */
  readonly maxAttempts: number;
}

/** The retry settings of every client: the SDK's standard mode, exponential backoff with jitter. */
function retry(settings: AwsSettings) {
  return { maxAttempts: settings.maxAttempts, retryMode: 'standard' } as const;
}

/**
 * An S3 client. Checksums only where S3 requires them: S3-compatible stores (and s3rver) mishandle the
 * SDK's default flexible checksums; uploads carry Content-MD5 instead.
 */
export function createS3Client(settings: AwsSettings): S3Client {
  return new S3Client({
    region: settings.region,
    forcePathStyle: settings.s3PathStyle,
    followRegionRedirects: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...retry(settings),
  });
}

/** A CloudFront client (a global service, signed for us-east-1). */
export function createCloudFrontClient(settings: AwsSettings): CloudFrontClient {
  return new CloudFrontClient({ region: 'us-east-1', ...retry(settings) });
}

/** A Lambda client, for `catalog rebuild`. */
export function createLambdaClient(settings: AwsSettings): LambdaClient {
  return new LambdaClient({ region: settings.region, ...retry(settings) });
}

/** A Secrets Manager client, for the Lambda's source secret. */
export function createSecretsClient(settings: AwsSettings): SecretsManagerClient {
  return new SecretsManagerClient({ region: settings.region, ...retry(settings) });
}
