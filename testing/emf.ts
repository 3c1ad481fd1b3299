/**
 * CloudWatch embedded-metric-format lines as the builder writes them (Powertools' Metrics writes them to
 * stdout): capture them while code runs in this process, and read one back into its parts, checking the
 * format's structure on the way. Also the functions' log lines (console.log).
 */
import { vi } from 'vitest';

/** A capture of stdout in progress: the EMF lines so far; `stop` puts stdout back. */
export interface EmfCapture {
  readonly lines: string[];
  stop(): void;
}

/** Starts collecting the EMF lines written to stdout, keeping them out of the output; other output passes. */
export function startEmfCapture(): EmfCapture {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const emf = text.split('\n').filter((line) => line.startsWith('{"_aws"'));
    if (emf.length === 0)
      return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
    lines.push(...emf);
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  return {
    lines,
    stop: () => {
      process.stdout.write = write;
    },
  };
}

/**
 * Collects what `console.log` writes (a function's log lines, which go to CloudWatch Logs on Lambda) from now on,
 * keeping it out of the output; the spy is restored with vitest's mocks.
 */
export function captureLogLines(): string[] {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
    lines.push(String(line));
  });
  return lines;
}

/** Runs `run` while collecting the EMF lines written to stdout (kept out of the output). */
export async function captureEmf<T>(run: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const capture = startEmfCapture();
  try {
    return { result: await run(), lines: capture.lines };
  } finally {
    capture.stop();
  }
}

/** One EMF line, read back. */
export interface EmfRecord {
  readonly namespace: string;
  readonly dimensions: readonly (readonly string[])[];
  /** Each declared metric: its unit and the value the line carries under its name. */
  readonly metrics: Readonly<Record<string, { readonly unit: string; readonly value: unknown }>>;
  /** Every top-level member of the line (the dimension values, the metric values, the metadata). */
  readonly members: Readonly<Record<string, unknown>>;
}

/**
 * Parses an EMF line and checks its structure (the embedded metric format specification): `_aws` with a
 * millisecond `Timestamp` and exactly one `CloudWatchMetrics` directive naming a namespace, dimension sets
 * whose every dimension is a top-level string member, and metrics each with a name, a unit and a numeric
 * top-level value. Throws on the first violation.
 */
export function parseEmf(line: string): EmfRecord {
  const parsed = JSON.parse(line) as Record<string, unknown>;
  const aws = parsed._aws as { Timestamp?: unknown; CloudWatchMetrics?: unknown } | undefined;
  if (!aws || typeof aws.Timestamp !== 'number' || !Number.isInteger(aws.Timestamp))
    throw new Error('_aws.Timestamp must be a whole number of milliseconds');
  const directives = aws.CloudWatchMetrics as
    | { Namespace?: unknown; Dimensions?: unknown; Metrics?: unknown }[]
    | undefined;
  if (!Array.isArray(directives) || directives.length !== 1)
    throw new Error('_aws.CloudWatchMetrics must hold one directive');
  const [directive] = directives as [{ Namespace?: unknown; Dimensions?: unknown; Metrics?: unknown }];
  if (typeof directive.Namespace !== 'string' || directive.Namespace === '')
    throw new Error('the directive needs a Namespace');
  const dimensions = directive.Dimensions as string[][];
  if (!Array.isArray(dimensions) || dimensions.some((set) => !Array.isArray(set)))
    throw new Error('Dimensions must be an array of dimension sets');
  for (const name of dimensions.flat())
    if (typeof parsed[name] !== 'string') throw new Error(`dimension ${name} has no string value`);
  const metrics: Record<string, { unit: string; value: unknown }> = {};
  for (const metric of directive.Metrics as { Name?: unknown; Unit?: unknown }[]) {
    if (typeof metric.Name !== 'string' || typeof metric.Unit !== 'string')
      throw new Error('each metric needs a Name and a Unit');
    const value = parsed[metric.Name];
    if (typeof value !== 'number' && !(Array.isArray(value) && value.every((v) => typeof v === 'number')))
      throw new Error(`metric ${metric.Name} has no numeric value`);
    metrics[metric.Name] = { unit: metric.Unit, value };
  }
  const { _aws: _, ...members } = parsed;
  return { namespace: directive.Namespace, dimensions, metrics, members };
}
