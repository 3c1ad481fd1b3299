/** The builder's test support: plans made to order, rows validated in one go, a whole build in one call. */
import { type BuildOptions, type BuildResult, completeBuild, prepareBuild } from '../builder/build.ts';
import type { LinkConfig, Plan } from '../builder/model.ts';
import { type RowReport, RowValidator } from '../builder/rows.ts';
import type { PlanSource } from '../builder/source.ts';
import { DISCIPLINE_LABELS, type Discipline } from '../contract/index.ts';

let counter = 0;

/** A valid plan with the given title and discipline; ids are unique and increasing unless given. */
export function testPlan(title: string, discipline: Discipline, id?: string): Plan {
  counter += 1;
  const planId = id ?? `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`;
  return {
    id: planId,
    title,
    summary: null,
    coverUrl: null,
    level: 'none',
    discipline,
    disciplineLabel: DISCIPLINE_LABELS[discipline],
    weeksCount: 4,
    daysPerWeek: null,
    estMinutesPerSession: null,
    webUrl: `http://127.0.0.1:8787/plans/${planId}`,
    appUrl: `trainingplans://plan/${planId}`,
  };
}

/** Validates a whole source held in memory. */
export function validateRows(rows: readonly unknown[], links: LinkConfig): RowReport {
  const validator = new RowValidator(links);
  validator.add(rows);
  return validator.finish();
}

/** A whole build: {@link prepareBuild}, then {@link completeBuild}. */
export async function buildCatalog(source: PlanSource, options: BuildOptions): Promise<BuildResult> {
  return completeBuild(await prepareBuild(source, options));
}
