import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { testPlan } from '../testing/plans.ts';
import { comparePlans, planSortKey, sortPlans } from './catalogs.ts';

const collator = new Intl.Collator('en');
const FAST = " -,;:!?.'()&/#+0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const fastTitle = fc.string({ unit: fc.constantFrom(...FAST), minLength: 0, maxLength: 12 });
const anyTitle = fc.oneof(
  fastTitle,
  fc.string({
    unit: fc.constantFrom(...FAST, 'é', 'É', 'ö', 'Å', 'ß', 'æ', '’', '–', '\u00a0', '日'),
    maxLength: 10,
  }),
);
const uuid = fc.uuid().map((u) => u.toLowerCase());

const plan = (title: string, id: string, discipline: 'running' | 'strength') =>
  testPlan(title, discipline, id);

describe('the sort-key fast path', () => {
  it('orders any two titles of the fast alphabet exactly as Intl.Collator("en") does', () => {
    const id = '00000000-0000-4000-8000-000000000000';
    fc.assert(
      fc.property(fastTitle, fastTitle, (a, b) => {
        const ka = planSortKey(a, id) as string;
        const kb = planSortKey(b, id) as string;
        const byKey = ka === kb ? 0 : ka < kb ? -1 : 1;
        expect(byKey).toBe(Math.sign(collator.compare(a, b)));
      }),
      { numRuns: 20_000 },
    );
  });

  it('orders near-identical titles (case, prefixes, spaces, punctuation) as the collator does', () => {
    const titles = [
      'a',
      'A',
      'ab',
      'aB',
      'Ab',
      'AB',
      'a b',
      'a-b',
      'a/b',
      "a'b",
      'a.b',
      'a1',
      'a 1',
      '1a',
      '10',
      '9',
      ' ',
      '',
      '-',
    ];
    const id = '00000000-0000-4000-8000-000000000000';
    for (const a of titles) {
      for (const b of titles) {
        const ka = planSortKey(a, id) as string;
        const kb = planSortKey(b, id) as string;
        expect([a, b, ka === kb ? 0 : ka < kb ? -1 : 1]).toEqual([a, b, Math.sign(collator.compare(a, b))]);
      }
    }
  });

  it('gives a title of any length a key (70,000 characters) that orders as the collator does', () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const long = 'a'.repeat(70_000);
    const titles = [`${long}b`, `${long}a`, `${long}B`, long, `${long} b`];
    const byKey = [...titles].sort((a, b) => {
      const ka = planSortKey(a, id) as string;
      const kb = planSortKey(b, id) as string;
      return ka === kb ? 0 : ka < kb ? -1 : 1;
    });
    expect(byKey).toEqual([...titles].sort(collator.compare));
  });

  it('has no key for titles outside the fast alphabet', () => {
    expect(planSortKey('Élan', 'x')).toBeNull();
    expect(planSortKey('Trail\u00a0Run', 'x')).toBeNull();
  });

  it('sorts any catalog exactly as sorting with the plain comparator does', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({ title: anyTitle, id: uuid, discipline: fc.constantFrom('running', 'strength') }),
          {
            maxLength: 60,
            selector: (p) => p.id,
          },
        ),
        (rows) => {
          const plans = rows.map((r) => plan(r.title, r.id, r.discipline as 'running' | 'strength'));
          const expected = [...plans].sort(comparePlans).map((p) => p.id);
          expect(sortPlans(plans).map((p) => p.id)).toEqual(expected);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
