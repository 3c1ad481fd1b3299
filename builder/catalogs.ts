/**
 * Ordering and rendering of the catalog: pure functions from validated plans to the bytes of the three
 * catalog files (docs/decisions.md#catalog-files).
 */
import { createHash } from 'node:crypto';
import { DISCIPLINES, type Discipline, perDiscipline } from '../contract/index.ts';
import type { Plan } from './model.ts';

const titleCollator = new Intl.Collator('en');

/**
 * A fast path for sorting: a title made only of these characters (one collation element each, no accent) gets
 * a sort key of its primary weights, then its case weights, which compares as plain strings exactly as
 * `Intl.Collator('en')` does, several times faster. The weights are read from the collator at load time; a
 * test checks the order against the collator on a large generated set.
 */
const FAST_ALPHABET = " -,;:!?.'()&/#+0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** Primary and tertiary weights by character code (0 = not in the fast alphabet). */
function weightTables(): { primary: Uint8Array; tertiary: Uint8Array } {
  const primaryCollator = new Intl.Collator('en', { sensitivity: 'base' });
  const chars = [...FAST_ALPHABET].sort(titleCollator.compare);
  const primary = new Uint8Array(128);
  const tertiary = new Uint8Array(128);
  let primaryRank = 0;
  let tertiaryRank = 0;
  chars.forEach((char, index) => {
    const previous = chars[index - 1];
    if (previous === undefined || primaryCollator.compare(previous, char) !== 0) {
      primaryRank += 1;
      tertiaryRank = 1;
    } else {
      tertiaryRank += 1;
    }
    primary[char.charCodeAt(0)] = primaryRank;
    tertiary[char.charCodeAt(0)] = tertiaryRank;
  });
  return { primary, tertiary };
}

const WEIGHTS = weightTables();

/**
 * The sort key of a plan whose title is made of the fast alphabet only, else null (compare it with the
 * collator): the title's primary weights, a 0, its tertiary weights, a 0, then the id, so that two keys
 * compare as plain strings exactly as {@link comparePlans} compares the plans within one discipline.
 */
export function planSortKey(title: string, id: string): string | null {
  const length = title.length;
  const codes = new Array<number>(length * 2 + 2);
  codes[length] = 0;
  codes[length * 2 + 1] = 0;
  for (let i = 0; i < length; i += 1) {
    const code = title.charCodeAt(i);
    const primary = code < 128 ? (WEIGHTS.primary[code] ?? 0) : 0;
    if (primary === 0) return null;
    codes[i] = primary;
    codes[length + 1 + i] = WEIGHTS.tertiary[code] ?? 0;
  }
  return fromCharCodes(codes) + id;
}

/** Character codes per String.fromCharCode call: one call per title of any sane length, and no stack limit. */
const CODES_PER_CALL = 4096;

/** The string of `codes`, in calls of bounded size (one spread of a huge array overflows the stack). */
function fromCharCodes(codes: readonly number[]): string {
  if (codes.length <= CODES_PER_CALL) return String.fromCharCode(...codes);
  let text = '';
  for (let start = 0; start < codes.length; start += CODES_PER_CALL)
    text += String.fromCharCode(...codes.slice(start, start + CODES_PER_CALL));
  return text;
}

function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/**
 * The catalog order: discipline ascending, then title by `Intl.Collator('en')`, then id by code point, so two
 * builds of the same rows give byte-identical output.
 */
export function comparePlans(a: Plan, b: Plan): number {
  if (a.discipline !== b.discipline) return compareStrings(a.discipline, b.discipline);
  return comparePlanTitles(a, b);
}

function comparePlanTitles(a: Plan, b: Plan): number {
  return titleCollator.compare(a.title, b.title) || compareStrings(a.id, b.id);
}

/** Sorts one discipline's plans: sort keys where titles allow them, the collator for the rest, then a merge. */
function sortDiscipline(plans: readonly Plan[]): Plan[] {
  const byKey = new Map<string, Plan>();
  const others: Plan[] = [];
  for (const plan of plans) {
    const key = planSortKey(plan.title, plan.id);
    if (key === null) others.push(plan);
    else byKey.set(key, plan);
  }
  // Keys end with the (unique) id, so they are unique; the default sort compares strings by code unit.
  const keyed = [...byKey.keys()].sort().map((key) => byKey.get(key) as Plan);
  if (others.length === 0) return keyed;
  // Two sorted runs: V8's sort (TimSort) finds them and merges them.
  return [...keyed, ...others.sort(comparePlanTitles)].sort(comparePlanTitles);
}

/** Returns the plans in catalog order (a new array): the order of {@link comparePlans}, computed faster. */
export function sortPlans(plans: readonly Plan[]): Plan[] {
  const groups = new Map<string, Plan[]>(DISCIPLINES.map((d) => [d, []]));
  for (const plan of plans) groups.get(plan.discipline)?.push(plan);
  return DISCIPLINES.flatMap((d) => sortDiscipline(groups.get(d) ?? []));
}

/** The three catalogs of one build as chunks of compact UTF-8 JSON, sharing their plan chunks. */
export interface RenderedCatalogs {
  readonly generatedAt: string;
  /** `catalog.json`: every plan. */
  readonly all: readonly Buffer[];
  /** `catalog-<discipline>.json`, keyed by discipline. */
  readonly byDiscipline: Readonly<Record<Discipline, readonly Buffer[]>>;
  /** Number of plans per discipline. */
  readonly counts: Readonly<Record<Discipline, number>>;
  /** SHA-256 (hex) of the plans of `all`, independent of `generatedAt`: equal hashes mean equal content. */
  readonly plansHash: string;
}

/**
 * Renders sorted plans into the three catalogs, byte for byte `JSON.stringify({ generatedAt, plans })`, each
 * plan encoded once, a chunk at a time (no string of the whole catalog ever exists).
 */
export function renderCatalogs(sorted: readonly Plan[], generatedAt: Date): RenderedCatalogs {
  const stamp = generatedAt.toISOString();
  const head = Buffer.from(`{"generatedAt":${JSON.stringify(stamp)},"plans":`);
  const groups = perDiscipline((): Plan[] => []);
  for (const plan of sorted) groups[plan.discipline].push(plan);

  const open = Buffer.from('[');
  const comma = Buffer.from(',');
  const close = Buffer.from(']');
  const end = Buffer.from('}');
  const byDiscipline = {} as Record<Discipline, Buffer[]>;
  const counts = {} as Record<Discipline, number>;
  /** Every plan of `all` as JSON array items, comma-separated, in catalog order. */
  const allItems: Buffer[] = [];
  for (const discipline of DISCIPLINES) {
    const items = encodeItems(groups[discipline]);
    byDiscipline[discipline] = [head, open, ...items, close, end];
    counts[discipline] = groups[discipline].length;
    if (items.length === 0) continue;
    if (allItems.length > 0) allItems.push(comma);
    allItems.push(...items);
  }
  const hash = createHash('sha256');
  for (const part of [open, ...allItems, close]) hash.update(part);
  return {
    generatedAt: stamp,
    all: [head, open, ...allItems, close, end],
    byDiscipline,
    counts,
    plansHash: hash.digest('hex'),
  };
}

/**
 * The plans' fingerprint and counts without rendering the catalogs: the same SHA-256 as
 * {@link renderCatalogs}' `plansHash`, hashed a chunk at a time with no bytes kept. A publish decides
 * "unchanged" from it before anything is rendered (docs/decisions.md#build-cost).
 */
export function fingerprintPlans(sorted: readonly Plan[]): {
  readonly plansHash: string;
  readonly counts: Readonly<Record<Discipline, number>>;
} {
  const hash = createHash('sha256').update('[');
  let first = true;
  for (const text of itemTexts(sorted)) {
    hash.update(first ? text : `,${text}`, 'utf8');
    first = false;
  }
  const counts = perDiscipline(() => 0);
  for (const plan of sorted) counts[plan.discipline] += 1;
  return { plansHash: hash.update(']').digest('hex'), counts };
}

/** Plans per JSON.stringify call: large enough to be fast, small enough to keep no huge string alive. */
const ITEMS_PER_CHUNK = 2000;

/** The plans as JSON array items (`{…},{…}`), a chunk at a time, without the brackets. */
function* itemTexts(plans: readonly Plan[]): Generator<string> {
  for (let start = 0; start < plans.length; start += ITEMS_PER_CHUNK)
    yield JSON.stringify(plans.slice(start, start + ITEMS_PER_CHUNK)).slice(1, -1);
}

/** The plans as UTF-8 JSON array items, in chunks with the separating commas, no brackets. */
function encodeItems(plans: readonly Plan[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (const text of itemTexts(plans)) {
    if (chunks.length > 0) chunks.push(Buffer.from(','));
    chunks.push(Buffer.from(text));
  }
  return chunks;
}
