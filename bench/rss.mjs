// Preloaded (node --import) into a benchmarked process: on exit, writes its peak RSS in bytes to
// $BENCH_RSS_FILE, so the benchmark can read the child's peak memory without an external tool.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.BENCH_RSS_FILE)
    writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS * 1024));
});
