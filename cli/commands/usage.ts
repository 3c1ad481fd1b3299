/**
 * `catalog usage`: per partner, the requests, their answers (200, 304, refusals by reason, other), bytes and
 * when the partner was first and last seen; then the refusals that named no partner, by reason. From a
 * `catalog serve` access log (`--access-log FILE`, `-` for standard input) or, on AWS, from the usage log
 * group through Logs Insights (`--log-group`). The work is in app/usage.ts (docs/decisions.md#usage).
 */
import type { Command } from 'commander';
import type { UsageReport } from '../../app/usage.ts';
import { MONITORING_PARTNER } from '../../contract/index.ts';
import { type CliIO, shortTime as short, table } from '../io.ts';
import { settingsCommand } from '../options.ts';

/** The human form of a report: a table of partners, then the refusals that named no partner. */
export function formatUsage(report: UsageReport): string {
  const lines = [`usage from ${short(report.since)} to ${short(report.until)} (${report.source})`, ''];
  if (report.partners.length === 0) lines.push('no partner made a request');
  else
    lines.push(
      table([
        ['PARTNER', 'REQUESTS', '200', '304', 'REFUSED', 'OTHER', 'BYTES', 'FIRST SEEN', 'LAST SEEN'],
        ...report.partners.map((p) => [
          p.partner,
          String(p.requests),
          String(p.ok),
          String(p.notModified),
          Object.entries(p.refused)
            .map(([reason, n]) => `${reason} ${n}`)
            .join(', ') || '0',
          String(p.other),
          String(p.bytes),
          short(p.firstSeen),
          short(p.lastSeen),
        ]),
      ]),
    );
  const own = report.monitoring;
  lines.push(
    '',
    own === null
      ? `no request with the ${MONITORING_PARTNER} key (the canary and the builder's propagation check use it)`
      : `apart, the ${MONITORING_PARTNER} key (the canary and the builder's propagation check): ${own.requests} requests, ${own.ok} answered 200${
          Object.keys(own.refused).length > 0
            ? `, refused ${Object.entries(own.refused)
                .map(([reason, n]) => `${reason} ${n}`)
                .join(', ')}`
            : ''
        }, last ${short(own.lastSeen)}`,
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
  if (report.pages > 0) lines.push('', `plan pages: ${report.pages}`);
  if (report.unreadable > 0)
    lines.push(
      '',
      `unreadable records (a value no gateway writes, or a line too long): ${report.unreadable}`,
    );
  return lines.join('\n');
}

export function registerUsage(program: Command, io: CliIO): void {
  const description =
    'Per partner: requests, answers (200, 304, refusals by reason), bytes, first and last seen; then refusals that named no partner. From a catalog serve access log or, on AWS, the usage log group (Logs Insights).';
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
