/**
 * The global setup of the projects that read shared syntheses (vitest.config.ts: `infra`, and `docs` for
 * docs/commands.test.ts): when the run starts, it starts the syntheses the project reads in processes of their
 * own, beside the tests, and does not wait for them. Each synthesis is made once per run, whichever projects
 * read it (the projects' setups run in the one main process and share one run directory):
 *
 * - `readme`: the command `npm run synth` runs (package.json), with its output directory here. No AWS
 *   credentials or configuration reach it (HOME is a scratch directory), as on a fresh machine: the default
 *   deployment's file gives its region. CDK's CloudFormation validation of that template is left to the other
 *   process (`--no-validation`): its rule engine takes seconds to start in each process, and the template is the
 *   same with it or without. The infra tests read it, and the docs' commands run on it as the assembly of their
 *   `-c deployment=TrainingPlanCatalog` (testing/infra/syntheses.ts, `DOC_CONTEXTS`).
 * - `infra` only: testing/infra/shared-synth.ts, the other shared configurations, in one process, validated.
 * - `docs` only: each deployment the docs have a reader declare (`DOC_SYNTHESES`), synthesized by the CDK CLI
 *   as `npm run cdk -- synth --quiet -c deployment=NAME` runs it, in a scratch checkout that holds its file,
 *   without credentials and (as `readme`) without CDK's validation; cdk.json's app with the V8 flags of the
 *   other synthesizing processes (`SYNTH_V8_FLAGS`).
 *
 * Each writes `<name>.done.json` (exit code and output) when it ends; the last project's teardown stops what
 * still runs and removes the directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { scratchCheckout } from './checkout.ts';
import { DOC_DEPLOYMENTS, DOC_SYNTHESES, SHARED, SYNTH_V8_FLAGS, type SynthDone } from './syntheses.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** infra/cdk.json's app: the command the CDK CLI runs (through a shell, in infra/) to synthesize. */
const CDK_APP = (JSON.parse(readFileSync(join(ROOT, 'infra', 'cdk.json'), 'utf8')) as { app: string }).app;

/** `npm run synth`'s command, from package.json (the README's command). */
export function synthCommand(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { synth: string } })
    .scripts.synth;
}

/** The run's syntheses, shared by the projects' setups (one main process; each project loads this module anew). */
interface RunSyntheses {
  readonly dir: string;
  readonly children: ChildProcess[];
  /** The names started so far. */
  readonly started: Set<string>;
  /** Teardowns still to come: the last one stops and removes. */
  users: number;
  stopped: boolean;
  readonly cleanups: (() => Promise<void>)[];
}

const RUN = Symbol.for('catalog.infra.syntheses');

export default function setup(project: TestProject): () => Promise<void> {
  const holder = globalThis as { [RUN]?: RunSyntheses };
  if (!holder[RUN]) {
    const dir = join(tmpdir(), `catalog-infra-${process.pid}`);
    mkdirSync(join(dir, 'home'), { recursive: true });
    holder[RUN] = { dir, children: [], started: new Set(), users: 0, stopped: false, cleanups: [] };
  }
  const run = holder[RUN];
  run.users += 1;
  const { dir } = run;
  project.provide('infraSynthDir', dir);

  /** Runs a command in a process group of its own; when it ends, each name it has not written gets its outcome. */
  const start = (
    names: readonly string[],
    command: string,
    args: string[],
    env: Record<string, string>,
    cwd = ROOT,
  ) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    run.children.push(child);
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('close', (code) => {
      if (run.stopped) return;
      for (const name of names) {
        const file = join(dir, `${name}.done.json`);
        if (existsSync(file)) continue;
        // Written whole, then renamed: a test never reads half of it.
        writeFileSync(`${file}.tmp`, JSON.stringify({ code: code ?? 1, output } satisfies SynthDone));
        renameSync(`${file}.tmp`, file);
      }
    });
  };
  /** Starts what `names` need unless this run has already. */
  const once = (name: string, begin: () => void) => {
    if (run.started.has(name)) return;
    run.started.add(name);
    begin();
  };
  const fail = (name: string, error: unknown) => {
    writeFileSync(
      join(dir, `${name}.done.json`),
      JSON.stringify({ code: 1, output: String((error as Error).stack ?? error) } satisfies SynthDone),
    );
  };

  const path = [join(ROOT, 'node_modules/.bin'), process.env.PATH ?? ''].join(delimiter);
  /** No AWS configuration: HOME is scratch, the instance metadata service is never asked. */
  const offline = { PATH: path, HOME: join(dir, 'home'), npm_config_update_notifier: 'false' };
  once('readme', () =>
    start(['readme'], 'sh', ['-c', `${synthCommand()} --no-validation --output "$OUT"`], {
      ...offline,
      OUT: join(dir, 'readme'),
    }),
  );
  if (project.name === 'infra')
    once('shared', () =>
      start(
        Object.keys(SHARED),
        // tsx as Node's loader, not its command: the command is one more Node process, started to start this one.
        process.execPath,
        [...SYNTH_V8_FLAGS, '--import', 'tsx', 'testing/infra/shared-synth.ts', dir],
        { ...offline, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      ),
    );
  if (project.name === 'docs')
    for (const [name, deployment] of Object.entries(DOC_SYNTHESES))
      once(name, () => {
        scratchCheckout(DOC_DEPLOYMENTS).then(
          (checkout) => {
            run.cleanups.push(checkout.remove);
            if (run.stopped) return;
            // package.json's `cdk` script: the pinned CLI in infra/, telemetry off.
            start(
              [name],
              join(ROOT, 'node_modules', '.bin', 'cdk'),
              [
                'synth',
                '--quiet',
                '-c',
                `deployment=${deployment}`,
                '--no-validation',
                '--output',
                join(dir, name),
                // cdk.json's app, with the V8 flags of the synthesizing processes: the same assembly, less CPU.
                '--app',
                CDK_APP.replace(/^node /, `node ${SYNTH_V8_FLAGS.join(' ')} `),
              ],
              {
                ...offline,
                CDK_DISABLE_CLI_TELEMETRY: 'true',
                AWS_EC2_METADATA_DISABLED: 'true',
                AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
              },
              join(checkout.dir, 'infra'),
            );
          },
          (error) => fail(name, error),
        );
      });

  return async () => {
    run.users -= 1;
    if (run.users > 0) return;
    run.stopped = true;
    for (const child of run.children) if (child.exitCode === null && child.pid) process.kill(-child.pid);
    for (const cleanup of run.cleanups) await cleanup();
    rmSync(dir, { recursive: true, force: true });
    delete holder[RUN];
  };
}
