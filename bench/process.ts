/**
 * A benchmark's child process: `node` with bench/rss.mjs preloaded, its output collected, its peak RSS and CPU
 * time read back from the file rss.mjs writes at exit. For a benchmark whose figures are another process's.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../testing/cli.ts';

/** What a measured process did: its exit code and output, its wall time, peak RSS and CPU time. */
export interface MeasuredProcess {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly wallMs: number;
  readonly rssBytes: number;
  readonly cpuMs: number;
  readonly userMs: number;
  readonly systemMs: number;
}

/** Runs `node …args` in `cwd` with exactly `env` (and `PATH`), its usage written to `usageFile`, then removed. */
export async function measuredProcess(
  args: readonly string[],
  options: {
    readonly env: Readonly<Record<string, string>>;
    readonly cwd: string;
    readonly usageFile: string;
  },
): Promise<MeasuredProcess> {
  const started = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (done, fail) => {
      const child = spawn(process.execPath, ['--import', join(ROOT, 'bench/rss.mjs'), ...args], {
        cwd: options.cwd,
        env: { PATH: process.env.PATH ?? '', ...options.env, BENCH_RSS_FILE: options.usageFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.stderr.on('data', (chunk) => {
        err += chunk;
      });
      child.on('error', fail);
      child.on('close', (exit) => done({ code: exit, stdout: out, stderr: err }));
    },
  );
  const wallMs = performance.now() - started;
  const usage = JSON.parse(await readFile(options.usageFile, 'utf8')) as {
    maxRssBytes: number;
    userMs: number;
    systemMs: number;
  };
  await rm(options.usageFile, { force: true });
  const { maxRssBytes: rssBytes, userMs, systemMs } = usage;
  return { code, stdout, stderr, wallMs, rssBytes, cpuMs: userMs + systemMs, userMs, systemMs };
}
