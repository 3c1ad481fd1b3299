/**
 * What the stack's alarms read, evaluated here on records: CloudWatch Logs metric filter patterns and CloudWatch
 * metric math, each for the subset the stack writes (infra/usage-logs.ts, infra/monitoring.ts). Anything outside
 * the subset is refused, so a pattern or an expression this cannot read fails the test that uses it rather than
 * being counted wrongly. Test support only.
 *
 * Patterns: a JSON pattern `{ … }` of conditions on a property (`$.['name']` or `$.name`) joined by `&&` and `||`
 * (`&&` binding tighter), in parentheses or not; `=` and `!=` with a quoted string, in which `*` stands for any
 * characters; `=`, `!=`, `<`, `<=`, `>`, `>=` with a number. Where AWS's documentation does not say, the reading
 * is the strict one: a string compares with a string value only, a number with a number value only, and a
 * condition on a property the record lacks does not hold.
 *
 * Expressions: numbers, metric ids, `+ - * /`, parentheses and `FILL(id, number)`; a metric without a value in
 * the period makes the expression's value missing (null) unless filled, as does a division by zero.
 */

type Token = { readonly kind: 'punct' | 'op' | 'selector' | 'string' | 'number'; readonly text: string };

const PATTERN_TOKENS =
  /\s*(?:(?<punct>&&|\|\||[{}()])|(?<op><=|>=|!=|=|<|>)|(?<selector>\$\.\['[^']+'\]|\$\.[A-Za-z_][A-Za-z0-9_]*)|(?<string>"[^"]*")|(?<number>-?\d+(?:\.\d+)?))/y;

function tokens(text: string, grammar: RegExp, what: string): Token[] {
  const found: Token[] = [];
  grammar.lastIndex = 0;
  while (grammar.lastIndex < text.trimEnd().length) {
    const at = grammar.lastIndex;
    const match = grammar.exec(text);
    if (!match?.groups) throw new Error(`${what} ${JSON.stringify(text)}: cannot read at ${at}`);
    const [kind, value] = Object.entries(match.groups).find(([, v]) => v !== undefined) as [string, string];
    found.push({ kind: kind as Token['kind'], text: value });
  }
  return found;
}

/** A record's test: whether a metric filter with this pattern counts it. */
export type RecordTest = (record: Readonly<Record<string, unknown>>) => boolean;

/** Whether `value` matches `glob`, in which `*` is any characters. */
function globMatch(glob: string, value: string): boolean {
  const pattern = glob
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(value);
}

/** Reads a metric filter pattern of the subset above into the test of a JSON record. */
export function parseFilterPattern(pattern: string): RecordTest {
  const list = tokens(pattern, PATTERN_TOKENS, 'filter pattern');
  let at = 0;
  const peek = () => list[at];
  const take = (kind: Token['kind'], text?: string): Token => {
    const token = list[at];
    if (!token || token.kind !== kind || (text !== undefined && token.text !== text))
      throw new Error(`filter pattern ${JSON.stringify(pattern)}: expected ${text ?? kind} at token ${at}`);
    at += 1;
    return token;
  };
  const condition = (): RecordTest => {
    const selector = take('selector').text;
    const name = selector.startsWith("$.['") ? selector.slice(4, -2) : selector.slice(2);
    const op = take('op').text;
    const operand = peek();
    if (operand?.kind === 'string') {
      at += 1;
      if (op !== '=' && op !== '!=') throw new Error(`filter pattern: ${op} with a string`);
      const glob = operand.text.slice(1, -1);
      return (record) => {
        const value = record[name];
        if (typeof value !== 'string') return false;
        return globMatch(glob, value) === (op === '=');
      };
    }
    const limit = Number(take('number').text);
    const compare: Record<string, (v: number) => boolean> = {
      '=': (v) => v === limit,
      '!=': (v) => v !== limit,
      '<': (v) => v < limit,
      '<=': (v) => v <= limit,
      '>': (v) => v > limit,
      '>=': (v) => v >= limit,
    };
    const test = compare[op] as (v: number) => boolean;
    return (record) => typeof record[name] === 'number' && test(record[name] as number);
  };
  const primary = (): RecordTest => {
    if (peek()?.text === '(') {
      take('punct', '(');
      const inner = or();
      take('punct', ')');
      return inner;
    }
    return condition();
  };
  /** Terms read by `term` joined by `op`: all of them must hold (`&&`), or one (`||`). */
  const joined = (op: '&&' | '||', term: () => RecordTest): RecordTest => {
    const parts = [term()];
    while (peek()?.text === op) {
      at += 1;
      parts.push(term());
    }
    return op === '&&'
      ? (record) => parts.every((part) => part(record))
      : (record) => parts.some((part) => part(record));
  };
  const or = (): RecordTest => joined('||', () => joined('&&', primary));
  take('punct', '{');
  const test = or();
  take('punct', '}');
  if (at !== list.length)
    throw new Error(`filter pattern ${JSON.stringify(pattern)}: more after the closing }`);
  return test;
}

const MATH_TOKENS =
  /\s*(?:(?<punct>[()+\-*/,])|(?<number>\d+(?:\.\d+)?)|(?<selector>[A-Za-z][A-Za-z0-9_]*))/y;

/** Evaluates a metric math expression of the subset above, with each metric's value in the period (null: none). */
export function evaluateMath(
  expression: string,
  values: Readonly<Record<string, number | null>>,
): number | null {
  const list = tokens(expression, MATH_TOKENS, 'expression');
  let at = 0;
  const peek = () => list[at]?.text;
  const fail = (why: string): never => {
    throw new Error(`expression ${JSON.stringify(expression)}: ${why} at token ${at}`);
  };
  const next = (): Token => list[at++] ?? fail('unexpected end');
  const primary = (): number | null => {
    const token = next();
    if (token.text === '(') {
      const inner = sum();
      if (next().text !== ')') fail('expected )');
      return inner;
    }
    if (token.kind === 'number') return Number(token.text);
    if (token.kind !== 'selector') return fail(`unexpected ${token.text}`);
    if (token.text === 'FILL') {
      if (next().text !== '(') fail('expected (');
      const metric = next();
      if (!(metric.text in values)) fail(`unknown metric ${metric.text}`);
      if (next().text !== ',') fail('expected ,');
      const filler = Number(next().text);
      if (next().text !== ')') fail('expected )');
      return values[metric.text] ?? filler;
    }
    if (!(token.text in values)) return fail(`unknown metric ${token.text}`);
    return values[token.text] ?? null;
  };
  const product = (): number | null => {
    let value = primary();
    while (peek() === '*' || peek() === '/') {
      const op = next().text;
      const right = primary();
      value =
        value === null || right === null
          ? null
          : op === '*'
            ? value * right
            : right === 0
              ? null
              : value / right;
    }
    return value;
  };
  const sum = (): number | null => {
    let value = product();
    while (peek() === '+' || peek() === '-') {
      const op = next().text;
      const right = product();
      value = value === null || right === null ? null : op === '+' ? value + right : value - right;
    }
    return value;
  };
  const result = sum();
  if (at !== list.length) fail('more after the expression');
  return result;
}
