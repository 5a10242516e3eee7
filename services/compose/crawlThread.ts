import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { JobMessage } from '../../contracts/jobMessage.js';
import type { SearchRequest } from '../../contracts/search.js';
import { ownBuffer } from '../buffers.js';
import type { Crawler, CrawlOptions, CrawlOutcome } from '../crawler/crawl.js';
import {
  CrawlAbortedError,
  CrawlBlockedError,
  CrawlRequestError,
  CrawlTransientError,
  type RequestErrorKind,
} from '../crawler/errors.js';
import type { ResolvedTargeting } from '../crawler/targeting.js';
import type { CrawlerSetup } from './crawler.js';

/** What the crawl thread needs to build its crawler: CrawlerSetup's serialisable part (no resolver). */
export type CrawlThreadSetup = Omit<CrawlerSetup, 'locations' | 'resolveTargeting'>;

/** A location resolved on the calling thread (the geotargets stay there), or why it could not be. */
export type TargetingResolution =
  | { ok: true; targeting: ResolvedTargeting }
  | { ok: false; message: string; kind: RequestErrorKind };

/**
 * A request's location resolved here, as it crosses to a thread that crawls: an unknown location is a resolution (the
 * crawl fails as a bad request there); any other error is thrown, so the crawl fails here and the queue retries it.
 */
export const resolutionOf = (
  resolveTargeting: (request: SearchRequest) => ResolvedTargeting,
  request: SearchRequest,
): TargetingResolution => {
  try {
    return { ok: true, targeting: resolveTargeting(request) };
  } catch (err) {
    if (err instanceof CrawlRequestError) return { ok: false, message: err.message, kind: err.kind };
    throw err;
  }
};

/**
 * The thread's side: each crawl's request → its location as the calling thread resolved it, and the crawler's
 * `resolveTargeting` that reads it back (no resolution: the calling thread had no resolver, so no targeting).
 */
export const resolvedTargetings = () => {
  const resolved = new WeakMap<SearchRequest, TargetingResolution>();
  return {
    set: (request: SearchRequest, resolution: TargetingResolution) => void resolved.set(request, resolution),
    resolveTargeting: (request: SearchRequest): ResolvedTargeting => {
      const r = resolved.get(request);
      if (!r) return {};
      if (!r.ok) throw new CrawlRequestError(r.message, r.kind);
      return r.targeting;
    },
  };
};

/** An error as it crosses the thread boundary: the crawler's own classes keep their fields. */
export interface ThrownError {
  name: string;
  message: string;
  kind?: string;
  url?: string;
  status?: number;
}

export type ToThread =
  | {
      type: 'crawl';
      id: number;
      message: JobMessage;
      targeting?: TargetingResolution;
      /** the caller gave a blob writer: the raw HTML's members come back as they are packed, not in the outcome */
      sink: boolean;
    }
  | { type: 'abort'; id: number }
  | { type: 'close' };

export type FromThread =
  | { type: 'beat'; id: number }
  | { type: 'raw'; id: number; part: Uint8Array }
  | { type: 'done'; id: number; outcome: CrawlOutcome }
  | { type: 'thrown'; id: number; error: ThrownError };

export const toThrownError = (err: unknown): ThrownError => {
  const e = err as Partial<ThrownError> & { message?: string };
  return {
    name: e?.name ?? 'Error',
    message: e?.message ?? String(err),
    ...(typeof e?.kind === 'string' ? { kind: e.kind } : {}),
    ...(typeof e?.url === 'string' ? { url: e.url } : {}),
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
  };
};

/** the error the crawl thread threw, as the class the crawl worker (worker.ts) tells apart */
export const fromThrownError = (e: ThrownError): Error => {
  switch (e.name) {
    case 'CrawlAbortedError':
      return new CrawlAbortedError();
    case 'CrawlBlockedError':
      return new CrawlBlockedError(e.kind as CrawlBlockedError['kind'], e.url ?? '', e.status ?? 0);
    case 'CrawlTransientError':
      return new CrawlTransientError(e.kind as CrawlTransientError['kind'], e.url ?? '', e.message, e.status);
    case 'CrawlRequestError':
      return new CrawlRequestError(e.message, e.kind as RequestErrorKind, e.status);
    default:
      return new Error(e.message);
  }
};

/**
 * The crawl thread's heap, sized like a parse thread's (parsePool.ts PARSE_THREAD_LIMITS): V8 grows a thread's old
 * generation by a factor it derives from the ceiling. What the thread holds is the jobs in flight: their parsed pages
 * until the merge (~0.5 MB a job as objects; the pages' bytes are outside the heap). `test/bench/pipeline.ts` at
 * concurrency 32 with two parse threads: peak RSS 440 MB with the main thread's ceiling, 428 MB with this one; with
 * one parse thread fewer (config.ts, the default with this thread) 375–382 MB.
 */
export const CRAWL_THREAD_LIMITS = { maxOldGenerationSizeMb: 384, maxYoungGenerationSizeMb: 16 };

/** how long `close()` waits for the thread to close its crawler before stopping it */
const CLOSE_TIMEOUT_MS = 15_000;

/** a thread's script that loads `entry` (TypeScript) through tsx's loader */
export const bootFromSource = (entry: URL) => {
  const tsx = import.meta.resolve('tsx/esm/api');
  return `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
};

interface Thread {
  worker: Worker;
  /** the crawls sent to this thread and not settled */
  mine: Set<number>;
  exited: Promise<void>;
}

interface Pending {
  opts: CrawlOptions;
  resolve: (outcome: CrawlOutcome) => void;
  reject: (err: unknown) => void;
  stopListening: () => void;
}

/**
 * The crawler on a thread of its own (docs/decisions.md#the-write-side-on-a-thread-of-its-own): fetching pages (got's
 * request machinery, ~1 MB a page through the HTTP client), handing them to the parse pool, packing and hashing the raw
 * HTML all ran on the event loop that answers `/v1`, and so did the garbage they made; there they were a fifth of the
 * loop's time while crawls ran, and most of what its full collections had to clear. Here the event loop only receives
 * what a crawl yields: a heartbeat per fetch attempt, each page's gzip member for the raw HTML (moved, not copied) on
 * its way to the job's blob writer, and the outcome. Locations are resolved here, before the job goes over, so the
 * geotargets index stays in one heap. The thread builds its crawler as crawler.ts would (`crawlThreadWorker.ts`).
 */
export const createThreadedCrawler = (
  setup: CrawlThreadSetup,
  resolveTargeting?: (request: SearchRequest) => ResolvedTargeting,
): Crawler => {
  const built = new URL('./crawlThreadWorker.js', import.meta.url);
  const source = new URL('./crawlThreadWorker.ts', import.meta.url);
  const fromSource = !existsSync(built);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let closing = false;

  const settle = (id: number) => {
    const p = pending.get(id);
    if (!p) return undefined;
    pending.delete(id);
    p.stopListening();
    return p;
  };

  /**
   * The thread, started at once and again on the next crawl after one died (a crash there fails the crawls
   * it held as unexpected errors, which the queue retries, and is written to the log by the crawl worker).
   */
  let thread: Thread | undefined;
  const start = (): Thread => {
    // from the sources (tests, `tsx`) the thread registers tsx's loader itself and imports the entry: Node 20 runs
    // neither a thread's first script nor its imports through the loader that `--import tsx` set up here
    const worker = new Worker(fromSource ? bootFromSource(source) : built, {
      eval: fromSource,
      workerData: setup,
      resourceLimits: CRAWL_THREAD_LIMITS,
    });
    const mine = new Set<number>();
    const current: Thread = {
      worker,
      mine,
      exited: new Promise<void>((resolve) => {
        let why: Error | undefined;
        worker.on('error', (err) => {
          why = err;
        });
        worker.once('exit', (code) => {
          if (thread?.worker === worker) thread = undefined;
          const err = new Error(`crawl thread ${why ? `failed: ${why.message}` : `exited (${code})`}`);
          for (const id of mine) settle(id)?.reject(err);
          resolve();
        });
      }),
    };
    worker.on('message', (m: FromThread) => {
      switch (m.type) {
        case 'beat':
          pending.get(m.id)?.opts.heartbeat();
          return;
        case 'raw':
          pending.get(m.id)?.opts.rawSink?.append(m.part);
          return;
        case 'done': {
          mine.delete(m.id);
          if (m.outcome.raw?.gzip) m.outcome.raw.gzip = asBuffer(m.outcome.raw.gzip);
          if (m.outcome.prepared) m.outcome.prepared.gzip = asBuffer(m.outcome.prepared.gzip);
          settle(m.id)?.resolve(m.outcome);
          return;
        }
        case 'thrown':
          mine.delete(m.id);
          settle(m.id)?.reject(fromThrownError(m.error));
          return;
        default:
          return;
      }
    });
    thread = current;
    return current;
  };
  // started now, as the crawler on the event loop is built at start: its modules and its parse pool are ready for the
  // first job
  start();

  return {
    crawl(message: JobMessage, opts: CrawlOptions): Promise<CrawlOutcome> {
      if (closing) return Promise.reject(new CrawlAbortedError());
      if (opts.signal?.aborted) return Promise.reject(new CrawlAbortedError());
      let targeting: TargetingResolution | undefined;
      try {
        targeting = resolveTargeting ? resolutionOf(resolveTargeting, message.request) : undefined;
      } catch (err) {
        return Promise.reject(err);
      }
      const { worker, mine } = thread ?? start();
      const id = nextId++;
      return new Promise<CrawlOutcome>((resolve, reject) => {
        const onAbort = () => worker.postMessage({ type: 'abort', id } satisfies ToThread);
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        pending.set(id, {
          opts,
          resolve,
          reject,
          stopListening: () => opts.signal?.removeEventListener('abort', onAbort),
        });
        mine.add(id);
        worker.postMessage({
          type: 'crawl',
          id,
          message,
          sink: opts.rawSink !== undefined,
          ...(targeting ? { targeting } : {}),
        } satisfies ToThread);
      });
    },
    async close() {
      closing = true;
      const current = thread;
      if (!current) return;
      current.worker.postMessage({ type: 'close' } satisfies ToThread);
      // the thread closes its crawler (a browser, the parse pool) and ends; one that does not within the bound is
      // stopped, so a shutdown never hangs on it
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        current.exited,
        new Promise<void>((resolve) => {
          timer = setTimeout(() => void current.worker.terminate().then(() => resolve()), CLOSE_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
};

/** the buffers of a crawl outcome that can move to the other thread instead of being copied */
export const outcomeTransfers = (outcome: CrawlOutcome): ArrayBuffer[] =>
  [outcome.raw?.gzip, outcome.prepared?.gzip].flatMap((b) => {
    const own = b ? ownBuffer(b) : undefined;
    return own ? [own] : [];
  });

/** a Buffer arrives as a plain Uint8Array: a Buffer again, over the same bytes */
const asBuffer = (b: Uint8Array): Buffer =>
  Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
