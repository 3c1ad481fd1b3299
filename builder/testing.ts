/** Test support for the builder: plans made to order. */
import { DISCIPLINE_LABELS, type Discipline } from '../contract/index.ts';
import type { Plan } from './model.ts';

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
