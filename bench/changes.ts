/**
 * npm run bench:changes — the partner proxy's change log at 30,000 plans: comparing two catalogs (a typical
 * publish, and one that changes every plan) against the JSON.parse of the body the proxy does on every new copy
 * anyway; saving and loading the cache file with a full history against writing the bare body; the size of the
 * history next to the copy. Then a real `catalog proxy` process in front of a real HTTP server on 127.0.0.1 that
 * alternates between two catalogs with no plan in common (--alternate-plans each, --alternations times, a
 * refresh every 5 s): the cache file, the process's memory, the /changes pages. Prints the figures (medians of
 * --runs); asserts nothing.
 *
 *   npm run bench:changes [-- --plans N --runs K --kept N --alternate-plans N --alternations K]
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateRows } from '../fixtures/generate.ts';
import { ChangeLog, diffPlans } from '../partner/changes.ts';
import { loadState, saveState } from '../partner/copy-file.ts';
import { type Catalog, Plan } from '../partner/schema.ts';
import { httpRequest, scratchDir, startCatalog } from '../testing/cli.ts';

const { values } = parseArgs({
  options: {
    plans: { type: 'string', default: '30000' },
    runs: { type: 'string', default: '5' },
    kept: { type: 'string', default: '100' },
    'alternate-plans': { type: 'string', default: '19000' },
    alternations: { type: 'string', default: '8' },
  },
});
const count = Number(values.plans);
const runs = Number(values.runs);
const kept = Number(values.kept);

/** `count` published plans from the generated rows, as the service would publish them. */
function catalogOf(seed: number, generatedAt: string, size = count): Catalog {
  const plans: Plan[] = [];
  for (const row of generateRows(Math.ceil(size * 1.1), seed)) {
    if (plans.length === size) break;
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

// A real `catalog proxy` process in front of a service that alternates between two catalogs with no plan in
// common: one refresh every 5 s (the shortest interval), each a new copy.
const size = Number(values['alternate-plans']);
const bodies = [11, 12].map((seed) => JSON.stringify(catalogOf(seed, '2026-11-20T08:00:00.000Z', size)));
let served = 0;
const upstream = createServer((_request, response) => {
  const body = bodies[served % 2];
  served += 1;
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'max-age=5',
  });
  response.end(body);
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const proxyScratch = await scratchDir('catalog-bench-alternate-');
const cacheFile = join(proxyScratch.dir, 'cache.json');
const proxy = await startCatalog(
  [
    'proxy',
    ...['--upstream', `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`],
    ...['--port', '0', '--cache-file', cacheFile],
  ],
  { ready: /catalog proxy: listening on (http:\/\/\S+)/, env: { CATALOG_PARTNER_KEY: 'tpc_bench' } },
);
try {
  const refreshes = () =>
    proxy.lines.filter((line) => line.includes('"event":"refresh"')).map((line) => JSON.parse(line));
  const alternations = Number(values.alternations);
  while (refreshes().length <= alternations) await new Promise((resolve) => setTimeout(resolve, 100));
  const status = await readFile(`/proc/${proxy.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  const page = async (query: string) =>
    `${((await httpRequest(proxy.url, { method: 'GET', target: `/changes?${query}` })).body.length / 1024).toFixed(1)} KB`;
  const health = JSON.parse(
    (await httpRequest(proxy.url, { method: 'GET', target: '/healthz' })).body.toString(),
  );
  console.log(
    `catalog proxy alternating between two catalogs of ${size} plans with none in common, ${alternations} alternations:`,
  );
  console.log(
    `  body ${mb(bodies[0]?.length ?? 0)}; refresh ${ms(median(refreshes().map((r) => r.ms)))} (median, as logged); outcomes ${[...new Set(refreshes().map((r) => r.outcome))].join(', ')}`,
  );
  console.log(
    `  cache file ${mb((await stat(cacheFile)).size)}; changes: latest ${health.changes.latest}, kept ${health.changes.kept}`,
  );
  console.log(`  proxy process: rss ${mb(kib('VmRSS'))}, peak rss ${mb(kib('VmHWM'))}`);
  console.log(`  /changes?since=0: ${await page('since=0')}; &limit=100: ${await page('since=0&limit=100')}`);
} finally {
  await proxy.stop();
  await new Promise((resolve) => upstream.close(resolve));
  await proxyScratch.remove();
}
