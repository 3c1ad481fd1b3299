import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CatalogLike,
  ChangeLog,
  ChangeSet,
  ChangesPage,
  diffPlans,
  LISTED_MAX,
  PLAN_FIELDS,
  StoredChanges,
} from './changes.ts';
import { Plan } from './schema.ts';

type Catalog = { generatedAt: string; plans: Plan[] };

/** The fixtures as the service publishes them (fixtures/plans.json published by the test world). */
let fixture: Catalog;
beforeAll(async () => {
  const { createTestWorld } = await import('../testing/world.ts');
  const world = await createTestWorld();
  fixture = JSON.parse(world.objects.all.toString('utf8')) as Catalog;
  await world.remove();
});

const at = (generatedAt: string, plans: Plan[]): Catalog => ({ generatedAt, plans });
const T0 = '2026-11-20T08:00:00.000Z';
const T1 = '2026-11-21T08:00:00.000Z';

describe('a diff of two catalogs', () => {
  it('finds nothing when only generatedAt or the order changed', () => {
    const shuffled = [...fixture.plans].reverse();
    expect(diffPlans(fixture.plans, shuffled)).toEqual({ added: [], changed: [], removed: [] });
    expect(new ChangeLog(5).next(new Date(T1), at(T0, fixture.plans), at(T1, shuffled))).toBeUndefined();
  });

  it('names added and removed plans by id with their title, in each catalog order', () => {
    const [first, second, third, ...rest] = fixture.plans as [Plan, Plan, Plan, ...Plan[]];
    const extra: Plan = { ...first, id: '00000000-0000-4000-8000-000000000001', title: 'New Plan' };
    const changes = diffPlans([first, second, third, ...rest], [...rest, extra, second]);
    expect(changes).toEqual({
      added: [{ id: extra.id, title: 'New Plan' }],
      changed: [],
      removed: [
        { id: first.id, title: first.title },
        { id: third.id, title: third.title },
      ],
    });
  });

  it('names the fields that changed, in field order, with the new title, and ignores fields it does not publish', () => {
    const [first, second, ...rest] = fixture.plans as [Plan, Plan, ...Plan[]];
    const retitled = { ...first, title: 'Renamed', weeksCount: first.weeksCount + 1 };
    const extended = { ...second, unpublished: 'ignored' } as Plan;
    const changes = diffPlans(fixture.plans, [extended, ...rest, retitled]);
    expect(changes).toEqual({
      added: [],
      changed: [{ id: first.id, title: 'Renamed', fields: ['title', 'weeksCount'] }],
      removed: [],
    });
  });

  it('compares every published field but the id, and treats null and a value as different', () => {
    expect(PLAN_FIELDS).toEqual(Object.keys(Plan.shape).filter((field) => field !== 'id'));
    const found = fixture.plans.find((p) => p.summary !== null && p.daysPerWeek !== null) as Plan;
    const plan: Plan = { ...found, coverUrl: 'https://cdn.example.com/covers/plan.jpg' };
    for (const field of PLAN_FIELDS) {
      const value =
        field === 'summary' || field === 'coverUrl' || field === 'daysPerWeek' ? null : `x${field}`;
      const changes = diffPlans([plan], [{ ...plan, [field]: value } as Plan]);
      expect(changes.changed, field).toEqual([{ id: plan.id, title: expect.any(String), fields: [field] }]);
    }
  });

  it('makes one change set with both copies and its history, valid against its published schema', () => {
    const [first, ...rest] = fixture.plans as [Plan, ...Plan[]];
    const log = new ChangeLog(5);
    const set = log.next(new Date(T1), at(T0, fixture.plans), at(T1, rest));
    expect(set).toEqual({
      history: log.history,
      sequence: 1,
      at: T1,
      resync: false,
      previous: { generatedAt: T0, plans: fixture.plans.length },
      current: { generatedAt: T1, plans: fixture.plans.length - 1 },
      added: [],
      changed: [],
      removed: [{ id: first.id, title: first.title }],
    });
    expect(ChangeSet.parse(set)).toEqual(set);
  });
});

/** `count` plans like the fixture's first, with ids from `from` on, titled `{title} {n}`. */
const plansOf = (count: number, from = 0, title = 'Plan'): Plan[] =>
  Array.from({ length: count }, (_, index) => ({
    ...(fixture.plans[0] as Plan),
    id: `00000000-0000-4000-8000-${String(from + index).padStart(12, '0')}`,
    title: `${title} ${from + index}`,
  }));

describe('a change set that says resync', () => {
  it('starts every history: no copy to compare with, a history id of its own, reload the whole catalog', () => {
    const log = new ChangeLog(5);
    expect(log.history).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new ChangeLog(5).history).not.toBe(log.history);
    const set = log.next(new Date(T1), undefined, fixture);
    expect(set).toEqual({
      history: log.history,
      sequence: 1,
      at: T1,
      resync: true,
      previous: null,
      current: { generatedAt: fixture.generatedAt, plans: fixture.plans.length },
      added: [],
      changed: [],
      removed: [],
    });
    expect(ChangeSet.parse(set)).toEqual(set);
    expect(log.page(0, 20)).toEqual({ history: log.history, since: 0, latest: 0, next: 0, changes: [] });
  });

  it('stands for a change that would list more plans than a change set may (two catalogs with no plan in common)', () => {
    const log = new ChangeLog(5);
    const before = at(T0, plansOf(LISTED_MAX.set));
    const listed = log.next(new Date(T1), before, at(T1, plansOf(LISTED_MAX.set / 2, 0, 'New')));
    expect(listed?.changed).toHaveLength(LISTED_MAX.set / 2);
    expect(listed?.removed).toHaveLength(LISTED_MAX.set / 2);
    const swapped = log.next(new Date(T1), before, at(T1, plansOf(LISTED_MAX.set, LISTED_MAX.set)));
    expect(swapped).toEqual({
      history: log.history,
      sequence: 1,
      at: T1,
      resync: true,
      previous: { generatedAt: T0, plans: LISTED_MAX.set },
      current: { generatedAt: T1, plans: LISTED_MAX.set },
      added: [],
      changed: [],
      removed: [],
    });
  });
});

describe('the change history', () => {
  /** A history of `count` change sets, each retitling the first plan (keeping the last `limit`). */
  function historyOf(count: number, limit: number): ChangeLog {
    const log = new ChangeLog(limit);
    let previous: CatalogLike = fixture;
    for (let i = 1; i <= count; i += 1) {
      const [first, ...rest] = fixture.plans as [Plan, ...Plan[]];
      const current = { generatedAt: T1, plans: [{ ...first, title: `Title ${i}` }, ...rest] };
      const set = log.next(new Date(T1), previous, current);
      if (!set) throw new Error('expected a change set');
      log.append(set);
      previous = current;
    }
    return log;
  }
  const sequences = (page: ReturnType<ChangeLog['page']>) =>
    'gone' in page ? page : { ...page, changes: page.changes.map((set) => set.sequence) };

  it('numbers change sets without gaps and keeps only the last ones', () => {
    const log = historyOf(7, 3);
    expect([log.latest, log.oldest, log.size]).toEqual([7, 5, 3]);
    expect(log.after(0)?.sequence).toBe(5);
    expect(log.after(5)?.sequence).toBe(6);
    expect(log.after(7)).toBeUndefined();
  });

  it('pages the change sets after since, and says when since is outside what it holds', () => {
    const log = historyOf(7, 3);
    const history = log.history;
    expect(sequences(log.page(4, 20))).toEqual({ history, since: 4, latest: 7, next: 7, changes: [5, 6, 7] });
    expect(sequences(log.page(4, 2))).toEqual({ history, since: 4, latest: 7, next: 6, changes: [5, 6] });
    expect(sequences(log.page(6, 2))).toEqual({ history, since: 6, latest: 7, next: 7, changes: [7] });
    expect(sequences(log.page(7, 2))).toEqual({ history, since: 7, latest: 7, next: 7, changes: [] });
    expect(log.page(3, 20)).toEqual({ gone: 'behind', latest: 7, oldest: 5 });
    expect(log.page(0, 20)).toEqual({ gone: 'behind', latest: 7, oldest: 5 });
    expect(log.page(8, 20)).toEqual({ gone: 'ahead', latest: 7, oldest: 5 });
    expect(ChangesPage.parse(log.page(4, 20))).toBeTruthy();
  });

  it('bounds what it keeps and what a page holds by the plans they list, as well as by count', () => {
    const log = new ChangeLog(1_000);
    const listed = 400;
    let previous = at(T0, plansOf(listed));
    for (let i = 1; i <= 30; i += 1) {
      const current = at(T1, plansOf(listed, 0, `Title ${i}`));
      const set = log.next(new Date(T1), previous, current);
      if (set) log.append(set);
      previous = current;
    }
    const kept = Math.floor(LISTED_MAX.history / listed);
    expect([log.latest, log.size]).toEqual([30, kept]);
    expect(log.stored().sets).toHaveLength(kept);
    // A page stops before the change set that would take it over its bound, but holds one at least.
    const perPage = Math.max(1, Math.floor(LISTED_MAX.page / listed));
    expect(sequences(log.page(30 - kept, 100))).toMatchObject({ next: 30 - kept + perPage });
    expect((log.page(30 - kept, 100) as { changes: unknown[] }).changes).toHaveLength(perPage);
  });

  it('answers an empty page to since=0 before any change', () => {
    const log = new ChangeLog(3);
    expect(log.page(0, 20)).toEqual({ history: log.history, since: 0, latest: 0, next: 0, changes: [] });
    expect(new ChangeLog(3).page(1, 20)).toEqual({ gone: 'ahead', latest: 0, oldest: null });
  });

  it('carries on from its saved form, trimmed to a smaller limit', () => {
    const saved = historyOf(5, 10).stored();
    expect(StoredChanges.parse(JSON.parse(JSON.stringify(saved)))).toEqual(saved);
    const restored = new ChangeLog(2, saved);
    expect([restored.history, restored.latest, restored.oldest, restored.size]).toEqual([
      saved.history,
      5,
      4,
      2,
    ]);
    expect(() => restored.append({ ...(saved.sets[0] as ChangeSet), sequence: 5 })).toThrow(
      'change set 5 does not follow 5',
    );
  });

  it('refuses a saved history whose change sets do not end at its sequence or belong to another history', () => {
    const saved = historyOf(3, 10).stored();
    expect(StoredChanges.safeParse({ ...saved, sequence: 4 }).success).toBe(false);
    expect(StoredChanges.safeParse({ ...saved, sets: [saved.sets[0], saved.sets[2]] }).success).toBe(false);
    expect(StoredChanges.safeParse({ ...saved, history: new ChangeLog(1).history }).success).toBe(false);
  });

  it('fails when asked to keep no change set', () => {
    expect(() => new ChangeLog(0)).toThrow('the change history must keep at least 1 change set, not 0');
  });
});
