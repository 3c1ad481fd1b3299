import { describe, expect, it } from 'vitest';
import { parseRelationName, relationLabel, relationSql } from './relation.ts';

describe('a relation name', () => {
  it.each([
    ['catalog_source_plans', '"catalog_source_plans"', 'catalog_source_plans'],
    ['Catalog_Source_Plans', '"catalog_source_plans"', 'catalog_source_plans'],
    ['reporting.plans', '"reporting"."plans"', 'reporting.plans'],
    ['  reporting.plans  ', '"reporting"."plans"', 'reporting.plans'],
    ['"Reporting"."Plans ""v2"""', '"Reporting"."Plans ""v2"""', '"Reporting"."Plans ""v2"""'],
    ['reporting."my.view"', '"reporting"."my.view"', 'reporting."my.view"'],
    ['plans$2', '"plans$2"', 'plans$2'],
  ])('%s is read as SQL reads it: %s', (text, sql, label) => {
    const parsed = parseRelationName(text);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(relationSql(parsed)).toBe(sql);
    expect(relationLabel(parsed)).toBe(label);
  });

  it.each([
    '',
    'plans; DROP TABLE plans',
    'plans--',
    '1plans',
    'a.b.c',
    'reporting.',
    '"unterminated',
    '""',
    'plans"x"',
    'my view',
  ])('refuses %j', (text) => {
    expect(parseRelationName(text)).toMatch(/^must be a table or view name/);
  });

  it('refuses a part longer than PostgreSQL keeps', () => {
    expect(parseRelationName('a'.repeat(64))).toBe('must have parts of at most 63 bytes');
    expect(parseRelationName('a'.repeat(63))).toEqual({ schema: null, name: 'a'.repeat(63) });
  });
});
