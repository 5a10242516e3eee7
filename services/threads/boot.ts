import { existsSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * How every thread of the service starts (docs/architecture.md, "Threads"): its code is a `*Worker.ts` file of
 * services/threads/ (a thread primitive) or services/runtime/ (the pipeline thread, an entry point that composes the
 * write side: docs/architecture.md#folders), named by folder and file (`threads/hashWorker`), run as built
 * (`dist/services/…/*.js`, what `npm start` runs) or, from the sources (tests, `tsx`),
 * through tsx's loader, which the thread registers itself: Node 20 runs neither a thread's first script nor its
 * imports through the loader that `--import tsx` set up on the thread that starts it.
 */
export interface ThreadEntry {
  /** the file the thread runs */
  url: URL;
  /** true when that file is TypeScript (no build beside this module) */
  fromSource: boolean;
}

/** the entry of `name` (`folder/file` of a `*Worker` file under services/), built when there is a build, else the source */
export const threadEntry = (name: string): ThreadEntry => {
  const built = new URL(`../${name}.js`, import.meta.url);
  if (existsSync(built)) return { url: built, fromSource: false };
  return { url: new URL(`../${name}.ts`, import.meta.url), fromSource: true };
};

/** a thread's script that registers tsx's loader, then imports `entry` (TypeScript) */
const bootFromSource = (entry: URL) => {
  const tsx = import.meta.resolve('tsx/esm/api');
  return `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
};

/**
 * Starts the thread that runs `name` (`runtime/pipelineWorker`, `threads/writerWorker`, `threads/hashWorker`). The one place of the service
 * that calls `new Worker`; the parse pool's threads are piscina's, started from `threadEntry('threads/parseWorker')`.
 */
export const startThread = (name: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker => {
  const entry = threadEntry(name);
  return entry.fromSource
    ? new Worker(bootFromSource(entry.url), { ...options, eval: true })
    : new Worker(entry.url, options);
};

/**
 * Calls `ended` once the thread has ended, with why: the error nothing caught on it, or its exit code (`name` says
 * which thread, `pipeline thread failed: …`). The promise resolves after `ended` ran.
 */
export const whenThreadEnds = (worker: Worker, name: string, ended: (why: Error) => void): Promise<void> => {
  let uncaught: Error | undefined;
  worker.on('error', (err) => {
    uncaught = err;
  });
  return new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      ended(new Error(`${name} ${uncaught ? `failed: ${uncaught.message}` : `exited (${code})`}`));
      resolve();
    });
  });
};
