/** `catalog serve` and `catalog start`: the local stack (app/local.ts) on 127.0.0.1. */
import type { Command } from 'commander';
import type { RunningEdge } from '../../app/local.ts';
import { addSettings, parseCommand } from '../options.ts';
import { note } from './build.ts';

const logLine = (entry: object) => process.stderr.write(`${JSON.stringify(entry)}\n`);

/** SIGINT and SIGTERM stop the edge gracefully, then the process. */
function stopOnSignals(edge: RunningEdge): void {
  const stop = (signal: string) => {
    logLine({ time: new Date().toISOString(), message: `${signal}: shutting down` });
    edge.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description(
      'Run the local edge: the built CloudFront Functions in front of an origin directory or bucket.',
    );
  addSettings(command, 'serve').action(async () => {
    const settings = parseCommand(command, 'serve');
    const { serveLocal } = await import('../../app/local.ts');
    const edge = await serveLocal(settings, logLine);
    note(`catalog serve: listening on ${edge.url}`);
    stopOnSignals(edge);
  });
}

export function registerStart(program: Command): void {
  const command = program
    .command('start')
    .description(
      'The local stack (npm start): build from the fixtures, make sure a dev key exists, serve on 127.0.0.1:8787.',
    );
  addSettings(command, 'start').action(async () => {
    const started = performance.now();
    const { port, host } = parseCommand(command, 'start');
    const local = await import('../../app/local.ts');
    const { edge, key, summary, samplePage } = await local.startLocalStack({
      host,
      port,
      now: new Date(),
      report: note,
      log: logLine,
    });
    note(
      summary.result === 'published'
        ? `published build ${summary.buildId} (${summary.plans} plans) to ${local.LOCAL_STACK.origin} in ${Math.round(performance.now() - started)} ms`
        : `build ${summary.previousBuildId} stays live (${summary.reason ?? summary.result})`,
    );
    note(
      [
        '',
        `Local stack ready on ${edge.url} (Ctrl-C stops it). Access log lines follow on stderr.`,
        `  dev key (partner "${local.DEV_PARTNER}", local only, saved in ${local.DEV_KEY_FILE}): ${key}`,
        `  curl -i -H 'X-Api-Key: ${key}' '${edge.url}/api/plans?discipline=running'`,
        `  curl -i '${edge.url}/openapi.yaml'`,
        ...(samplePage ? [`  a plan's page, for people (no key): ${edge.url}${samplePage}`] : []),
        '',
      ].join('\n'),
    );
    stopOnSignals(edge);
  });
}
