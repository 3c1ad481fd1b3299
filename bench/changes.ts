/**
 * npm run bench:changes — the partner proxy's change log at 30,000 plans: comparing two catalogs (a typical
 * publish, and one that changes every plan) against the JSON.parse of the body the proxy does on every new copy
 * anyway; saving and loading the cache file with a full history against writing the bare body; the size of the
 * history next to the copy. Prints the figures (medians of --runs); asserts nothing.
 *
 *   npm run bench:changes [-- --plans N --runs K --kept N]
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateRows } from '../fixtures/generate.ts';
import { ChangeLog, diffPlans } from '../partner/changes.ts';
import { loadState, saveState } from '../partner/copy-file.ts';
import { type Catalog, Plan } from '../partner/schema.ts';
import { scratchDir } from '../testing/cli.ts';

const { values } = parseArgs({
  options: {
    plans: { type: 'string', default: '30000' },
    runs: { type: 'string', default: '5' },
    kept: { type: 'string', default: '100' },
  },
});
const count = Number(values.plans);
const runs = Number(values.runs);
const kept = Number(values.kept);

/** `count` published plans from the generated rows, as the service would publish them. */
function catalogOf(seed: number, generatedAt: string): Catalog {
  const plans: Plan[] = [];
  for (const row of generateRows(Math.ceil(count * 1.1), seed)) {
    if (plans.length === count) break;
    if (row.published !== true || row.approved !== true) continue;
    const id = String(row.id).toLowerCase();
    const strength = row.discipline === 'strength';
    plans.push(
      Plan.parse({
        id,
        title: row.title,
        summary: row.summary,
        coverUrl: row.cover_url,
        level: row.level === null || row.level === '' ? 'none' : row.level,
        discipline: row.discipline,
        disciplineLabel: strength ? 'Workouts' : 'Outdoor',
        weeksCount: row.weeks_count,
        daysPerWeek: row.days_per_week,
        estMinutesPerSession:
          row.est_minutes_per_session === null ? null : Number(row.est_minutes_per_session),
        webUrl: `https://plans.example.com/plans/${id}`,
        appUrl: `trainingplans://plan/${id}`,
      }),
    );
  }
  return { generatedAt, plans };
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed(run: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

const previous = catalogOf(1, '2026-11-20T08:00:00.000Z');
// A typical publish: 1% of the plans added, 1% removed, 1% retitled, in a new order.
const share = Math.max(1, Math.floor(count / 100));
const extra = catalogOf(2, '2026-11-21T08:00:00.000Z').plans.slice(0, share);
const typical: Catalog = {
  generatedAt: '2026-11-21T08:00:00.000Z',
  plans: [
    ...extra,
    ...previous.plans
      .slice(share)
      .map((plan, index) => (index < share ? { ...plan, title: `${plan.title} (revised)` } : plan))
      .reverse(),
  ],
};
// Every plan changed (a new base URL moves every webUrl).
const everything: Catalog = {
  generatedAt: typical.generatedAt,
  plans: previous.plans.map((plan) => ({
    ...plan,
    webUrl: plan.webUrl.replace('plans.example', 'www.example'),
  })),
};
const body = JSON.stringify(typical);

const parseMs = await timed(() => JSON.parse(body));
const typicalMs = await timed(() => diffPlans(previous.plans, typical.plans));
const everythingMs = await timed(() => diffPlans(previous.plans, everything.plans));
const typicalChanges = diffPlans(previous.plans, typical.plans);
const everythingSet = new ChangeLog(1).next(new Date(), previous, everything);

// A history of `kept` typical change sets, saved with the copy.
const log = new ChangeLog(kept);
for (let i = 0; i < kept; i += 1) {
  const set = log.next(new Date(), previous, typical);
  if (set) log.append(set);
}
const history = log.stored();
const scratch = await scratchDir('catalog-bench-changes-');
try {
  const bare = join(scratch.dir, 'bare.json');
  const state = join(scratch.dir, 'state.json');
  const copy = { body, fetchedAt: typical.generatedAt, validatedAt: typical.generatedAt, etag: '"x"' };
  const bareMs = await timed(() => writeFile(bare, JSON.stringify({ version: 1, ...copy })));
  const saveMs = await timed(() => saveState(state, { copy, changes: history, notified: kept }));
  const loadMs = await timed(() => loadState(state));
  const stateBytes = Buffer.byteLength(JSON.stringify({ version: 2, ...copy, changes: history }));

  console.log(`plans: ${previous.plans.length}, runs: ${runs} (medians)`);
  console.log(`JSON.parse of the new body (done on every new copy): ${ms(parseMs)}, ${mb(body.length)}`);
  console.log(
    `diff, typical publish (+${typicalChanges.added.length} −${typicalChanges.removed.length} ~${typicalChanges.changed.length}, reordered): ${ms(typicalMs)} (${(typicalMs / parseMs).toFixed(2)} × parse)`,
  );
  console.log(
    `diff, every plan changed: ${ms(everythingMs)} (${(everythingMs / parseMs).toFixed(2)} × parse); its change set: ${mb(JSON.stringify(everythingSet).length)}`,
  );
  console.log(
    `history of ${kept} typical change sets: ${mb(JSON.stringify(history).length)} next to a ${mb(body.length)} copy`,
  );
  console.log(
    `save copy + history (atomic, fsync): ${ms(saveMs)} against ${ms(bareMs)} writing the copy alone (${(saveMs / bareMs).toFixed(2)} ×); file ${mb(stateBytes)}`,
  );
  console.log(`load copy + history (validated): ${ms(loadMs)}`);
} finally {
  await scratch.remove();
}
