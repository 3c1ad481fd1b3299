/**
 * `npm run cdk -- …`: the pinned CDK CLI (node_modules/.bin/cdk), run in infra/ with the command it runs named to
 * the app in `CATALOG_CDK_COMMAND`, so that the app refuses at once a command that acts on an AWS account when
 * the CLI found no credentials, before it bundles anything (app.ts, config.ts `accountProblem`). The rest is the
 * CLI's own: its arguments, output and exit code.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { cdkCommand } from './config.ts';

const args = process.argv.slice(2);
const child = spawn('cdk', args, {
  stdio: 'inherit',
  env: { ...process.env, CATALOG_CDK_COMMAND: cdkCommand(args) ?? '' },
});
// Ctrl-C reaches the CLI too (one process group): it stops, and this process with it. A SIGTERM is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.once('error', (error) => {
  process.stderr.write(`npm run cdk: the CDK CLI did not start (${error.message}); run npm ci first\n`);
  process.exitCode = 1;
});
child.once('exit', (code, signal) => {
  process.exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
});
