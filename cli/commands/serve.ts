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
    const [local, run] = await Promise.all([import('../../app/local.ts'), import('../../app/run.ts')]);
    await local.checkPortFree(host, port);
    const { origin, store } = local.LOCAL_STACK;
    // The fixtures go live the way production publishes: a build under builds/, then the pointer in the store.
    const target = await run.openTarget({ origin, store }, () => {
      throw new Error('the local stack needs no AWS client');
    });
    const { summary } = await run.publish(local.devPublishSettings(host, port), target, {
      now: new Date(),
      force: false,
      report: note,
    });
    note(
      summary.result === 'published'
        ? `published build ${summary.buildId} (${summary.plans} plans) to ${origin} in ${Math.round(performance.now() - started)} ms`
        : `build ${summary.previousBuildId} stays live (${summary.reason ?? summary.result})`,
    );
    const key = await local.ensureDevKey(store, new Date());
    const edge = await local.serveLocal({ origin, store, port, host }, logLine);
    note(
      [
        '',
        `Local stack ready on ${edge.url} (Ctrl-C stops it). Access log lines follow on stderr.`,
        `  dev key (partner "${local.DEV_PARTNER}", local only, saved in ${local.DEV_KEY_FILE}): ${key}`,
        `  curl -i -H 'X-Api-Key: ${key}' '${edge.url}/api/plans?discipline=running'`,
        `  curl -i '${edge.url}/openapi.yaml'`,
        '',
      ].join('\n'),
    );
    stopOnSignals(edge);
  });
}
