import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamManager,
  type Consumer as JsConsumer,
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { JobMessage } from '../../../contracts/jobMessage.js';
import {
  type ConsumeOptions,
  type Consumer,
  concurrencyOf,
  type Delivery,
  type JobQueue,
  messageId,
  QUEUE_CLASSES,
  type QueueClass,
  type QueueStats,
  queueClassOf,
} from '../../ports/jobQueue.js';

/**
 * The job queue on NATS JetStream (docs/distributed.md#the-other-nats-adapters): a work-queue stream (`SERP_JOBS`)
 * with one subject per class (`serp.jobs.live`, `serp.jobs.live.first`, …: a lane, or a lane's express class;
 * docs/fleet.md#lanes-and-fair-share) and one durable pull consumer per class (`crawlers-live`, …) that every
 * crawler process shares, so each job goes to one crawler at a time and each class has crawler slots of its own.
 * A stream made before classes existed keeps its subject `serp.jobs` and its unfiltered consumer `crawlers`: the
 * consumer is narrowed to that subject and drained as part of the live lane.
 *
 * - Explicit acks; `working()` pushes the ack deadline back; a delivery not acked within ack wait is redelivered.
 * - Dedupe by `Nats-Msg-Id` = job id + dispatch number within the stream's duplicate window.
 * - Backoff: a nak or a throwing handler is redelivered after `backoffMs[attempt - 1]` (the last entry repeats),
 *   as an explicit delayed nak. (The consumer's own `backoff` would replace ack wait as the redelivery timer of a
 *   delivery still running, which would hand a long crawl to a second crawler.)
 * - Attempts are counted by the adapter from the server's delivery count, and the logical limit (`maxDeliver`) is
 *   enforced here: the last failure is termed and reported to `onExhausted`, and a delivery that comes back after
 *   the last attempt stalled (a crawler died) is termed and reported without running the handler. The consumer's
 *   `max_deliver` is `maxDeliver + 2`, a backstop that leaves room for that last redelivery and for a delayed enqueue.
 * - A delayed enqueue carries `Serp-Not-Before`; its first delivery is nak'd until then and not counted as an attempt.
 * - A delivery superseded by a redelivery of the same message in this process is stale: its ack, nak, working and
 *   term are ignored.
 */
export interface JetStreamJobQueueOptions {
  nc: NatsConnection;
  stream?: string;
  subject?: string;
  consumer?: string;
  replicas?: number;
  ackWaitMs: number;
  /** deliveries per message, the first included */
  maxDeliver: number;
  backoffMs?: readonly number[];
  dedupeWindowMs: number;
  ownsConnection?: boolean;
  /**
   * how long one pull waits for a message before asking again (default and least 1,000 ms): stop() waits at most this
   */
  pullExpiresMs?: number;
  onError?: (error: unknown) => void;
  /**
   * how long each request that finds or creates the stream and its consumers waits (default 15 s); the caller tries
   * again when one gets no answer (docs/distributed.md#a-cluster-on-one-machine)
   */
  setupTimeoutMs?: number;
}

const NOT_BEFORE = 'Serp-Not-Before';
const ms = (n: number) => Math.round(n * 1_000_000);

export class JobQueueClosedError extends Error {
  readonly code = 'SERP_QUEUE_CLOSED';
  constructor() {
    super('job queue is closed');
    this.name = 'JobQueueClosedError';
  }
}

/** the durable consumer of a class: `crawlers-live`, `crawlers-live-first`, … */
export const durableOf = (durable: string, cls: QueueClass) => `${durable}-${cls.replace('.', '-')}`;

/** no answer in time (as opposed to an answer that refuses): the request may have been lost with a stream leader */
const noAnswer = (err: unknown) => /timeout|timed out|no responders|503/i.test(String((err as Error)?.message ?? err));

const notFound = (err: unknown) => /consumer not found|10014/i.test(String((err as Error).message));

/** the crawlers' consumers' depth: pending, awaiting ack, and how long the oldest message has waited */
const statsOf = async (jsm: JetStreamManager, streamName: string, durable: string): Promise<QueueStats> => {
  const classes: NonNullable<QueueStats['classes']> = {};
  let pending = 0;
  let inFlight = 0;
  const infos = await Promise.all(
    [...QUEUE_CLASSES.map((c) => [c, durableOf(durable, c)] as const), ['live', durable] as const].map(
      async ([cls, name]) =>
        [
          cls,
          await jsm.consumers.info(streamName, name).catch((err) => {
            if (notFound(err)) return undefined;
            throw err;
          }),
        ] as const,
    ),
  );
  for (const [cls, info] of infos) {
    if (!info) continue;
    const c = classes[cls] ?? { pending: 0, inFlight: 0 };
    c.pending += info.num_pending;
    c.inFlight += info.num_ack_pending;
    classes[cls] = c;
    pending += info.num_pending;
    inFlight += info.num_ack_pending;
  }
  if (pending === 0) return { pending, inFlight, classes };
  const s = await jsm.streams.info(streamName);
  const oldest = await jsm.streams.getMessage(streamName, { seq: s.state.first_seq }).catch(() => null);
  return oldest
    ? { pending, inFlight, oldestPendingMs: Math.max(0, Date.now() - oldest.time.getTime()), classes }
    : { pending, inFlight, classes };
};

/**
 * The queue's depth as createJetStreamJobQueue's `stats()` reads it, for a process that does not take or give jobs
 * (a distributed api, for its metrics and the dashboard): it creates nothing. Before any crawler or dispatcher has
 * made the stream and consumer, the queue is empty.
 */
export const jetStreamQueueStats = (
  nc: NatsConnection,
  options: { stream?: string; consumer?: string } = {},
): (() => Promise<QueueStats>) => {
  let jsm: Promise<JetStreamManager> | undefined;
  return async () => {
    // a manager that could not be made (JetStream not up yet) is asked for again at the next read
    jsm ??= jetstreamManager(nc, { timeout: 15_000 }).catch((err: unknown) => {
      jsm = undefined;
      throw err;
    });
    try {
      return await statsOf(await jsm, options.stream ?? 'SERP_JOBS', options.consumer ?? 'crawlers');
    } catch (err) {
      if (/stream not found|10059/i.test(String((err as Error).message))) return { pending: 0, inFlight: 0 };
      throw err;
    }
  };
};

export const createJetStreamJobQueue = async (options: JetStreamJobQueueOptions): Promise<JobQueue> => {
  const { nc } = options;
  const streamName = options.stream ?? 'SERP_JOBS';
  const subject = options.subject ?? 'serp.jobs';
  const durable = options.consumer ?? 'crawlers';
  const backoff = options.backoffMs?.length ? options.backoffMs : [1_000];
  const pullExpiresMs = Math.max(options.pullExpiresMs ?? 1_000, 1_000);
  const onError =
    options.onError ?? ((error: unknown) => process.stderr.write(`serp-api: job queue: ${String(error)}\n`));
  // generous: creating R3 streams and consumers on a busy or just-started cluster takes seconds
  const jsm = await jetstreamManager(nc, { timeout: 15_000 });
  const js = jetstream(nc, { timeout: 15_000 });
  const setup = await jetstreamManager(nc, { timeout: options.setupTimeoutMs ?? 15_000, checkAPI: false });
  const setupJs = jetstream(nc, { timeout: options.setupTimeoutMs ?? 15_000 });

  const subjectOf = (cls: QueueClass) => `${subject}.${cls}`;
  const streamConfig = {
    name: streamName,
    subjects: [subject, `${subject}.>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: options.replicas ?? 1,
    duplicate_window: ms(options.dedupeWindowMs),
  };
  try {
    const info = await setup.streams.info(streamName);
    const subjects = info.config.subjects ?? [];
    if (
      info.config.duplicate_window !== streamConfig.duplicate_window ||
      !streamConfig.subjects.every((x) => subjects.includes(x))
    ) {
      await setup.streams.update(streamName, {
        duplicate_window: streamConfig.duplicate_window,
        subjects: [...new Set([...subjects, ...streamConfig.subjects])],
      });
    }
  } catch (err) {
    if (!/stream not found|10059/i.test(String((err as Error).message))) throw err;
    await setup.streams.add(streamConfig).catch((addErr: Error) => {
      if (!/already in use|10058/i.test(addErr.message)) throw addErr;
    });
  }
  const consumerConfig = {
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ms(options.ackWaitMs),
    max_deliver: options.maxDeliver + 2,
    // enough outstanding pulls for every crawler process's slots
    max_waiting: 4096,
  };
  /** makes the durable consumer, or brings its ack wait and attempts up to date */
  const ensureConsumer = async (name: string, filter: string) => {
    try {
      const info = await setup.consumers.info(streamName, name);
      if (
        info.config.ack_wait !== consumerConfig.ack_wait ||
        info.config.max_deliver !== consumerConfig.max_deliver ||
        info.config.filter_subject !== filter
      ) {
        await setup.consumers.update(streamName, name, {
          ack_wait: consumerConfig.ack_wait,
          max_deliver: consumerConfig.max_deliver,
          filter_subject: filter,
        });
      }
    } catch (err) {
      if (!notFound(err)) throw err;
      await setup.consumers
        .add(streamName, { ...consumerConfig, durable_name: name, filter_subject: filter })
        .catch((addErr: Error) => {
          if (!/already in use|exists|10148|10013/i.test(addErr.message)) throw addErr;
        });
    }
  };
  // a stream from before classes: its unfiltered consumer would overlap the classes' (a work queue refuses that),
  // so it keeps only the old subject and is drained with the live lane
  const legacy = await setup.consumers.info(streamName, durable).then(
    () => true,
    (err) => {
      if (notFound(err)) return false;
      throw err;
    },
  );
  if (legacy) await ensureConsumer(durable, subject);
  // all at once: each is a round trip to the meta leader and a replicated consumer's election, independent of the others
  await Promise.all(QUEUE_CLASSES.map((cls) => ensureConsumer(durableOf(durable, cls), subjectOf(cls))));
  const jsConsumers = new Map<QueueClass | 'legacy', JsConsumer>(
    await Promise.all(
      QUEUE_CLASSES.map(
        async (cls) => [cls, await setupJs.consumers.get(streamName, durableOf(durable, cls))] as const,
      ),
    ),
  );
  if (legacy) jsConsumers.set('legacy', await setupJs.consumers.get(streamName, durable));

  let closed = false;
  const consumers = new Set<Consumer>();
  /** the newest delivery count seen per stream sequence in this process: older deliveries are stale */
  const newest = new Map<number, number>();

  const backoffFor = (attempt: number) => backoff[Math.min(attempt - 1, backoff.length - 1)] ?? 0;

  return {
    keepsMessages: true,
    async enqueue(raw, opts = {}) {
      if (closed) throw new JobQueueClosedError();
      const message = JobMessage.parse(raw);
      const h = headers();
      if (opts.delayMs && opts.delayMs > 0) h.set(NOT_BEFORE, String(Date.now() + opts.delayMs));
      // a send lost with the stream's leader gets no answer, and a new leader answers within seconds: sent again
      // after 2 s, within the 15 s an enqueue may take (docs/distributed.md#when-a-nats-node-is-lost). The same
      // Nats-Msg-Id makes a second send of a message that did land a duplicate the stream keeps once.
      const deadline = Date.now() + 15_000;
      for (;;) {
        try {
          const ack = await js.publish(subjectOf(queueClassOf(message)), JSON.stringify(message), {
            msgID: messageId(message),
            headers: h,
            timeout: Math.max(1, Math.min(2_000, deadline - Date.now())),
          });
          return { duplicate: ack.duplicate };
        } catch (err) {
          if (!noAnswer(err) || deadline - Date.now() <= 0 || closed) throw err;
        }
      }
    },

    consume(handler, consumeOptions: ConsumeOptions) {
      if (closed) throw new JobQueueClosedError();
      const slots = concurrencyOf(consumeOptions.concurrency);
      let stopping = false;

      const exhaust = async (message: JobMessage, attempts: number) => {
        try {
          await consumeOptions.onExhausted?.(message, attempts);
        } catch (err) {
          onError(err);
        }
      };

      const deliver = async (msg: JsMsg) => {
        const seq = msg.info.streamSequence;
        const count = msg.info.deliveryCount;
        newest.set(seq, Math.max(newest.get(seq) ?? 0, count));
        const notBefore = Number(msg.headers?.get(NOT_BEFORE) || 0);
        const attempt = count - (notBefore ? 1 : 0);
        if (notBefore && attempt === 0) {
          const wait = notBefore - Date.now();
          if (wait > 5) return msg.nak(wait);
        }
        let message: JobMessage;
        try {
          message = JobMessage.parse(msg.json());
        } catch (err) {
          onError(new Error(`dropped a malformed job message (seq ${seq}): ${String(err)}`));
          return msg.term('malformed');
        }
        if (attempt > options.maxDeliver) {
          // the last attempt stalled (its crawler died or hung): give up now
          msg.term('max attempts');
          newest.delete(seq);
          return exhaust(message, options.maxDeliver);
        }
        let settled = false;
        const current = () => !settled && newest.get(seq) === count;
        const settle = () => {
          settled = true;
          if (newest.get(seq) === count) newest.delete(seq);
        };
        const fail = async (delayMs: number) => {
          if (!current()) return;
          settle();
          if (attempt >= options.maxDeliver) {
            msg.term('max attempts');
            await exhaust(message, attempt);
          } else msg.nak(delayMs);
        };
        const delivery: Delivery = {
          message,
          attempt: Math.max(attempt, 1),
          async ack() {
            if (!current()) return;
            settle();
            await msg.ackAck().catch((err: unknown) => onError(err));
          },
          nak: (delayMs) => fail(delayMs ?? backoffFor(attempt)),
          async working() {
            if (current()) msg.working();
          },
          async term(reason) {
            if (!current()) return;
            settle();
            msg.term(reason);
          },
        };
        try {
          await handler(delivery);
        } catch {
          await fail(backoffFor(attempt));
        }
      };

      const loop = async (jsConsumer: JsConsumer) => {
        while (!stopping) {
          let msg: JsMsg | null = null;
          try {
            msg = await jsConsumer.next({ expires: pullExpiresMs });
          } catch (err) {
            if (stopping) break;
            onError(err);
            await new Promise((r) => setTimeout(r, 500));
            continue;
          }
          if (!msg) continue;
          // taken after stop(): hand it straight back
          if (stopping) {
            msg.nak();
            break;
          }
          await deliver(msg);
        }
      };
      const loops = [...jsConsumers].flatMap(([cls, jsConsumer]) =>
        Array.from({ length: slots[cls === 'legacy' ? 'live' : cls] }, () => loop(jsConsumer)),
      );
      const consumer: Consumer = {
        async stop() {
          stopping = true;
          await Promise.all(loops);
          consumers.delete(consumer);
        },
      };
      consumers.add(consumer);
      return consumer;
    },

    stats: () => statsOf(jsm, streamName, durable),

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...consumers].map((c) => c.stop()));
      if (options.ownsConnection && !nc.isClosed()) await nc.drain();
    },
  };
};
