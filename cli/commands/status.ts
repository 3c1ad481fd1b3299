/**
 * `catalog status`: the live build, its age, the pin, the last run, the live objects against the manifest,
 * keys per partner and the CORS origin, on AWS (`--bucket` and `--kvs-arn`) or on a local origin (`--origin`
 * and `--store`). A table by default, `--json` for machines. Exit code 0 healthy, 1 degraded, 2 broken; a
 * non-healthy exit says why in one line on stderr. The checks run in app/status.ts.
 */
import type { Command } from 'commander';
import { formatSetting, type SettingName, type SettingsIn } from '../../app/settings/index.ts';
import type { ADVICE_TARGET, AdviceTarget, StatusReport } from '../../app/status.ts';
import { CANARY_BEATS, countsText } from '../../contract/index.ts';
import { shownValue } from '../../publish/pointer.ts';
import { type CliIO, CommandExit, shortTime as short, table } from '../io.ts';
import { givenBy, settingsCommand } from '../options.ts';
import { targetOf } from './publish.ts';

/**
 * A text on one line whatever it quotes: each control character (a newline in a hand-edited store value, say)
 * is written as its JSON escape.
 */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
  return text.replace(/[\u0000-\u001f\u007f]/g, (char) => JSON.stringify(char).slice(1, -1));
}

/** The human form of a report: one row per aspect. */
export function formatStatus(report: StatusReport, age: (seconds: number) => string): string {
  const { live, pin, lastRun, keys } = report;
  const rows: string[][] = [['origin', `${report.origin} (store ${report.store})`]];
  const liveText = {
    build: live.buildId ?? '-',
    unreadable: `${live.buildId === null ? '-' : shownValue(live.buildId)} (the edge cannot serve it)`,
    none: 'none',
  }[live.state];
  rows.push(['live build', liveText]);
  if (live.generatedAt !== null)
    rows.push(['generated', `${short(live.generatedAt)} (${age(live.ageSeconds ?? 0)} ago)`]);
  // When a run last found the live build matching the source: it built it, or found the source unchanged.
  if (live.confirmedAt !== null)
    rows.push(['confirmed', `${short(live.confirmedAt)} (${age(live.confirmedAgeSeconds ?? 0)} ago)`]);
  if (live.counts) rows.push(['plans', `${live.plans ?? 0} (${countsText(live.counts)})`]);
  else if (live.plans !== null) rows.push(['plans', String(live.plans)]);
  if (live.objects)
    rows.push([
      'objects',
      live.objects.damaged.length === 0
        ? `all ${live.objects.expected} match the manifest`
        : `${live.objects.damaged.length} of ${live.objects.expected} missing or wrong: ${live.objects.damaged.join('; ')}`,
    ]);
  if (live.pages)
    rows.push([
      'live pages',
      live.pages.damaged.length === 0
        ? `all ${live.pages.expected} are the build's`
        : `${live.pages.damaged.length} not the build's (it has ${live.pages.expected}): ${live.pages.damaged.join('; ')}`,
    ]);
  rows.push(['pinned', pin ? `to ${pin.build} since ${short(pin.at)} by ${pin.by} (${pin.reason})` : 'no']);
  rows.push([
    'last run',
    lastRun
      ? `${lastRun.outcome}${lastRun.guard ? ` (${lastRun.guard})` : ''} at ${short(lastRun.finished)}: ${lastRun.reason}`
      : (report.lastRunProblem ?? 'none recorded'),
  ]);
  if (report.runLock)
    rows.push([
      'run lock',
      `${report.runLock.state === 'running' ? 'held' : 'abandoned'} by ${report.runLock.by} (pid ${report.runLock.pid} on ${report.runLock.host}) since ${short(report.runLock.since)}, until ${short(report.runLock.expires)}`,
    ]);
  rows.push([
    'keys',
    keys.partners.length === 0
      ? 'none'
      : keys.partners.map(({ partner, keys: n }) => `${partner} ${n}`).join(', ') +
        (keys.invalid > 0 ? `; ${keys.invalid} unreadable` : ''),
  ]);
  rows.push([
    'expiring',
    keys.expiringSoon.length === 0
      ? `no key within ${age(report.thresholds.keyExpiryWarningSeconds)}`
      : keys.expiringSoon.map((key) => `${key.partner} ${key.id} at ${short(key.expires)}`).join(', '),
  ]);
  rows.push(['cors origin', report.cors.origin ?? 'none (CORS off)']);
  // Each beat's last report: `146 of 147 rows pass, failing: "…", 3m ago`.
  for (const beat of CANARY_BEATS)
    rows.push([
      `conformance (${beat})`,
      report.conformance[beat]?.line ??
        `no report of the ${beat} beat yet (catalog start, or the stack canary, writes one)`,
    ]);
  for (const fn of report.functions ?? [])
    rows.push([
      fn.kind,
      fn.problem ??
        {
          same: `${fn.name}: LIVE runs DEVELOPMENT's code`,
          differs: `${fn.name}: DEVELOPMENT differs from LIVE, held (catalog verify-function --stage DEVELOPMENT, then catalog publish-functions)`,
          unpublished: `${fn.name}: no LIVE stage yet (catalog publish-functions)`,
        }[fn.stages ?? 'same'],
    ]);
  rows.push([
    'status',
    report.health === 'healthy' ? 'healthy' : `${report.health}: ${report.problems.length} problem(s)`,
  ]);
  return table(rows.map(([label, value]) => [(label ?? '').toUpperCase(), oneLine(value ?? '')]));
}

/**
 * Where status looked, as the commands it advises must name it (app/status.ts `AdviceTarget`): the target
 * settings given as flags, and whether that is a deployment, the local stack (nothing given) or other settings.
 */
function adviceTarget(
  names: typeof ADVICE_TARGET,
  settings: SettingsIn<'status'>,
  given: (name: SettingName) => 'flag' | 'env' | undefined,
): AdviceTarget {
  const flags: Partial<Record<(typeof ADVICE_TARGET)[number], string | true>> = {};
  for (const name of names) {
    const value = settings[name];
    if (given(name) !== 'flag' || value === undefined) continue;
    flags[name] = typeof value === 'boolean' ? true : formatSetting(name, value as never);
  }
  const kind =
    settings.deployment !== undefined
      ? 'deployment'
      : names.some((name) => name !== 's3PathStyle' && given(name) !== undefined)
        ? 'settings'
        : 'local-stack';
  return { kind, flags };
}

export function registerStatus(program: Command, io: CliIO): void {
  const description =
    'Check the live catalog: its build and age, the pin, the last run, its objects against the manifest, keys and CORS. Exit 0 healthy, 1 degraded, 2 broken.';
  settingsCommand(program, 'status', description, io, async (settings, command) => {
    const status = await import('../../app/status.ts');
    const target = await targetOf(settings);
    // The deployment's functions (its outputs name them): one CloudFront client, for this command only.
    const names = [
      { name: settings.viewerRequestFunction, kind: 'viewer-request' },
      { name: settings.viewerResponseFunction, kind: 'viewer-response' },
    ].filter((fn): fn is { name: string; kind: string } => fn.name !== undefined);
    const cloudfront =
      names.length > 0 ? (await import('../../app/clients.ts')).createCloudFrontClient(settings) : undefined;
    const report = await status
      .catalogStatus(target, {
        now: new Date(),
        maxAgeMs: settings.maxAge,
        // A deployment's outputs name its canary while it has one.
        canaryDeployed: settings.deployment === undefined ? undefined : settings.canaryFunction !== undefined,
        functions: cloudfront ? { client: cloudfront, names } : undefined,
        advice: adviceTarget(status.ADVICE_TARGET, settings, (name) => givenBy(command, name, io.env)),
      })
      .finally(() => cloudfront?.destroy());
    io.stdout(settings.json ? `${JSON.stringify(report)}\n` : `${formatStatus(report, status.formatAge)}\n`);
    if (report.health !== 'healthy')
      io.stderr(
        `catalog: ${report.health}: ${oneLine(report.problems.map((problem) => problem.message).join('; '))}\n`,
      );
    if (report.exitCode !== 0) throw new CommandExit(report.exitCode);
  });
}
