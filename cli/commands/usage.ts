/**
 * `catalog usage`: per partner, the requests, their answers (2xx, 304, refusals by reason, other), bytes and
 * when the partner was first and last seen; the deployment's own checks apart (the monitoring partner: the
 * canary, `catalog check`, the builder's propagation check); then the refusals that named no partner, by reason,
 * and the pages for people. From a `catalog serve` access log (`--access-log FILE`, `-` for standard input; with
 * no target, the local stack's), or on AWS from the usage log group through Logs Insights (`--log-group`, or the
 * deployment's). The work is in app/usage.ts (docs/decisions.md#usage).
 */
import type { Command } from 'commander';
import type { UsageReport } from '../../app/usage.ts';
import { MONITORING_PARTNER } from '../../contract/index.ts';
import { type CliIO, shortTime as short, table } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** `no-key 2, path 1`, or `0`. */
const refusals = (refused: Readonly<Record<string, number>>) =>
  Object.entries(refused)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ') || '0';

/** The human form of a report: a table of partners, the deployment's own checks, the refusals that named no partner. */
export function formatUsage(report: UsageReport): string {
  const lines = [`usage from ${short(report.since)} to ${short(report.until)} (${report.source})`, ''];
  if (report.partners.length === 0) lines.push('no partner made a request');
  else
    lines.push(
      table([
        ['PARTNER', 'REQUESTS', '2XX', '304', 'REFUSED', 'OTHER', 'BYTES', 'FIRST SEEN', 'LAST SEEN'],
        ...report.partners.map((p) => [
          p.partner,
          String(p.requests),
          String(p.ok),
          String(p.notModified),
          refusals(p.refused),
          String(p.other),
          String(p.bytes),
          short(p.firstSeen),
          short(p.lastSeen),
        ]),
      ]),
    );
  const own = report.monitoring;
  const whose = `partner ${MONITORING_PARTNER}: the canary, catalog check, the builder's propagation check`;
  lines.push('');
  if (own === null) lines.push(`no request from the deployment's own checks (${whose})`);
  else
    lines.push(
      `apart, the deployment's own checks (${whose}):`,
      table([
        ['REQUESTS', '2XX', '304', 'REFUSED', 'PAGES', 'OTHER', 'BYTES', 'FIRST SEEN', 'LAST SEEN'],
        [
          String(own.requests),
          String(own.ok),
          String(own.notModified),
          refusals(own.refused),
          String(own.pages),
          String(own.other),
          String(own.bytes),
          short(own.firstSeen),
          short(own.lastSeen),
        ],
      ]),
    );
  lines.push('');
  if (report.unnamed.length === 0) lines.push('no refusal named no partner');
  else
    lines.push(
      table([
        ['REFUSED, NO PARTNER', 'REQUESTS'],
        ...report.unnamed.map((u) => [u.reason, String(u.requests)]),
      ]),
    );
  lines.push('', `pages for people (plan pages, the home page): ${report.pages}`);
  if (report.unreadable > 0)
    lines.push(
      '',
      `unreadable records (a value no gateway writes, or a line too long): ${report.unreadable}`,
    );
  return lines.join('\n');
}

export function registerUsage(program: Command, io: CliIO): void {
  const description =
    "Per partner: requests, answers (2xx, 304, refusals by reason), bytes, first and last seen; the deployment's own checks apart; then refusals that named no partner, and pages. From a catalog serve access log (none given: the local stack's) or, on AWS, the usage log group (Logs Insights).";
  settingsCommand(program, 'usage', description, io, async (settings) => {
    const usage = await import('../../app/usage.ts');
    const report = await usage.usageReport(settings, {
      now: new Date(),
      stdin: io.stdin,
      logs: async () => (await import('../../app/clients.ts')).createLogsClient(settings),
    });
    io.stdout(settings.json ? `${JSON.stringify(report)}\n` : `${formatUsage(report)}\n`);
  });
}
