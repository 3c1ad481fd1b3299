import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CatalogLike,
  ChangeLog,
  ChangeSet,
  ChangesPage,
  diffPlans,
  PLAN_FIELDS,
  StoredChanges,
} from './changes.ts';
import { Plan } from './schema.ts';

type Catalog = { generatedAt: string; plans: Plan[] };

/** The fixtures as the service publishes them (a flat build of fixtures/plans.json, made by the test world). */
let fixture: Catalog;
beforeAll(async () => {
  const { createTestWorld } = await import('../testing/world.ts');
  const world = await createTestWorld({ flat: true });
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

  it('makes one change set with both copies, valid against its published schema', () => {
    const [first, ...rest] = fixture.plans as [Plan, ...Plan[]];
    const set = new ChangeLog(5).next(new Date(T1), at(T0, fixture.plans), at(T1, rest));
    expect(set).toEqual({
      sequence: 1,
      at: T1,
      previous: { generatedAt: T0, plans: fixture.plans.length },
      current: { generatedAt: T1, plans: fixture.plans.length - 1 },
      added: [],
      changed: [],
      removed: [{ id: first.id, title: first.title }],
    });
    expect(ChangeSet.parse(set)).toEqual(set);
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
    expect(sequences(log.page(4, 20))).toEqual({ since: 4, latest: 7, next: 7, changes: [5, 6, 7] });
    expect(sequences(log.page(4, 2))).toEqual({ since: 4, latest: 7, next: 6, changes: [5, 6] });
    expect(sequences(log.page(6, 2))).toEqual({ since: 6, latest: 7, next: 7, changes: [7] });
    expect(sequences(log.page(7, 2))).toEqual({ since: 7, latest: 7, next: 7, changes: [] });
    expect(log.page(3, 20)).toEqual({ gone: 'behind', latest: 7, oldest: 5 });
    expect(log.page(0, 20)).toEqual({ gone: 'behind', latest: 7, oldest: 5 });
    expect(log.page(8, 20)).toEqual({ gone: 'ahead', latest: 7, oldest: 5 });
    expect(ChangesPage.parse(log.page(4, 20))).toBeTruthy();
  });

  it('answers an empty page to since=0 before any change', () => {
    expect(new ChangeLog(3).page(0, 20)).toEqual({ since: 0, latest: 0, next: 0, changes: [] });
    expect(new ChangeLog(3).page(1, 20)).toEqual({ gone: 'ahead', latest: 0, oldest: null });
  });

  it('carries on from its saved form, trimmed to a smaller limit', () => {
    const saved = historyOf(5, 10).stored();
    expect(StoredChanges.parse(JSON.parse(JSON.stringify(saved)))).toEqual(saved);
    const restored = new ChangeLog(2, saved);
    expect([restored.latest, restored.oldest, restored.size]).toEqual([5, 4, 2]);
    expect(() => restored.append({ ...(saved.sets[0] as ChangeSet), sequence: 5 })).toThrow(
      'change set 5 does not follow 5',
    );
  });

  it('refuses a saved history whose change sets do not end at its sequence', () => {
    const saved = historyOf(3, 10).stored();
    expect(StoredChanges.safeParse({ ...saved, sequence: 4 }).success).toBe(false);
    expect(StoredChanges.safeParse({ sequence: 3, sets: [saved.sets[0], saved.sets[2]] }).success).toBe(
      false,
    );
  });

  it('fails when asked to keep no change set', () => {
    expect(() => new ChangeLog(0)).toThrow('the change history must keep at least 1 change set, not 0');
  });
});
