/**
 * The S3 client of the tests' s3rver, and the credentials and environment that reach it: apart from
 * testing/aws.ts (which starts s3rver) so that a process that only talks to s3rver (testing/kill-runner.ts)
 * loads no server. Test support only.
 */
import { S3Client } from '@aws-sdk/client-s3';

/** The credentials s3rver accepts (it checks signatures). */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** Environment a child `catalog` process needs to talk to the test peers (plus the endpoints). */
export const TEST_AWS_ENV = {
  AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
} as const;

/**
 * An S3 client for a test endpoint, with the settings s3rver needs (forcePathStyle, and checksums only when
 * required: aws-chunked bodies are stored raw), its middleware resolved once per command as app/clients.ts's are.
 */
export function testS3Client(endpoint: string, maxAttempts = 2): S3Client {
  return new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts,
    retryMode: 'standard',
    cacheMiddleware: true,
  });
}
