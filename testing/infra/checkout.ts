/**
 * The CDK app as its operator runs it: the pinned CDK CLI (node_modules/.bin/cdk) through infra/run-cdk.ts, as
 * `npm run cdk` runs it, in `infra/` of a checkout. A scratch checkout links every entry of the repository but holds `infra/deployments/` of its own,
 * so a test declares the deployments it needs (the app reads the deployments of the checkout it runs in, found
 * from its working directory) without touching the repository's. Test support only.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ROOT, scratchDir } from '../cli.ts';

/** A deployment file's content: settings by name (app/deployments.ts). */
export type DeploymentDeclaration = Readonly<Record<string, unknown>>;

/** A checkout in a scratch directory. */
export interface ScratchCheckout {
  readonly dir: string;
  /** A folder of its own for scratch files (HOME of the CLI, its outputs). */
  readonly scratch: string;
  remove(): Promise<void>;
}

/**
 * A scratch checkout whose `infra/deployments/` holds the repository's files and `deployments` (by name; a name
 * of the repository's replaces its file). `infra/cdk.out` is its own.
 */
export async function scratchCheckout(
  deployments: Readonly<Record<string, DeploymentDeclaration>> = {},
): Promise<ScratchCheckout> {
  const scratch = await scratchDir('catalog-checkout-');
  const dir = join(scratch.dir, 'repo');
  await mkdir(join(dir, 'infra', 'deployments'), { recursive: true });
  await mkdir(join(scratch.dir, 'home'));
  for (const entry of await readdir(ROOT))
    if (!['.catalog', '.git', 'test-output', 'infra'].includes(entry))
      await symlink(join(ROOT, entry), join(dir, entry));
  for (const entry of await readdir(join(ROOT, 'infra')))
    if (!['deployments', 'cdk.out'].includes(entry))
      await symlink(join(ROOT, 'infra', entry), join(dir, 'infra', entry));
  for (const entry of await readdir(join(ROOT, 'infra', 'deployments')))
    if (!(entry.replace(/\.json$/, '') in deployments))
      await symlink(join(ROOT, 'infra', 'deployments', entry), join(dir, 'infra', 'deployments', entry));
  for (const [name, declaration] of Object.entries(deployments))
    await writeFile(
      join(dir, 'infra', 'deployments', `${name}.json`),
      `${JSON.stringify(declaration, null, 2)}\n`,
    );
  return { dir, scratch: scratch.dir, remove: scratch.remove };
}

/** What a CDK CLI run left: its exit code and output. */
export interface CdkResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `npm run cdk -- …args` as package.json's script does (infra/run-cdk.ts, which runs the pinned CLI, in
 * `infra/`, telemetry off), in the checkout, on a machine with no AWS configuration (HOME is scratch) unless
 * `env` gives some.
 */
export function runCdk(
  checkout: Pick<ScratchCheckout, 'dir' | 'scratch'>,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<CdkResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'run-cdk.ts', ...args], {
    cwd: join(checkout.dir, 'infra'),
    env: {
      PATH: [join(ROOT, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
      HOME: join(checkout.scratch, 'home'),
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      npm_config_update_notifier: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
