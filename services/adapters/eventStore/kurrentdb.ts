import {
  ANY,
  type AppendStreamState,
  excludeSystemEvents,
  jsonEvent,
  KurrentDBClient,
  WrongExpectedVersionError as KurrentWrongExpectedVersion,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
} from '@kurrent/kurrentdb-client';
import {
  type AppendResult,
  type EventStore,
  type ExpectedVersion,
  type RecordedEvent,
  WrongExpectedVersionError,
} from '../../ports/eventStore.js';
import { createAppendSignal, createPendingTracker, startCatchUpSubscription } from './catchUpSubscription.js';
import { encode } from './sqliteCodec.js';

/**
 * The event store on KurrentDB / EventStoreDB 20+ (docs/distributed.md#the-kurrentdb-event-store) with
 * `@kurrent/kurrentdb-client`.
 *
 * NOT EXERCISED IN THIS PROJECT'S CI: no KurrentDB server can run on its machines. It is type-checked, and
 * `test/conformance/kurrentdbEventStore.test.ts` runs the shared conformance suite when SERP_KURRENTDB_URL names a
 * server (docs/distributed.md#the-kurrentdb-event-store).
 *
 * - Streams and expected versions map one to one (`streamState`: a revision as bigint, no_stream, stream_exists, any).
 * - Global positions: an event's *prepare* position in the transaction log, which is unique and increases with the
 *   log. It is a byte offset, kept exact as a JavaScript number up to 2^53 (8 PiB of log); past that the adapter
 *   refuses to guess and throws. Reading `$all` after a checkpoint starts at (commit = prepare = checkpoint), a real
 *   record boundary, and drops what is not strictly after it.
 * - System events (`$`-prefixed types and streams) are not the service's and are skipped.
 * - The subscription is the shared catch-up loop over `$all` reads (the same at-least-once contract as the other
 *   adapters); appends made by this process wake it at once, others within `pollIntervalMs`.
 */
export interface KurrentDbEventStoreOptions {
  /** a connection string: kurrentdb://host:2113?tls=false (esdb:// works too) */
  connectionString: string;
  pollIntervalMs?: number;
  batchSize?: number;
  onSubscriptionError?: (error: unknown) => void;
}

export const positionToNumber = (prepare: bigint) => {
  if (prepare < 0n || prepare > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`KurrentDB position ${prepare} does not fit a JavaScript number exactly`);
  }
  return Number(prepare);
};

const streamState = (expected: ExpectedVersion): AppendStreamState =>
  expected === 'any'
    ? ANY
    : expected === 'no_stream'
      ? NO_STREAM
      : expected === 'stream_exists'
        ? STREAM_EXISTS
        : BigInt(expected);

const actualOf = (err: KurrentWrongExpectedVersion) => {
  const actual = err.actualState as unknown;
  return typeof actual === 'bigint' ? Number(actual) : -1;
};

export const createKurrentDbEventStore = (options: KurrentDbEventStoreOptions): EventStore => {
  const client = KurrentDBClient.connectionString(options.connectionString);
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const batchSize = options.batchSize ?? 500;
  const appended = createAppendSignal();
  const pending = createPendingTracker();
  let closed = false;

  const toRecorded = (e: {
    streamId: string;
    revision: bigint;
    type: string;
    data: unknown;
    metadata: unknown;
    id: string;
    created: Date;
    position?: { commit: bigint; prepare: bigint };
  }): RecordedEvent => {
    const meta = (e.metadata ?? {}) as Partial<RecordedEvent['metadata']>;
    return {
      streamName: e.streamId,
      streamVersion: Number(e.revision),
      globalPosition: e.position ? positionToNumber(e.position.prepare) : 0,
      type: e.type,
      data: e.data,
      metadata: {
        eventId: meta.eventId ?? e.id,
        correlationId: meta.correlationId,
        causationId: meta.causationId,
        recordedAt: meta.recordedAt ?? e.created.toISOString(),
      },
    };
  };

  const append = async (
    stream: string,
    events: Parameters<EventStore['appendToStream']>[1],
    expected: ExpectedVersion,
  ): Promise<AppendResult> => {
    if (events.length === 0) throw new TypeError('an append needs at least one event');
    const data = events.map((event) => {
      const e = encode(event);
      const metadata = JSON.parse(e.metadata) as RecordedEvent['metadata'];
      return jsonEvent({ type: e.type, data: JSON.parse(e.data), metadata, id: metadata.eventId });
    });
    try {
      const res = await client.appendToStream(stream, data, { streamState: streamState(expected) });
      appended.notify();
      return {
        nextExpectedVersion: Number(res.nextExpectedRevision),
        lastGlobalPosition: res.position ? positionToNumber(res.position.prepare) : 0,
      };
    } catch (err) {
      if (err instanceof KurrentWrongExpectedVersion)
        throw new WrongExpectedVersionError(stream, expected, actualOf(err));
      throw err;
    }
  };

  const readAll = async ({ fromPosition = 0, maxCount = 1000 }: { fromPosition?: number; maxCount?: number } = {}) => {
    const out: RecordedEvent[] = [];
    if (maxCount <= 0) return out;
    const from = fromPosition > 0 ? { commit: BigInt(fromPosition), prepare: BigInt(fromPosition) } : START;
    for await (const resolved of client.readAll({
      fromPosition: from,
      maxCount: maxCount + 1,
      filter: excludeSystemEvents(),
    })) {
      const e = resolved.event;
      if (!e || e.type.startsWith('$') || e.streamId.startsWith('$')) continue;
      const recorded = toRecorded(e as never);
      if (recorded.globalPosition <= fromPosition) continue;
      out.push(recorded);
      if (out.length >= maxCount) break;
    }
    return out;
  };

  return {
    appendToStream(stream, events, opts = {}) {
      if (closed) return Promise.reject(new Error('event store is closed'));
      return pending.track(append(stream, events, opts.expectedVersion ?? 'any'));
    },

    async readStream(stream, opts = {}) {
      const fromVersion = opts.fromVersion ?? 0;
      const events: RecordedEvent[] = [];
      let currentVersion = -1;
      try {
        for await (const resolved of client.readStream(stream, { fromRevision: START })) {
          const e = resolved.event;
          if (!e) continue;
          currentVersion = Number(e.revision);
          if (currentVersion >= fromVersion && events.length < (opts.maxCount ?? Number.MAX_SAFE_INTEGER)) {
            events.push(toRecorded(e as never));
          }
        }
      } catch (err) {
        if (err instanceof StreamNotFoundError) return { events: [], currentVersion: -1 };
        throw err;
      }
      return { events, currentVersion };
    },

    readAll,

    subscribeToAll(fromPosition, handler) {
      return startCatchUpSubscription({
        fromPosition,
        handler,
        readAfter: (position) => readAll({ fromPosition: position, maxCount: batchSize }),
        batchSize,
        onAppended: appended.onAppended,
        pollIntervalMs,
        onError:
          options.onSubscriptionError ?? ((error) => console.error(`serp-api: event subscription: ${String(error)}`)),
      });
    },

    async headPosition() {
      for await (const resolved of client.readAll({
        fromPosition: 'end',
        direction: 'backwards',
        maxCount: 50,
        filter: excludeSystemEvents(),
      })) {
        const e = resolved.event;
        if (e?.position && !e.type.startsWith('$') && !e.streamId.startsWith('$')) {
          return positionToNumber(e.position.prepare);
        }
      }
      return 0;
    },

    async close() {
      closed = true;
      await pending.settled();
      appended.clear();
      await client.dispose();
    },
  };
};
