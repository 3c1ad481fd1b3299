// Preloaded (node --import) into a benchmarked process: on exit, writes its peak RSS (bytes) and its CPU time
// (user and system, milliseconds, every thread of the process) to $BENCH_RSS_FILE as JSON, so the benchmark
// reads the child's figures without an external tool. The peak is this program's own (Linux: VmHWM of
// /proc/self/status): getrusage's maxRSS carries over what the parent process held when it spawned this one.
import { readFileSync, writeFileSync } from 'node:fs';

/** The peak resident set of this program in bytes: VmHWM where Linux gives it, else getrusage's maxRSS. */
function peakRssBytes(usage) {
  try {
    const hwm = /^VmHWM:\s*(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (hwm !== undefined) return Number(hwm) * 1024;
  } catch {
    // not Linux: the kernel's figure below
  }
  return usage.maxRSS * 1024;
}

process.on('exit', () => {
  if (!process.env.BENCH_RSS_FILE) return;
  const usage = process.resourceUsage();
  writeFileSync(
    process.env.BENCH_RSS_FILE,
    JSON.stringify({
      maxRssBytes: peakRssBytes(usage),
      userMs: usage.userCPUTime / 1000,
      systemMs: usage.systemCPUTime / 1000,
    }),
  );
});
