/**
 * The name of the PostgreSQL relation a source reads, parsed as SQL parses it and written back quoted, so a
 * name from a flag or an environment variable can never change the query it is put into.
 */

/** A relation name, optionally schema-qualified, as PostgreSQL resolves it. */
export interface RelationName {
  readonly schema: string | null;
  readonly name: string;
}

/** PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1); a longer name would name another relation. */
const MAX_IDENTIFIER_BYTES = 63;
const UNQUOTED = /^[A-Za-z_][A-Za-z0-9_$]*/;

/** The reason `text` is not a relation name, or the parts it names. */
export function parseRelationName(text: string): RelationName | string {
  const rule =
    'must be a table or view name, optionally schema-qualified (catalog_source_plans, reporting.plans, "My View")';
  const parts: string[] = [];
  let rest = text.trim();
  for (;;) {
    let part: string;
    if (rest.startsWith('"')) {
      // A quoted identifier: kept exactly, "" stands for one ".
      const match = /^"((?:[^"]|"")+)"/.exec(rest);
      if (!match) return rule;
      part = (match[1] ?? '').replace(/""/g, '"');
      if (part.includes('\0')) return rule;
      rest = rest.slice(match[0].length);
    } else {
      // An unquoted identifier: folded to lowercase, as PostgreSQL does.
      const match = UNQUOTED.exec(rest);
      if (!match) return rule;
      part = match[0].toLowerCase();
      rest = rest.slice(match[0].length);
    }
    if (Buffer.byteLength(part) > MAX_IDENTIFIER_BYTES)
      return `must have parts of at most ${MAX_IDENTIFIER_BYTES} bytes`;
    parts.push(part);
    if (rest === '') break;
    if (!rest.startsWith('.') || parts.length === 2) return rule;
    rest = rest.slice(1);
  }
  const [first, second] = parts;
  if (first === undefined) return rule;
  return second === undefined ? { schema: null, name: first } : { schema: first, name: second };
}

/** One identifier in double quotes, safe to put into SQL. */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/** The relation as quoted SQL: `"reporting"."plans"`. */
export function relationSql(relation: RelationName): string {
  const name = quoteIdentifier(relation.name);
  return relation.schema === null ? name : `${quoteIdentifier(relation.schema)}.${name}`;
}

/** The relation as an operator reads it in a message: `reporting.plans`, or quoted where it needs to be. */
export function relationLabel(relation: RelationName): string {
  const label = (part: string) => (/^[a-z_][a-z0-9_$]*$/.test(part) ? part : quoteIdentifier(part));
  return relation.schema === null
    ? label(relation.name)
    : `${label(relation.schema)}.${label(relation.name)}`;
}
