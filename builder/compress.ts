/**
 * The brotli and gzip variants of a build's served objects (docs/decisions.md#build-cost), on one worker thread
 * per CPU (a Lambda with more memory has more), leaving libuv's small pool to the writes; small inputs go to
 * libuv's pool, where starting threads would cost more than it saves.
 */
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { brotliCompress, constants, gzip } from 'node:zlib';

/**
 * From this size, brotli quality 10 with a 1 MiB window instead of 11 with the largest: a third of the CPU, a
 * sixth of the memory, within 3% of the size (`npm run bench:wire`; docs/decisions.md#build-cost).
 */
export const BROTLI_LARGE_FROM_BYTES = 1024 * 1024;
const LARGE_WINDOW_BITS = 20;

/** Inputs smaller than this in all are compressed without worker threads. */
export const THREADS_FROM_BYTES = 512 * 1024;

/** The brotli quality and window (bits) of an object of `size` bytes. */
export function brotliSettings(size: number): { readonly quality: number; readonly windowBits: number } {
  return size >= BROTLI_LARGE_FROM_BYTES
    ? { quality: 10, windowBits: LARGE_WINDOW_BITS }
    : { quality: constants.BROTLI_MAX_QUALITY, windowBits: constants.BROTLI_MAX_WINDOW_BITS };
}

/** The compression policy, as a build's inputs record it: a change of policy makes a new build. */
export const ENCODING_POLICY = `br:q11w${constants.BROTLI_MAX_WINDOW_BITS},q10w${LARGE_WINDOW_BITS}>=${BROTLI_LARGE_FROM_BYTES};gzip:9`;

function brotliParams(size: number): Record<number, number> {
  const { quality, windowBits } = brotliSettings(size);
  return {
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_QUALITY]: quality,
    [constants.BROTLI_PARAM_LGWIN]: windowBits,
    [constants.BROTLI_PARAM_SIZE_HINT]: size,
  };
}

const GZIP_LEVEL = 9;

/** One compression to make: the object's bytes (in chunks) and the encoding. */
export interface CompressionJob {
  readonly encoding: 'br' | 'gzip';
  readonly chunks: readonly Buffer[];
  readonly size: number;
}

/** Threads used (0: libuv's pool), and the jobs' time summed over them (about their CPU time). */
export interface CompressionStats {
  readonly threads: number;
  readonly busyMs: number;
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** One job on libuv's pool. */
async function compressHere(job: CompressionJob): Promise<Buffer> {
  const input = job.chunks.length === 1 && job.chunks[0] ? job.chunks[0] : Buffer.concat(job.chunks);
  return job.encoding === 'br'
    ? brotliAsync(input, { params: brotliParams(job.size) })
    : gzipAsync(input, { level: GZIP_LEVEL });
}

/** The worker's code, evaluated as a script: the sources and both bundles have no worker file to point at. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const zlib = require('node:zlib');
parentPort.on('message', (job) => {
  const started = performance.now();
  try {
    const input = job.chunks.length === 1 ? Buffer.from(job.chunks[0].buffer, job.chunks[0].byteOffset, job.chunks[0].length) : Buffer.concat(job.chunks);
    const output = job.encoding === 'br'
      ? zlib.brotliCompressSync(input, { params: job.params })
      : zlib.gzipSync(input, { level: job.level });
    parentPort.postMessage({ output, ms: performance.now() - started });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
});
`;

/** Runs the jobs on `threads` worker threads, largest first, each taking the next one when done. */
async function compressOnThreads(
  jobs: readonly CompressionJob[],
  threads: number,
): Promise<{ outputs: Buffer[]; stats: CompressionStats }> {
  const order = jobs.map((_, index) => index).sort((a, b) => cost(jobs[b]) - cost(jobs[a]));
  const outputs = new Array<Buffer>(jobs.length);
  const count = Math.max(1, Math.min(threads, jobs.length));
  const workers = Array.from({ length: count }, () => new Worker(WORKER_SOURCE, { eval: true }));
  let busyMs = 0;
  let next = 0;
  const work = async (worker: Worker) => {
    // A thread ending before it answers, even between jobs, fails the build; its exit once done does not.
    const ended = once(worker, 'exit').then(([code]) => {
      throw new Error(`a compression thread ended (exit code ${code}) before it answered`);
    });
    ended.catch(() => {});
    while (next < order.length) {
      const index = order[next++] as number;
      const job = jobs[index] as CompressionJob;
      const params = brotliParams(job.size);
      worker.postMessage({ encoding: job.encoding, chunks: job.chunks, params, level: GZIP_LEVEL });
      const [answer] = (await Promise.race([once(worker, 'message'), ended])) as [
        { output?: Uint8Array; error?: string; ms: number },
      ];
      if (answer.error !== undefined || !answer.output)
        throw new Error(`compressing a build object failed: ${answer.error ?? 'no output'}`);
      outputs[index] = Buffer.from(answer.output.buffer, answer.output.byteOffset, answer.output.byteLength);
      busyMs += answer.ms;
    }
  };
  try {
    await Promise.all(workers.map(work));
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return { outputs, stats: { threads: count, busyMs } };
}

/** How long a job takes, roughly, to order them largest first (brotli costs far more than gzip). */
function cost(job: CompressionJob | undefined): number {
  if (!job) return 0;
  return job.encoding === 'br' ? job.size * (brotliSettings(job.size).quality === 11 ? 25 : 8) : job.size;
}

/**
 * Compresses every job, on one worker thread per CPU, or on libuv's pool under 512 KB in all; the answers
 * are in the order of the jobs.
 */
export async function compress(
  jobs: readonly CompressionJob[],
): Promise<{ outputs: Buffer[]; stats: CompressionStats }> {
  const total = jobs.reduce((sum, job) => sum + job.size, 0);
  if (total >= THREADS_FROM_BYTES) return compressOnThreads(jobs, availableParallelism());
  const started = performance.now();
  const outputs = await Promise.all(jobs.map(compressHere));
  return { outputs, stats: { threads: 0, busyMs: performance.now() - started } };
}
