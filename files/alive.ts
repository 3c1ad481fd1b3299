/** Whether a process runs: the one test of a writer's or a lock holder's life on this machine. */

/** True when process `pid` exists on this host (EPERM: it exists, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
