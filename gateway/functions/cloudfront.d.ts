/** The `cloudfront` module of the cloudfront-js-2.0 runtime (only what the functions use). */
declare module 'cloudfront' {
  /** A KeyValueStore associated with the function. `get` rejects when the key is missing. */
  export interface KeyValueStore {
    get(key: string, options?: { format?: 'string' }): Promise<string>;
    exists(key: string): Promise<boolean>;
  }
  /**
   * `kvs()`: the associated store. `logCustomData(value)`: puts `value` (URL-encoded, at most 800 bytes) in
   * the request's access-log record, as `viewer-request-log-data` from a viewer-request function; new
   * (2026-07-14), so a runtime may lack it: call it inside `try`.
   */
  const cf: { kvs(id?: string): KeyValueStore; logCustomData(value: string): void };
  export default cf;
}
