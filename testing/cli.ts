/**
 * Test helpers: run the `catalog` command (in this process, or as its own), make scratch directories, and list the
 * repository's own files.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import httpModule from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { decodeBody } from '../gateway/judge.ts';

/** A store file with no entry, in the KeyValueStore import format. */
export const EMPTY_STORE = '{"data":[]}\n';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CATALOG_BIN = join(ROOT, 'bin', 'catalog.js');

/** Folders of the repository that hold nothing of ours: dependencies, Git's, and what builds and runs write. */
const NOT_OURS = new Set(['node_modules', '.git', 'dist', '.catalog', 'cdk.out', 'test-output']);

/**
 * Every file of the repository, relative to its root, sorted; {@link NOT_OURS} is not entered (a walk of
 * node_modules alone visits some 40,000 files).
 */
export async function repositoryFiles(dir = ROOT): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!NOT_OURS.has(entry.name)) found.push(...(await repositoryFiles(path)));
    } else if (entry.isFile()) found.push(relative(ROOT, path));
  }
  return found.sort();
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment variables of the `catalog` command cleared for tests, so the developer's shell cannot leak in. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('CATALOG_') && !name.startsWith('AWS_')) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * A command's stderr without its first line naming what it acts on (`publish acts on …`, cli/io.ts sayTarget)
 * and the warning that may follow it: for a test of something else that reads the rest exactly.
 */
export function withoutTarget(stderr: string): string {
  return stderr.replace(
    /^[a-z]+(?: [a-z]+)? acts on [^\n]*\n(?:catalog: warning: AWS settings are in the environment[^\n]*\n)?/,
    '',
  );
}

/** What a child process writes on stdout and stderr, as text, collected as it comes. */
export function outputOf(child: { readonly stdout: Readable; readonly stderr: Readable }): {
  stdout(): string;
  stderr(): string;
} {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

/** Runs a program to completion with exactly the given environment, collecting its output. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; input?: string },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const output = outputOf(child);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: output.stdout(), stderr: output.stderr() }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs `catalog …args` as its own process (`bin/catalog.js`) to completion, in `cwd` (default: the repository root). */
export function runCatalogProcess(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string } = {},
): Promise<CliResult> {
  return runProcess(process.execPath, [CATALOG_BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv(options.env ?? {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
}

/** Runs the `catalog` program in this process (registered by the command line's test setup). */
export type InProcessCatalog = (
  argv: readonly string[],
  options: {
    readonly env: NodeJS.ProcessEnv;
    readonly input?: string;
    readonly checkOnly?: boolean;
    /** Runs as on a terminal (stdout and stderr a TTY, cli/io.ts processIO): long commands show their progress. */
    readonly terminal?: boolean;
    /**
     * Keeps a long-running command (serve) running once its action has returned, as its process would, and
     * hands each write to stderr over at once: the run's `stop` stops it as SIGTERM stops the process.
     */
    readonly serving?: { readonly stderr: (text: string) => void };
  },
) => Promise<CliResult & { readonly code: number; readonly stop?: () => Promise<number> }>;

let inProcessCatalog: InProcessCatalog | undefined;

/** Called by cli/vitest.setup.ts: {@link runCatalog} and {@link startServe} then run commands in-process. */
export function useInProcessCatalog(run: InProcessCatalog): void {
  inProcessCatalog = run;
}

/** The environment of the in-process runs under way, and how many there are. */
let inProcess: { env: NodeJS.ProcessEnv; saved: NodeJS.ProcessEnv; runs: number } | undefined;

/**
 * Runs `catalog …args` to completion — in this process when the test setup registered the command line (the
 * same program, exit code and output as the `catalog` process, with its own stdout, stderr, stdin, environment
 * and working directory), else as a process. With `checkOnly` the real program parses the arguments and
 * settings with the command's action replaced (cli/vitest.setup.ts, in-process only); with `terminal` it runs as
 * on a terminal (in-process only; its stderr as the terminal shows it, and a process under `script` proves that
 * a terminal is seen as one: cli/commands/progress.test.ts). While an in-process run
 * goes on, `process.env` is its environment too, because the AWS SDK reads credentials, region and endpoints
 * from there, and the process's working directory is `cwd` (when given), because the command resolves its paths
 * and finds its checkout from there; runs at the same time must share one environment and one directory. A test
 * of the process itself (its exit, signals, stdio) runs it as a process ({@link runCatalogProcess}).
 */
export async function runCatalog(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    input?: string;
    checkOnly?: boolean;
    terminal?: boolean;
  } = {},
): Promise<CliResult> {
  const run = inProcessCatalog;
  if (options.checkOnly && (!run || options.cwd !== undefined))
    throw new Error('runCatalog: checkOnly needs the in-process command line (cli/vitest.setup.ts), no cwd');
  if (options.terminal && !run)
    throw new Error('runCatalog: terminal needs the in-process command line (cli/vitest.setup.ts)');
  if (!run) return runCatalogProcess(args, options);
  const leave = enterDirectory(options.cwd);
  try {
    return await inProcessRun(options.env, (env) =>
      run(args, {
        env,
        ...(options.input !== undefined ? { input: options.input } : {}),
        ...(options.checkOnly ? { checkOnly: true } : {}),
        ...(options.terminal ? { terminal: true } : {}),
      }),
    );
  } finally {
    leave();
  }
}

/**
 * Runs `work` with `process.env` set to the test environment made of `extra` (runCatalog says why), restoring
 * it when the last in-process run under way ends.
 */
async function inProcessRun<T>(
  extra: Record<string, string> | undefined,
  work: (env: NodeJS.ProcessEnv) => Promise<T>,
): Promise<T> {
  const env = cleanEnv({ AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...(extra ?? {}) });
  if (inProcess && JSON.stringify(inProcess.env) !== JSON.stringify(env))
    throw new Error(
      'runCatalog: in-process runs at the same time need the same environment (use runCatalogProcess)',
    );
  inProcess ??= { env, saved: process.env, runs: 0 };
  inProcess.runs += 1;
  process.env = inProcess.env;
  try {
    return await work(env);
  } finally {
    inProcess.runs -= 1;
    if (inProcess.runs === 0) {
      process.env = inProcess.saved;
      inProcess = undefined;
    }
  }
}

/** The working directory in-process runs hold (one at a time), the test's own before it, and how many hold it. */
let held: { dir: string; saved: string; holders: number } | undefined;

/**
 * Makes `cwd` (when given) the process's working directory until the returned function is called, for an
 * in-process run: a one-shot run holds it while it goes on, a long-running one until it stops. Runs that hold a
 * directory at the same time must hold the same one; the test's own comes back when the last lets go.
 */
function enterDirectory(cwd: string | undefined): () => void {
  if (cwd === undefined) return () => {};
  const dir = resolve(cwd);
  if (held && held.dir !== dir)
    throw new Error(
      `runCatalog: in-process runs at the same time need the same directory, not ${dir} and ${held.dir} (use runCatalogProcess)`,
    );
  held ??= { dir, saved: process.cwd(), holders: 0 };
  held.holders += 1;
  if (process.cwd() !== dir) process.chdir(dir);
  let left = false;
  return () => {
    if (left || !held) return;
    left = true;
    held.holders -= 1;
    if (held.holders === 0) {
      if (process.cwd() !== held.saved) process.chdir(held.saved);
      held = undefined;
    }
  };
}

/** Creates a scratch directory and returns it with a function that removes it. */
export async function scratchDir(
  prefix = 'catalog-test-',
): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A running `catalog serve` (its own process, or in this one: testing/cli.ts startServe). */
export interface ServeProcess {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Every stderr line so far (access log lines are JSON). */
  readonly lines: string[];
  /** The id of the process that serves (to read its memory, or signal it): this one when in-process. */
  readonly pid: number;
  /** Stops the server as SIGTERM does and resolves with its exit code. */
  stop(): Promise<number | null>;
}

let logMarks = 0;

/**
 * Where the access-log lines of the requests a test sends next begin in `serve.lines`. The server's stderr
 * reaches the test after its answers, so the last lines of earlier requests may still be on their way: a
 * request for a path of its own (a 404) is logged after them (one process writes its log in order), and the
 * lines after its line are the test's. Resolves once that line has arrived.
 */
export async function accessLogStart(serve: Pick<ServeProcess, 'url' | 'lines'>): Promise<number> {
  logMarks += 1;
  const mark = `"path":"/log-mark-${process.pid}-${logMarks}"`;
  await httpRequest(serve.url, { method: 'GET', target: `/log-mark-${process.pid}-${logMarks}` });
  for (let waited = 0; waited < 5_000; waited += 10) {
    const at = serve.lines.findIndex((line) => line.includes(mark));
    if (at >= 0) return at + 1;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the access log of ${serve.url} never logged the mark request`);
}

/**
 * Starts `catalog serve …args --port 0` and resolves once it listens ({@link startCatalog}: in this process
 * unless `process`).
 */
export function startServe(
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number; process?: boolean } = {},
): Promise<ServeProcess> {
  return startCatalog(['serve', '--port', '0', ...args], {
    ...options,
    ready: /catalog serve: listening on (http:\/\/\S+)/,
  });
}

/**
 * Spawns `catalog …args` as its own process (stdin and stdout ignored, stderr piped), in `cwd` (default: the
 * repository root), with only the given `CATALOG_*` variables: for a test that signals it (a `kill -9`).
 */
export function spawnCatalog(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): ChildProcessByStdio<null, null, Readable> {
  return spawn(process.execPath, [CATALOG_BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv(options.env ?? {}),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/**
 * Starts a long-running `catalog …args` (serve, start, proxy) and resolves once a stderr line matches `ready`,
 * whose first group is the URL. In this process when the test setup registered the command line (the same
 * program and log, stopped as SIGTERM stops it, without a process start of about half a CPU second; in `cwd`, when
 * given, until it stops: runCatalog says how); else — or with `process`, for a test of the process itself — as
 * its own process, which `timeoutMs` bounds. Rejects (and stops it) if it ends before it is ready.
 */
export async function startCatalog(
  args: readonly string[],
  options: {
    ready: RegExp;
    env?: Record<string, string>;
    cwd?: string;
    timeoutMs?: number;
    process?: boolean;
  },
): Promise<ServeProcess> {
  const run = inProcessCatalog;
  if (!run || options.process) return startCatalogProcess(args, options);
  const lines: string[] = [];
  let buffered = '';
  const stderr = (text: string) => {
    const parts = (buffered + text).split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  };
  const leave = enterDirectory(options.cwd);
  const stop = async (started: { code: number; stop?: () => Promise<number> }) => {
    try {
      return (await started.stop?.()) ?? started.code;
    } finally {
      leave();
    }
  };
  let started: Awaited<ReturnType<InProcessCatalog>>;
  try {
    started = await inProcessRun(options.env, (env) => run(args, { env, serving: { stderr } }));
  } catch (error) {
    leave();
    throw error;
  }
  const url = lines.map((line) => options.ready.exec(line)?.[1]).find((found) => found !== undefined);
  if (url === undefined) {
    await stop(started);
    throw new Error(`catalog ${args[0]} exited with ${started.code}: ${[...lines, buffered].join('\n')}`);
  }
  return { url, lines, pid: process.pid, stop: () => stop(started) };
}

/** {@link startCatalog} as its own process. */
function startCatalogProcess(
  args: readonly string[],
  options: { ready: RegExp; env?: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<ServeProcess> {
  const child = spawnCatalog(args, options);
  const lines: string[] = [];
  let buffered = '';
  // Never outlive the test process, whatever happens to the test that started it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      process.off('exit', killOnExit);
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`catalog ${args[0]} did not start: ${lines.join('\n')}`));
    }, options.timeoutMs ?? 300_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        const match = options.ready.exec(line);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve({
            url: match[1],
            lines,
            pid: child.pid ?? 0,
            stop: async () => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              return exited;
            },
          });
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`catalog ${args[0]} exited with ${code}: ${lines.join('\n')}${buffered}`));
    });
  });
}

/** An HTTP answer as a client sees it: header names lowercase, repeated headers joined with ", ". */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/**
 * Sends one request with `node:http`, the target exactly as given (raw path and query) and the headers in
 * the given order and case (repeats allowed). No redirects, no decompression.
 */
export function httpRequest(
  baseUrl: string,
  request: {
    method: string;
    target: string;
    headers?: readonly (readonly [string, string])[];
    agent?: import('node:http').Agent;
  },
): Promise<HttpAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpModule.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.target,
        // With raw (array) headers Node adds no Host header of its own; and like curl, a bodiless POST/PUT/PATCH
        // says Content-Length: 0 rather than Node's default chunked encoding.
        headers: [
          ['Host', url.host] as const,
          ...(['POST', 'PUT', 'PATCH'].includes(request.method) ? [['Content-Length', '0'] as const] : []),
          ...(request.headers ?? []),
        ].flat() as string[],
        ...(request.agent ? { agent: request.agent } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The body of an answer as sent before its `Content-Encoding` (br, gzip, or none). */
export const decodedBody = decodeBody;

/**
 * The `generatedAt` of every catalog (all, running, strength) in every encoding (br, gzip, identity) an edge
 * serves to `key` now: one value when the live build is one build.
 */
export async function servedGeneratedAt(baseUrl: string, key: string): Promise<Set<string>> {
  const seen = new Set<string>();
  for (const target of ['/api/plans', '/api/plans?discipline=running', '/api/plans?discipline=strength'])
    for (const encoding of ['br', 'gzip', 'identity']) {
      const answer = await httpRequest(baseUrl, {
        method: 'GET',
        target,
        headers: [
          ['X-Api-Key', key],
          ['Accept-Encoding', encoding],
        ],
      });
      if (answer.status !== 200) throw new Error(`GET ${target} (${encoding}) answered ${answer.status}`);
      seen.add((JSON.parse(decodedBody(answer).toString('utf8')) as { generatedAt: string }).generatedAt);
    }
  return seen;
}

/** Makes an empty store file (and its folder) unless one is there: a deployment's store exists before its first publish. */
export function makeStore(file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, EMPTY_STORE, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}

/**
 * The environment of a `catalog` child that publishes (and lists, rolls back, checks) on a local origin and store
 * file in `dir` (`dir/origin`, `dir/kvs.json`): the fixtures as source unless `extra` names another, and an
 * https base URL, as for an AWS target (a local one also takes http:// on a loopback host). The store file is
 * made (empty) when it is not there, as a deployment's store exists before its first publish.
 */
export function localTargetEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  makeStore(join(dir, 'kvs.json'));
  return {
    CATALOG_ORIGIN: join(dir, 'origin'),
    CATALOG_STORE: join(dir, 'kvs.json'),
    CATALOG_SOURCE: join(ROOT, 'fixtures', 'plans.json'),
    CATALOG_BASE_URL: 'https://plans.example.com',
    ...extra,
  };
}
