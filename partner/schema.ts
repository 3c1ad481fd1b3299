/**
 * The published schemas (openapi.yaml) as zod schemas, so the proxy refuses a body that breaks the contract
 * before it replaces its last good copy; a test checks they say exactly what the document says.
 */
import { z } from 'zod';
import { DISCIPLINE_LABELS, DISCIPLINES } from '../contract/disciplines.ts';

export { DISCIPLINES };

export const Discipline = z.enum(DISCIPLINES);
export type Discipline = z.output<typeof Discipline>;

export const Level = z.enum(['none', 'beginner', 'intermediate', 'advanced']);

export const Plan = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    .meta({ format: 'uuid' }),
  title: z.string().min(1).max(150),
  summary: z.string().max(500).nullable(),
  coverUrl: z
    .string()
    .regex(/^(https:\/\/\S+|http:\/\/(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?\/\S*)$/)
    .meta({ format: 'uri' })
    .nullable(),
  level: Level,
  discipline: Discipline,
  disciplineLabel: z.enum(Object.values(DISCIPLINE_LABELS)),
  weeksCount: z.int().min(1),
  daysPerWeek: z.int().min(1).max(7).nullable(),
  estMinutesPerSession: z.int().min(1).nullable(),
  webUrl: z.url(),
  appUrl: z.string(),
});
export type Plan = z.output<typeof Plan>;

export const Catalog = z.object({ generatedAt: z.iso.datetime(), plans: z.array(Plan) });
export type Catalog = z.output<typeof Catalog>;

export const Problem = z.object({
  type: z.enum([
    'tag:training-plan-catalog,2026:problem:not-found',
    'tag:training-plan-catalog,2026:problem:method-not-allowed',
    'tag:training-plan-catalog,2026:problem:unauthorized',
    'tag:training-plan-catalog,2026:problem:invalid-discipline',
    'tag:training-plan-catalog,2026:problem:internal-error',
    'tag:training-plan-catalog,2026:problem:rate-limited',
  ]),
  title: z.string(),
  status: z.int().min(400).max(599),
  detail: z.string(),
});
export type Problem = z.output<typeof Problem>;

/** A zod error as one short line: the first few issues, each with its path. */
export function describeIssues(error: z.ZodError): string {
  const issues = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : '(body)';
    return `${path}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : '';
  return `${issues.join('; ')}${more}`;
}

/** `text` parsed as JSON and checked against `schema`: its data and the JSON as it is (extras kept), or why not. */
export function parseJson<T>(
  schema: z.ZodType<T>,
  text: string,
): { readonly data: T; readonly json: unknown } | { readonly error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: 'not JSON' };
  }
  const checked = schema.safeParse(json);
  return checked.success ? { data: checked.data, json } : { error: describeIssues(checked.error) };
}
