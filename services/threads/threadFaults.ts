import { CHAOS_FAULT } from '../config/schema.js';

/**
 * What happens when a thread of the service fails (docs/architecture.md#when-a-thread-fails): the fault is logged with
 * its cause, counted (`serp_thread_restarts_total{thread}`, docs/operations.md#metrics-and-logs) and the thread is
 * started again by its owner (the parse pool, the hash thread, the event store's writer, the supervisor of the
 * pipeline thread or of a cluster api's projector thread, the render thread's handle). This module is each thread's one place for that report: module state is per thread (every worker
 * thread loads its own copy), so the pipeline thread forwards its reports to the main thread, where they are counted
 * and logged with the main thread's own.
 */

/** the kinds of thread the service runs (the metric's `thread` label) */
const THREAD_KINDS = ['parse', 'pipeline', 'writer', 'hash', 'render', 'projector'] as const;
export type ThreadKind = (typeof THREAD_KINDS)[number];

/** where a fault goes: counted and logged here (the default), or sent to the thread that counts them */
export type ThreadFaultSink = (thread: ThreadKind, cause: string) => void;

const restarts: Record<ThreadKind, number> = { parse: 0, pipeline: 0, writer: 0, hash: 0, render: 0, projector: 0 };

/** where the fault's line goes: stderr, unless a service logs its JSON lines on stdout (logThreadFaultsTo) */
let writeLine: (line: string) => void = (line) => {
  process.stderr.write(line);
};

/** a serving process's log is its stdout (embedded.ts); a CLI command's stdout is its answer, so it keeps stderr */
export const logThreadFaultsTo = (write: (line: string) => void): void => {
  writeLine = write;
};

/** one JSON line in the service's log shape (logLines.ts), at error level: a fault is logged whatever SERP_LOG_LEVEL */
const countAndLog: ThreadFaultSink = (thread, cause) => {
  restarts[thread] += 1;
  writeLine(
    `${JSON.stringify({ level: 50, time: Date.now(), pid: process.pid, thread, cause, msg: 'thread failed and was restarted' })}\n`,
  );
};

let sink: ThreadFaultSink = countAndLog;

/** `thread` failed (`cause`: why, as the error said) and its owner started another in its place */
export const reportThreadFault = (thread: ThreadKind, cause: string): void => sink(thread, cause);

/** the pipeline thread sends its reports to the main thread (pipelineWorker.ts), which counts and logs them */
export const forwardThreadFaults = (to: ThreadFaultSink): void => {
  sink = to;
};

/** restarts counted on this thread so far, by kind (metrics.ts reads them at each scrape) */
export const threadRestarts = (): Readonly<Record<ThreadKind, number>> => ({ ...restarts });

/**
 * Fault injection for the tests (SERP_CHAOS_FAULTS, docs/configuration.md): `kind:N` makes the Nth unit of work of
 * that kind of thread kill its thread with an uncaught error: the Nth page a parse pool reads, the Nth job a hash
 * thread digests, the Nth group an event store writer thread commits, the Nth crawl the pipeline thread starts. Each
 * counts on its own (one writer thread per event store, one parse pool per crawler). The pipeline thread's fault is
 * injected into the first thread only, unless written `pipeline:N:each` (the projector thread's the same way) (every new thread too: a crawl that kills
 * each thread that takes it, for the restart bound, pipelineSupervisor.ts). `pipeline:N:disk-full` kills it with the
 * error a full disk raises instead (`ENOSPC`), which no restart mends: the process stops with its own exit code.
 */
const armed = new Map<ThreadKind, number>();
/** the kinds whose fault is a full disk's error */
const diskFull = new Set<ThreadKind>();

export const armThreadFaults = (entries: readonly string[]): void => {
  armed.clear();
  diskFull.clear();
  for (const entry of entries) {
    const m = CHAOS_FAULT.exec(entry);
    if (!m) continue;
    armed.set(m[1] as ThreadKind, Number(m[2]));
    if (m[3] === ':disk-full') diskFull.add(m[1] as ThreadKind);
  }
};

/** a counter of `kind`'s units of work: true for the one that is to fail (never, unless SERP_CHAOS_FAULTS says) */
export const faultCounter = (kind: ThreadKind): (() => boolean) => {
  let n = 0;
  return () => {
    const at = armed.get(kind);
    if (at === undefined) return false;
    n += 1;
    return n === at;
  };
};

/** the error an injected fault throws inside its thread: Node's own for a full disk when the entry says so */
export const injectedFault = (kind: ThreadKind) =>
  diskFull.has(kind)
    ? Object.assign(
        new Error(`ENOSPC: no space left on device, write (fault injected into the ${kind} thread, SERP_CHAOS_FAULTS)`),
        { code: 'ENOSPC', errno: -28, syscall: 'write' },
      )
    : new Error(`fault injected into the ${kind} thread (SERP_CHAOS_FAULTS)`);
