/**
 * The settings of the PostgreSQL and HTTP sources, under their names in app/settings/registry.ts (durations in
 * ms, sizes in bytes), their defaults, and the rules of the two that are not durations or numbers.
 */
import { z } from 'zod';
import { parseRelationName } from './relation.ts';

/** What every source setting is when not given (docs/settings.md says what each does). */
export const SOURCE_DEFAULTS = {
  sourceRelation: 'catalog_source_plans',
  sourceStatementTimeout: 60_000,
  sourceConnectTimeout: 10_000,
  sourceHeadersTimeout: 30_000,
  sourceBodyTimeout: 30_000,
  sourceMaxBytes: 128 * 1024 * 1024,
  sourceRetries: 3,
} as const;

/** Settings of a source; an absent (or undefined) one takes its {@link SOURCE_DEFAULTS} value. */
export type SourceOptions = {
  readonly [K in keyof typeof SOURCE_DEFAULTS]?: (typeof SOURCE_DEFAULTS)[K] extends string
    ? string | undefined
    : number | undefined;
} & {
  /** HTTP: sent as `Authorization: Bearer …`; never shown. */
  readonly sourceToken?: string | undefined;
};

const SIZE_UNITS = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;
/** V8 cannot hold a longer string, so a larger JSON body could not be parsed anyway. */
const MAX_BODY_BYTES = 500 * 1024 ** 2;

/** A size in bytes: a positive integer, optionally with a unit B, KiB, MiB or GiB (`64MiB`), at most 500MiB. */
export const ByteSize = z
  .string()
  .trim()
  .regex(/^[1-9]\d*(B|KiB|MiB|GiB)?$/, {
    error: 'must be a number of bytes, optionally with a unit KiB, MiB or GiB, such as 64MiB',
  })
  .transform((text) => {
    const [, digits = '', unit = 'B'] = /^(\d+)(B|KiB|MiB|GiB)?$/.exec(text) ?? [];
    return Number(digits) * SIZE_UNITS[unit as keyof typeof SIZE_UNITS];
  })
  .refine((bytes) => bytes <= MAX_BODY_BYTES, { error: 'must be at most 500MiB' });

/** A PostgreSQL relation name, optionally schema-qualified; kept as typed (the source parses it again). */
export const RelationNameText = z
  .string()
  .trim()
  .superRefine((text, ctx) => {
    const parsed = parseRelationName(text);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
  });

/** Formats a byte count as the shortest exact size text (`128MiB`, `1000B`). */
export function formatBytes(bytes: number): string {
  for (const unit of ['GiB', 'MiB', 'KiB'] as const) {
    if (bytes % SIZE_UNITS[unit] === 0) return `${bytes / SIZE_UNITS[unit]}${unit}`;
  }
  return `${bytes}B`;
}
