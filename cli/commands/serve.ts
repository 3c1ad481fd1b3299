/** `catalog serve` and `catalog start`: the local stack (app/local.ts) on 127.0.0.1. */
import type { Command } from 'commander';
import type { RunningEdge } from '../../app/local.ts';
import { type CliIO, noter } from '../io.ts';
import { addSettings, parseCommand } from '../options.ts';

/** One JSON log line on stderr (the access log, and what the edge says about itself). */
export function jsonLines(io: CliIO): (entry: object) => void {
  return (entry) => io.stderr(`${JSON.stringify(entry)}\n`);
}

/** A stop (SIGINT or SIGTERM in a process) shuts the edge down gracefully. */
function stopOnSignals(io: CliIO, edge: RunningEdge): void {
  io.onStop((signal) => {
    jsonLines(io)({ time: new Date().toISOString(), message: `${signal}: shutting down` });
    return edge.close();
  });
}

export function registerServe(program: Command, io: CliIO): void {
  const note = noter(io);
  const command = program
    .command('serve')
    .description(
      'Run the local edge: the built CloudFront Functions in front of an origin directory or bucket.',
    );
  addSettings(command, 'serve').action(async () => {
    const settings = parseCommand(command, 'serve', io.env);
    const { serveLocal } = await import('../../app/local.ts');
    const edge = await serveLocal(settings, jsonLines(io));
    note(`catalog serve: listening on ${edge.url}`);
    stopOnSignals(io, edge);
  });
}

export function registerStart(program: Command, io: CliIO): void {
  const note = noter(io);
  const command = program
    .command('start')
    .description(
      'The local stack (npm start): build from the fixtures, make sure a dev key exists, serve on 127.0.0.1:8787.',
    );
  addSettings(command, 'start').action(async () => {
    const started = performance.now();
    const { port, host } = parseCommand(command, 'start', io.env);
    const local = await import('../../app/local.ts');
    const { edge, key, summary, samplePage } = await local.startLocalStack({
      host,
      port,
      now: new Date(),
      report: note,
      log: jsonLines(io),
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
    stopOnSignals(io, edge);
  });
}
