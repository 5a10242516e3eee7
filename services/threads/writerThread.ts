import type { Worker } from 'node:worker_threads';
import type { GroupWriter } from '../adapters/eventStore/sqlite.js';
import type { EncodedEvent } from '../adapters/eventStore/sqliteCodec.js';
import type { WriteRequest } from '../adapters/eventStore/sqliteWriter.js';
import { type AppendResult, type ExpectedVersion, WrongExpectedVersionError } from '../ports/eventStore.js';
import { StoreUnavailableError } from '../ports/unavailable.js';
import { startThread } from './boot.js';
import { faultCounter, reportThreadFault } from './threadFaults.js';

/** What the writer thread is started with. */
export interface WriterThreadSetup {
  /** the events file */
  path: string;
  /** how long a commit waits for another connection holding the write lock */
  busyTimeoutMs: number;
}

/** an error as it crosses a thread: a version conflict stays one, anything else keeps its name, message and code */
export type WireError =
  | { kind: 'version'; stream: string; expected: ExpectedVersion; actual: number }
  | { kind: 'error'; name: string; message: string; code?: string };

export const toWire = (error: unknown): WireError =>
  error instanceof WrongExpectedVersionError
    ? { kind: 'version', stream: error.stream, expected: error.expected, actual: error.actual }
    : {
        kind: 'error',
        name: error instanceof Error ? error.name : 'Error',
        message: error instanceof Error ? error.message : String(error),
        code: (error as { code?: unknown } | undefined)?.code as string | undefined,
      };

export const fromWire = (wire: WireError): Error => {
  if (wire.kind === 'version') return new WrongExpectedVersionError(wire.stream, wire.expected, wire.actual);
  const error = new Error(wire.message) as Error & { code?: string };
  error.name = wire.name;
  if (wire.code !== undefined) error.code = wire.code;
  return error;
};

/**
 * A group as one string for the writer thread: its fields joined by NUL. Cloning one string costs a copy; cloning the
 * group's objects cost ~4% of a submit's time. NUL cannot occur in `data` or `metadata` (JSON.stringify escapes
 * every control character); a stream name or type that holds one is sent as objects instead (`packGroup` → undefined).
 */
export const packGroup = (batch: WriteRequest[]): string | undefined => {
  const parts: string[] = [];
  for (const append of batch) {
    if (append.stream.includes('\0')) return undefined;
    parts.push(append.stream, String(append.expected), String(append.events.length));
    for (const e of append.events) {
      if (e.type.includes('\0')) return undefined;
      parts.push(e.type, e.data, e.metadata);
    }
  }
  return parts.join('\0');
};

export const unpackGroup = (packed: string): WriteRequest[] => {
  const parts = packed.split('\0');
  const batch: WriteRequest[] = [];
  let at = 0;
  while (at < parts.length) {
    const stream = parts[at++]!;
    const expectedText = parts[at++]!;
    const n = Number(parts[at++]);
    const events: EncodedEvent[] = [];
    for (let i = 0; i < n; i++) events.push({ type: parts[at++]!, data: parts[at++]!, metadata: parts[at++]! });
    const expected: ExpectedVersion = /^-?\d+$/.test(expectedText)
      ? Number(expectedText)
      : (expectedText as ExpectedVersion);
    batch.push({ stream, expected, events });
  }
  return batch;
};

/** what the writer thread is sent: a group to write (packed, or as objects), or the order to close and end */
export type ToWriterThread =
  | { id: number; packed: string; fault?: true }
  | { id: number; batch: WriteRequest[]; fault?: true }
  | { id: number; close: true };
/** what the writer thread answers, each reply with the id of the message it answers */
export type FromWriterThread =
  | { id: number; outcomes: Array<{ ok: true; value: AppendResult } | { ok: false; error: WireError }> }
  | { id: number; failed: WireError }
  | { id: number; closed: true };

/**
 * The embedded event store's writer on a thread of its own (`groupWriter` of createSqliteEventStore; `serve` uses it,
 * docs/architecture.md): a submit's two appends, their inserts and the COMMIT's fsync were
 * a fifth of the HTTP thread's time per submit. One group is in flight at a time; appends made meanwhile wait and go
 * out together as the next group, so the groups grow with the load. The thread is referenced only while a group is
 * in flight, so it keeps the process alive until an acknowledged append is durable and never after.
 *
 * A thread that dies (docs/architecture.md#when-a-thread-fails) fails the group it held with StoreUnavailableError,
 * so its callers answer 503 and none is acknowledged (a transaction the thread did not commit is rolled back with its
 * connection), is reported, and the next group starts a new thread.
 */
export const startWriterThread = (path: string, busyTimeoutMs: number): GroupWriter => {
  const waiting = new Map<number, { resolve: (m: FromWriterThread) => void; reject: (e: unknown) => void }>();
  let nextId = 0;
  let closing = false;
  const faultDue = faultCounter('writer');
  /** the thread that writes now; undefined once it died, until the next group starts another */
  let worker: Worker | undefined;

  const spawn = (): Worker => {
    const w = startThread('threads/writerWorker', {
      workerData: { path, busyTimeoutMs } satisfies WriterThreadSetup,
      // a writer holds one group's strings at a time: a small young generation keeps the thread's memory small; the
      // ceiling leaves room for a group of large events (a thread that runs out fails the group it held)
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 4 },
    });
    w.unref();
    w.on('message', (m: FromWriterThread) => {
      const pending = waiting.get(m.id);
      waiting.delete(m.id);
      if (waiting.size === 0 && !closing) w.unref();
      pending?.resolve(m);
    });
    let why: Error | undefined;
    w.on('error', (error) => {
      why = error;
    });
    w.once('exit', (code) => {
      if (worker === w) worker = undefined;
      if (closing) return;
      const cause = why ? why.message : `exited (${code})`;
      const lost = new StoreUnavailableError('event store (its writer thread ended before it answered)', cause);
      for (const pending of waiting.values()) pending.reject(lost);
      waiting.clear();
      reportThreadFault('writer', cause);
    });
    return w;
  };

  const send = (message: ToWriterThread) =>
    new Promise<FromWriterThread>((resolve, reject) => {
      worker ??= spawn();
      waiting.set(message.id, { resolve, reject });
      worker.ref();
      worker.postMessage(message);
    });
  worker = spawn();
  return {
    async write(batch) {
      const packed = packGroup(batch);
      const id = ++nextId;
      const fault = faultDue() ? { fault: true as const } : {};
      const reply = await send(packed === undefined ? { id, batch, ...fault } : { id, packed, ...fault });
      if ('failed' in reply) throw fromWire(reply.failed);
      if (!('outcomes' in reply)) throw new Error('event store writer: unexpected reply');
      return reply.outcomes.map((o) => (o.ok ? o : { ok: false, error: fromWire(o.error) }));
    },
    async close() {
      const w = worker;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      closing = true;
      w.ref(); // until it has closed the file and ended
      await send({ id: ++nextId, close: true });
      await exited;
    },
  };
};
