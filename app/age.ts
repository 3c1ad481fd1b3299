/** Ages and periods as the reports show them: the two largest units (`1d 1h`, `1h 2m`, `42s`). */

const AGE_UNITS = [
  [86_400, 'd'],
  [3_600, 'h'],
  [60, 'm'],
  [1, 's'],
] as const;

/** `90061` → `1d 1h`; `3720` → `1h 2m`; `42` → `42s`: the two largest units. */
export function formatAge(seconds: number): string {
  let rest = Math.max(0, Math.round(seconds));
  const parts: string[] = [];
  for (const [size, unit] of AGE_UNITS) {
    const value = Math.floor(rest / size);
    rest -= value * size;
    if (value > 0 || parts.length > 0) parts.push(`${value}${unit}`);
  }
  return parts.slice(0, 2).join(' ') || '0s';
}
