import { setPriority } from 'node:os';

/**
 * The nice value of the crawler's background threads (the parse pool, the raw HTML hash): 10 of 19, below the event
 * loop that answers HTTP, still above batch work a host may run at 19. On Linux a nice value is a thread's own
 * (setpriority with pid 0 names the calling thread), so each thread lowers only itself; elsewhere it would be the
 * process's, so it is done only on Linux.
 */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread to BACKGROUND_NICE (Linux only, see above); a sandbox that refuses leaves it at normal
 * priority, where everything still works.
 */
export const runInBackground = (): void => {
  if (process.platform !== 'linux') return;
  try {
    setPriority(BACKGROUND_NICE);
  } catch {
    // refused: the thread keeps the normal priority
  }
};
