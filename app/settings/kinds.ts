/**
 * Kinds of setting values. A kind reads a value the way every entry point receives it — text from a flag, an
 * environment variable or `cdk -c`, or a typed value from cdk.json or a stack prop — and writes it back as the
 * canonical text a flag or variable would hold (the stack writes the builder Lambda's environment that way).
 */
import { z } from 'zod';

/**
 * How one kind of value is read and written. `I` is what a CDK prop may hold, `O` the parsed value.
 * `schema` accepts `I` (and text), and its messages read as rules ("must be …").
 */
export interface Kind<I, O> {
  readonly schema: z.ZodType<O, unknown>;
  /** The canonical text of a value (for the Lambda's environment, help texts and `--help` defaults). */
  format(value: O): string;
  /** The placeholder in `--help` (`<duration>`); absent for a switch, which takes no value. */
  readonly valueName?: string;
  /** Phantom: the type a CDK prop of this kind has. */
  readonly input?: I;
}

export type KindOutput<K> = K extends Kind<unknown, infer O> ? O : never;

/** Text, trimmed, not empty; `inner` (a schema over the trimmed text) checks and transforms it. */
export function text<O = string>(valueName: string, inner?: z.ZodType<O, string>): Kind<string, O> {
  const base = z.string({ error: 'must be text' }).trim().min(1, { error: 'must not be empty' });
  return {
    schema: (inner ? base.pipe(inner) : base) as z.ZodType<O, unknown>,
    format: (value) => String(value),
    valueName,
  };
}

/** Text that matches `pattern`; `error` says what it must be. */
export function matching(valueName: string, pattern: RegExp, error: string): Kind<string, string> {
  return text(valueName, z.string().regex(pattern, { error }));
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** A switch: a flag without a value, or 1/true/yes/on and 0/false/no/off in a variable or context. */
export const boolean: Kind<boolean | string, boolean> = {
  schema: z.preprocess(
    (value) => {
      if (typeof value !== 'string') return value;
      const word = value.trim().toLowerCase();
      if (TRUE.includes(word)) return true;
      if (FALSE.includes(word) || word === '') return false;
      return value;
    },
    z.boolean({ error: 'must be 1/true/yes/on or 0/false/no/off' }),
  ) as z.ZodType<boolean, unknown>,
  format: (value) => (value ? 'true' : 'false'),
};

/** A number from `min` to `max`, as text or a number; `whole`: only a whole number (text of digits). */
function number(min: number, max: number, valueName: string, whole: boolean): Kind<number | string, number> {
  const rule = `must be a ${whole ? 'whole number' : 'number'} from ${min} to ${max}`;
  const digits = whole ? /^\s*[+-]?\d+\s*$/ : /\S/;
  const range = z.number({ error: rule }).min(min, { error: rule }).max(max, { error: rule });
  return {
    schema: z.preprocess(
      (value) => (typeof value === 'string' && digits.test(value) ? Number(value) : value),
      whole ? range.int({ error: rule }) : range,
    ) as z.ZodType<number, unknown>,
    format: String,
    valueName,
  };
}
export const integer = (min: number, max: number, valueName = 'n') => number(min, max, valueName, true);
export const decimal = (min: number, max: number, valueName = 'n') => number(min, max, valueName, false);

/** A comma-separated list (or an array), each item checked by `item`. */
export function list(item: z.ZodType<string, string>, valueName: string): Kind<string | string[], string[]> {
  return {
    schema: z.preprocess(
      (value) =>
        typeof value === 'string'
          ? value
              .split(',')
              .map((part) => part.trim())
              .filter((part) => part !== '')
          : value,
      z.array(z.string({ error: 'must be text' }).pipe(item), { error: 'must be a comma-separated list' }),
    ) as z.ZodType<string[], unknown>,
    format: (value) => value.join(','),
    valueName,
  };
}

/** A value given as text whose parsed form is not text (`30s` → 30000); `format` writes it back. */
export function parsed<O>(
  valueName: string,
  inner: z.ZodType<O, string>,
  format: (value: O) => string,
): Kind<string, O> {
  return { schema: text(valueName, inner).schema, format, valueName };
}
