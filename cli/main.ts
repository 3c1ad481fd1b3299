/**
 * The `catalog` command line as a process: runs the program (program.ts) on the process's arguments, streams,
 * environment and signals. Each command lives in `commands/`; its options are generated from the settings
 * (app/settings) and it loads its heavy modules only when it runs, so `catalog --help` and the local commands
 * start fast. Operations run in the application layer (app/run.ts, app/local.ts).
 */
import { processIO } from './io.ts';
import { runCli } from './program.ts';

// Node 20 is a supported runtime of this project: the AWS SDK's multi-line notice about it would break the
// one-line-reason rule of the command line. Set before any SDK module loads (they load lazily).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

process.exitCode = await runCli(process.argv.slice(2), processIO());
