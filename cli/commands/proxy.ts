/**
 * `catalog proxy`: the reference partner proxy (partner/proxy.ts) in front of a catalog service, with its change
 * log and notify hook (partner/README.md).
 */
import type { Command } from 'commander';
import { type CliIO, noter } from '../io.ts';
import { settingsCommand } from '../options.ts';
import { jsonLines, stopOnSignals } from './serve.ts';

export function registerProxy(program: Command, io: CliIO): void {
  const note = noter(io);
  const logLine = jsonLines(io);
  const description =
    "Run the partner proxy: serves GET /plans.json to a partner's frontend from a cached copy of the catalog, GET /changes?since=N to the partner's application (and POSTs each change set to --notify), and GET /healthz.";
  settingsCommand(program, 'proxy', description, io, async (settings) => {
    const { startProxy } = await import('../../partner/proxy.ts');
    const proxy = await startProxy({
      upstream: settings.upstream,
      key: settings.partnerKey,
      port: settings.proxyPort,
      host: settings.proxyHost,
      cacheFile: settings.cacheFile,
      changesKept: settings.changesKept,
      ...(settings.refreshSeconds === undefined ? {} : { refreshSeconds: settings.refreshSeconds }),
      ...(settings.notify === undefined ? {} : { notify: { url: settings.notify } }),
      log: logLine,
    });
    note(`catalog proxy: listening on ${proxy.url} (upstream ${settings.upstream})`);
    stopOnSignals(io, proxy, logLine);
  });
}
