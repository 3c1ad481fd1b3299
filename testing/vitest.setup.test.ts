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
