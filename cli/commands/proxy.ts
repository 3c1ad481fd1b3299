/**
 * `catalog proxy`: the reference partner proxy (partner/proxy.ts) in front of a catalog service, with its change
 * log and notify hook (partner/README.md).
 */
import type { Command } from 'commander';
import { cannotListen } from '../../app/local.ts';
import { settingRef } from '../../contract/errors.ts';
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
    const { proxyHost: host, proxyPort: port } = settings;
    const proxy = await startProxy({
      upstream: settings.upstream,
      key: settings.partnerKey,
      port,
      host,
      cacheFile: settings.cacheFile,
      changesKept: settings.changesKept,
      ...(settings.refreshSeconds === undefined ? {} : { refreshSeconds: settings.refreshSeconds }),
      ...(settings.notify === undefined ? {} : { notify: { url: settings.notify } }),
      log: logLine,
    }).catch((error: unknown) => {
      // Listening failed (the disk copy's own errors say what they are): said as the local edge says it.
      const { syscall } = error as NodeJS.ErrnoException;
      if (syscall !== 'listen' && syscall !== 'getaddrinfo') throw error;
      const inUse = `${host}:${port} is in use by another program; stop it, or pass another ${settingRef('proxyPort')} (0 picks a free one)`;
      throw cannotListen(host, port, error as NodeJS.ErrnoException, inUse, {
        host: 'proxyHost',
        port: 'proxyPort',
      });
    });
    note(`catalog proxy: listening on ${proxy.url} (upstream ${settings.upstream})`);
    stopOnSignals(io, proxy, logLine);
  });
}
