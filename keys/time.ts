/** Durations (`90s`, `15m`, `12h`, `7d`) and times (ISO 8601) as the key commands take them (docs/decisions.md#keys). */
import { z } from 'zod';

const UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The longest duration accepted: 100 years. Longer ones are typos, and would overflow a Date. */
export const MAX_DURATION_MS = 36_500 * UNITS.d;

/** A duration: a positive whole number and a unit s, m, h or d (at most 100 years); parsed to milliseconds. */
export const Duration = z
  .string()
  .trim()
  .regex(/^\d+[smhd]$/, { error: 'must be a number and a unit s, m, h or d, such as 12h or 7d' })
  .transform((text) => Number(text.slice(0, -1)) * UNITS[text.slice(-1) as keyof typeof UNITS])
  .refine((ms) => ms > 0, { error: 'must be longer than zero' })
  .refine((ms) => ms <= MAX_DURATION_MS, { error: 'must be at most 36500d (100 years)' });

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2})))?$/;

/** True when every field of an ISO 8601 match is in range (Date.parse alone accepts 2026-02-30 and 24:00). */
function fieldsInRange(match: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second, zoneHour, zoneMinute] = match
    .slice(1)
    .map((field) => (field === undefined ? 0 : Number(field)));
  if (month === undefined || month < 1 || month > 12 || day === undefined || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year ?? 0, month, 0)).getUTCDate();
  return (
    day <= daysInMonth &&
    (hour ?? 0) <= 23 &&
    (minute ?? 0) <= 59 &&
    (second ?? 0) <= 59 &&
    (zoneHour ?? 0) <= 23 &&
    (zoneMinute ?? 0) <= 59
  );
}

/** An ISO 8601 time with a zone (`2026-12-01T00:00:00Z`) or a date (`2026-12-01`, midnight UTC). */
export const IsoTime = z
  .string()
  .trim()
  .refine(
    (text) => {
      const match = ISO_TIME.exec(text);
      return match !== null && fieldsInRange(match) && !Number.isNaN(Date.parse(text));
    },
    { error: 'must be an ISO 8601 time such as 2026-12-01T00:00:00Z, or a date' },
  )
  .transform((text) => new Date(text));

/** `--expires WHEN`: a time, or a duration from `now`. Must lie in the future; returns the reason otherwise. */
export function parseWhen(text: string, now: Date): Date | string {
  const duration = Duration.safeParse(text);
  if (duration.success) return new Date(now.getTime() + duration.data);
  if (/^\s*\d+[smhd]\s*$/.test(text)) return duration.error.issues[0]?.message ?? 'is not a valid duration';
  const time = IsoTime.safeParse(text);
  if (!time.success) return 'must be an ISO 8601 time (2026-12-01T00:00:00Z) or a duration (12h, 7d)';
  if (time.data.getTime() <= now.getTime()) return `must be in the future (it is ${now.toISOString()} now)`;
  return time.data;
}

/** A zod schema for `--expires WHEN` relative to `now` (see {@link parseWhen}). */
export function When(now: Date) {
  return z.string().transform((text, context) => {
    const when = parseWhen(text, now);
    if (typeof when === 'string') {
      context.addIssue({ code: 'custom', message: when });
      return z.NEVER;
    }
    return when;
  });
}
