/** `catalog build`: builds from the source and writes one build's files into a directory. */
import type { Command } from 'commander';
import type { BuildResult } from '../../builder/build.ts';
import { addSettings, parseCommand } from '../options.ts';

/** Writes one line to stderr: what a command did (stdout is kept for machine output). */
export const note = (line: string) => process.stderr.write(`${line}\n`);

/** The one human summary of a build, for stderr. */
export function describeBuild(result: BuildResult, where: string, ms: number): string {
  const plans = result.counts.running + result.counts.strength;
  const bytes = result.files.reduce((sum, file) => sum + file.size, 0);
  const { unpublished, unapproved } = result.skipped;
  const invalidRows = new Set(result.warnings.map((w) => w.row)).size;
  return [
    `built ${plans} plans (running ${result.counts.running}, strength ${result.counts.strength}) from ${result.total} rows into ${where}`,
    `  skipped: ${unpublished} not published, ${unapproved} published but not approved, ${invalidRows} invalid`,
    `  files: ${result.files.map((f) => `${f.key} ${f.size} B`).join(', ')}; ${bytes} B in all`,
    `  generatedAt ${result.generatedAt}, ${ms.toFixed(0)} ms`,
  ].join('\n');
}

export function registerBuild(program: Command): void {
  const command = program
    .command('build')
    .description('Build the three catalog files, openapi.yaml and errors/500.json into a directory.');
  addSettings(command, 'build').action(async () => {
    const started = performance.now();
    const settings = parseCommand(command, 'build');
    const [{ build }, { writeOriginDir }] = await Promise.all([
      import('../../app/run.ts'),
      import('../../builder/output.ts'),
    ]);
    const result = await build(settings, new Date(), note);
    await writeOriginDir(settings.out, result.files);
    note(describeBuild(result, settings.out, performance.now() - started));
  });
}
