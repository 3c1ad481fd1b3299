/**
 * Plan counts for expectations that hold whatever contract/disciplines.ts declares. It imports the contract
 * alone, so a test file using it loads no builder module (a file that mocks one must be the first to load it).
 */
import { DISCIPLINES, type Discipline, perDiscipline } from '../contract/disciplines.ts';

/** The plan counts of every discipline: those given, 0 for the others (the rows hold no plan of them). */
export function planCounts(given: Partial<Record<Discipline, number>>): Record<Discipline, number> {
  return perDiscipline((discipline) => given[discipline] ?? 0);
}

/** {@link planCounts} as the commands print them: `running 22, strength 21`, every discipline in order. */
export function planCountsText(given: Partial<Record<Discipline, number>>): string {
  return DISCIPLINES.map((discipline) => `${discipline} ${given[discipline] ?? 0}`).join(', ');
}
