/** `catalog proxy`: the reference partner proxy (partner/proxy.ts) in front of a catalog service. */
import type { Command } from 'commander';
import { addSettings, parseCommand } from '../options.ts';
import { note } from './build.ts';

const logLine = (entry: object) => process.stderr.write(`${JSON.stringify(entry)}\n`);

export function registerProxy(program: Command): void {
  const command = program
    .command('proxy')
    .description(
      "Run the partner proxy: serves GET /plans.json to a partner's frontend from a cached copy of the catalog, and GET /healthz.",
    );
  addSettings(command, 'proxy').action(async () => {
    const settings = parseCommand(command, 'proxy');
    const { startProxy } = await import('../../partner/proxy.ts');
    const proxy = await startProxy({
      upstream: settings.upstream,
      key: settings.partnerKey,
      port: settings.proxyPort,
      host: settings.proxyHost,
      cacheFile: settings.cacheFile,
      log: logLine,
    });
    note(`catalog proxy: listening on ${proxy.url} (upstream ${settings.upstream})`);
    const stop = (signal: string) => {
      logLine({ time: new Date().toISOString(), message: `${signal}: shutting down` });
      proxy.close().then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
