/**
 * Test setup for every project (vitest.config.ts).
 *
 * Bytes compare as bytes. Vitest's `toEqual` walks a Buffer or Uint8Array one element at a time, a cost per byte
 * that made a few comparisons of catalogs take seconds; two byte arrays of the same kind are equal when their
 * bytes are (one comparison). Arrays of different kinds are left to Vitest, which tells them apart as before.
 *
 * A compression made before is not made again. zlib's brotli and gzip are deterministic (the same bytes with the
 * same options give the same output), and the tests build the same fixtures again and again (each publish test
 * on a directory and on s3rver, each scenario's builds): most compressions repeat one already made. Those are
 * answered from a memo of the first output (a copy), the rest by zlib; what the builder calls, and when, is
 * unchanged. Only the asynchronous calls on libuv's pool are memoized (builder/compress.ts sends small builds
 * there); the worker threads of large builds and the synchronous calls are left alone.
 */
import { createHash } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import zlib from 'node:zlib';
import { expect } from 'vitest';

expect.addEqualityTesters([
  function sameBytes(a: unknown, b: unknown): boolean | undefined {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.constructor !== b.constructor)
      return undefined;
    return Buffer.compare(a, b) === 0;
  },
]);

/** The outputs a process keeps, in bytes: the oldest go first. */
const MEMO_BYTES = 64 * 1024 * 1024;
/** The key under which a memoized function counts its answers (testing/vitest.setup.test.ts reads them). */
const MEMOIZED = Symbol.for('catalog.tests.memoizedCompression');

type Compressor = ((input: zlib.InputType, options: object, callback: zlib.CompressCallback) => void) & {
  [MEMOIZED]?: { remembered: number; made: number };
};

function memoizeCompression(name: 'brotliCompress' | 'gzip'): void {
  const functions = zlib as unknown as Record<typeof name, Compressor>;
  const original = functions[name];
  if (original[MEMOIZED]) return;
  const memo = new Map<string, Buffer>();
  let held = 0;
  const remember = (key: string, output: Buffer) => {
    memo.set(key, Buffer.from(output));
    held += output.length;
    for (const [oldest, kept] of memo) {
      if (held <= MEMO_BYTES) break;
      memo.delete(oldest);
      held -= kept.length;
    }
  };
  const memoized: Compressor = (input, ...rest: unknown[]) => {
    const [options, callback] = typeof rest[0] === 'function' ? [{}, rest[0]] : [rest[0] ?? {}, rest[1]];
    if (!ArrayBuffer.isView(input) || typeof callback !== 'function')
      return Reflect.apply(original, zlib, [input, ...rest]);
    const done = callback as zlib.CompressCallback;
    const key = createHash('sha256').update(JSON.stringify(options)).update(input).digest('base64');
    const known = memo.get(key);
    if (known) {
      counts.remembered += 1;
      return void process.nextTick(done, null, Buffer.from(known));
    }
    counts.made += 1;
    original(input, options as object, (error, output) => {
      if (!error) remember(key, output);
      done(error, output);
    });
  };
  const counts = { remembered: 0, made: 0 };
  memoized[MEMOIZED] = counts;
  functions[name] = memoized;
}

memoizeCompression('brotliCompress');
memoizeCompression('gzip');
// `import { gzip } from 'node:zlib'` sees the memoized functions too.
syncBuiltinESMExports();
