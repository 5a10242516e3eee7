import type { AppendResult, EventStore, ExpectedVersion, RecordedEvent, Subscription } from '../../ports/eventStore.js';
import { startCatchUpSubscription } from './catchUpSubscription.js';
import { type EncodedEvent, encode, fromEncoded, toRecordedEvent } from './sqliteCodec.js';
import { createSqliteWriter, openEventsFile, SCHEMA, type WriteOutcome, type WriteRequest } from './sqliteWriter.js';

export { CorruptEventError } from './sqliteCodec.js';

export interface SqliteEventStoreOptions {
  /** database file, created with its schema when missing; several processes may open the same file */
  path: string;
  /** how often a live subscription re-reads the file to see appends made by other processes (default 200) */
  pollIntervalMs?: number;
  /** most events handed to a subscription handler at once (default 500) */
  batchSize?: number;
  /** how long a commit waits for another process holding the write lock before failing (default 5000) */
  busyTimeoutMs?: number;
  /** a subscription read or handler failed; the batch is retried after `pollIntervalMs` (default: stderr) */
  onSubscriptionError?: (error: unknown) => void;
  /**
   * most events kept in memory for this store's subscriptions (default 4096; 0 = none): this process's own latest
   * commits, and what one subscription read from the file for the others
   */
  tailSize?: number;
  /**
   * Where the group commits (inserts and fsync) run. Default: on this thread. `serve` runs them on a thread of their
   * own (services/threads/writerThread.ts), so the thread that answers HTTP only serialises events and reads; a CLI
   * command's few appends would only pay the thread's start.
   */
  groupWriter?: (path: string, busyTimeoutMs: number) => GroupWriter;
  /**
   * called after each commit of this store's with its last position: a thread beside this one that opened the same file
   * (the pipeline thread, pipelineThread.ts) is told, and its subscriptions read the file at once (`appendedElsewhere`)
   * instead of at their next poll
   */
  onCommitted?: (lastPosition: number) => void;
}

/** counters for tests and benchmarks: `appends / commits` is the group-commit ratio */
export interface SqliteEventStoreStats {
  appends: number;
  commits: number;
  /** subscription reads answered from this process's own latest commits, and those that read the file */
  tailReads: number;
  fileReads: number;
}

export type SqliteEventStore = EventStore & {
  stats(): SqliteEventStoreStats;
  /**
   * another connection to the file committed up to `position` (onCommitted of a store on another thread): the live
   * subscriptions read the file now, not at their next poll
   */
  appendedElsewhere(position: number): void;
};

export class EventStoreClosedError extends Error {
  readonly code = 'SERP_EVENTSTORE_CLOSED';
  constructor() {
    super('event store is closed');
    this.name = 'EventStoreClosedError';
  }
}

/** most appends written by one commit */
const MAX_GROUP = 1000;

interface PendingAppend {
  stream: string;
  events: EncodedEvent[];
  expected: ExpectedVersion;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The writing side, inline or on its own thread (services/threads/writerThread.ts). `write` resolves once the group's
 * COMMIT returned (fsync'd) with each append's outcome, and rejects when the group failed as a whole.
 */
export interface GroupWriter {
  write(batch: WriteRequest[]): Promise<WriteOutcome[]>;
  close(): Promise<void>;
}

const inlineWriter = (path: string, busyTimeoutMs: number): GroupWriter => {
  const writer = createSqliteWriter(path, busyTimeoutMs);
  return {
    write: async (batch) => writer.write(batch),
    close: async () => {
      writer.close();
    },
  };
};

/**
 * The embedded event store: one SQLite file in WAL mode with `synchronous=FULL`, so a COMMIT returns only after fsync.
 *
 * Group commit: appends made in the same turn of the event loop (and, with the writer thread, while the previous
 * group is being written) are queued and written by one transaction (one fsync); see createSqliteWriter. No append
 * resolves before the COMMIT returned: an acknowledged append is durable. Reads use a connection of their own.
 */
export const createSqliteEventStore = (options: SqliteEventStoreOptions): SqliteEventStore => {
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const batchSize = options.batchSize ?? 500;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const onSubscriptionError =
    options.onSubscriptionError ??
    ((error: unknown) => process.stderr.write(`event store subscription: ${String(error)}\n`));

  const db = openEventsFile(options.path, busyTimeoutMs);
  db.exec(SCHEMA);
  const writer = (options.groupWriter ?? inlineWriter)(options.path, busyTimeoutMs);

  const currentVersion = db.prepare<[string], { v: number | null }>(
    'SELECT MAX(version) AS v FROM events WHERE stream = ?',
  );
  const head = db.prepare<[], { p: number | null }>('SELECT MAX(global_position) AS p FROM events');
  const selectStream = db.prepare<[string, number, number]>(
    'SELECT * FROM events WHERE stream = ? AND version >= ? ORDER BY version LIMIT ?',
  );
  const selectAll = db.prepare<[number, number]>(
    'SELECT * FROM events WHERE global_position > ? ORDER BY global_position LIMIT ?',
  );
  const readStreamTx = db.transaction((stream: string, fromVersion: number, maxCount: number) => ({
    rows: selectStream.all(stream, fromVersion, maxCount),
    current: currentVersion.get(stream)?.v ?? -1,
  }));

  const stats: SqliteEventStoreStats = { appends: 0, commits: 0, tailReads: 0, fileReads: 0 };

  /**
   * The log's latest events, in global order and without a gap, for this store's subscriptions (the projector, the
   * dispatcher and the background workers each read every event): this process's own commits, and the events one
   * subscription read from the file, so that the others take the same objects instead of reading, decoding (and, in
   * the projector, validating) each event again (five readers on the pipeline thread made the file reads ~25% of the
   * pipeline thread's time; docs/benchmarks.md#submits). A commit's positions are contiguous (BEGIN IMMEDIATE holds the
   * file's write lock), so a commit that does not start right after the tail's last event means another process wrote
   * in between: the tail restarts there, and a subscription behind it reads the file. Events every subscription has
   * passed are dropped. Whatever the tail cannot answer whole is read from the file, as before.
   */
  const tailSize = options.tailSize ?? 4096;
  let tail: RecordedEvent[] = [];
  /** each subscription's position: what all of them have read is dropped from the tail */
  const readers = new Set<{ fileReadAt: number; position: number }>();
  const dropPassed = () => {
    const first = tail[0];
    if (!first || readers.size === 0) return;
    let slowest = Number.POSITIVE_INFINITY;
    for (const r of readers) slowest = Math.min(slowest, r.position);
    // the last event stays: it tells a subscription at the end that it has read all (no file read needed)
    const passed = Math.min(tail.length - 1, slowest + 1 - first.globalPosition);
    // not one by one: a slice copies what is left, so it waits until a good part of the tail is behind everyone
    if (passed > 0 && passed >= tail.length / 2) tail = tail.slice(passed);
  };
  const remember = (committed: RecordedEvent[]) => {
    if (tailSize === 0 || committed.length === 0) return;
    const last = tail[tail.length - 1];
    const start = committed[0]!.globalPosition;
    if (last && start > last.globalPosition + 1) tail = [];
    // a commit whose events a subscription already read from the file (before the writer's answer came back) adds
    // only what the tail does not hold yet
    const from = last && start <= last.globalPosition + 1 ? last.globalPosition + 1 - start : 0;
    for (let i = from; i < committed.length; i++) tail.push(committed[i]!);
    if (tail.length > tailSize * 2) tail = tail.slice(tail.length - tailSize);
    dropPassed();
  };
  const appendListeners = new Set<() => void>();
  /** the newest position another connection told this store it committed (appendedElsewhere) */
  let elsewhereHead = 0;
  const subscriptions = new Set<Subscription>();
  let queue: PendingAppend[] = [];
  let flushScheduled = false;
  /** the group being written, while there is one */
  let inFlight: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let acceptingAppends = true;

  const scheduleFlush = () => {
    if (flushScheduled || inFlight) return;
    flushScheduled = true;
    // setImmediate runs after every promise continuation of this turn: concurrent callers share the commit.
    setImmediate(() => {
      flushScheduled = false;
      inFlight = flush().finally(() => {
        inFlight = undefined;
        if (queue.length > 0) scheduleFlush();
      });
    });
  };

  const flush = async () => {
    // a bounded group: a burst of thousands of appends goes out as several commits, not as one message of any size
    const batch = queue.length > MAX_GROUP ? queue.splice(0, MAX_GROUP) : queue;
    if (batch === queue) queue = [];
    if (batch.length === 0) return;
    let outcomes: WriteOutcome[];
    try {
      outcomes = await writer.write(batch.map(({ stream, events, expected }) => ({ stream, events, expected })));
    } catch (error) {
      for (const append of batch) append.reject(error);
      return;
    }
    stats.commits += 1;
    stats.appends += batch.length;
    const committed: RecordedEvent[] = [];
    batch.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) return;
      // an append's events took consecutive positions and versions, up to the ones it reports
      const n = append.events.length;
      const { nextExpectedVersion, lastGlobalPosition } = outcome.value;
      if (tailSize > 0) {
        append.events.forEach((event, j) => {
          committed.push(
            fromEncoded(event, append.stream, nextExpectedVersion - n + 1 + j, lastGlobalPosition - n + 1 + j),
          );
        });
      }
    });
    remember(committed);
    const last = outcomes.reduce((max, o) => (o.ok ? Math.max(max, o.value.lastGlobalPosition) : max), 0);
    batch.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) append.resolve(outcome.value);
      else append.reject(outcome.error);
    });
    for (const wake of appendListeners) wake();
    if (last > 0) options.onCommitted?.(last);
  };

  /** every append queued or in flight has been written (or has failed) */
  const drain = async () => {
    while (inFlight || queue.length > 0 || flushScheduled) {
      if (inFlight) await inFlight;
      else if (queue.length > 0 && !flushScheduled) scheduleFlush();
      else await new Promise((resolve) => setImmediate(resolve));
    }
  };

  const readAfter = (fromPosition: number, maxCount: number) =>
    selectAll.all(fromPosition, maxCount).map(toRecordedEvent);

  /**
   * A subscription's next batch: from the tail when it holds the very next event, else from the file (and what the file
   * gave is kept in the tail when it continues it, for the other subscriptions). A subscription at the tail's end has
   * read all this process wrote; only another process can have written after it, which the file tells, and it is asked
   * at most twice per poll interval per subscription (not after every batch: those empty reads were ~2% of a submit's
   * time).
   */
  const readNext = (
    fromPosition: number,
    maxCount: number,
    reader: { fileReadAt: number; position: number },
  ): RecordedEvent[] => {
    reader.position = fromPosition;
    const first = tail[0];
    if (first && fromPosition + 1 >= first.globalPosition) {
      const at = fromPosition + 1 - first.globalPosition;
      if (at < tail.length) {
        stats.tailReads += 1;
        return tail.slice(at, at + maxCount);
      }
      if (at === tail.length && elsewhereHead <= fromPosition && Date.now() - reader.fileReadAt < pollIntervalMs / 2) {
        return [];
      }
    }
    stats.fileReads += 1;
    reader.fileReadAt = Date.now();
    const read = readAfter(fromPosition, maxCount);
    const last = tail[tail.length - 1];
    if (read.length > 0 && (!last || last.globalPosition === fromPosition)) remember(read);
    return read;
  };

  const store: SqliteEventStore = {
    appendToStream(stream, events, appendOptions) {
      if (!acceptingAppends) return Promise.reject(new EventStoreClosedError());
      let encoded: EncodedEvent[];
      try {
        encoded = events.map(encode);
      } catch (error) {
        return Promise.reject(error);
      }
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ stream, events: encoded, expected: appendOptions?.expectedVersion ?? 'any', resolve, reject });
        scheduleFlush();
      });
    },

    async readStream(stream, readOptions) {
      const { rows, current } = readStreamTx(stream, readOptions?.fromVersion ?? 0, readOptions?.maxCount ?? -1);
      return { events: rows.map(toRecordedEvent), currentVersion: current };
    },

    async readAll(readOptions) {
      return readAfter(readOptions?.fromPosition ?? 0, readOptions?.maxCount ?? -1);
    },

    subscribeToAll(fromPosition, handler) {
      if (closing) throw new EventStoreClosedError();
      const reader = { fileReadAt: 0, position: fromPosition };
      readers.add(reader);
      const subscription = startCatchUpSubscription({
        fromPosition,
        handler,
        readAfter: async (position) => readNext(position, batchSize, reader),
        onAppended: (wake) => {
          appendListeners.add(wake);
          return () => appendListeners.delete(wake);
        },
        pollIntervalMs,
        onError: onSubscriptionError,
      });
      subscriptions.add(subscription);
      return {
        async stop() {
          await subscription.stop();
          subscriptions.delete(subscription);
          readers.delete(reader);
        },
      };
    },

    async headPosition() {
      return head.get()?.p ?? 0;
    },

    close() {
      closing ??= (async () => {
        // Handlers in flight may still append (a projector recording a follow-up), so stop them before refusing
        // appends.
        await Promise.all([...subscriptions].map((s) => s.stop()));
        acceptingAppends = false;
        await drain();
        await writer.close();
        db.close();
      })();
      return closing;
    },

    stats: () => ({ ...stats }),

    appendedElsewhere(position) {
      if (position <= elsewhereHead) return;
      elsewhereHead = position;
      for (const wake of appendListeners) wake();
    },
  };
  return store;
};
