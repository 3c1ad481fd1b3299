/**
 * The settings of the PostgreSQL and HTTP sources: their defaults, and the zod schemas that parse them from
 * flags and environment variables (`30s`, `64MiB`, `3`) into numbers.
 */
import { z } from 'zod';
import { parseRelationName } from './relation.ts';

/** What every source setting is when not given. */
export const SOURCE_DEFAULTS = {
  /** PostgreSQL: the relation (table or view) read. */
  relation: 'catalog_source_plans',
  /** PostgreSQL: `statement_timeout` of each statement of the read (each FETCH included). */
  statementTimeoutMs: 60_000,
  /** Both: how long to wait for a connection (TCP and TLS, and PostgreSQL's startup). */
  connectTimeoutMs: 10_000,
  /** HTTP: how long to wait for the response headers. */
  headersTimeoutMs: 30_000,
  /** HTTP: the longest pause while the body arrives. */
  bodyTimeoutMs: 30_000,
  /** HTTP: a larger body is refused without being read to the end. */
  maxBodyBytes: 128 * 1024 * 1024,
  /** HTTP: retries after the first attempt, on 5xx, 429 and network errors. */
  retries: 3,
} as const;

/** Settings of a source; an absent (or undefined) setting takes its {@link SOURCE_DEFAULTS} value. */
export interface SourceOptions {
  readonly relation?: string | undefined;
  readonly statementTimeoutMs?: number | undefined;
  readonly connectTimeoutMs?: number | undefined;
  readonly headersTimeoutMs?: number | undefined;
  readonly bodyTimeoutMs?: number | undefined;
  readonly maxBodyBytes?: number | undefined;
  readonly retries?: number | undefined;
  /** HTTP: sent as `Authorization: Bearer …`; never shown. */
  readonly token?: string | undefined;
}

const TIME_UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const MAX_TIMEOUT_MS = 24 * 3_600_000;

/** A timeout: a positive integer and a unit ms, s, m or h (`500ms`, `30s`, `2m`), at most 24h; in ms. */
export const TimeoutMs = z
  .string()
  .trim()
  .regex(/^[1-9]\d*(ms|s|m|h)$/, { error: 'must be a number and a unit ms, s, m or h, such as 500ms or 30s' })
  .transform((text) => {
    const [, digits = '', unit = 'ms'] = /^(\d+)(ms|s|m|h)$/.exec(text) ?? [];
    return Number(digits) * TIME_UNITS[unit as keyof typeof TIME_UNITS];
  })
  .refine((ms) => ms <= MAX_TIMEOUT_MS, { error: 'must be at most 24h' });

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

/** Formats milliseconds as the shortest exact duration text (`60s`, `1500ms`), for help and messages. */
export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/** Formats a byte count as the shortest exact size text (`128MiB`, `1000B`). */
export function formatBytes(bytes: number): string {
  for (const unit of ['GiB', 'MiB', 'KiB'] as const) {
    if (bytes % SIZE_UNITS[unit] === 0) return `${bytes / SIZE_UNITS[unit]}${unit}`;
  }
  return `${bytes}B`;
}
