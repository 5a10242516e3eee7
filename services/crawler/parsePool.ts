import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { type ParseContext, type ParseOutcome, parse } from '../../parser/index.js';

/** How the crawler reads a fetched page: on the event loop, or in a pool of worker threads. */
export interface PageParser {
  parse(html: string, context: ParseContext): Promise<ParseOutcome>;
  close(): Promise<void>;
}

/** Parses on the calling thread (tests, the CLI, SERP_PARSE_THREADS=0). */
export const inlineParser: PageParser = {
  parse: async (html, context) => parse(html, context),
  close: async () => undefined,
};

/**
 * Parsing off the event loop (issue 14): a page is ~1–3 ms of DOM work, and ten pages a job at crawler concurrency 8
 * kept the loop that answers HTTP busy enough to multiply read latency. Piscina (the maintained worker pool: a task
 * queue, thread start and restart, back-pressure, clean shutdown) runs `parseWorker` on `threads` threads, one per core
 * by default. Only the page's HTML goes in and the parsed page comes out (structured clone, ~1 ms for a 700 kB page).
 * From the sources (no build) the worker is the .ts file and loads through tsx like the main thread.
 */
export const createParsePool = (threads = availableParallelism()): PageParser => {
  const built = new URL('./parseWorker.js', import.meta.url);
  const source = new URL('./parseWorker.ts', import.meta.url);
  const fromSource = !existsSync(built);
  const hasTsx = process.execArgv.some((a) => /\btsx\b/.test(a));
  const pool = new Piscina({
    filename: (fromSource ? source : built).href,
    minThreads: threads,
    maxThreads: threads,
    // a crawl's burst of pages waits its turn: the queue is unbounded (the crawler's concurrency bounds it), a task
    // is never refused ('auto' would refuse past threads² queued pages and fail them)
    maxQueue: Number.POSITIVE_INFINITY,
    ...(fromSource && !hasTsx ? { execArgv: [...process.execArgv, '--import', 'tsx'] } : {}),
  });
  return {
    parse: (html, context) => pool.run({ html, context }) as Promise<ParseOutcome>,
    close: () => pool.destroy(),
  };
};
