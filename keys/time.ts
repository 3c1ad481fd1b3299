/** Durations (`90s`, `15m`, `12h`, `7d`) and times (ISO 8601) as the key commands take them (contract §4). */
import { z } from 'zod';

const UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration: a positive integer and a unit s, m, h or d; parsed to milliseconds. */
export const Duration = z
  .string()
  .trim()
  .regex(/^[1-9]\d*[smhd]$/, { error: 'must be a number and a unit s, m, h or d, such as 12h or 7d' })
  .transform((text) => Number(text.slice(0, -1)) * UNITS[text.slice(-1) as keyof typeof UNITS]);

/** An ISO 8601 time with a zone (`2026-12-01T00:00:00Z`) or a date (`2026-12-01`, midnight UTC). */
export const IsoTime = z
  .string()
  .trim()
  .refine(
    (text) =>
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) &&
      !Number.isNaN(Date.parse(text)),
    {
      error: 'must be an ISO 8601 time such as 2026-12-01T00:00:00Z, or a date',
    },
  )
  .transform((text) => new Date(text));

/** `--expires WHEN`: a time, or a duration from `now`. Must lie in the future. */
export function parseWhen(text: string, now: Date): Date | string {
  const duration = Duration.safeParse(text);
  if (duration.success) return new Date(now.getTime() + duration.data);
  const time = IsoTime.safeParse(text);
  if (!time.success) return 'must be an ISO 8601 time (2026-12-01T00:00:00Z) or a duration (12h, 7d)';
  if (time.data.getTime() <= now.getTime()) return `must be in the future (it is ${now.toISOString()} now)`;
  return time.data;
}
