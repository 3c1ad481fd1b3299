import { describe, expect, it } from 'vitest';
import { planCounts } from '../testing/counts.ts';
import { testPlan } from '../testing/plans.ts';
import { comparePlans, fingerprintPlans, renderCatalogs, sortPlans } from './catalogs.ts';
import { Catalog } from './model.ts';

const plan = testPlan;

describe('catalog order', () => {
  it('puts running before strength, whatever the titles', () => {
    const sorted = sortPlans([plan('A', 'strength'), plan('Z', 'running')]);
    expect(sorted.map((p) => p.discipline)).toEqual(['running', 'strength']);
  });

  it('orders titles with the English collator: digits first, case and accents as a reader expects', () => {
    const titles = [
      'Zone 2',
      'élan',
      'Easy',
      'couch to 5K',
      'Couch to 5K',
      '10K Builder',
      '5K Speed',
      'Ångström',
      'apple',
    ];
    const sorted = sortPlans(titles.map((t) => plan(t, 'running'))).map((p) => p.title);
    expect(sorted).toEqual([
      '10K Builder',
      '5K Speed',
      'Ångström',
      'apple',
      'couch to 5K',
      'Couch to 5K',
      'Easy',
      'élan',
      'Zone 2',
    ]);
  });

  it('breaks ties between identical titles by id, by code point', () => {
    const b = plan('Same', 'strength', 'bbbbbbbb-0000-4000-8000-000000000000');
    const a = plan('Same', 'strength', 'aaaaaaaa-0000-4000-8000-000000000000');
    expect(sortPlans([b, a]).map((p) => p.id)).toEqual([a.id, b.id]);
    expect(comparePlans(a, a)).toBe(0);
  });

  it('gives the same order whatever the input order', () => {
    const plans = ['b', 'B', 'a', 'á', 'A', 'b'].flatMap((t) => [plan(t, 'running'), plan(t, 'strength')]);
    const once = sortPlans(plans).map((p) => p.id);
    expect(sortPlans([...plans].reverse()).map((p) => p.id)).toEqual(once);
  });
});

describe('rendered catalogs', () => {
  const now = new Date('2026-11-21T10:11:12.013Z');
  const sorted = sortPlans([plan('Run', 'running'), plan('Lift', 'strength'), plan('Jog', 'running')]);
  const rendered = renderCatalogs(sorted, now);

  it('are exactly JSON.stringify of the catalog objects, compact', () => {
    const running = sorted.filter((p) => p.discipline === 'running');
    const strength = sorted.filter((p) => p.discipline === 'strength');
    expect(Buffer.concat(rendered.all).toString()).toBe(
      JSON.stringify({ generatedAt: '2026-11-21T10:11:12.013Z', plans: sorted }),
    );
    expect(Buffer.concat(rendered.byDiscipline.running).toString()).toBe(
      JSON.stringify({ generatedAt: '2026-11-21T10:11:12.013Z', plans: running }),
    );
    expect(Buffer.concat(rendered.byDiscipline.strength).toString()).toBe(
      JSON.stringify({ generatedAt: '2026-11-21T10:11:12.013Z', plans: strength }),
    );
    expect(rendered.counts).toEqual(planCounts({ running: 2, strength: 1 }));
  });

  it('hash the plans alone: the same plans at another time give the same hash, other plans another', () => {
    const later = renderCatalogs(sorted, new Date('2030-01-01T00:00:00.000Z'));
    expect(later.plansHash).toBe(rendered.plansHash);
    expect(later.plansHash).toMatch(/^[0-9a-f]{64}$/);
    expect(renderCatalogs(sorted.slice(1), now).plansHash).not.toBe(rendered.plansHash);
  });

  it('share one generatedAt with milliseconds and Z', () => {
    for (const text of [rendered.all, rendered.byDiscipline.running, rendered.byDiscipline.strength]) {
      const parsed = Catalog.parse(JSON.parse(Buffer.concat(text).toString()));
      expect(parsed.generatedAt).toBe('2026-11-21T10:11:12.013Z');
    }
  });

  it('are exactly JSON.stringify for catalogs of many chunks (thousands of plans, accents included)', () => {
    const many = sortPlans(
      Array.from({ length: 4601 }, (_, i) =>
        plan(`${i % 7 === 0 ? 'Élan' : 'Plan'} ${i}`, i % 3 === 0 ? 'strength' : 'running'),
      ),
    );
    const big = renderCatalogs(many, now);
    const stamp = '2026-11-21T10:11:12.013Z';
    expect(Buffer.concat(big.all).toString()).toBe(JSON.stringify({ generatedAt: stamp, plans: many }));
    for (const discipline of ['running', 'strength'] as const) {
      expect(Buffer.concat(big.byDiscipline[discipline]).toString()).toBe(
        JSON.stringify({ generatedAt: stamp, plans: many.filter((p) => p.discipline === discipline) }),
      );
    }
  });

  it('have the fingerprint and counts that fingerprintPlans computes without rendering them', () => {
    const many = sortPlans(
      Array.from({ length: 4601 }, (_, i) =>
        plan(`${i % 7 === 0 ? 'Élan 🏃' : 'Plan'} ${i}`, i % 3 === 0 ? 'strength' : 'running'),
      ),
    );
    for (const plans of [sorted, many, many.filter((p) => p.discipline === 'strength'), []]) {
      const rendered = renderCatalogs(plans, now);
      expect(fingerprintPlans(plans)).toEqual({ plansHash: rendered.plansHash, counts: rendered.counts });
    }
    expect(fingerprintPlans(many.slice(1)).plansHash).not.toBe(fingerprintPlans(many).plansHash);
  });

  it('render an empty discipline as an empty list', () => {
    const onlyRunning = renderCatalogs([plan('Run', 'running')], now);
    expect(JSON.parse(Buffer.concat(onlyRunning.byDiscipline.strength).toString())).toEqual({
      generatedAt: '2026-11-21T10:11:12.013Z',
      plans: [],
    });
    expect(JSON.parse(Buffer.concat(onlyRunning.all).toString()).plans).toHaveLength(1);
    expect(JSON.parse(Buffer.concat(renderCatalogs([], now).all).toString())).toEqual({
      generatedAt: '2026-11-21T10:11:12.013Z',
      plans: [],
    });
  });
});
