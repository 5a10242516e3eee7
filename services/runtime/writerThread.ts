import type { GroupWriter } from '../adapters/eventStore/sqlite.js';
import type { EncodedEvent } from '../adapters/eventStore/sqliteCodec.js';
import type { WriteRequest } from '../adapters/eventStore/sqliteWriter.js';
import { type AppendResult, type ExpectedVersion, WrongExpectedVersionError } from '../ports/eventStore.js';
import { startThread } from './boot.js';

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
  | { id: number; packed: string }
  | { id: number; batch: WriteRequest[] }
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
 */
export const startWriterThread = (path: string, busyTimeoutMs: number): GroupWriter => {
  const worker = startThread('writerWorker', {
    workerData: { path, busyTimeoutMs } satisfies WriterThreadSetup,
    // a writer holds one group's strings at a time: a small young generation keeps the thread's memory small; the
    // ceiling leaves room for a group of large events (a thread that runs out fails every append after it)
    resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 4 },
  });
  worker.unref();
  const waiting = new Map<number, { resolve: (m: FromWriterThread) => void; reject: (e: unknown) => void }>();
  let nextId = 0;
  let closing = false;
  let broken: Error | undefined;
  const fail = (error: Error) => {
    broken ??= error;
    for (const w of waiting.values()) w.reject(broken);
    waiting.clear();
    worker.unref();
  };
  worker.on('message', (m: FromWriterThread) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (waiting.size === 0 && !closing) worker.unref();
    w?.resolve(m);
  });
  worker.on('error', (error) => fail(error));
  worker.on('exit', (code) => fail(new Error(`event store writer thread exited (${code})`)));
  const send = (message: ToWriterThread) =>
    new Promise<FromWriterThread>((resolve, reject) => {
      if (broken) return reject(broken);
      waiting.set(message.id, { resolve, reject });
      worker.ref();
      worker.postMessage(message);
    });
  return {
    async write(batch) {
      const packed = packGroup(batch);
      const reply = await send(packed === undefined ? { id: ++nextId, batch } : { id: ++nextId, packed });
      if ('failed' in reply) throw fromWire(reply.failed);
      if (!('outcomes' in reply)) throw new Error('event store writer: unexpected reply');
      return reply.outcomes.map((o) => (o.ok ? o : { ok: false, error: fromWire(o.error) }));
    },
    async close() {
      if (broken) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      closing = true;
      worker.ref(); // until it has closed the file and ended
      await send({ id: ++nextId, close: true });
      await exited;
    },
  };
};
