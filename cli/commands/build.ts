/** `catalog build`: builds from the source and writes one build's files into a directory. */
import type { Command } from 'commander';
import type { BuildResult } from '../../builder/build.ts';
import { countsText, totalPlans } from '../../contract/index.ts';
import { type CliIO, noter, progressLine } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** Where a build's time went, in one line: each stage and its share of their sum. */
export function describeStages(result: BuildResult, writeMs: number): string {
  const { timings } = result;
  const stages: [string, number][] = [
    ['read+validate', timings.read],
    ['render', timings.render],
    ['compress', timings.compressBusy],
    ['pages', timings.pages],
    ['write', writeMs],
  ];
  const sum = stages.reduce((total, [, ms]) => total + ms, 0) || 1;
  const threads = timings.compressThreads > 0 ? `${timings.compressThreads} threads` : "libuv's pool";
  return `  stages: ${stages
    .map(([name, ms]) => `${name} ${ms.toFixed(0)} ms (${((ms / sum) * 100).toFixed(0)}%)`)
    .join(', ')}; compress ran ${timings.compress.toFixed(0)} ms on ${threads}, beside the pages`;
}

/** The one human summary of a build, for stderr. */
export function describeBuild(result: BuildResult, where: string, ms: number, writeMs?: number): string {
  const plans = totalPlans(result.counts);
  const files = [...result.objects, ...result.root];
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  const { unpublished, unapproved } = result.skipped;
  const invalidRows = new Set(result.warnings.map((w) => w.row)).size;
  return [
    `built ${plans} plans (${countsText(result.counts)}) from ${result.total} rows into ${where}`,
    `  skipped: ${unpublished} not published, ${unapproved} published but not approved, ${invalidRows} invalid`,
    `  build ${result.buildId}: ${files.length} objects, ${bytes} B in all`,
    `  generatedAt ${result.generatedAt}, ${ms.toFixed(0)} ms`,
    ...(writeMs === undefined ? [] : [describeStages(result, writeMs)]),
  ].join('\n');
}

export function registerBuild(program: Command, io: CliIO): void {
  const note = noter(io);
  const description =
    'Build one build flat into a directory (--out, else a new scratch directory, whose path it prints): the three catalogs, openapi.yaml, their br and gz variants, the manifest, the plan pages and errors/500.json. It never writes where a live build is served: an --out that holds builds, or the local stack origin, is refused. catalog publish puts a build live.';
  settingsCommand(program, 'build', description, io, async (settings) => {
    const started = performance.now();
    const [{ build }, { buildOutput, writeFlatBuild }] = await Promise.all([
      import('../../app/build.ts'),
      import('../../app/build-output.ts'),
    ]);
    // Refused before anything is read: never where a live build is served.
    if (settings.out !== undefined) await buildOutput(settings.out);
    const line = progressLine(io, 'build', settings.json);
    let result: BuildResult;
    let writeMs: number;
    let out: { readonly dir: string; readonly scratch: boolean };
    try {
      result = await build(settings, new Date(), line.note, line.progress);
      out = await buildOutput(settings.out);
      line.progress({ stage: `writing ${result.objects.length + result.root.length} objects` });
      writeMs = await writeFlatBuild(out.dir, result);
    } finally {
      line.stop();
    }
    const ms = performance.now() - started;
    if (!settings.json) {
      note(describeBuild(result, out.dir, ms, writeMs));
      if (out.scratch) note(`  (no --out: a new scratch directory; catalog publish puts a build live)`);
    } else
      io.stdout(
        `${JSON.stringify({ command: 'build', buildId: result.buildId, generatedAt: result.generatedAt, counts: result.counts, out: out.dir, objects: result.objects.length + result.root.length, bytes: [...result.objects, ...result.root].reduce((sum, file) => sum + file.size, 0), durationMs: Math.round(ms) })}\n`,
      );
  });
}
