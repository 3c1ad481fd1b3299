import { expect, it } from 'vitest';

it('compares byte arrays by their bytes: equal, different, of another length or another kind', () => {
  const bytes = Buffer.from('a catalog, byte for byte'.repeat(1_000));
  expect(Buffer.from(bytes)).toEqual(bytes);
  expect({ body: Buffer.from(bytes) }).toStrictEqual({ body: bytes });
  const changed = Buffer.from(bytes);
  changed[changed.length - 1] = 0;
  expect(changed).not.toEqual(bytes);
  expect(bytes.subarray(1)).not.toEqual(bytes);
  expect(new Uint8Array(bytes)).not.toEqual(bytes);
  expect(new Uint8Array(bytes)).toEqual(new Uint8Array(bytes));
});

it('makes a compression once: the same bytes and options again get a copy of the same output, others their own', async () => {
  const { brotliCompress, brotliDecompressSync, constants, gunzipSync, gzip } = await import('node:zlib');
  const { promisify } = await import('node:util');
  const counts = (fn: unknown) => {
    const found = (fn as { [key: symbol]: { remembered: number; made: number } | undefined })[
      Symbol.for('catalog.tests.memoizedCompression')
    ];
    if (!found) throw new Error('not memoized: testing/vitest.setup.ts did not run first');
    return { ...found };
  };
  const brotli = promisify(brotliCompress);
  const input = Buffer.from(`${Math.random()} a catalog, byte for byte `.repeat(500));
  const params = { [constants.BROTLI_PARAM_QUALITY]: 11 };
  const before = counts(brotliCompress);

  // Each answer is the caller's own: changing one changes no later one.
  (await brotli(input, { params })).fill(0);
  (await brotli(input, { params })).fill(0);
  const again = await brotli(input, { params });
  expect(brotliDecompressSync(again)).toEqual(input);
  expect(counts(brotliCompress)).toEqual({ remembered: before.remembered + 2, made: before.made + 1 });

  const other = await brotli(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  expect(brotliDecompressSync(other)).toEqual(input);
  expect(other).not.toEqual(again);
  expect(counts(brotliCompress).made).toBe(before.made + 2);

  const zipped = await promisify(gzip)(input);
  expect(gunzipSync(zipped)).toEqual(input);
  expect(counts(gzip).made).toBeGreaterThan(0);
});
