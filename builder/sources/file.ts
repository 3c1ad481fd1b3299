import { readFile } from 'node:fs/promises';
import { SourceError } from '../../contract/errors.ts';
import type { PlanSource } from '../source.ts';

/** A JSON file holding an array of rows. */
export class FileSource implements PlanSource {
  readonly name: string;
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
    this.name = path;
  }

  async *batches(): AsyncGenerator<readonly unknown[]> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : String(error);
      throw new SourceError(this.name, `cannot be read (${why})`, { cause: error });
    }
    let rows: unknown;
    try {
      rows = JSON.parse(text);
      text = ''; // the generator stays suspended while the rows are validated: let the text go
    } catch (error) {
      throw new SourceError(this.name, `is not valid JSON (${(error as Error).message})`, { cause: error });
    }
    if (!Array.isArray(rows)) {
      const got = rows === null ? 'null' : typeof rows;
      throw new SourceError(this.name, `must be a JSON array of rows (got ${got})`);
    }
    yield rows;
  }
}
