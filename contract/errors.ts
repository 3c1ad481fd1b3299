/**
 * The error vocabulary every part shares: one base class for the failures an operator must act on, one class
 * per meaning below it, the one describer of a failed AWS or network call, and how a message names a setting.
 * No dependencies, so any layer may import it.
 */

/** Base class: an expected failure, its one-line message fit for an operator (see {@link settingRef}). */
export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** A flag, environment variable, CDK context value or other setting has a bad value, or is missing. */
export class ConfigError extends CatalogError {
  override name = 'ConfigError';
}

/** The deployment's source is not set yet (the stack's placeholder): a run records it and does nothing. */
export class SourceNotConfiguredError extends ConfigError {
  override name = 'SourceNotConfiguredError';
}

/** The plans source cannot be read, or is not an array of objects. `source` is redacted (no password or token). */
export class SourceError extends CatalogError {
  override name = 'SourceError';
  readonly source: string;
  constructor(source: string, reason: string, options?: ErrorOptions) {
    super(`source ${source}: ${reason}`, options);
    this.source = source;
  }
}

/** The key-value store or the origin cannot be read or written; the message says whether anything changed. */
export class StoreError extends CatalogError {
  override name = 'StoreError';
}

/** A write would pass a CloudFront KeyValueStore limit; nothing was written. */
export class StoreLimitError extends StoreError {
  override name = 'StoreLimitError';
}

/** The marker a message uses for a setting, rendered by the entry point (`--source-relation`, `CATALOG_…`). */
const SETTING_MARK = /\u2039setting:([A-Za-z0-9]+)\u203a/g;

/** Names a setting in a message; each entry point renders it (`--source-max-bytes`, `CATALOG_…`). */
export function settingRef(name: string): string {
  return `\u2039setting:${name}\u203a`;
}

/** Replaces every {@link settingRef} in `text` with `render(name)`. */
export function renderSettingRefs(text: string, render: (name: string) => string): string {
  return text.replace(SETTING_MARK, (_mark, name: string) => render(name));
}

/**
 * Network error codes of a connection that never got as far as an answer: another attempt may succeed. The one
 * list the HTTP source's retries, the PostgreSQL source's messages and the AWS error describer share.
 */
export const NETWORK_ERROR_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  EHOSTDOWN: 'host down',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network down',
  EPIPE: 'connection closed while writing',
};

/** How {@link describeCause} names the SDK's failure to find credentials (the command line adds why, if it can). */
export const NO_CREDENTIALS = 'no AWS credentials';

/** The shape of an AWS SDK error, as far as the describer reads it. */
interface SdkErrorShape {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly message?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: number };
}

/** The HTTP status of a failed AWS call, when the service answered at all. */
export function httpStatusOf(error: unknown): number | undefined {
  return (error as SdkErrorShape | null)?.$metadata?.httpStatusCode;
}

/**
 * One line saying why an AWS SDK, file system or network call failed, never a cause twice:
 * `NoSuchBucket, HTTP 404: The specified bucket does not exist`; a {@link CatalogError}'s own message.
 */
export function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const shape = cause as SdkErrorShape;
  const message = cause.message.replace(/\s*\n\s*/g, ' ').trim();
  // Written for the operator already; a class name in front would only repeat it.
  if (cause instanceof CatalogError) return message;
  const code =
    typeof shape.code === 'string' ? shape.code : /\b(E[A-Z]{3,}[A-Z_]*)\b/.exec(cause.message)?.[1];
  if (code !== undefined && NETWORK_ERROR_CODES[code] !== undefined)
    return `cannot reach the service (${NETWORK_ERROR_CODES[code]}${message ? `: ${message}` : ''})`;
  if (cause.name === 'CredentialsProviderError') return `${NO_CREDENTIALS} (${message})`;
  if (/^Region is missing/.test(message))
    return 'no AWS region: set AWS_REGION, a profile region or --region';
  const status = httpStatusOf(cause);
  // A part the message already starts with is not said twice (`ENOENT: no such file…` carries its code).
  const parts = [cause.name !== 'Error' && cause.name !== 'Unknown' ? cause.name : '', code ?? '']
    .filter(
      (part, index, all) => part !== '' && all.indexOf(part) === index && !message.startsWith(`${part}:`),
    )
    .join(' ');
  const head = [parts, status !== undefined ? `HTTP ${status}` : ''].filter(Boolean).join(', ');
  return head && message ? `${head}: ${message}` : head || message || 'unknown error';
}
