import { createReadStream } from 'node:fs';
import { SourceError, settingRef } from '../../contract/errors.ts';
import type { PlanSource } from '../source.ts';
import { formatBytes, SOURCE_DEFAULTS, type SourceOptions } from './options.ts';

/**
 * A JSON file holding an array of rows, read up to `sourceMaxBytes` as the HTTP source's body is: a file that
 * grows past it (or never ends, as `/dev/zero`) is refused once the limit is read, not after it is all in memory.
 */
export class FileSource implements PlanSource {
  readonly name: string;
  readonly #path: string;
  readonly #maxBytes: number;

  constructor(path: string, options: Pick<SourceOptions, 'sourceMaxBytes'> = {}) {
    this.#path = path;
    this.name = path;
    this.#maxBytes = options.sourceMaxBytes ?? SOURCE_DEFAULTS.sourceMaxBytes;
  }

  /** The file's bytes, refused as soon as they pass the limit. */
  async #read(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const stream = createReadStream(this.#path);
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > this.#maxBytes)
          throw new SourceError(
            this.name,
            `is larger than the limit of ${formatBytes(this.#maxBytes)} (raise ${settingRef('sourceMaxBytes')})`,
          );
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof SourceError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : String(error);
      throw new SourceError(this.name, `cannot be read (${why})`, { cause: error });
    } finally {
      stream.destroy();
    }
    return Buffer.concat(chunks, bytes);
  }

  async *batches(): AsyncGenerator<readonly unknown[]> {
    let text = (await this.#read()).toString('utf8');
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
