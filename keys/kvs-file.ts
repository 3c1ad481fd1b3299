/**
 * The local key-value store file: the CloudFront KeyValueStore import format, `{"data":[{"key","value"}]}`
 * (docs/decisions.md#keys). The same file can seed the real store when the stack is created.
 */
import { z } from 'zod';
import { StoreError } from '../contract/errors.ts';
import { KVS_CORS_ORIGIN, KVS_KEY_PREFIX } from '../contract/index.ts';
import { originProblem } from './cors.ts';
import { keyId, keyRecordProblem } from './keys.ts';
import { KVS_LIMITS } from './limits.ts';

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

/** Thrown when a store file is not valid JSON in the import format; the message says where. */
export class KvsFileError extends StoreError {
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

/** An entry the gateway must not be given, and why (a sentence naming the entry, never a key). */
interface RefusedEntry {
  readonly key: string;
  readonly problem: string;
}

/**
 * Splits a store's entries into those the gateway may read and those it must refuse (a `cors:origin` that is
 * not an origin, a `key:` record the commands would not write). Only the bad entry is left out, so a bad hand
 * edit never holds back a later revocation, and it fails closed.
 */
export function screenEntries(entries: ReadonlyMap<string, string>): {
  entries: Map<string, string>;
  refused: RefusedEntry[];
} {
  const kept = new Map<string, string>();
  const refused: RefusedEntry[] = [];
  for (const [key, value] of entries) {
    let problem: string | undefined;
    if (key === KVS_CORS_ORIGIN) {
      const why = originProblem(value);
      if (why !== undefined) problem = `cors:origin ${JSON.stringify(value)}: ${why}`;
    } else if (key.startsWith(KVS_KEY_PREFIX)) {
      const why = keyRecordProblem(value);
      if (why !== undefined) problem = `key ${keyId(key.slice(KVS_KEY_PREFIX.length))}: ${why}`;
    }
    if (problem === undefined) kept.set(key, value);
    else refused.push({ key, problem });
  }
  return { entries: kept, refused };
}

/** Serialises entries in the import format, sorted by key so diffs stay readable. */
export function serializeKvsFile(entries: ReadonlyMap<string, string>): string {
  const data = [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
  return `${JSON.stringify({ data }, null, 2)}\n`;
}
