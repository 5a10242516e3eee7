import { randomUUID } from 'node:crypto';
import {
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  type MsgRequest,
  type NextMsgRequest,
  type StoredMsg,
} from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import {
  type AppendResult,
  type EventStore,
  type ExpectedVersion,
  expectedVersionMatches,
  type ReadStreamResult,
  type RecordedEvent,
  StoreUnavailableError,
  WrongExpectedVersionError,
} from '../../ports/eventStore.js';
import { createAppendSignal, createPendingTracker, startCatchUpSubscription } from './catchUpSubscription.js';
import { CorruptEventError, encode } from './sqliteCodec.js';

/**
 * The event store on NATS JetStream (docs/distributed.md#the-jetstream-event-store).
 *
 * - One JetStream stream (`SERP_EVENTS`) holds every event stream; an event stream is one subject,
 *   `{prefix}.{name}` with the name escaped into a single subject token.
 * - One append is ONE message holding all of its events, so an append is atomic; its headers carry the first
 *   version and the count, so the stream's version is known from its last message alone.
 * - Optimistic concurrency is the server's: every append says the sequence of the subject's last message
 *   (`Nats-Expected-Last-Subject-Sequence`, 0 for a new stream), so two writers can never both extend one version.
 * - Global order is the JetStream stream sequence. An event's global position is `sequence × 1024 + index` inside
 *   its message: strictly increasing, gap-tolerant, and exact in a JavaScript number up to 2^43 messages. That is
 *   also why one append holds at most 1,024 events.
 * - Reads use batched direct gets (nats-server 2.11+): ranges of the log and of one subject without a consumer.
 * - Durability is the server's: every configuration we ship sets `sync_interval: always`, and a clustered stream
 *   has 3 replicas, so an acknowledged append is fsync'd on a quorum.
 */
export const EVENTS_PER_MESSAGE = 1024;

export interface JetStreamEventStoreOptions {
  nc: NatsConnection;
  /** JetStream stream name (default SERP_EVENTS) */
  stream?: string;
  /** subject prefix (default serp.events) */
  subjectPrefix?: string;
  /** replicas of the stream when it is created (1 on a single server, 3 on a cluster) */
  replicas?: number;
  /** close `nc` on close() (the store owns its connection) */
  ownsConnection?: boolean;
  /** a live subscription re-reads at least this often (default 1,000 ms); appends wake it at once */
  pollIntervalMs?: number;
  /** most events handed to a subscription handler at once (default 500) */
  batchSize?: number;
  onSubscriptionError?: (error: unknown) => void;
  /** how long an append or a read waits for JetStream (default 15 s) */
  timeoutMs?: number;
  /**
   * how long one send of an append waits for its acknowledgement before it is sent again, within `timeoutMs`
   * (default 2 s: an acknowledgement takes milliseconds, a stream re-electing its leader seconds)
   */
  sendTimeoutMs?: number;
  /** how long each request that finds or creates the stream waits (default `timeoutMs`; the caller tries again) */
  setupTimeoutMs?: number;
}

const HDR_VERSION = 'Serp-Version';
const HDR_COUNT = 'Serp-Count';
const HDR_STREAM = 'Serp-Stream';
/** the server's error code for a failed Nats-Expected-Last-Subject-Sequence check */
const WRONG_LAST_SUBJECT_SEQUENCE = 10071;

/** one subject token from any stream name: [A-Za-z0-9_-] kept, every other UTF-8 byte as ~HH */
export const subjectToken = (name: string) => {
  if (name.length === 0) throw new TypeError('stream name must not be empty');
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `~${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
};

const StoredEvent = z.object({
  type: z.string().min(1),
  data: z.unknown(),
  metadata: z.object({
    eventId: z.string().min(1),
    correlationId: z.string().optional(),
    causationId: z.string().optional(),
    recordedAt: z.string().min(1),
  }),
});
const StoredBody = z.array(StoredEvent).min(1).max(EVENTS_PER_MESSAGE);

interface Tail {
  /** stream sequence of the subject's last message, 0 when none */
  seq: number;
  /** version of the event stream's last event, -1 when none */
  version: number;
}

const versionOf = (m: StoredMsg) => {
  const first = Number(m.header?.get(HDR_VERSION));
  const count = Number(m.header?.get(HDR_COUNT));
  if (!Number.isInteger(first) || first < 0 || !Number.isInteger(count) || count < 1) {
    throw new CorruptEventError(m.seq * EVENTS_PER_MESSAGE, 'message without valid Serp-Version/Serp-Count headers');
  }
  return { first, count };
};

const decode = (m: StoredMsg): RecordedEvent[] => {
  const { first } = versionOf(m);
  const streamName = m.header?.get(HDR_STREAM) ?? '';
  let body: z.infer<typeof StoredBody>;
  try {
    const parsed = StoredBody.safeParse(JSON.parse(m.string()));
    if (!parsed.success) throw new CorruptEventError(m.seq * EVENTS_PER_MESSAGE, parsed.error.message);
    body = parsed.data;
  } catch (err) {
    if (err instanceof CorruptEventError) throw err;
    throw new CorruptEventError(m.seq * EVENTS_PER_MESSAGE, String(err));
  }
  return body.map((e, i) => ({
    streamName,
    streamVersion: first + i,
    globalPosition: m.seq * EVENTS_PER_MESSAGE + i,
    type: e.type,
    data: e.data,
    metadata: e.metadata,
  }));
};

const isWrongLastSequence = (err: unknown) =>
  typeof err === 'object' &&
  err !== null &&
  ((err as { code?: unknown }).code === WRONG_LAST_SUBJECT_SEQUENCE ||
    (err as { apiError?: () => { err_code?: number } }).apiError?.().err_code === WRONG_LAST_SUBJECT_SEQUENCE ||
    /wrong last sequence/i.test(String((err as Error).message)));

/** no answer in time (as opposed to an answer that refuses): the request may have been lost with a stream leader */
const isNoAnswer = (err: unknown) =>
  /timeout|timed out|no responders|503/i.test(String((err as Error)?.message ?? err)) ||
  (err as { code?: unknown })?.code === 'TIMEOUT' ||
  (err as { name?: unknown })?.name === 'TimeoutError' ||
  (err as { name?: unknown })?.name === 'NoRespondersError';

/** a "no message" answer of a get (404 / 10037) as opposed to a real failure */
const isNoMessage = (err: unknown) =>
  /message not found|no message found|10037|\b404\b/i.test(String((err as Error)?.message ?? err));

/** what the service may tell a caller: a conflict or bad input as itself, anything from NATS as "unavailable" */
const unavailable = (err: unknown): never => {
  if (
    err instanceof WrongExpectedVersionError ||
    err instanceof TypeError ||
    err instanceof CorruptEventError ||
    err instanceof StoreUnavailableError
  ) {
    throw err;
  }
  throw new StoreUnavailableError('event store (JetStream)', err);
};

export const serverSupportsBatchGet = (version: string) => {
  const [maj, min] = version.split('.').map(Number);
  return maj > 2 || (maj === 2 && min >= 11);
};

export type JetStreamEventStore = EventStore & { readonly streamName: string };

export const createJetStreamEventStore = async (options: JetStreamEventStoreOptions): Promise<JetStreamEventStore> => {
  const { nc } = options;
  const version = nc.info?.version ?? '0.0.0';
  if (!serverSupportsBatchGet(version)) {
    throw new Error(
      `the JetStream event store needs nats-server 2.11 or newer (batched direct get); this is ${version}`,
    );
  }
  const streamName = options.stream ?? 'SERP_EVENTS';
  const prefix = options.subjectPrefix ?? 'serp.events';
  const notifySubject = `${prefix}-appended`;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const batchSize = options.batchSize ?? 500;
  const timeout = options.timeoutMs ?? 15_000;
  const sendTimeout = Math.min(timeout, options.sendTimeoutMs ?? 2_000);
  const jsm: JetStreamManager = await jetstreamManager(nc, { timeout });
  const quick: JetStreamManager = await jetstreamManager(nc, { timeout: sendTimeout, checkAPI: false });
  const js = jetstream(nc, { timeout });

  const setup = await jetstreamManager(nc, { timeout: options.setupTimeoutMs ?? timeout, checkAPI: false });
  try {
    await setup.streams.info(streamName);
  } catch (err) {
    if (!/stream not found|10059/i.test(String((err as Error).message))) throw err;
    try {
      await setup.streams.add({
        name: streamName,
        subjects: [`${prefix}.>`],
        storage: 'file' as never,
        num_replicas: options.replicas ?? 1,
        allow_direct: true,
        max_msg_size: 8 * 1024 * 1024,
        // an event log: nothing expires, nothing is discarded, a full disk refuses new appends
        discard: 'new' as never,
        duplicate_window: 2 * 60 * 1_000_000_000,
      });
    } catch (addErr) {
      // another process created it first
      if (!/already in use|10058/i.test(String((addErr as Error).message))) throw addErr;
    }
  }

  const subjectOf = (stream: string) => `${prefix}.${subjectToken(stream)}`;
  /** the last known message of each event stream: skips a read before an append on a hot stream */
  const tails = new Map<string, Tail>();
  const remember = (stream: string, tail: Tail) => {
    tails.delete(stream);
    tails.set(stream, tail);
    if (tails.size > 10_000) tails.delete(tails.keys().next().value as string);
  };
  const pending = createPendingTracker();
  let closed = false;
  let closing: Promise<void> | undefined;
  const appended = createAppendSignal();
  // appends of other processes wake this one's subscriptions at once (polling only backs that up)
  const notifications = nc.subscribe(notifySubject, { callback: () => appended.notify() });

  /**
   * A request only the stream leader answers, asked again every `sendTimeout` until `timeout`: one that reached a
   * leader as it died gets no answer at all, and the next goes to the new leader
   * (docs/distributed.md#when-a-nats-node-is-lost). For reads, which change nothing.
   */
  const askLeader = async <T>(ask: (m: JetStreamManager) => Promise<T>): Promise<T> => {
    const deadline = Date.now() + timeout;
    for (;;) {
      try {
        return await ask(deadline - Date.now() < sendTimeout ? jsm : quick);
      } catch (err) {
        if (!isNoAnswer(err) || isNoMessage(err) || deadline - Date.now() <= 0) throw err;
      }
    }
  };

  /** the subject's last message, asked of the stream leader (direct gets may be served by a lagging replica) */
  const lastMessage = async (stream: string): Promise<StoredMsg | undefined> => {
    try {
      return (
        (await askLeader((m) => m.streams.getMessage(streamName, { last_by_subj: subjectOf(stream) }))) ?? undefined
      );
    } catch (err) {
      if (isNoMessage(err)) return undefined;
      throw err;
    }
  };

  const loadTail = async (stream: string): Promise<Tail> => {
    const last = await lastMessage(stream);
    if (!last) return { seq: 0, version: -1 };
    const { first, count } = versionOf(last);
    const tail = { seq: last.seq, version: first + count - 1 };
    remember(stream, tail);
    return tail;
  };

  /** every message of a range by batched direct get; `upTo` waits for a lagging replica to hold it */
  const getRange = async (startSeq: number, max: number, subject?: string, upTo?: number): Promise<StoredMsg[]> => {
    const out: StoredMsg[] = [];
    let seq = startSeq;
    for (let tries = 0; out.length < max; ) {
      let got = 0;
      try {
        const iter = await jsm.direct.getBatch(streamName, {
          seq,
          batch: Math.min(max - out.length, 256),
          ...(subject ? { next_by_subj: subject } : {}),
        });
        for await (const m of iter) {
          if (upTo !== undefined && m.seq > upTo) break;
          out.push(m);
          got++;
          seq = m.seq + 1;
        }
      } catch (err) {
        // the server ends a batch past the last message with "no message found"
        if (!isNoMessage(err)) throw err;
      }
      if (upTo !== undefined && out.length > 0 && out[out.length - 1].seq >= upTo) break;
      if (got === 0) {
        if (upTo === undefined || tries++ > 50) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return out;
  };

  /**
   * One append's message, sent again until the stream answers or `timeout` has passed. A request that reaches a stream
   * whose leader has just died gets no answer at all, and a new leader is elected within seconds; waiting the whole
   * `timeout` for that lost answer is what kept a submit waiting after a NATS node's restart
   * (docs/distributed.md#when-a-nats-node-is-lost). A send again expects the same last sequence, so it can never be
   * written beside the first; the server checks that before its dedupe, so when the first send did land the second
   * is refused as a conflict: then the subject's first message after the expected sequence is read, and when it
   * carries this message's `Nats-Msg-Id` the append is acknowledged at its sequence. Written once, never twice.
   */
  const publishOnce = async (
    subject: string,
    body: string,
    h: ReturnType<typeof headers>,
    lastSubjectSequence: number,
  ): Promise<{ seq: number }> => {
    const msgID = randomUUID();
    const deadline = Date.now() + timeout;
    let lost = false;
    for (;;) {
      const left = deadline - Date.now();
      try {
        return await js.publish(subject, body, {
          headers: h,
          msgID,
          expect: { lastSubjectSequence },
          timeout: Math.max(1, Math.min(sendTimeout, left)),
        });
      } catch (err) {
        if (lost && isWrongLastSequence(err)) {
          // asked of the leader (a replica's direct get may not hold it yet); its MSG.GET takes next_by_subj, which
          // the client's type lists only for direct gets
          const query: NextMsgRequest = { seq: lastSubjectSequence + 1, next_by_subj: subject };
          const next = await askLeader((m) => m.streams.getMessage(streamName, query as unknown as MsgRequest)).catch(
            (getErr: unknown) => {
              if (isNoMessage(getErr)) return undefined;
              throw getErr;
            },
          );
          if (next?.header?.get('Nats-Msg-Id') === msgID) return { seq: next.seq };
          throw err;
        }
        if (!isNoAnswer(err) || deadline - Date.now() <= 0) throw err;
        lost = true;
      }
    }
  };

  const append = async (
    stream: string,
    events: Parameters<EventStore['appendToStream']>[1],
    expectedVersion: ExpectedVersion,
  ): Promise<AppendResult> => {
    if (events.length === 0) throw new TypeError('an append needs at least one event');
    if (events.length > EVENTS_PER_MESSAGE) {
      throw new TypeError(`one append holds at most ${EVENTS_PER_MESSAGE} events, got ${events.length}`);
    }
    const encoded = events.map(encode);
    const body = `[${encoded.map((e) => `{"type":${JSON.stringify(e.type)},"data":${e.data},"metadata":${e.metadata}}`).join(',')}]`;
    const subject = subjectOf(stream);
    for (let attempt = 0; ; attempt++) {
      const cached = tails.get(stream);
      let tail = cached ?? (await loadTail(stream));
      if (!expectedVersionMatches(expectedVersion, tail.version) && cached) tail = await loadTail(stream);
      if (!expectedVersionMatches(expectedVersion, tail.version)) {
        throw new WrongExpectedVersionError(stream, expectedVersion, tail.version);
      }
      const h = headers();
      h.set(HDR_STREAM, stream);
      h.set(HDR_VERSION, String(tail.version + 1));
      h.set(HDR_COUNT, String(events.length));
      try {
        const ack = await publishOnce(subject, body, h, tail.seq);
        const version = tail.version + events.length;
        remember(stream, { seq: ack.seq, version });
        nc.publish(notifySubject);
        appended.notify();
        return { nextExpectedVersion: version, lastGlobalPosition: ack.seq * EVENTS_PER_MESSAGE + events.length - 1 };
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
        tails.delete(stream);
        // 'any' may go on top of whatever won; an exact expectation has lost
        if (expectedVersion === 'any' && attempt < 50) continue;
        const now = await loadTail(stream);
        if (expectedVersionMatches(expectedVersion, now.version) && attempt < 50) continue;
        throw new WrongExpectedVersionError(stream, expectedVersion, now.version);
      }
    }
  };

  const readAll = async ({ fromPosition = 0, maxCount = 1000 }: { fromPosition?: number; maxCount?: number } = {}) => {
    if (maxCount <= 0) return [];
    const startSeq = Math.max(1, Math.floor(fromPosition / EVENTS_PER_MESSAGE));
    const out: RecordedEvent[] = [];
    let seq = startSeq;
    while (out.length < maxCount) {
      const asked = Math.min(256, maxCount);
      const msgs = await getRange(seq, asked);
      for (const m of msgs) {
        for (const e of decode(m)) {
          if (e.globalPosition > fromPosition && out.length < maxCount) out.push(e);
        }
      }
      // a short range ended at the end of the log (getRange reads until it finds nothing more): asking again would
      // only find nothing, one round trip a reader per append (docs/distributed.md#the-event-log-on-jetstream)
      if (msgs.length < asked) break;
      seq = msgs[msgs.length - 1].seq + 1;
    }
    // never hand out half a message: a checkpoint inside a message would be exact anyway, but keep batches whole
    return out;
  };

  const readStream = async (
    stream: string,
    opts: { fromVersion?: number; maxCount?: number },
  ): Promise<ReadStreamResult> => {
    const fromVersion = opts.fromVersion ?? 0;
    const maxCount = opts.maxCount ?? Number.MAX_SAFE_INTEGER;
    const last = await lastMessage(stream);
    if (!last) return { events: [], currentVersion: -1 };
    const { first, count } = versionOf(last);
    const currentVersion = first + count - 1;
    remember(stream, { seq: last.seq, version: currentVersion });
    if (fromVersion > currentVersion || maxCount <= 0) return { events: [], currentVersion };
    let events: RecordedEvent[];
    if (first <= fromVersion) {
      // the common case of a command handler holding a fold: what it misses is all in the last append
      events = decode(last);
    } else {
      events = (await getRange(1, Number.MAX_SAFE_INTEGER, subjectOf(stream), last.seq)).flatMap(decode);
    }
    return {
      events: events.filter((e) => e.streamVersion >= fromVersion).slice(0, maxCount),
      currentVersion,
    };
  };

  return {
    streamName,

    appendToStream(stream, events, opts = {}) {
      if (closed) return Promise.reject(new Error('event store is closed'));
      return pending.track(append(stream, events, opts.expectedVersion ?? 'any').catch(unavailable));
    },

    readStream: (stream, opts = {}) => readStream(stream, opts).catch(unavailable),

    readAll: (opts) => readAll(opts).catch(unavailable),

    subscribeToAll(fromPosition, handler) {
      return startCatchUpSubscription({
        fromPosition,
        handler,
        readAfter: (position) => readAll({ fromPosition: position, maxCount: batchSize }),
        batchSize,
        onAppended: appended.onAppended,
        pollIntervalMs,
        onError:
          options.onSubscriptionError ??
          ((error) => console.error(`serp-api: event subscription (${streamName}): ${String(error)}`)),
      });
    },

    async headPosition() {
      const info = await askLeader((m) => m.streams.info(streamName));
      const lastSeq = info.state.last_seq;
      if (lastSeq === 0 || info.state.messages === 0) return 0;
      const m = await jsm.streams.getMessage(streamName, { seq: lastSeq });
      if (!m) return 0;
      return lastSeq * EVENTS_PER_MESSAGE + versionOf(m).count - 1;
    },

    close() {
      closing ??= (async () => {
        closed = true;
        await pending.settled();
        notifications.unsubscribe();
        appended.clear();
        if (options.ownsConnection && !nc.isClosed()) await nc.drain();
      })();
      return closing;
    },
  };
};
