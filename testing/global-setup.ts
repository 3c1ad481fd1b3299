/**
 * Vitest's global setup (vitest.config.ts, vitest.system.config.ts): one scratch root for the whole run, on
 * tmpfs when the machine has one (`/dev/shm`), as `TMPDIR` for the test processes and every process they
 * start, removed at the end. The suites write thousands of small files, many with fsync (the directory
 * origin makes each object durable): on a disk shared with other work, the waits for it were the largest
 * single cost of the publish tests. The bytes and the calls are the same; only where they land differs.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const parent = process.platform === 'linux' && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const root = mkdtempSync(join(parent, 'catalog-tests-'));
  // Like /tmp: other users may use it too (embedded PostgreSQL runs as the postgres user when tests run as root).
  chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
