/**
 * Durations and times as every setting takes them: a duration is a whole number and a unit ms, s, m, h or d
 * (`500ms`, `30s`, `12h`, `7d`; docs/settings.md), a time ISO 8601 (docs/decisions.md#keys).
 */
import { z } from 'zod';

const UNITS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;

/** The shortest exact text of a duration (`25h`, `7d`, `1500ms`): what {@link duration} reads back. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of Object.entries(UNITS)) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** A duration longer than zero and at most `max` ms (`note` says what that is), parsed to milliseconds. */
export function duration(max: number, note = '') {
  return z
    .string()
    .trim()
    .regex(/^\d+(ms|s|m|h|d)$/, { error: 'must be a number and a unit ms, s, m, h or d, such as 30s or 7d' })
    .transform((text) => {
      const [, digits = '', unit = 'ms'] = /^(\d+)(\w+)$/.exec(text) ?? [];
      return Number(digits) * UNITS[unit as keyof typeof UNITS];
    })
    .refine((ms) => ms > 0, { error: 'must be longer than zero' })
    .refine((ms) => ms <= max, { error: `must be at most ${formatDuration(max)}${note}` });
}

/** A key's duration (`--grace`, `--after`, `--expires 90d`): at most 100 years (longer would overflow a Date). */
export const Duration = duration(36_500 * UNITS.d, ' (100 years)');

/**
 * An ISO 8601 time with a zone (`2026-12-01T00:00:00Z`, seconds optional) or a date (`2026-12-01`, midnight
 * UTC); zod checks every field's range (Date.parse alone accepts 2026-02-30 and 24:00).
 */
export const IsoTime = z
  .string()
  .trim()
  .pipe(
    z.union([
      z.iso.datetime({ offset: true }),
      z.iso.datetime({ offset: true, precision: -1 }),
      z.iso.date(),
    ]),
  )
  .transform((text) => new Date(text));

/** `--expires WHEN`: a time, or a duration from `now`. Must lie in the future; returns the reason otherwise. */
export function parseWhen(text: string, now: Date): Date | string {
  const duration = Duration.safeParse(text);
  if (duration.success) return new Date(now.getTime() + duration.data);
  if (/^\s*\d+(ms|s|m|h|d)\s*$/.test(text))
    return duration.error.issues[0]?.message ?? 'is not a valid duration';
  const time = IsoTime.safeParse(text);
  if (!time.success) return 'must be an ISO 8601 time (2026-12-01T00:00:00Z) or a duration (12h, 7d)';
  if (time.data.getTime() <= now.getTime()) return `must be in the future (it is ${now.toISOString()} now)`;
  return time.data;
}
