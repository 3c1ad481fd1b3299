/** The evaluator of the alarms' inputs reads the subset the stack writes, as documented, and refuses the rest. */
import { describe, expect, it } from 'vitest';
import { evaluateMath, parseFilterPattern } from './metric-filter.ts';

describe('a metric filter pattern', () => {
  const data = "$.['viewer-request-log-data']";
  const partners = parseFilterPattern(`{ ${data} != "monitoring" && ${data} != "monitoring.*" }`);
  const refused = parseFilterPattern(
    `{ ${data} != "monitoring" && ($.['sc-status'] = "4*" || ($.['sc-status'] >= 400 && $.['sc-status'] <= 499)) }`,
  );

  it.each([
    ['acme', true],
    ['monitoring', false],
    ['monitoring.no-key', false],
    ['monitoring-eu', true],
    ['no-key', true],
    ['-', true],
  ])('%s is a partner record: %s', (value, expected) => {
    expect(partners({ 'viewer-request-log-data': value })).toBe(expected);
  });

  it('tells a 4xx by its status as text or as a number, and nothing else', () => {
    const record = (status: unknown) => ({ 'viewer-request-log-data': 'acme', 'sc-status': status });
    expect([401, '401', 404, '499', 400].map((s) => refused(record(s)))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([200, '200', '304', 500, '5xx', 399, 500.5, null].map((s) => refused(record(s)))).toEqual(
      Array(8).fill(false),
    );
    expect(refused({ 'viewer-request-log-data': 'monitoring', 'sc-status': '401' })).toBe(false);
  });

  it('holds no condition on a property the record lacks', () => {
    expect(parseFilterPattern('{ $.a = "x" }')({})).toBe(false);
    expect(parseFilterPattern('{ $.a != "x" }')({})).toBe(false);
  });

  it.each([['ERROR'], ['{ $.a = x }'], ['{ $.a IS NULL }'], ['{ $.a = "x" } trailing'], ['{ $.a > "1" }']])(
    'refuses %s, outside the subset',
    (pattern) => {
      expect(() => parseFilterPattern(pattern)).toThrow();
    },
  );
});

describe('a metric math expression', () => {
  it('computes the rate, fills what the expression fills, and has no value without a denominator', () => {
    const rate = '100 * FILL(errors, 0) / requests';
    expect(evaluateMath(rate, { errors: 12, requests: 120 })).toBe(10);
    expect(evaluateMath(rate, { errors: null, requests: 120 })).toBe(0);
    expect(evaluateMath(rate, { errors: 3, requests: null })).toBeNull();
    expect(evaluateMath(rate, { errors: 0, requests: 0 })).toBeNull();
    expect(evaluateMath('(a + b) - 2 * c', { a: 1, b: 2, c: 0.5 })).toBe(2);
  });

  it('refuses an unknown metric or function', () => {
    expect(() => evaluateMath('a / b', { a: 1 })).toThrow(/unknown metric b/);
    expect(() => evaluateMath('SUM(a)', { a: 1 })).toThrow();
  });
});
