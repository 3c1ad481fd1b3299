/**
 * The local key-value store file: the CloudFront KeyValueStore import format, `{"data":[{"key","value"}]}`
 * (contract §4). The same file can seed the real store when the stack is created.
 */
import { z } from 'zod';
import { CatalogError } from '../builder/errors.ts';

/** CloudFront KeyValueStore limits (DG/cloudfront-limits.html). */
export const KVS_LIMITS = { keyBytes: 512, valueBytes: 1024, storeBytes: 5 * 1024 * 1024 } as const;

export const KvsFile = z.object({
  data: z.array(
    z.object({
      key: z
        .string()
        .min(1)
        .refine((k) => Buffer.byteLength(k) <= KVS_LIMITS.keyBytes, 'key is over 512 bytes'),
      value: z.string().refine((v) => Buffer.byteLength(v) <= KVS_LIMITS.valueBytes, 'value is over 1 KB'),
    }),
  ),
});
export type KvsFile = z.output<typeof KvsFile>;

/** Thrown when a store file is not valid JSON in the import format; the message says where. */
export class KvsFileError extends CatalogError {
  override name = 'KvsFileError';
}

/** Parses a store file into a map. Later duplicates of a key win, as a later write would. */
export function parseKvsFile(text: string, name = 'store'): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new KvsFileError(`${name} is not valid JSON (${(error as Error).message})`, { cause: error });
  }
  const parsed = KvsFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new KvsFileError(
      `${name} is not in the KeyValueStore import format: ${issue?.path.join('.') || '(root)'} ${issue?.message}`,
    );
  }
  return new Map(parsed.data.data.map((entry) => [entry.key, entry.value]));
}

/** Serialises entries in the import format, sorted by key so diffs stay readable. */
export function serializeKvsFile(entries: ReadonlyMap<string, string>): string {
  const data = [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
  return `${JSON.stringify({ data }, null, 2)}\n`;
}
