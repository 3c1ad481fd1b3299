/**
 * The disciplines, in catalog order, with the display name partners render instead of capitalising
 * `discipline`, and what is derived from them. Everything else loops over them: the catalogs and their files,
 * the plan counts, the metrics, the OpenAPI enum (`npm run openapi:sync`) and the gateway's cases. Adding one
 * here (with its style in builder/pages.ts and the SQL view's filter) adds it everywhere, the partner kit's
 * schemas too (`npm run openapi:sync` writes them from the model). A module without dependencies or enums;
 * contract/index.ts re-exports it.
 */
export const DISCIPLINES = ['running', 'strength'] as const;
export type Discipline = (typeof DISCIPLINES)[number];
export const DISCIPLINE_LABELS = { running: 'Outdoor', strength: 'Workouts' } as const satisfies Record<
  Discipline,
  string
>;

/** A catalog: the whole one (`all`) or one discipline's. */
export type CatalogName = 'all' | Discipline;
export const CATALOGS: readonly CatalogName[] = /* @__PURE__ */ (['all'] as CatalogName[]).concat(
  DISCIPLINES,
);

/** An object with one entry per discipline. */
export function perDiscipline<T>(value: (discipline: Discipline) => T): Record<Discipline, T> {
  return Object.fromEntries(DISCIPLINES.map((discipline) => [discipline, value(discipline)])) as Record<
    Discipline,
    T
  >;
}

/** The plans of every discipline together. */
export function totalPlans(counts: Readonly<Record<Discipline, number>>): number {
  return DISCIPLINES.reduce((total, discipline) => total + counts[discipline], 0);
}

/** The object name of the whole catalog at the origin. */
export const CATALOG_FILE = 'catalog.json';

/** The object name of a catalog: `catalog.json`, or `catalog-<discipline>.json`. */
export function catalogFile(catalog: CatalogName): string {
  return catalog === 'all' ? CATALOG_FILE : `catalog-${catalog}.json`;
}

/** Plan counts as people read them: `running 22, strength 21`. */
export function countsText(counts: Readonly<Record<Discipline, number>>): string {
  return DISCIPLINES.map((discipline) => `${discipline} ${counts[discipline]}`).join(', ');
}
