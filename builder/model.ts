/**
 * The catalog model, defined once with zod: a source row (docs/decisions.md#source-rows), a published Plan and
 * the catalog response. The gateway's tests, openapi.yaml and the partner kit's schemas (partner/schema.ts)
 * derive from these schemas.
 */
import { z } from 'zod';
import { DISCIPLINE_LABELS, DISCIPLINES, LEVELS, PLAN_ID_PATTERN, PROBLEMS } from '../contract/index.ts';

// Source rows: messages are the "rule broken" of the invalid-row report, so they read as rules.

const required = (what: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${what}`;

/** Reports `message` as the rule the field breaks; the transform's output is then never used. */
function broken(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

/** The longest title and summary, in UTF-16 code units (an emoji counts as two), after trimming. */
export const TITLE_MAX_LENGTH = 150;
export const SUMMARY_MAX_LENGTH = 500;

/** The rule a text longer than `max` breaks, naming its length. */
const tooLong = (max: number) => (issue: { input: unknown }) =>
  `must be at most ${max} characters, not ${typeof issue.input === 'string' ? issue.input.length : '?'}`;

/** A nullable string field: missing, null or empty after trimming is null. */
const nullableText = z
  .string({ error: 'must be a string or null' })
  .nullish()
  .transform((value) => {
    const trimmed = value?.trim();
    return trimmed ? trimmed : null;
  });

const INTEGER_STRING = /^[+-]?\d+$/;

/** An integer, or a string holding one (databases return bigint and numeric as strings); null for no value. */
function toInteger(value: unknown): number | null | undefined {
  if (value === null || value === undefined) return null;
  let number: unknown = value;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed === '') return null;
    number = INTEGER_STRING.test(trimmed) ? Number(trimmed) : undefined;
  }
  return typeof number === 'number' && Number.isSafeInteger(number) ? number : undefined;
}

/** Checks an integer field; returns the integer, null for "no value" when `nullable`, or a rule message. */
function checkInteger(value: unknown, min: number, max: number | undefined, nullable: boolean) {
  const parsed = toInteger(value);
  if (parsed === null && nullable) return { value: null };
  if (parsed === null || parsed === undefined || parsed < min || (max !== undefined && parsed > max)) {
    const rule = max === undefined ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`;
    return { message: value === undefined ? 'is required' : `must be ${rule}${nullable ? ' or null' : ''}` };
  }
  return { value: parsed };
}

/** An integer from `min` to `max` (if given); with `nullable`, null when missing, null or empty. */
function integerField<const N extends boolean>(min: number, max: number | undefined, nullable: N) {
  return z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      const checked = checkInteger(value, min, max, nullable);
      if (checked.value === undefined) return broken(ctx, checked.message ?? 'is required');
      return checked.value as N extends true ? number | null : number;
    });
}

const HTTPS_URL = /^https:\/\//i;

/**
 * The longest `cover_url`, in characters of its serialisation (the URL as published): the length browsers,
 * CDNs and sitemaps all take, and room for any image URL. A page carries its cover three times (the image and
 * two preview tags): a longer one would outweigh the page's budget (docs/decisions.md#source-rows).
 */
export const COVER_URL_MAX_LENGTH = 2048;

/** The serialisation of a cover URL (an absolute https: URL, public, not too long), or the rule it breaks. */
function coverHref(text: string): { href: string } | { problem: string } {
  const https = 'must be an absolute https: URL or empty';
  if (!HTTPS_URL.test(text)) return { problem: https };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: https };
  }
  if (url.username !== '' || url.password !== '')
    return { problem: 'must not carry a user name or password (user:password@): every partner sees it' };
  const length = Math.max(text.length, url.href.length);
  if (length > COVER_URL_MAX_LENGTH)
    return { problem: `must be at most ${COVER_URL_MAX_LENGTH} characters, not ${length}` };
  return { href: url.href };
}

/** The serialisation of a valid cover URL; undefined for any other text. */
function httpsHref(text: string): string | undefined {
  const cover = coverHref(text);
  return 'href' in cover ? cover.href : undefined;
}

/** A string field whose trimmed value must be one of `values`; `fallback` (if given) stands for empty/missing. */
function oneOf<const T extends string>(values: readonly T[], message: string, fallback?: T) {
  const allowed = new Set<string>(values);
  return z
    .string({ error: fallback === undefined ? required('a string') : 'must be a string or null' })
    .nullish()
    .transform((value, ctx): T => {
      const trimmed = value?.trim() ?? '';
      if (trimmed === '' && fallback !== undefined) return fallback;
      if (allowed.has(trimmed)) return trimmed as T;
      return broken(ctx, value === undefined || value === null ? 'is required' : message);
    });
}

/** The publication gate: both must be booleans; only rows with both true are validated further. */
export const SourceRowGate = z.object({
  published: z.boolean({ error: required('a boolean') }),
  approved: z.boolean({ error: required('a boolean') }),
});

/**
 * One published, approved source row, validated and normalised (docs/decisions.md#source-rows); unknown
 * columns are ignored. Single transforms rather than pipes: a build validates every row.
 */
export const SourceRow = z.object({
  id: z
    .string({ error: required('a string') })
    .trim()
    .toLowerCase()
    .regex(PLAN_ID_PATTERN, { error: 'must be a UUID' }),
  title: z
    .string({ error: required('a string') })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(TITLE_MAX_LENGTH, { error: tooLong(TITLE_MAX_LENGTH) }),
  summary: nullableText.transform((summary, ctx) => {
    if (summary === null || summary.length <= SUMMARY_MAX_LENGTH) return summary;
    return broken(ctx, tooLong(SUMMARY_MAX_LENGTH)({ input: summary }));
  }),
  // Normalised to the URL's serialisation, so non-ASCII characters arrive percent-encoded (a valid URI).
  cover_url: nullableText.transform((url, ctx) => {
    if (url === null) return null;
    const cover = coverHref(url);
    return 'href' in cover ? cover.href : broken(ctx, cover.problem);
  }),
  level: oneOf(LEVELS, `must be one of ${LEVELS.join(', ')} (or empty)`, 'none'),
  discipline: oneOf(DISCIPLINES, `must be exactly ${DISCIPLINES.join(' or ')}`),
  weeks_count: integerField(1, undefined, false),
  days_per_week: integerField(1, 7, true),
  est_minutes_per_session: integerField(1, undefined, true),
});
export type SourceRow = z.output<typeof SourceRow>;

const LEVEL_SET = new Set<string>(LEVELS);
const DISCIPLINE_SET = new Set<string>(DISCIPLINES);

/** A nullable text as {@link SourceRow} takes it: the trimmed text, null, or undefined when it is not text. */
function fastNullableText(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : null;
}

/**
 * The hot path: {@link SourceRow}'s output, without zod, for a row that breaks none of its rules (zod's
 * parse is most of reading a large source); undefined for any other row. A property test checks they agree.
 */
export function parseValidSourceRow(raw: Readonly<Record<string, unknown>>): SourceRow | undefined {
  if (typeof raw.id !== 'string' || typeof raw.title !== 'string') return undefined;
  const id = raw.id.trim().toLowerCase();
  if (!PLAN_ID_PATTERN.test(id)) return undefined;
  const title = raw.title.trim();
  if (title.length < 1 || title.length > TITLE_MAX_LENGTH) return undefined;
  const summary = fastNullableText(raw.summary);
  if (summary === undefined || (summary !== null && summary.length > SUMMARY_MAX_LENGTH)) return undefined;
  const coverText = fastNullableText(raw.cover_url);
  const coverUrl = coverText ? httpsHref(coverText) : coverText;
  if (coverUrl === undefined) return undefined;
  const levelText = fastNullableText(raw.level);
  if (levelText === undefined || (levelText !== null && !LEVEL_SET.has(levelText))) return undefined;
  if (typeof raw.discipline !== 'string') return undefined;
  const discipline = raw.discipline.trim();
  if (!DISCIPLINE_SET.has(discipline)) return undefined;
  const weeks = checkInteger(raw.weeks_count, 1, undefined, false);
  const days = checkInteger(raw.days_per_week, 1, 7, true);
  const minutes = checkInteger(raw.est_minutes_per_session, 1, undefined, true);
  if (typeof weeks.value !== 'number' || days.value === undefined || minutes.value === undefined)
    return undefined;
  return {
    id,
    title,
    summary,
    cover_url: coverUrl,
    level: (levelText ?? 'none') as SourceRow['level'],
    discipline: discipline as SourceRow['discipline'],
    weeks_count: weeks.value,
    days_per_week: days.value,
    est_minutes_per_session: minutes.value,
  };
}

// The published model (what partners receive).

export const Discipline = z
  .enum(DISCIPLINES)
  .meta({ id: 'Discipline', description: 'The discipline of a plan.' });

export const Level = z.enum(LEVELS).meta({
  id: 'Level',
  description: 'Closed enum, never null. A plan without a level is reported as `none`.',
});

export const Plan = z
  .object({
    id: z
      .string()
      .regex(PLAN_ID_PATTERN)
      .meta({ format: 'uuid', description: 'UUID in lowercase. Stable; safe to store as a foreign key.' }),
    title: z
      .string()
      .min(1)
      .max(TITLE_MAX_LENGTH)
      .meta({
        description: `At most ${TITLE_MAX_LENGTH} characters (JavaScript's \`length\`: a character outside the Basic Multilingual Plane, such as an emoji, counts as two).`,
      }),
    summary: z
      .string()
      .max(SUMMARY_MAX_LENGTH)
      .nullable()
      .meta({
        description: `One- or two-sentence description, at most ${SUMMARY_MAX_LENGTH} characters (counted as \`title\` is).`,
      }),
    // https, or http on a loopback host: a local stack's own fixture covers (docs/decisions.md#source-rows);
    // a source row's cover_url is https only, so a deployment serves https only.
    coverUrl: z
      .string()
      .regex(/^(https:\/\/\S+|http:\/\/(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?\/\S*)$/)
      .meta({ format: 'uri' })
      .nullable()
      .meta({
        description:
          'Public image URL (https; only a local development stack serves its own covers over http on a loopback host); null when the plan has no cover, and clients render a fallback.',
      }),
    level: Level,
    discipline: Discipline,
    disciplineLabel: z.enum(Object.values(DISCIPLINE_LABELS)).meta({
      description: `Display name of the discipline: ${DISCIPLINES.map((d) => `"${DISCIPLINE_LABELS[d]}" for ${d}`).join(', ')}. Use this rather than capitalising \`discipline\`.`,
    }),
    weeksCount: z.int().min(1).meta({ description: 'Programme length in weeks.' }),
    daysPerWeek: z.int().min(1).max(7).nullable(),
    estMinutesPerSession: z.int().min(1).nullable().meta({ description: 'Estimated minutes per session.' }),
    webUrl: z.url().meta({
      description:
        "`{base_url}/plans/{id}`: the plan's web page, which anyone can open without a key (or the same path on the operator's own website). Always safe to render as a link.",
    }),
    appUrl: z.string().meta({
      description:
        '`{app_scheme}://plan/{id}`: a deep link that works only where the companion app is installed. Link with `webUrl` unless you know the app is installed.',
    }),
  })
  .meta({ id: 'Plan', description: 'One published, approved training plan.' });
export type Plan = z.output<typeof Plan>;

export const Catalog = z
  .object({
    generatedAt: z.iso.datetime().meta({
      description:
        'ISO 8601 UTC time at which the origin built this response. Not a freshness signal: a CDN copy can be about 25 hours old; never use it to decide that your cache is stale.',
    }),
    plans: z.array(Plan).meta({
      description:
        'The full matching set, no pagination, ordered by discipline ascending, then title ascending (stable).',
    }),
  })
  .meta({ id: 'Catalog', description: 'The catalog response.' });
export type Catalog = z.output<typeof Catalog>;

const PROBLEM_TYPES = Object.values(PROBLEMS).map((p) => p.type) as [string, ...string[]];

/** The body of every error answer: RFC 9457 problem details. */
export const Problem = z
  .object({
    type: z.enum(PROBLEM_TYPES).meta({
      description:
        'Stable identifier of the kind of error (a tag URI, not meant to be fetched); switch on it.',
    }),
    title: z.string().meta({ description: 'Short summary of the kind of error.' }),
    status: z.int().min(400).max(599).meta({ description: 'The HTTP status of the answer.' }),
    detail: z.string().meta({ description: 'What went wrong in this case; never contains the key.' }),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details, `application/problem+json`.' });
export type Problem = z.output<typeof Problem>;

/** The schemas published in openapi.yaml (`components.schemas`), by name. */
export const API_SCHEMAS = { Catalog, Plan, Level, Discipline, Problem } as const;

// Build configuration (docs/decisions.md#catalog-files).

/** An http(s) URL with no user, password, query or fragment; undefined for any other text. */
function plainHttpUrl(value: string): URL | undefined {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  const plain =
    (url?.protocol === 'http:' || url?.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    !value.includes('?') &&
    !value.includes('#');
  return plain ? url : undefined;
}

/** `http(s)://host[:port]` with no path, query or fragment; a trailing `/` is dropped. */
export const BaseUrl = z.string().transform((value, ctx) => {
  const url = plainHttpUrl(value);
  if (url?.pathname !== '/' || /^https?:\/\/[^/]*\//i.test(value.replace(/\/$/, '')))
    return broken(ctx, 'must be http(s)://host[:port] with no path, query or fragment');
  return url.origin;
});

/** The base of `webUrl` when plan pages live on a website elsewhere; a trailing `/` is dropped. */
export const WebBaseUrl = z.string().transform((value, ctx) => {
  const url = plainHttpUrl(value);
  if (!url) return broken(ctx, 'must be http(s)://host[:port][/path] with no query or fragment');
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
});

/** An RFC 3986 scheme name. */
export const AppScheme = z.string().regex(/^[A-Za-z][A-Za-z0-9+.-]*$/, {
  error: 'must be an RFC 3986 scheme name (a letter, then letters, digits, +, . or -)',
});

/** Where webUrl and appUrl point. */
export interface LinkConfig {
  /** The service's own base: `webUrl` points here (its plan pages) unless `webBaseUrl` is set. */
  readonly baseUrl: string;
  readonly appScheme: string;
  /** A website elsewhere that has the plan pages: `webUrl` points there, and no pages are built. */
  readonly webBaseUrl?: string | undefined;
}

/** Defaults of the local stack (docs/decisions.md#catalog-files). */
export const DEFAULT_LINKS: LinkConfig = { baseUrl: 'http://127.0.0.1:8787', appScheme: 'trainingplans' };
