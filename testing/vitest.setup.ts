/**
 * Test setup for every project (vitest.config.ts): bytes compare as bytes. Vitest's `toEqual` walks a Buffer or
 * Uint8Array one element at a time, a cost per byte that made a few comparisons of catalogs take seconds; two
 * byte arrays of the same kind are equal when their bytes are (one comparison). Arrays of different kinds are
 * left to Vitest, which tells them apart as before.
 */
import { expect } from 'vitest';

expect.addEqualityTesters([
  function sameBytes(a: unknown, b: unknown): boolean | undefined {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.constructor !== b.constructor)
      return undefined;
    return Buffer.compare(a, b) === 0;
  },
]);
