// Generated from the catalog model (builder/model.ts) by `npm run openapi:sync` (builder/openapi-schemas.ts). Do not edit.

/**
 * The published schemas (openapi.yaml's `components.schemas`) as zod schemas, so the proxy refuses a body that
 * breaks the contract before it replaces its last good copy.
 */
import { z } from 'zod';

/** Closed enum, never null. A plan without a level is reported as `none`. */
export const Level = z.enum(['none', 'beginner', 'intermediate', 'advanced']);
export type Level = z.output<typeof Level>;

/** The discipline of a plan. */
export const Discipline = z.enum(['running', 'strength']);
export type Discipline = z.output<typeof Discipline>;

/** One published, approved training plan. */
export const Plan = z.object({
  /** UUID in lowercase. Stable; safe to store as a foreign key. */
  id: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/).meta({ format: 'uuid' }),
  /** At most 150 characters (JavaScript's `length`: a character outside the Basic Multilingual Plane, such as an emoji, counts as two). */
  title: z.string().min(1).max(150),
  /** One- or two-sentence description, at most 500 characters (counted as `title` is). */
  summary: z.string().max(500).nullable(),
  /** Public image URL (https; only a local development stack serves its own covers over http on a loopback host); null when the plan has no cover, and clients render a fallback. */
  coverUrl: z.string().regex(/^(https:\/\/\S+|http:\/\/(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?\/\S*)$/).meta({ format: 'uri' }).nullable(),
  level: Level,
  discipline: Discipline,
  /** Display name of the discipline: "Outdoor" for running, "Workouts" for strength. Use this rather than capitalising `discipline`. */
  disciplineLabel: z.enum(['Outdoor', 'Workouts']),
  /** Programme length in weeks. */
  weeksCount: z.int().min(1),
  daysPerWeek: z.int().min(1).max(7).nullable(),
  /** Estimated minutes per session. */
  estMinutesPerSession: z.int().min(1).nullable(),
  /** `{base_url}/plans/{id}`: the plan's web page, which anyone can open without a key (or the same path on the operator's own website). Always safe to render as a link. */
  webUrl: z.url(),
  /** `{app_scheme}://plan/{id}`: a deep link that works only where the companion app is installed. Link with `webUrl` unless you know the app is installed. */
  appUrl: z.string(),
});
export type Plan = z.output<typeof Plan>;

/** The catalog response. */
export const Catalog = z.object({
  /** ISO 8601 UTC time at which the origin built this response. Not a freshness signal: a CDN copy can be about 25 hours old; never use it to decide that your cache is stale. */
  generatedAt: z.iso.datetime(),
  /** The full matching set, no pagination, ordered by discipline ascending, then title ascending (stable). */
  plans: z.array(Plan),
});
export type Catalog = z.output<typeof Catalog>;

/** RFC 9457 problem details, `application/problem+json`. */
export const Problem = z.object({
  /** Stable identifier of the kind of error (a tag URI, not meant to be fetched); switch on it. */
  type: z.enum([
    'tag:training-plan-catalog,2026:problem:not-found',
    'tag:training-plan-catalog,2026:problem:method-not-allowed',
    'tag:training-plan-catalog,2026:problem:unauthorized',
    'tag:training-plan-catalog,2026:problem:invalid-discipline',
    'tag:training-plan-catalog,2026:problem:internal-error',
    'tag:training-plan-catalog,2026:problem:rate-limited',
  ]),
  /** Short summary of the kind of error. */
  title: z.string(),
  /** The HTTP status of the answer. */
  status: z.int().min(400).max(599),
  /** What went wrong in this case; never contains the key. */
  detail: z.string(),
});
export type Problem = z.output<typeof Problem>;

/** The disciplines, in catalog order. */
export const DISCIPLINES = Discipline.options;
