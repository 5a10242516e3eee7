import { readdirSync, readlinkSync } from 'node:fs';
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

/**
 * Lowers to BACKGROUND_NICE every thread of the process but the calling one (Linux only), for the event loop's
 * process to call at start, before it starts threads of its own: what exists then is V8's platform workers (garbage
 * collection and compilation helpers for every isolate of the process), its delayed-task scheduler, Node's signal
 * thread and libuv's pool. With the write side on threads of its own, most of their work is for those threads: in one
 * 6.8 s crawl with the pipeline thread they took 2.5 s of CPU at nice 0, against 3.9 s for the parse thread and 0.6 s
 * for the event loop, and read p99 under crawl fell from 8.0 to 6.1 ms once they were lowered. They help the event
 * loop's own collections too, which may then wait a little for a core; that is why only a process whose event loop
 * holds little does this. A thread started later keeps the nice value of the thread that starts it. Returns how many
 * threads it lowered; a sandbox that refuses leaves them as they were.
 */
export const lowerHelperThreads = (): number => {
  if (process.platform !== 'linux') return 0;
  let lowered = 0;
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  const self = selfTid();
  for (const task of tasks) {
    const tid = Number(task);
    if (tid === self) continue;
    try {
      setPriority(tid, BACKGROUND_NICE);
      lowered++;
    } catch {
      // refused, or the thread has ended
    }
  }
  return lowered;
};

/** the calling thread's id: /proc/thread-self names it (`<pid>/task/<tid>`) */
const selfTid = (): number => {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return process.pid;
  }
};
