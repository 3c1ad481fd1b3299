/** How the kit reads JSON it did not write (the service's answers, its own cache file): parsed, then checked. */
import type { z } from 'zod';

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
