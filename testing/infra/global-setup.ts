/**
 * The infra project's global setup (vitest.config.ts): when the run starts, it starts the syntheses every
 * infra test file shares (testing/infra/stacks.ts, `sharedAssembly`) in processes of their own, beside the tests,
 * and does not wait for them:
 *
 * - `readme`: the command `npm run synth` runs (package.json), with its output directory here. No AWS
 *   credentials or configuration reach it (HOME is a scratch directory), as on a fresh machine: the default
 *   deployment's file gives its region. CDK's CloudFormation validation of that template is left to the other
 *   process (`--no-validation`): its rule engine takes seconds to start in each process, and the template is the
 *   same with it or without.
 * - testing/infra/shared-synth.ts: the other shared configurations, in one process, validated.
 *
 * Each writes `<name>.done.json` (exit code and output) when it ends; teardown stops what still runs and
 * removes the directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { SHARED, SYNTH_V8_FLAGS, type SynthDone } from './stacks.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** `npm run synth`'s command, from package.json (the README's command). */
export function synthCommand(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { synth: string } })
    .scripts.synth;
}

export default function setup(project: TestProject): () => void {
  const dir = join(tmpdir(), `catalog-infra-${process.pid}`);
  mkdirSync(join(dir, 'home'), { recursive: true });
  project.provide('infraSynthDir', dir);
  const children: ChildProcess[] = [];
  let stopped = false;

  /** Runs a command in a process group of its own; when it ends, each name it has not written gets its outcome. */
  const start = (names: readonly string[], command: string, args: string[], env: Record<string, string>) => {
    const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('close', (code) => {
      if (stopped) return;
      for (const name of names) {
        const file = join(dir, `${name}.done.json`);
        if (existsSync(file)) continue;
        // Written whole, then renamed: a test never reads half of it.
        writeFileSync(`${file}.tmp`, JSON.stringify({ code: code ?? 1, output } satisfies SynthDone));
        renameSync(`${file}.tmp`, file);
      }
    });
  };

  const path = [join(ROOT, 'node_modules/.bin'), process.env.PATH ?? ''].join(delimiter);
  start(['readme'], 'sh', ['-c', `${synthCommand()} --no-validation --output "$OUT"`], {
    PATH: path,
    HOME: join(dir, 'home'),
    npm_config_update_notifier: 'false',
    OUT: join(dir, 'readme'),
  });
  start(
    Object.keys(SHARED),
    // tsx as Node's loader, not its command: the command is one more Node process, started to start this one.
    process.execPath,
    [...SYNTH_V8_FLAGS, '--import', 'tsx', 'testing/infra/shared-synth.ts', dir],
    {
      PATH: path,
      HOME: join(dir, 'home'),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  );

  return () => {
    stopped = true;
    for (const child of children) if (child.exitCode === null && child.pid) process.kill(-child.pid);
    rmSync(dir, { recursive: true, force: true });
  };
}
