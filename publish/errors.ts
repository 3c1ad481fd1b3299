/** The failures of publishing an operator acts on: `CatalogError`s (one-line reasons) naming what failed. */
import { CatalogError, describeCause, StoreError } from '../contract/errors.ts';

/** Which guard refused a publish. */
export type GuardName = 'empty' | 'shrink';

/** A guard refused the new catalog; the live catalog is untouched. The message names the setting that overrides. */
export class PublishRefusedError extends CatalogError {
  override name = 'PublishRefusedError';
  readonly guard: GuardName;
  constructor(guard: GuardName, message: string) {
    super(message);
    this.guard = guard;
  }
}

/** Writing a build failed part-way, or it does not match its manifest: nothing moved, a rerun converges. */
export class UploadError extends CatalogError {
  override name = 'UploadError';
}

/** `what` failed at the origin or the store because of `options.cause` (a command that writes: nothing moved). */
export function storeFailure(what: string, options: ErrorOptions & { readOnly?: boolean }): StoreError {
  const tail = options.readOnly ? '' : '; the live build was not changed';
  return new StoreError(`${what} (${describeCause(options.cause)})${tail}`, options);
}

/** Runs `step`; a failure that is not a `CatalogError` already becomes {@link storeFailure}`(what)`. */
export async function failing<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof CatalogError) throw error;
    throw storeFailure(what, { cause: error });
  }
}

/** There is no such build, or it is incomplete or damaged. */
export class HistoryError extends CatalogError {
  override name = 'HistoryError';
}

/** Another run holds the run lock (publish/lock.ts), so a command that needs it changed nothing. */
export class RunLockBusyError extends CatalogError {
  override name = 'RunLockBusyError';
}

/**
 * The bucket stored an object with another encryption than SSE-S3 (SSE-KMS, DSSE-KMS, SSE-C), so its ETag is not
 * the MD5 of its bytes, which publishing judges every object by. Refused before anything goes live.
 */
export class EncryptionError extends CatalogError {
  override name = 'EncryptionError';
  constructor(bucket: string, key: string, encryption: string | undefined, etag: string, md5: string) {
    super(
      `${bucket} stored ${key} ${encryption ? `with ${encryption} encryption` : 'with another encryption than SSE-S3'} (its ETag ${JSON.stringify(etag)} is not the MD5 of its bytes, ${md5}): publishing needs S3 to list each object's MD5, which it does only for SSE-S3; set the bucket's default encryption to SSE-S3 (AES256) and publish again (infra/README.md); nothing went live`,
    );
  }
}
