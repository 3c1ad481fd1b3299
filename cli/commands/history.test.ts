/** `catalog history`: its REASON column shows a move's reason whole, never cut inside a build id. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_ID_PATTERN, unanchored } from '../../contract/index.ts';
import { fewPlansFile } from '../../testing/aws.ts';
import { makeStore, runCatalog } from '../../testing/cli.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { shownReason } from './publish.ts';

const BUILD_ID = unanchored(BUILD_ID_PATTERN, 'g');

describe('catalog history', () => {
  const scratch = useScratchDir({ prefix: 'catalog-history-' });

  it('shows the reason of an unpin whole: the pin, when, by whom and the build ids in it', async () => {
    const target = [
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      makeStore(join(scratch.dir, 'kvs.json')),
    ];
    const source = await fewPlansFile();
    const publish = ['publish', ...target, '--source', source, '--base-url', 'http://127.0.0.1:8787'];
    expect((await runCatalog(publish)).code).toBe(0);
    const second = await runCatalog([...publish, '--force']);
    const live = JSON.parse(second.stdout).buildId as string;
    expect((await runCatalog(['rollback', ...target])).code).toBe(0);
    expect((await runCatalog(['unpin', ...target])).code).toBe(0);
    const history = await runCatalog(['history', ...target]);
    expect(history.code, history.stderr).toBe(0);
    const unpin = history.stdout.split('\n').find((line) => /^\S+\s+unpin\s/.test(line)) ?? '';
    // The reason names the rollback's reason, and so the build it rolled back from, in full.
    const reason = unpin.slice(unpin.indexOf('pinned since'));
    expect(reason).toMatch(new RegExp(`^pinned since \\S+ by rollback \\(rolled back from ${live}\\)$`));
    expect(reason.length).toBeGreaterThan(80);
  });

  it('cuts a long reason after a build id, never inside one', () => {
    // An id of this release, and one of an earlier release (8 hex digits).
    for (const id of ['20261129T051044Z-279d0b42a1c3e5f7', '20261129T051044Z-279d0b42']) {
      const long = `${'x'.repeat(150)} ${id} and more ${'y'.repeat(100)}`;
      const shown = shownReason(long);
      expect(shown).toBe(`${'x'.repeat(150)} ${id}…`);
      for (const found of shown.matchAll(BUILD_ID)) expect(found[0]).toBe(id);
    }
    expect(shownReason('two\nlines')).toBe('two\\nlines');
    expect(shownReason('short')).toBe('short');
  });
});
