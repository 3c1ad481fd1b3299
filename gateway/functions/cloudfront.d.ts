/** The `cloudfront` module of the cloudfront-js-2.0 runtime (only what the functions use). */
declare module 'cloudfront' {
  /** A KeyValueStore associated with the function. `get` rejects when the key is missing. */
  export interface KeyValueStore {
    get(key: string, options?: { format?: 'string' }): Promise<string>;
    exists(key: string): Promise<boolean>;
  }
  const cf: { kvs(id?: string): KeyValueStore };
  export default cf;
}
