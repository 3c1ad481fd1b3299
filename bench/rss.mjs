// Preloaded (node --import) into a benchmarked process: on exit, writes its peak RSS (bytes) and its CPU time
// (user and system, milliseconds, every thread of the process) to $BENCH_RSS_FILE as JSON, so the benchmark
// reads the child's figures without an external tool.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (!process.env.BENCH_RSS_FILE) return;
  const usage = process.resourceUsage();
  writeFileSync(
    process.env.BENCH_RSS_FILE,
    JSON.stringify({
      maxRssBytes: usage.maxRSS * 1024,
      userMs: usage.userCPUTime / 1000,
      systemMs: usage.systemCPUTime / 1000,
    }),
  );
});
