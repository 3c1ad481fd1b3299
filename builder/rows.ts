/**
 * Validation of source rows (docs/decisions.md#source-rows), batch by batch (a file is one batch, a database
 * cursor many); every problem is collected, none stops the scan.
 */
import { DISCIPLINE_LABELS, FIXTURE_COVER_ORIGIN, LOOPBACK_HOST } from '../contract/index.ts';
import { type InvalidRow, SourceRowError } from './errors.ts';
import { type LinkConfig, type Plan, parseValidSourceRow, SourceRow, SourceRowGate } from './model.ts';
import { redactUrl } from './sources/redact.ts';
import { quotedText } from './text.ts';

/** Rows left out of the catalog without being an error: `published` false, or published but not `approved`. */
export interface SkippedRows {
  readonly unpublished: number;
  readonly unapproved: number;
}

/** The outcome of validating a whole source. */
export interface RowReport {
  /** Valid plans, in source order (not yet sorted). */
  readonly plans: Plan[];
  readonly invalid: InvalidRow[];
  readonly skipped: SkippedRows;
  /** Rows read from the source. */
  readonly total: number;
}

/**
 * Where a build points the fixture covers (contract/index.ts `FIXTURE_COVER_ORIGIN`): its base URL's origin
 * when that is http:// on a loopback host (a local build, whose edge serves them), else null (kept as given).
 */
function localCoverOrigin(baseUrl: string): string | null {
  try {
    const url = new URL(baseUrl);
    return url.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname) ? url.origin : null;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** The longest value (and id) a report line quotes: a row of any size gives a line of bounded length. */
const QUOTED_MAX = 80;

/**
 * A string as a report quotes it: JSON-escaped, one line that no character of it can reorder or act on the
 * terminal with (text.ts), cut to {@link QUOTED_MAX} characters.
 */
function quoted(text: string): string {
  const json = quotedText(text.length > QUOTED_MAX ? text.slice(0, QUOTED_MAX) : text);
  return json.length > QUOTED_MAX ? `${json.slice(0, QUOTED_MAX - 3)}...` : json;
}

/** The value a broken rule got, as the report shows it: short for a value of any size or depth. */
function shown(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return ` (got ${quoted(value)})`;
  if (value === null || typeof value !== 'object') return ` (got ${String(value)})`;
  return ` (got ${describe(value)})`;
}

/** An id as the report names it: cut like a value, so a huge or multi-line id keeps the line short. */
function reportedId(id: string | null): string | null {
  return id === null || id.length <= QUOTED_MAX ? id : `${id.slice(0, QUOTED_MAX - 3)}...`;
}

/**
 * Validates rows batch by batch. Create one per build, `add` every batch in source order, then `finish`.
 * Duplicate ids (compared in lowercase canonical form) make every row carrying them invalid.
 */
export class RowValidator {
  readonly #links: LinkConfig;
  readonly #coverOrigin: string | null;
  /** Each plan with its source row number and id as given, for the duplicate report. */
  readonly #plans: { plan: Plan; row: number; rawId: string }[] = [];
  readonly #invalid: InvalidRow[] = [];
  /** Canonical id → row of its first occurrence; ids seen again → every row carrying them. */
  readonly #firstRow = new Map<string, number>();
  readonly #duplicates = new Map<string, number[]>();
  #unpublished = 0;
  #unapproved = 0;
  #total = 0;

  constructor(links: LinkConfig) {
    this.#links = links;
    this.#coverOrigin = localCoverOrigin(links.baseUrl);
  }

  /** Validates the next batch; throws {@link SourceRowError} when an element is not an object. */
  add(batch: readonly unknown[]): void {
    for (const raw of batch) {
      this.#total += 1;
      const rowNumber = this.#total;
      if (!isRecord(raw)) throw new SourceRowError(rowNumber, `is not an object (got ${describe(raw)})`);
      this.#addRow(raw, rowNumber);
    }
  }

  #addRow(raw: Record<string, unknown>, rowNumber: number): void {
    const rawId = typeof raw.id === 'string' ? raw.id.trim() : null;
    if (raw.published === true && raw.approved === true) {
      this.#addPublished(raw, rawId, rowNumber);
      return;
    }
    const gate = SourceRowGate.safeParse(raw);
    if (!gate.success) {
      this.#report(gate.error.issues, raw, rawId, rowNumber);
      return;
    }
    if (!gate.data.published) {
      this.#unpublished += 1;
      return;
    }
    if (!gate.data.approved) this.#unapproved += 1;
  }

  /** Records each broken rule of a row: its field, the rule, and the value given. */
  #report(
    issues: readonly { path: readonly PropertyKey[]; message: string }[],
    raw: Record<string, unknown>,
    id: string | null,
    row: number,
  ): void {
    for (const issue of issues) {
      const field = String(issue.path[0]);
      // A cover URL's password is a secret like any other: the report shows the URL without it.
      const value = raw[field];
      const given = field === 'cover_url' && typeof value === 'string' ? redactUrl(value) : value;
      this.#invalid.push({ row, id: reportedId(id), field, reason: issue.message + shown(given) });
    }
  }

  #addPublished(raw: Record<string, unknown>, rawId: string | null, rowNumber: number): void {
    // A valid row takes the fast path; any other is parsed by the schema, which reports what it breaks.
    let row = parseValidSourceRow(raw);
    if (row === undefined) {
      const parsed = SourceRow.safeParse(raw);
      if (!parsed.success) {
        this.#report(parsed.error.issues, raw, rawId, rowNumber);
        return;
      }
      row = parsed.data;
    }
    const first = this.#firstRow.get(row.id);
    if (first === undefined) this.#firstRow.set(row.id, rowNumber);
    else {
      const rows = this.#duplicates.get(row.id);
      if (rows) rows.push(rowNumber);
      else this.#duplicates.set(row.id, [first, rowNumber]);
    }
    const { baseUrl, appScheme, webBaseUrl } = this.#links;
    const plan: Plan = {
      id: row.id,
      title: row.title,
      summary: row.summary,
      coverUrl:
        this.#coverOrigin !== null && row.cover_url?.startsWith(`${FIXTURE_COVER_ORIGIN}/`)
          ? this.#coverOrigin + row.cover_url.slice(FIXTURE_COVER_ORIGIN.length)
          : row.cover_url,
      level: row.level,
      discipline: row.discipline,
      disciplineLabel: DISCIPLINE_LABELS[row.discipline],
      weeksCount: row.weeks_count,
      daysPerWeek: row.days_per_week,
      estMinutesPerSession: row.est_minutes_per_session,
      webUrl: `${webBaseUrl ?? baseUrl}/plans/${row.id}`,
      appUrl: `${appScheme}://plan/${row.id}`,
    };
    this.#plans.push({ plan, row: rowNumber, rawId: rawId ?? row.id });
  }

  /** Ends the scan: removes duplicated ids and returns the report, invalid rows in source order. */
  finish(): RowReport {
    const plans: Plan[] = [];
    const invalid = [...this.#invalid];
    for (const { plan, row, rawId } of this.#plans) {
      const rows = this.#duplicates.get(plan.id);
      if (!rows) {
        plans.push(plan);
        continue;
      }
      const others = rows.filter((r) => r !== row);
      const where = `${others.length > 1 ? 'rows' : 'row'} ${others.join(', ')}`;
      invalid.push({ row, id: rawId, field: 'id', reason: `is duplicated (also in ${where})` });
    }
    if (this.#duplicates.size > 0) invalid.sort((a, b) => a.row - b.row);
    return {
      plans,
      invalid,
      skipped: { unpublished: this.#unpublished, unapproved: this.#unapproved },
      total: this.#total,
    };
  }
}
