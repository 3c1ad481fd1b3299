/** The failures of a build a user must act on, each naming the failing input (bases: contract/errors.ts). */
import { CatalogError, settingRef } from '../contract/errors.ts';
import { quotedText } from './text.ts';

/** One broken rule of one row. `row` is 1-based, in source order. */
export interface InvalidRow {
  readonly row: number;
  /** The row's id as given, or null when it has none that is a string. */
  readonly id: string | null;
  readonly field: string;
  readonly reason: string;
}

/** Formats one invalid row as the one-line entry of the report. */
export function formatInvalidRow(problem: InvalidRow): string {
  const id = problem.id === null ? 'no id' : `id ${quotedText(problem.id)}`;
  return `row ${problem.row} (${id}): ${problem.field} ${problem.reason}`;
}

/** One element of the source is not an object; the source reader adds its name with {@link SourceError}. */
export class SourceRowError extends CatalogError {
  override name = 'SourceRowError';
  readonly row: number;
  constructor(row: number, reason: string) {
    super(`row ${row} ${reason}`);
    this.row = row;
  }
}

/** The build found invalid rows and was not told to skip them: nothing is written or published. */
export class InvalidRowsError extends CatalogError {
  override name = 'InvalidRowsError';
  readonly invalid: readonly InvalidRow[];
  constructor(source: string, invalid: readonly InvalidRow[]) {
    const rows = new Set(invalid.map((problem) => problem.row)).size;
    super(
      `source ${source}: ${rows} invalid ${rows === 1 ? 'row' : 'rows'}; nothing was written (${settingRef('skipInvalid')} publishes the valid rows)`,
    );
    this.invalid = invalid;
  }

  /** Every problem, one line each, in source order. */
  lines(): string[] {
    return this.invalid.map(formatInvalidRow);
  }
}
