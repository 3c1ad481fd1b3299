/**
 * Publishes that race: twenty rounds of two `catalog publish` processes started at once with different sources,
 * on one local origin and store file (the code path S3 and the KeyValueStore take). After every round, every
 * catalog in every encoding that `catalog serve` answers comes from one build; a publish that lost exits
 * non-zero naming the build that won, or found the other's run lock and exits non-zero as busy, having done
 * nothing; the build live at the end is one whose publish exited 0; a rollback then
 * goes to the build live before it, never to a loser's.
 *
 * The test has no fixed limit: each round must end within a multiple of the time the first publish (one process,
 * alone) took on this machine, at this load (testing/pace.ts), so it holds on a busy machine and stops on a hang.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey } from '../keys/manage.ts';
import {
  type CliResult,
  localTargetEnv,
  ROOT,
  runCatalog,
  type ServeProcess,
  servedGeneratedAt,
  startServe,
} from '../testing/cli.ts';
import { NO_FIXED_LIMIT, paced, within } from '../testing/pace.ts';
import { useScratchDir } from '../testing/scratch.ts';

const ROUNDS = 20;
const scratch = useScratchDir({ prefix: 'catalog-race-', each: false });

const env = (source: string) =>
  localTargetEnv(scratch.dir, { CATALOG_SOURCE: source, CATALOG_MIN_RATIO: '0' });

/** A source whose plans differ from every other round's and from the other side's: the first title is tagged. */
async function sourceFor(round: number, side: 'a' | 'b'): Promise<string> {
  const rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as {
    title: string;
  }[];
  const tagged = rows.map((row, index) =>
    index === 0 ? { ...row, title: `${row.title} ${round}${side}` } : row,
  );
  const path = join(scratch.dir, `source-${round}${side}.json`);
  await writeFile(path, JSON.stringify(side === 'a' ? tagged : tagged.slice(0, 40)));
  return path;
}

describe('two publishes at once, twenty rounds', () => {
  let server: ServeProcess;
  let key: string;
  let first: CliResult;
  /** How long a round may take: a multiple of the first publish's time. */
  let bound: number;
  beforeAll(async () => {
    const source = await sourceFor(0, 'a');
    ({ result: first, bound } = await paced('the first publish', () =>
      runCatalog(['publish'], { env: env(source) }),
    ));
    expect(first.code, first.stderr).toBe(0);
    key = (
      await issueKey(new FileKeyValueStore(join(scratch.dir, 'kvs.json')), {
        partner: 'race',
        now: new Date(),
      })
    ).key;
    server = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
  });
  afterAll(() => server?.stop());

  const servedNow = () => servedGeneratedAt(server.url, key);

  it(
    'serve one build after every round; the loser names the winner; the last live build published with exit 0; a rollback goes to the build live before it',
    async () => {
      const summaryOf = (result: CliResult) =>
        JSON.parse(result.stdout.trim()) as {
          buildId: string;
          previousBuildId: string | null;
          generatedAt: string;
        };
      const succeeded = new Set<string>();
      let live = summaryOf(first).buildId;
      let before = live;
      let lost = 0;
      let busy = 0;
      for (let round = 1; round <= ROUNDS; round += 1) {
        const [sourceA, sourceB] = [await sourceFor(round, 'a'), await sourceFor(round, 'b')];
        const [a, b] = await within(bound, `round ${round}`, () =>
          Promise.all([
            runCatalog(['publish'], { env: env(sourceA) }),
            runCatalog(['publish'], { env: env(sourceB) }),
          ]),
        );
        const won = [a, b].filter((result) => result.code === 0).map(summaryOf);
        expect(won.length, `round ${round}: someone won`).toBeGreaterThan(0);
        for (const result of [a, b].filter((r) => r.code !== 0)) {
          expect(result.code, `round ${round}: ${result.stderr}`).toBe(1);
          // Found the other's run lock: it did nothing (it printed its busy summary and no build).
          if (/^busy: another run holds the run lock/m.test(result.stderr)) {
            busy += 1;
            expect(JSON.parse(result.stdout)).toMatchObject({ result: 'busy' });
            continue;
          }
          lost += 1;
          const winner = /the live build moved from \S+ to (\S+) while this publish ran; \1 stays live/.exec(
            result.stderr,
          )?.[1];
          expect(winner, `round ${round}: ${result.stderr}`).toBe(won[0]?.buildId);
        }
        // No lost update: the publishes that exited 0 moved the pointer one after the other, each from the build
        // the one before it left live.
        const byPrevious = new Map(won.map((summary) => [summary.previousBuildId, summary]));
        for (let step = byPrevious.get(live); step; step = byPrevious.get(live)) {
          byPrevious.delete(live);
          before = live;
          live = step.buildId;
          succeeded.add(step.buildId);
        }
        expect(
          [...byPrevious.values()],
          `round ${round}: publishes that moved from a build no longer live`,
        ).toEqual([]);
        const generatedAt = await servedNow();
        expect([...generatedAt], `round ${round}`).toEqual([
          won.find((summary) => summary.buildId === live)?.generatedAt,
        ]);
      }
      const store = JSON.parse(await readFile(join(scratch.dir, 'kvs.json'), 'utf8')) as {
        data: { key: string; value: string }[];
      };
      expect(store.data.find((entry) => entry.key === 'build:live')?.value).toBe(live);
      expect(succeeded.has(live)).toBe(true);

      // A rollback goes to the build that was live before the last one, never to the build of a publish that
      // lost (complete at the origin, never live), and the edge serves it.
      const rolled = await runCatalog(['rollback'], { env: env(await sourceFor(0, 'a')) });
      expect(rolled.code, rolled.stderr).toBe(0);
      const { buildId, generatedAt } = JSON.parse(rolled.stdout) as { buildId: string; generatedAt: string };
      expect(buildId).toBe(before);
      expect([...(await servedNow())]).toEqual([generatedAt]);
      // Printed, not asserted: how often one publish found the other's run lock, and how often the two overlapped
      // enough past it for one to lose the pointer.
      process.stderr.write(`race: ${busy} of ${ROUNDS * 2} publishes were busy, ${lost} lost the pointer\n`);
    },
    NO_FIXED_LIMIT,
  );
});
