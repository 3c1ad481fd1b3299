/** The shared describer of a failed call's cause: one line, and never a cause said twice. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { describeCause, StoreError } from './errors.ts';

describe('describeCause', () => {
  it("says a file system error's code once: it is already the first word of its message", async () => {
    const error = await readFile('/nonexistent-dir/x.json').catch((caught: unknown) => caught);
    expect(describeCause(error)).toBe("ENOENT: no such file or directory, open '/nonexistent-dir/x.json'");
  });

  it("gives a catalog error's message as it is: it is written for the operator", () => {
    expect(describeCause(new StoreError('store kvs.json does not exist'))).toBe(
      'store kvs.json does not exist',
    );
  });

  it('names an AWS error by its name, code and HTTP status, then its message', () => {
    const sdk = Object.assign(new Error('The specified bucket does not exist'), {
      name: 'NoSuchBucket',
      $metadata: { httpStatusCode: 404 },
    });
    expect(describeCause(sdk)).toBe('NoSuchBucket, HTTP 404: The specified bucket does not exist');
    const network = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(describeCause(network)).toBe(
      'cannot reach the service (connection refused: connect ECONNREFUSED 127.0.0.1:9)',
    );
  });
});
