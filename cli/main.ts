/**
 * The `catalog` command line. Each command lives in `commands/`; its options are generated from the settings
 * (app/settings) and it loads its heavy modules only when it runs, so `catalog --help` and the local commands
 * start fast. Operations run in the application layer (app/run.ts, app/local.ts).
 */
import { Command, CommanderError } from 'commander';
import { CatalogError } from '../contract/errors.ts';
import { registerBuild } from './commands/build.ts';
import { registerCors } from './commands/cors.ts';
import { registerKeys } from './commands/keys.ts';
import { registerProxy } from './commands/proxy.ts';
import { registerPublish } from './commands/publish.ts';
import { registerServe, registerStart } from './commands/serve.ts';
import { registerStatus } from './commands/status.ts';
import { registerVerifyFunction } from './commands/verify-function.ts';

// Node 20 is a supported runtime of this project: the AWS SDK's multi-line notice about it would break the
// one-line-reason rule of the command line. Set before any SDK module loads (they load lazily).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const program = new Command('catalog')
  .description('Build, serve and publish the training plan catalog.')
  .showHelpAfterError('(add --help for usage)')
  .exitOverride();

registerBuild(program);
registerServe(program);
registerKeys(program);
registerCors(program);
registerStart(program);
registerPublish(program);
registerVerifyFunction(program);
registerProxy(program);
registerStatus(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed its message (or the help) already.
    process.exitCode = error.exitCode;
  } else {
    const { renderMessage } = await import('../app/settings/index.ts');
    const { describeCause } = await import('../contract/errors.ts');
    const message =
      error instanceof CatalogError ? error.message : `unexpected error: ${describeCause(error)}`;
    process.stderr.write(`catalog: ${renderMessage(message, 'cli').replace(/\s*\n\s*/g, ' ')}\n`);
    if (!(error instanceof CatalogError) && process.env.CATALOG_DEBUG) console.error(error);
    process.exitCode = 1;
  }
}
