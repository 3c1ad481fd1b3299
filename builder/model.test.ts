import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateRows } from '../fixtures/generate.ts';
import { parseValidSourceRow, SourceRow, SUMMARY_MAX_LENGTH, TITLE_MAX_LENGTH } from './model.ts';

/**
 * Values a source column may hold: mostly valid ones with their edge cases (padding, case, integer strings,
 * nulls), and now and then anything (a wrong type, any JSON value), so that many rows are valid and every rule
 * is broken in some.
 */
const column = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown> = fc.constant(undefined)) =>
  fc.oneof(
    { weight: 8, arbitrary: valid },
    { weight: 1, arbitrary: invalid },
    { weight: 1, arbitrary: fc.oneof(fc.jsonValue(), fc.constantFrom(undefined, null)) },
  );
const padded = (arbitrary: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.constantFrom('', ' ', '\t', '\u00a0'), arbitrary, fc.constantFrom('', ' ', '\n', '\u2028'))
    .map(([before, value, after]) => before + value + after);
const text = (max: number) =>
  fc.oneof(
    padded(fc.string({ maxLength: max })),
    fc.string({ minLength: max - 2, maxLength: max + 2 }),
    fc.constantFrom('', ' ', '\u00a0x\u2028', ' a ', '😀'.repeat(max / 2 + 1)),
    // What a title may not hold and a summary may (tabs, line breaks), and what neither may.
    fc.constantFrom(
      'a\tb',
      'a\r\nb',
      'a\u0000b',
      'a\u007fb',
      'a\u0085b',
      'a\u202eb',
      'a\u2066b\u2069',
      'a\u200fb',
    ),
  );
/**
 * A URL of RFC 3986's shape, as `fc.webUrl` makes them: a scheme, a domain, path segments, and with `extras` an
 * optional query and fragment, each of unreserved and sub-delimiter characters with percent-encoded ones now and
 * then (any code point, as UTF-8, or an ASCII character as `%hh`). Built here because `fc.webUrl` draws its
 * percent-encoded characters from a string of any code point, whose first use tabulates all 1.1 million of them:
 * about a second and 90 MB kept for the rest of the worker that runs this file.
 */
const URL_CHARACTERS = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@"];
const percentEncoded = fc
  .oneof(fc.integer({ min: 0, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0x10ffff }))
  .map((point) => {
    const character = String.fromCodePoint(point);
    const encoded = encodeURIComponent(character);
    return encoded !== character ? encoded : `%${point.toString(16)}`;
  });
const urlPart = (extra: string) =>
  fc
    .array(
      fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom(...URL_CHARACTERS, ...extra) },
        { weight: 1, arbitrary: percentEncoded },
      ),
    )
    .map((characters) => characters.join(''));
const webUrl = (scheme: string, extras = false) =>
  fc
    .tuple(
      fc.domain(),
      fc.array(urlPart('')),
      extras ? fc.option(urlPart('/?')) : fc.constant(null),
      extras ? fc.option(urlPart('/?')) : fc.constant(null),
    )
    .map(
      ([host, segments, query, fragment]) =>
        `${scheme}://${host}${segments.map((segment) => `/${segment}`).join('')}${query === null ? '' : `?${query}`}${fragment === null ? '' : `#${fragment}`}`,
    );
const integerLike = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ min, max }),
    fc.integer({ min, max }).map((n) => ` ${n} `),
    fc.constantFrom(
      min - 1,
      max + 1,
      1.5,
      Number.NaN,
      2 ** 53,
      -0,
      '+5',
      '-1',
      '',
      '  ',
      '1e2',
      '0x10',
      '07',
    ),
  );
const nullableInteger = (min: number, max: number) =>
  fc.oneof(integerLike(min, max), fc.constantFrom(null, ''));

const sourceRow = fc.record(
  {
    id: column(
      fc.oneof(
        fc.uuid(),
        fc.uuid().map((id) => id.toUpperCase()),
        padded(fc.uuid()),
      ),
      fc.oneof(
        fc.uuid().map((id) => `${id}x`),
        fc.string(),
      ),
    ),
    title: column(text(TITLE_MAX_LENGTH)),
    summary: column(fc.oneof(text(SUMMARY_MAX_LENGTH), fc.constant(null))),
    cover_url: column(
      fc.oneof(
        webUrl('https', true),
        padded(webUrl('https')),
        fc.constantFrom(
          null,
          '',
          'HTTPS://Images.Example.com/a b.jpg',
          ' https://example.com/é?x=1 ',
          'https://example.com:443/./a/../b',
        ),
      ),
      fc.oneof(
        webUrl('http'),
        fc.constantFrom('https://', 'https://[::1', 'ftp://x', 'https//x'),
        fc.string(),
      ),
    ),
    level: column(
      padded(fc.constantFrom('none', 'beginner', 'intermediate', 'advanced', '')),
      fc.constantFrom('Beginner', 'expert', 'none.'),
    ),
    discipline: column(
      padded(fc.constantFrom('running', 'strength')),
      fc.constantFrom('Running', '', 'yoga'),
    ),
    weeks_count: column(integerLike(1, 60)),
    days_per_week: column(nullableInteger(1, 7)),
    est_minutes_per_session: column(nullableInteger(1, 600)),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

describe('the fast path of row validation', () => {
  it('accepts only rows the schema accepts, with the same output', () => {
    let accepted = 0;
    fc.assert(
      fc.property(sourceRow, (raw) => {
        const fast = parseValidSourceRow(raw);
        // A row it does not take goes to the schema, which decides: only what it takes must agree.
        if (fast === undefined) return;
        accepted += 1;
        expect(SourceRow.safeParse(raw)).toEqual({ success: true, data: fast });
      }),
      { numRuns: 20_000 },
    );
    // Enough valid rows among them for the comparison of outputs to mean something.
    expect(accepted).toBeGreaterThan(400);
  });

  it('takes every row of a generated source that the schema accepts', () => {
    let taken = 0;
    for (const raw of generateRows(2000, 7)) {
      if (raw.published !== true || raw.approved !== true) continue;
      const parsed = SourceRow.safeParse(raw);
      expect(parsed.success).toBe(true);
      expect(parseValidSourceRow(raw)).toEqual(parsed.data);
      taken += 1;
    }
    expect(taken).toBeGreaterThan(1800);
  });
});
