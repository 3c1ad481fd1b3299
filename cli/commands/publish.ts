/**
 * `catalog publish`, `catalog builds`, `catalog history`, `catalog rollback`, `catalog unpin` and `catalog rebuild`: production
 * publishing, on AWS (`--bucket` and `--kvs-arn`) or on a local origin (`--origin` and `--store`), through the
 * same code. The AWS clients are built here, once per command (app/clients.ts); the operations run in
 * app/run.ts.
 */
import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import type { TargetNames, TargetSettings } from '../../app/target.ts';
import { BUILD_ID_PATTERN, DISCIPLINES, unanchored } from '../../contract/index.ts';
import { type CliIO, CommandExit, noter, progressLine, sayTarget, table } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** The longest REASON `catalog history` shows (the last column: a longer one ends in `…`). */
const REASON_MAX = 160;
const BUILD_ID = unanchored(BUILD_ID_PATTERN, 'g');

/**
 * A move's reason as `catalog history` shows it: one line (control characters escaped), at most
 * {@link REASON_MAX} characters, and never cut inside a build id (the cut moves to the id's end).
 */
export function shownReason(reason: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
  const line = reason.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
  if (line.length <= REASON_MAX) return line;
  let cut = REASON_MAX;
  for (const match of line.matchAll(BUILD_ID)) {
    const end = match.index + match[0].length;
    if (match.index < cut && end > cut) cut = end;
  }
  return cut >= line.length ? line : `${line.slice(0, cut)}…`;
}

/** Who runs a command that moves the live pointer, as its history names them: `user@host`. */
export function actorOf(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no user name on this system (a container's anonymous uid): the host still says where
  }
  return `${user}@${hostname()}`;
}

/** Says what a command that moves the live pointer acts on (app/target.ts), before it opens the target. */
async function sayActingOn(io: CliIO, command: string, settings: TargetNames): Promise<void> {
  // A local store that is not there is a typo, said alone (no store is made by these commands).
  if (settings.store !== undefined && settings.kvsArn === undefined)
    await (await import('../../keys/file-store.ts')).requireStoreFile(settings.store);
  const { describeTarget } = await import('../../app/target.ts');
  sayTarget(io, describeTarget(command, settings, io.env));
}

/** Opens the target of a command's settings, building the AWS clients only for an AWS target. */
export async function targetOf(
  settings: TargetSettings & { region?: string | undefined; maxAttempts: number; s3PathStyle: boolean },
) {
  const { openTarget } = await import('../../app/target.ts');
  return openTarget(settings, async () => {
    const aws = await import('../../app/clients.ts');
    return { s3: aws.createS3Client(settings), kvs: aws.createKvsClient(settings) };
  });
}

/**
 * The exit code of `catalog publish` when a rollback's pin held the pointer: nothing moved, which a script or CI
 * job must not take for a publish. (The scheduled builder records the run as `skipped-pinned` and succeeds.)
 */
export const PINNED_EXIT_CODE = 3;

/** What each command here does, as its --help says. */
const HELP = {
  publish: `Build from the source, check the guards, upload the build, verify it, then move the live pointer. Prints one JSON summary line. Exit 0 published or identical to the live build, 1 failed, refused, or busy (another run holds the run lock at the origin; nothing done), ${PINNED_EXIT_CODE} pinned by a rollback (nothing moved; catalog unpin, then publish again).`,
  builds:
    'List the builds at the origin, newest first, marking the live one, the pinned one, those that were live before (a complete build never live was only uploaded: a publish that lost a race, say) and incomplete ones.',
  history:
    'List the moves of the live pointer, newest first: when, what (publish, rollback, unpin), from which build to which, by whom.',
  rollback:
    'Make the build that was live before the live one live again (or --to a build): check that build against its manifest, put its plan pages live, move the live pointer to it and pin it there until catalog unpin. Run again to go further back. Prints one JSON line.',
  unpin:
    "Remove a rollback's pin: the pinned build stays live until the next publish, which goes live. Prints one JSON line.",
  rebuild: 'Invoke the deployed builder function now and print its summary (manual rebuild).',
} as const;

export function registerPublish(program: Command, io: CliIO): void {
  const note = noter(io);
  settingsCommand(program, 'publish', HELP.publish, io, async (settings) => {
    const target = await targetOf(settings);
    await sayActingOn(io, 'publish', settings);
    const run = await import('../../app/run.ts');
    const line = progressLine(io, 'publish', settings.json);
    const { summary } = await run
      .publish(settings, target, {
        now: new Date(),
        force: settings.force,
        unpin: settings.unpin,
        recover: settings.recover,
        report: line.note,
        progress: line.progress,
        actor: actorOf(),
      })
      .finally(line.stop);
    // Setting references in the reason are rendered on the way out (program.ts).
    const busy = summary.result === 'busy';
    if (summary.reason) note(busy ? summary.reason : `${summary.result}: ${summary.reason}`);
    io.stdout(`${JSON.stringify(summary)}\n`);
    // Busy: another run holds the run lock and nothing was done, which is not this command's success.
    if (busy) throw new CommandExit(1);
    if (summary.result === 'skipped-pinned') throw new CommandExit(PINNED_EXIT_CODE);
  });

  settingsCommand(program, 'builds', HELP.builds, io, async (settings) => {
    const target = await targetOf(settings);
    const { builds } = await import('../../app/builds.ts');
    const rows = await builds(target);
    if (rows.length === 0) note(`${target.origin.name} holds no build`);
    else {
      const notes = (row: (typeof rows)[number]) =>
        [
          row.live ? 'live' : row.everLive ? 'was live' : '',
          row.pinned ? 'pinned' : '',
          row.complete ? '' : 'incomplete',
        ]
          .filter(Boolean)
          .join(', ');
      const lines = [
        ['BUILD', 'GENERATED AT', ...DISCIPLINES.map((d) => d.toUpperCase()), 'NOTE'],
        ...rows.map((row) => [
          row.id,
          row.generatedAt ?? '-',
          ...DISCIPLINES.map((d) => (row.counts ? String(row.counts[d]) : '-')),
          notes(row),
        ]),
      ];
      io.stdout(`${table(lines)}\n`);
    }
  });

  settingsCommand(program, 'history', HELP.history, io, async (settings) => {
    const target = await targetOf(settings);
    const { readHistory } = await import('../../publish/history.ts');
    const moves = await readHistory(target.origin, settings.historyLimit);
    if (settings.json) io.stdout(`${JSON.stringify(moves)}\n`);
    else if (moves.length === 0) note(`${target.origin.name} has no recorded move of the live pointer`);
    else {
      const { shownValue } = await import('../../publish/pointer.ts');
      const shown = (id: string | null) => (id === null ? '-' : shownValue(id));
      io.stdout(
        `${table([
          ['AT', 'KIND', 'FROM', 'TO', 'BY', 'REASON'],
          ...moves.map((move) => [
            move.at,
            move.kind,
            shown(move.from),
            shown(move.to),
            shownValue(move.by),
            move.reason === undefined ? '' : shownReason(move.reason),
          ]),
        ])}\n`,
      );
    }
  });

  settingsCommand(program, 'rollback', HELP.rollback, io, async (settings) => {
    const { rollback: pinBuild } = await import('../../app/run.ts');
    const target = await targetOf(settings);
    await sayActingOn(io, 'rollback', settings);
    const line = progressLine(io, 'rollback', settings.json);
    const summary = await pinBuild(target, {
      ...(settings.to !== undefined ? { to: settings.to } : {}),
      now: new Date(),
      actor: actorOf(),
      progress: line.progress,
    }).finally(line.stop);
    for (const warning of summary.warnings) note(`warning: ${warning}`);
    note(`${summary.buildId} is live and pinned: publishing moves nothing until catalog unpin`);
    io.stdout(`${JSON.stringify(summary)}\n`);
  });

  settingsCommand(program, 'unpin', HELP.unpin, io, async (settings) => {
    const publishing = await import('../../app/run.ts');
    const target = await targetOf(settings);
    await sayActingOn(io, 'unpin', settings);
    const summary = await publishing.unpin(target, { now: new Date(), actor: actorOf() });
    for (const warning of summary.warnings) note(`warning: ${warning}`);
    note(
      summary.unpinned
        ? `unpinned ${summary.unpinned.build}: it stays live until the next publish, which goes live`
        : 'nothing was pinned',
    );
    io.stdout(`${JSON.stringify(summary)}\n`);
  });

  settingsCommand(program, 'rebuild', HELP.rebuild, io, async (settings) => {
    await sayActingOn(io, 'rebuild', settings);
    const [{ createLambdaClient }, { invokeBuilder }] = await Promise.all([
      import('../../app/clients.ts'),
      import('../../lambda/invoke.ts'),
    ]);
    const summary = await invokeBuilder(
      createLambdaClient(settings),
      settings.function,
      settings.force ? { force: true } : {},
    );
    io.stdout(`${JSON.stringify(summary)}\n`);
  });
}
