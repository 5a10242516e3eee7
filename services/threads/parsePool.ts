import { Piscina } from 'piscina';
import type { ParseContext } from '../../parser/index.js';
import { ownBuffer } from '../buffers.js';
import type { Config } from '../config/config.js';
import { type PageParser, type PageRead, ParseThreadError, ParseTimeoutError } from '../ports/pageParser.js';
import { threadEntry } from './boot.js';
import { faultCounter, reportThreadFault } from './threadFaults.js';

/**
 * A parse thread's heap (docs/decisions.md#the-write-side-on-a-thread-of-its-own). V8 sizes a worker like the main
 * thread: with the main thread's ceiling (GBs here) it lets the old generation grow to ~4x what survives a collection,
 * and each page's tree, promoted while it is being parsed, is garbage a moment later, so each thread sat at ~115 MB. A
 * smaller ceiling makes V8 grow the heap by a smaller factor (it scales the factor with the ceiling), and a 16 MB young
 * generation keeps the nursery small (a 1 MB Google page needs ~4 MB while parsed). The ceiling is not a guard against
 * any page: 8 MB of bare nested tags ran it out, and a worker that runs out can take the process with it (Node 20), so
 * a page is refused before it is parsed when it is over MAX_PAGE_BYTES (fetchPage.ts) or MAX_PAGE_TAGS.
 */
export const PARSE_THREAD_LIMITS = { maxOldGenerationSizeMb: 384, maxYoungGenerationSizeMb: 16 };

/**
 * Reading pages off the event loop (docs/architecture.md): decoding a page's bytes, the DOM work of parsing (~1–3 ms a page) and
 * gzipping its raw chunk all run in the pool, so the thread that answers HTTP only moves bytes. Piscina (the maintained
 * worker pool: a task queue, thread start and restart, clean shutdown) runs `parseWorker` on SERP_PARSE_THREADS threads,
 * and a page that takes longer than SERP_PARSE_TIMEOUT_MS ends its thread; a thread that dies is replaced and its
 * page fails as ParseThreadError (docs/architecture.md#when-a-thread-fails). The page's bytes move to the worker and
 * back (transferred, not copied); the parsed page comes back by structured clone. From the sources (no build) the worker is the .ts file and loads through tsx like the
 * main thread.
 */
export const createParsePool = (
  settings: Pick<Config, 'parseThreads' | 'parseTimeoutMs'>,
  /** the threads' code: parseWorker.ts, or a test's own that wraps it */
  options: { worker?: URL } = {},
): PageParser => {
  const { parseThreads: threads, parseTimeoutMs: timeoutMs } = settings;
  const { url, fromSource } = options.worker
    ? { url: options.worker, fromSource: options.worker.pathname.endsWith('.ts') }
    : threadEntry('threads/parseWorker');
  const hasTsx = process.execArgv.some((a) => /\btsx\b/.test(a));
  const pool = new Piscina({
    filename: url.href,
    minThreads: threads,
    maxThreads: threads,
    // a crawl's burst of pages waits its turn: the queue is unbounded (the crawler's concurrency bounds it), a task
    // is never refused ('auto' would refuse past threads² queued pages and fail them)
    maxQueue: Number.POSITIVE_INFINITY,
    resourceLimits: PARSE_THREAD_LIMITS,
    // piscina's default ('sync') parks an idle thread in Atomics.wait, so its event loop never turns between pages
    // and the tasks V8 posts to it (finishing a GC, the memory reducer) wait; 'async' waits on a promise instead.
    // Smaps probe, 200 jobs at concurrency 32, paired: peak RSS 408-418 -> 400-408 MB, and after the burst the
    // process holds ~20 MB less; no loss of pages/s.
    atomics: 'async',
    ...(fromSource && !hasTsx ? { execArgv: [...process.execArgv, '--import', 'tsx'] } : {}),
  });
  let closing = false;
  // Piscina emits 'error' for a thread that failed while idle (it starts another), and for a result that names a task
  // its thread no longer holds: a task aborted (the deadline) just as its thread posted the result. Piscina ends that
  // thread and forgets its tasks, yet Node still delivers the message already queued on the thread's port. With no
  // listener the pool throws on this thread, which took the pipeline thread and the process down
  // (docs/architecture.md#when-a-thread-fails). Such a result is dropped: its task was settled when it was aborted.
  pool.on('error', (err: Error) => {
    if (closing || err.message.startsWith('Unexpected message from Worker')) return;
    reportThreadFault('parse', err.message);
  });
  const faultDue = faultCounter('parse');
  const deadlines = createDeadlines(timeoutMs);
  /** why a task failed: its deadline, its thread's death (the pool starts another) or an abort */
  const failure = (err: unknown, task: Tracked): unknown => {
    if (task.timedOut) {
      reportThreadFault('parse', `a page took over ${timeoutMs} ms to parse: its thread was ended`);
      return new ParseTimeoutError(timeoutMs);
    }
    const threadId = Number(Atomics.load(task.started, 1));
    const threadGone = threadId > 0 && !pool.threads.some((w) => w.threadId === threadId);
    if (closing || !threadGone) return err;
    const cause = err instanceof Error ? err.message : String(err);
    reportThreadFault('parse', cause);
    return new ParseThreadError(cause);
  };
  return {
    read: (body, context, rawHead, signal) => {
      if (signal?.aborted) return Promise.reject(abandoned());
      const own = ownBuffer(body);
      const task = deadlines.track();
      const ran = pool
        .run(
          {
            body,
            context,
            rawHead,
            started: task.started.buffer,
            ...(faultDue() ? { fault: true } : {}),
          } satisfies ParseTask,
          { signal: task.controller.signal, ...(own ? { transferList: [own] } : {}) },
        )
        .then(
          (read) => read as PageRead,
          (err: unknown) => {
            throw failure(err, task);
          },
        )
        .finally(() => task.done());
      return signal ? abandonOnAbort(ran, signal, task) : ran;
    },
    close: () => {
      closing = true;
      deadlines.stop();
      return pool.destroy();
    },
  };
};

/** the crawl ended before its page was read */
const abandoned = () => new DOMException('the crawl ended before its page was read', 'AbortError');

/**
 * The crawl's abort settles the read at once but does not end the thread: a parse takes milliseconds, and ending a
 * thread that is posting its result was what raced (above). A page no thread has taken yet leaves the queue (one
 * piscina had just handed to a thread ends that thread, which has nothing to post yet); one being parsed finishes,
 * its result dropped, and stays under the deadline until then.
 */
const abandonOnAbort = (ran: Promise<PageRead>, signal: AbortSignal, task: Tracked): Promise<PageRead> =>
  new Promise<PageRead>((resolve, reject) => {
    const onAbort = () => {
      if (Atomics.load(task.started, 0) === 0n) task.controller.abort(signal.reason);
      reject(abandoned());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    ran.then(
      (read) => {
        signal.removeEventListener('abort', onAbort);
        resolve(read);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });

/** What a parse thread is given: the page, and a cell it writes the time it started into. */
export interface ParseTask {
  body: Uint8Array;
  context: ParseContext;
  rawHead: string;
  /**
   * a BigInt64Array's buffer of two cells: the thread stores Date.now() in the first and its threadId in the second
   * when it takes the task (the deadline counts from then; a failed task whose thread is gone took its thread down)
   */
  started: SharedArrayBuffer;
  /** fault injection (SERP_CHAOS_FAULTS, threadFaults.ts): the thread dies with this task */
  fault?: true;
}

/**
 * The parse deadline (docs/security.md). A task's time counts from when a thread takes it (the thread writes the time
 * into a shared cell), not from when it was queued: a burst of pages waits for a thread without eating its time. A
 * watchdog looks every quarter deadline at the tasks that run; one past the deadline is aborted, and piscina ends
 * the thread it runs on and starts another. A task is watched until piscina settles it, even after its crawl gave up
 * waiting for it (abandonOnAbort).
 */
interface Tracked {
  /** the cells (and their buffer, which goes to the thread) */
  started: BigInt64Array<SharedArrayBuffer>;
  controller: AbortController;
  timedOut: boolean;
  done(): void;
}

const createDeadlines = (timeoutMs: number) => {
  const running = new Set<Tracked>();
  let watchdog: NodeJS.Timeout | undefined;
  const look = () => {
    const now = Date.now();
    for (const task of running) {
      const at = Number(Atomics.load(task.started, 0));
      if (at > 0 && now - at > timeoutMs) {
        task.timedOut = true;
        task.controller.abort(new ParseTimeoutError(timeoutMs));
        running.delete(task);
      }
    }
    if (running.size === 0 && watchdog) {
      clearInterval(watchdog);
      watchdog = undefined;
    }
  };
  return {
    track(): Tracked {
      const task: Tracked = {
        started: new BigInt64Array(new SharedArrayBuffer(16)) as BigInt64Array<SharedArrayBuffer>,
        controller: new AbortController(),
        timedOut: false,
        done: () => {
          running.delete(task);
        },
      };
      running.add(task);
      if (!watchdog) {
        watchdog = setInterval(look, Math.max(10, Math.min(1_000, Math.floor(timeoutMs / 4))));
        watchdog.unref();
      }
      return task;
    },
    stop() {
      if (watchdog) clearInterval(watchdog);
      watchdog = undefined;
      running.clear();
    },
  };
};
