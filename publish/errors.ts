/**
 * The failures of publishing an operator must act on. Each is a `CatalogError`, so the command line prints its
 * message as the one-line reason, and each names the numbers, build ids or keys involved.
 */
import { CatalogError, describeCause, StoreError } from '../contract/errors.ts';

/** Which guard refused a publish. */
export type GuardName = 'empty' | 'shrink';

/** A guard refused the new catalog; the live catalog is untouched. The message names the flag that overrides. */
export class PublishRefusedError extends CatalogError {
  override name = 'PublishRefusedError';
  readonly guard: GuardName;
  constructor(guard: GuardName, message: string) {
    super(message);
    this.guard = guard;
  }
}

/**
 * Writing the live objects (an upload, or a rollback's copy) failed part-way. Nothing was invalidated; the
 * objects in `notWritten` are still the previous ones, and running the command again converges.
 */
export class UploadError extends CatalogError {
  override name = 'UploadError';
  readonly written: readonly string[];
  readonly notWritten: readonly string[];
  constructor(
    what: string,
    failedKey: string,
    written: readonly string[],
    notWritten: readonly string[],
    options: ErrorOptions & { hint: string },
  ) {
    const done = written.length > 0 ? written.join(', ') : 'nothing';
    super(
      `${what} failed at ${failedKey} (${describeCause(options.cause)}): written ${done}; not written ${notWritten.join(', ')}; no invalidation was made; ${options.hint}`,
      options,
    );
    this.written = written;
    this.notWritten = notWritten;
  }
}

/**
 * Reading, listing or archiving the bucket failed: `what` failed because of `options.cause`. A command that
 * writes says that no live object was replaced; a `readOnly` one does not mention them.
 */
export function storeFailure(what: string, options: ErrorOptions & { readOnly?: boolean }): StoreError {
  const tail = options.readOnly ? '' : '; no live object was replaced';
  return new StoreError(`${what} (${describeCause(options.cause)})${tail}`, options);
}

/** The objects were written but the CloudFront invalidation failed. */
export class InvalidationError extends CatalogError {
  override name = 'InvalidationError';
  constructor(distributionId: string, buildId: string, options: ErrorOptions & { hint: string }) {
    super(
      `build ${buildId} is live but the invalidation of distribution ${distributionId} failed (${describeCause(options.cause)}); ${options.hint}`,
      options,
    );
  }
}

/** The history has no such build, or the build is incomplete. */
export class HistoryError extends CatalogError {
  override name = 'HistoryError';
}
