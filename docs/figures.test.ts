/**
 * The counts the documents state that the code can compute: each is read from the sentence that states it (the
 * sentence must still be there, so a reworded one is looked at again) and compared with what the code counts
 * today. A figure measured by a benchmark (seconds, bytes, dollars) is not here: `npm run bench:*` prints it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { satisfies } from 'semver';
import { describe, expect, it } from 'vitest';
import { PROBE_CASES, plannedRequests } from '../app/check-rows.ts';
import { planResponseCases, TEST_CONCURRENCY } from '../app/verify-function.ts';
import { DISCIPLINES } from '../contract/index.ts';
import { MARKED_SUFFIX, PARTNER_ORIGIN, REQUEST_CASES } from '../gateway/cases.ts';
import { ROOT, repositoryFiles } from '../testing/cli.ts';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8').replace(/\s*\n\s*/g, ' ');

/** Each number `pattern`'s groups capture in `file` (lines joined, as a sentence may wrap); fails when it is not there. */
function stated(file: string, pattern: RegExp): number[][] {
  const found = [...read(file).matchAll(new RegExp(pattern, 'g'))].map((match) =>
    match.slice(1).map((group) => Number(String(group).replace(/,/g, ''))),
  );
  if (found.length === 0) throw new Error(`${file} no longer says ${pattern}`);
  return found;
}

const WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const wordOf = (n: number) => WORDS[n] ?? String(n);

/** `catalog check`'s requests, by hand (a key in a URL is one of its rows), against a store with CORS. */
const CHECK_SETTINGS = {
  baseUrl: 'https://plans.example.com',
  key: 'k',
  forged: 'f',
  cors: PARTNER_ORIGIN,
  maxAgeMs: 1,
  now: new Date(0),
};
const checkPlan = plannedRequests(CHECK_SETTINGS);
/** The full table's requests in a run of the canary: the same, on a schedule (no key in a URL). */
const canaryPlan = plannedRequests({ ...CHECK_SETTINGS, keyInUrl: false });
/** The probe's requests: a catalog read per discipline, and its cases of the table. */
const probeRequests = DISCIPLINES.length + PROBE_CASES.length;

describe('the request-case table, as the documents count it', () => {
  const marked = REQUEST_CASES.filter((testCase) => testCase.name.includes(MARKED_SUFFIX)).length;
  const responseCases = planResponseCases(REQUEST_CASES).length;

  it("states the table's cases and the canary's marked ones as gateway/cases.ts has them", () => {
    expect(
      stated(
        'gateway/README.md',
        /\((\d+) cases over every rule of the gateway, the canary's marker on (\d+) of them/,
      ),
    ).toEqual([[REQUEST_CASES.length, marked]]);
    expect(stated('docs/decisions.md', /`gateway\/cases\.ts`, (\d+) of them/)).toEqual([[marked]]);
  });

  it('are counted alike wherever a document says "N cases" or "the marker on N of them"', async () => {
    const documents = (await repositoryFiles()).filter((file) => file.endsWith('.md'));
    const figures = documents.flatMap((file) =>
      [...read(file).matchAll(/\b(\d+) cases\b|marker on (\d+) of them/g)].map((match) => ({
        text: `${file}: ${match[0]}`,
        stated: Number(match[1] ?? match[2]),
        counted: match[1] === undefined ? marked : REQUEST_CASES.length,
      })),
    );
    // The docs give both figures: a test that found neither would pass whatever they said.
    expect(figures.some(({ text }) => text.endsWith('cases'))).toBe(true);
    expect(figures.some(({ text }) => text.endsWith('of them'))).toBe(true);
    for (const { text, stated: figure, counted } of figures) expect(figure, text).toBe(counted);
  });

  it('states the cases the release runs through TestFunction as app/verify-function.ts plans them', () => {
    expect(stated('infra/README.md', /Message returned: 1 of (\d+) cases failed/)).toEqual([
      [REQUEST_CASES.length],
    ]);
    expect(stated('infra/README.md', /the viewer-request function on each of the (\d+) cases/)).toEqual([
      [REQUEST_CASES.length],
    ]);
    expect(stated('infra/README.md', /origin and comes back below 400 \((\d+)\)/)).toEqual([[responseCases]]);
    expect(read('infra/README.md')).toContain(`\`TestFunction\` ${wordOf(TEST_CONCURRENCY)} at a time`);
    // bench:release's count of the calls: the probe of the store, then both functions' cases.
    expect(stated('infra/README.md', /`TestFunction` (\d+) \(1 probe \+ (\d+) \+ (\d+)\)/)).toEqual([
      [1 + REQUEST_CASES.length + responseCases, REQUEST_CASES.length, responseCases],
    ]);
  });
});

describe("the canary's requests, as the documents count them", () => {
  it('states the probe and the full table as app/check-rows.ts plans them', () => {
    const runs = stated('infra/README.md', /([\d,]+) runs × (\d+) requests = ([\d,]+) requests/);
    expect(runs.map(([, requests]) => requests)).toEqual([probeRequests, canaryPlan.uses.size]);
    for (const [count, requests, total] of runs) expect(total).toBe((count as number) * (requests as number));
    expect(stated('infra/README.md', /\| probe +\| (\d+) requests;/)).toEqual([[probeRequests]]);
    expect(
      stated(
        'infra/README.md',
        /\| full table \| (\d+) requests, .*?\(the check before sharing and brotli: (\d+) requests/,
      ),
    ).toEqual([[canaryPlan.uses.size, checkPlan.rows]]);
  });

  it('says "about" a figure within 5 % of what a run sends', () => {
    const about = [
      ...stated('infra/README.md', /It sends about (\d+) requests/),
      ...stated('docs/decisions.md', /About (\d+) requests, one at a time/),
    ].map(([n]) => n as number);
    for (const n of about) {
      expect(Math.abs(n - canaryPlan.uses.size) / n).toBeLessThanOrEqual(0.05);
      expect(Math.abs(n - checkPlan.uses.size) / n).toBeLessThanOrEqual(0.05);
    }
  });
});

describe('the fixtures, as fixtures/README.md counts them', () => {
  const rows = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as Record<
    string,
    unknown
  >[];
  const served = rows.filter((row) => row.published === true && row.approved === true);

  it('states the rows, the served ones by discipline, and the covers as plans.json has them', () => {
    const [[all, published, running, strength]] = stated(
      'fixtures/README.md',
      /`plans\.json` — (\d+) realistic rows \((\d+) published and approved: (\d+) running, (\d+) strength\)/,
    ) as [[number, number, number, number]];
    expect({ all, published, running, strength }).toEqual({
      all: rows.length,
      published: served.length,
      running: served.filter((row) => row.discipline === 'running').length,
      strength: served.filter((row) => row.discipline === 'strength').length,
    });
    const covers = rows.filter((row) =>
      String(row.cover_url ?? '').startsWith('https://fixtures.invalid/_local/covers/'),
    );
    expect(read('fixtures/README.md')).toContain(
      `${wordOf(covers.length).replace(/^./, (c) => c.toUpperCase())} rows name a cover on \`https://fixtures.invalid/_local/covers/\``,
    );
  });
});

describe("the README's engine warnings", () => {
  it('names every dependency whose locked version declares a Node newer than package.json allows, with its range', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string; engines?: { node?: string } }>;
    };
    const floor = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(floor, `package.json engines.node: ${pkg.engines.node}`).toBeDefined();
    const newer = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).flatMap((name) => {
      const locked = lock.packages[`node_modules/${name}`];
      const range = locked?.engines?.node;
      if (!locked || !range || satisfies(`${floor}.0`, range)) return [];
      const at = /^>=(\d+\.\d+)\.0$/.exec(range)?.[1] ?? range;
      // As the README writes it: `NAME` MAJOR.MINOR, then (with or without a parenthesis) Node ≥ MAJOR.MINOR.
      const version = locked.version.split('.').slice(0, 2).join('.');
      const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      return [new RegExp(`\`${literal(name)}\` ${literal(version)},? \\(?Node ≥ ${literal(at)}\\b`)];
    });
    const readme = read('README.md');
    const [count] = /(\w+) dev dependencies declare a newer Node/.exec(readme)?.slice(1) ?? [];
    expect(count?.toLowerCase()).toBe(wordOf(newer.length));
    for (const named of newer) expect(readme).toMatch(named);
  });
});
