/** A readable source of raw rows (docs/decisions.md#source-rows): a JSON file, PostgreSQL, an HTTP endpoint. */
export interface PlanSource {
  /** How the source is named in messages and logs: never contains a password or token. */
  readonly name: string;
  /**
   * Yields the rows in batches, in source order. Throws a `SourceError` naming the source when it cannot be
   * read or is not an array of objects.
   */
  batches(): AsyncIterable<readonly unknown[]>;
}
