/**
 * What changed between two copies of the catalog, plan by plan (matched by `id`; `changed` when a published
 * field differs, not a new `generatedAt` or position), and the proxy's bounded history of those change sets.
 * Pure: the caller passes the time. A history has a random id carried by every change set and page: a proxy
 * that lost its cache file starts a new one whose first change set says `resync`, so a partner never takes a
 * sequence of the new history for one of the old.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Plan } from './schema.ts';

/** The most plans one change set lists (more: it says `resync`), a page of `/changes` lists, the history keeps. */
export const LISTED_MAX = { set: 1_000, page: 1_000, history: 10_000 } as const;

/** The published fields of a plan a change can name, in the catalog's field order (`id` names the plan). */
export const PlanField = Plan.keyof().exclude(['id']);
export type PlanField = z.output<typeof PlanField>;
export const PLAN_FIELDS: readonly PlanField[] = PlanField.options;

const PlanId = Plan.shape.id;
const Copy = z.object({
  /** The copy's `generatedAt`, as the service stamped it. */
  generatedAt: z.iso.datetime(),
  /** How many plans it holds. */
  plans: z.int().min(0),
});

const History = z.uuid();

/** One change set: what changed between the copy the proxy had and the one it took, and when. */
export const ChangeSet = z.object({
  /** The history it belongs to: a sequence means something only within its history. */
  history: History,
  /** 1, 2, 3…: one more than the change set before it in its history. */
  sequence: z.int().min(1),
  /** When the proxy took the new copy (ISO 8601). */
  at: z.iso.datetime(),
  /**
   * True when the lists are not given: the first change set of a history (there was no copy to compare with),
   * or more changed than a change set lists. Reload the whole catalog and compare it with what you hold.
   */
  resync: z.boolean(),
  /** The copy compared with; null at the start of a history. */
  previous: Copy.nullable(),
  current: Copy,
  /** Plans in the new copy and not in the old one, in catalog order. */
  added: z.array(z.object({ id: PlanId, title: z.string() })),
  /** Plans in both whose published fields differ: the new title, and the fields that changed in field order. */
  changed: z.array(z.object({ id: PlanId, title: z.string(), fields: z.array(PlanField).min(1) })),
  /** Plans in the old copy and not in the new one, with their last title, in the old copy's order. */
  removed: z.array(z.object({ id: PlanId, title: z.string() })),
});
export type ChangeSet = z.output<typeof ChangeSet>;

/** The answer to `GET /changes?since=N`. */
export const ChangesPage = z.object({
  /** The history the sequences belong to: another one than yours means resync. */
  history: History,
  /** The `since` asked for. */
  since: z.int().min(0),
  /** The sequence of the latest change set the proxy holds (0: none yet). */
  latest: z.int().min(0),
  /** The `since` of the next call: the last sequence in `changes`, or `since` when there is none. */
  next: z.int().min(0),
  /** The change sets after `since`, oldest first, at most the page's limit and {@link LISTED_MAX}.page plans. */
  changes: z.array(ChangeSet),
});
export type ChangesPage = z.output<typeof ChangesPage>;

/** The history as it is saved: its id, the latest sequence and the change sets kept, oldest first. */
export const StoredChanges = z
  .object({ history: History, sequence: z.int().min(0), sets: z.array(ChangeSet) })
  .refine(
    ({ history, sequence, sets }) =>
      sets.every(
        (set, index) => set.history === history && set.sequence === sequence - sets.length + 1 + index,
      ),
    { error: 'the change sets must be the last ones of the history before sequence, in order' },
  );
export type StoredChanges = z.output<typeof StoredChanges>;

/** A catalog and its plans, as far as a diff reads them. */
type PlanRecord = Readonly<Record<PlanField | 'id', unknown>> & {
  readonly id: string;
  readonly title: string;
};
export interface CatalogLike {
  readonly generatedAt: string;
  readonly plans: readonly PlanRecord[];
}

/** The plan entries of a change set. */
export type PlanChanges = Pick<ChangeSet, 'added' | 'changed' | 'removed'>;

/** What changed from `previous` to `current`, plan by plan by id; every list empty when nothing did. */
export function diffPlans(previous: readonly PlanRecord[], current: readonly PlanRecord[]): PlanChanges {
  const before = new Map<string, PlanRecord>();
  for (const plan of previous) before.set(plan.id, plan);
  const added: { id: string; title: string }[] = [];
  const changed: { id: string; title: string; fields: PlanField[] }[] = [];
  for (const plan of current) {
    const old = before.get(plan.id);
    if (old === undefined) {
      added.push({ id: plan.id, title: plan.title });
      continue;
    }
    before.delete(plan.id);
    const fields = PLAN_FIELDS.filter((field) => old[field] !== plan[field]);
    if (fields.length > 0) changed.push({ id: plan.id, title: plan.title, fields });
  }
  // What is left of the previous plans is gone, in the previous catalog's order (a Map keeps insertion order).
  const removed = [...before.values()].map((plan) => ({ id: plan.id, title: plan.title }));
  return { added, changed, removed };
}

/** How many plans a change set lists. */
const listed = (changes: PlanChanges) =>
  changes.added.length + changes.changed.length + changes.removed.length;

/** Where `GET /changes?since=N` cannot answer from the history (`oldest`: null when it holds none). */
interface ChangesGone {
  readonly gone: 'behind' | 'ahead';
  readonly latest: number;
  readonly oldest: number | null;
}

/** The proxy's bounded history of change sets, numbered without gaps. */
export class ChangeLog {
  readonly #limit: number;
  readonly history: string;
  #sequence: number;
  #sets: ChangeSet[];

  /** A history keeping the last `limit` change sets: `stored`, trimmed to the bounds, or a new one. */
  constructor(limit: number, stored?: StoredChanges) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`the change history must keep at least 1 change set, not ${limit}`);
    this.#limit = limit;
    this.history = stored?.history ?? randomUUID();
    this.#sequence = stored?.sequence ?? 0;
    this.#sets = this.#trimmed(stored?.sets ?? []);
  }

  /** The sequence of the latest change set (0: none yet), the first one still held (null: none), how many. */
  get latest(): number {
    return this.#sequence;
  }

  get oldest(): number | null {
    return this.#sets[0]?.sequence ?? null;
  }

  get size(): number {
    return this.#sets.length;
  }

  /** The change set taking `current` after `previous` makes (undefined: none changed), not yet {@link append}ed. */
  next(at: Date, previous: CatalogLike | undefined, current: CatalogLike): ChangeSet | undefined {
    const changes = previous && diffPlans(previous.plans, current.plans);
    if (changes && listed(changes) === 0) return undefined;
    const resync = changes === undefined || listed(changes) > LISTED_MAX.set;
    return {
      history: this.history,
      sequence: this.#sequence + 1,
      at: at.toISOString(),
      resync,
      previous: previous ? { generatedAt: previous.generatedAt, plans: previous.plans.length } : null,
      current: { generatedAt: current.generatedAt, plans: current.plans.length },
      ...(resync ? { added: [], changed: [], removed: [] } : changes),
    };
  }

  /** The history as it is saved, with `set` (from {@link next}) appended when given. */
  stored(set?: ChangeSet): StoredChanges {
    if (set) this.#check(set);
    return {
      history: this.history,
      sequence: set?.sequence ?? this.#sequence,
      sets: set ? this.#trimmed([...this.#sets, set]) : this.#sets,
    };
  }

  /** Appends `set` (from {@link next}), dropping the oldest beyond the bounds. */
  append(set: ChangeSet): void {
    this.#check(set);
    this.#sets = this.#trimmed([...this.#sets, set]);
    this.#sequence = set.sequence;
  }

  /** The last of `sets` within the bounds: at most the limit, at most {@link LISTED_MAX}.history listed plans. */
  #trimmed(sets: ChangeSet[]): ChangeSet[] {
    let start = Math.max(0, sets.length - this.#limit);
    let plans = 0;
    for (let index = sets.length - 1; index >= start; index -= 1) {
      plans += listed(sets[index] as ChangeSet);
      if (plans > LISTED_MAX.history) start = index + 1;
    }
    return start === 0 ? sets : sets.slice(start);
  }

  #check(set: ChangeSet): void {
    if (set.history !== this.history || set.sequence !== this.#sequence + 1)
      throw new Error(`change set ${set.sequence} does not follow ${this.#sequence}`);
  }

  /** The first change set after `sequence` that the history holds, if any. */
  after(sequence: number): ChangeSet | undefined {
    const oldest = this.oldest;
    if (oldest === null || sequence >= this.#sequence) return undefined;
    return this.#sets[Math.max(0, sequence + 1 - oldest)];
  }

  /**
   * The change sets after `since`, at most `limit` and {@link LISTED_MAX}.page listed plans (one at least); or
   * where the history stands when `since` is before what it holds or after its latest (it was started again).
   */
  page(since: number, limit: number): ChangesPage | ChangesGone {
    const oldest = this.oldest;
    if (since > this.#sequence) return { gone: 'ahead', latest: this.#sequence, oldest };
    if (since < this.#sequence && (oldest === null || since < oldest - 1))
      return { gone: 'behind', latest: this.#sequence, oldest };
    const changes: ChangeSet[] = [];
    let plans = 0;
    for (const set of this.#sets.slice(oldest === null ? 0 : since + 1 - oldest)) {
      plans += listed(set);
      if (changes.length === limit || (changes.length > 0 && plans > LISTED_MAX.page)) break;
      changes.push(set);
    }
    const next = changes.at(-1)?.sequence ?? since;
    return { history: this.history, since, latest: this.#sequence, next, changes };
  }
}
