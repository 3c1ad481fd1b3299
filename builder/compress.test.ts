import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { BROTLI_LARGE_FROM_BYTES, brotliSettings, compress, THREADS_FROM_BYTES } from './compress.ts';

/** JSON-like text of about `bytes` bytes, in chunks, repetitive as a catalog is. */
function catalogLike(bytes: number): Buffer[] {
  const chunks: Buffer[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i += 1) {
    const chunk = Buffer.from(
      `{"id":"00000000-0000-4000-8000-${String(i).padStart(12, '0')}","title":"Plan ${i % 97}","weeksCount":${i % 16},"level":"beginner"},`,
    );
    chunks.push(chunk);
    size += chunk.length;
  }
  return chunks;
}

describe('compressing the variants', () => {
  it('gives objects under 1 MiB brotli quality 11 with the largest window, larger ones quality 10 with a 1 MiB window', () => {
    expect(brotliSettings(BROTLI_LARGE_FROM_BYTES - 1)).toEqual({ quality: 11, windowBits: 24 });
    expect(brotliSettings(BROTLI_LARGE_FROM_BYTES)).toEqual({ quality: 10, windowBits: 20 });
  });

  it('compresses on worker threads variants that decode to the very bytes, answered in the order asked', async () => {
    const large = catalogLike(BROTLI_LARGE_FROM_BYTES + 1000);
    const small = catalogLike(2000);
    const size = (chunks: Buffer[]) => Buffer.concat(chunks).length;
    const jobs = [
      { encoding: 'gzip' as const, chunks: small, size: size(small) },
      { encoding: 'br' as const, chunks: large, size: size(large) },
      { encoding: 'br' as const, chunks: small, size: size(small) },
      { encoding: 'gzip' as const, chunks: large, size: size(large) },
    ];
    const { outputs, stats } = await compress(jobs);
    // One thread per CPU, at most one per job.
    expect(stats.threads).toBe(Math.min(availableParallelism(), jobs.length));
    expect(gunzipSync(outputs[0] as Buffer).equals(Buffer.concat(small))).toBe(true);
    expect(brotliDecompressSync(outputs[1] as Buffer).equals(Buffer.concat(large))).toBe(true);
    expect(brotliDecompressSync(outputs[2] as Buffer).equals(Buffer.concat(small))).toBe(true);
    expect(gunzipSync(outputs[3] as Buffer).equals(Buffer.concat(large))).toBe(true);
  });

  it('compresses a small build on libuv’s pool, starting no thread', async () => {
    const small = catalogLike(5000);
    const { outputs, stats } = await compress([
      { encoding: 'br', chunks: small, size: Buffer.concat(small).length },
    ]);
    expect(stats.threads).toBe(0);
    expect(brotliDecompressSync(outputs[0] as Buffer).equals(Buffer.concat(small))).toBe(true);
  });

  // A thread that ends without an error and without answering (stopped from outside, or its code returned) is
  // an error at once, not a build that waits forever for its answer. A limit only stops a build that hangs: a
  // correct one rejects as soon as the thread has ended.
  it('fails the build, naming the exit, when a thread ends without answering', {
    timeout: 60_000,
  }, async () => {
    const large = catalogLike(THREADS_FROM_BYTES);
    const post = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker) {
      void this.terminate();
    });
    try {
      await expect(
        compress([{ encoding: 'gzip', chunks: large, size: Buffer.concat(large).length }]),
      ).rejects.toThrow(/^a compression thread ended \(exit code \d+\) before it answered$/);
      expect(post).toHaveBeenCalledTimes(1);
    } finally {
      post.mockRestore();
    }
  });
});
