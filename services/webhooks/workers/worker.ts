import { randomBytes } from 'node:crypto';
import type { ReadModelQueries } from '../../../projections/index.js';
import { type Config, tierShare } from '../../config/config.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ReadModelStore } from '../../ports/readModelStore.js';
import type { Resolver } from '../commands/webhookSafety.js';
import { systemResolver } from '../commands/webhookSafety.js';
import { type AttemptReport, createDeliverer } from './deliverer.js';
import { createResultSummaries } from './messages.js';
import { createWebhookRouter } from './router.js';
import { createSender } from './sender.js';

/**
 * The delivery worker's configuration: retries, timeouts, attempts in flight, which hosts it may call, links' origin,
 * and the tiers, whose share weighs a key's deliveries against other keys' (docs/webhooks.md#fair-share).
 */
export type WebhookSettings = Pick<
  Config,
  | 'webhookBackoffMs'
  | 'webhookTimeoutMs'
  | 'webhookConcurrency'
  | 'webhookAllowHttp'
  | 'webhookAllowPrivate'
  | 'publicBaseUrl'
  | 'tiers'
>;

export const WEBHOOK_GIVE_UP_MS = 24 * 3_600_000;

/** a key's weight in the deliverer's fair queue: its tier's share, looked up once a minute at most */
const keyShares = (queries: ReadModelQueries, tiers: Config['tiers']) => {
  const shareOfTier = tierShare(tiers);
  const known = new Map<string, number>();
  let since = Date.now();
  return (keyId: string) => {
    if (Date.now() - since > 60_000 || known.size > 10_000) {
      known.clear();
      since = Date.now();
    }
    let share = known.get(keyId);
    if (share === undefined) {
      share = shareOfTier(queries.keys.byId(keyId)?.tier ?? '');
      known.set(keyId, share);
    }
    return share;
  };
};

/**
 * The webhook delivery worker (docs/webhooks.md): the router turning the log into deliveries, and the deliverer
 * sending the outbox. It runs on the write side beside the monitor worker: the pipeline thread in embedded mode
 * (`sole`: one process per data directory, so claims left by a previous life of it are dead at once), every
 * dispatcher process in distributed mode (two are safe: deliveries are scheduled on derived ids, and every attempt
 * is claimed on its stream before the POST).
 */
export const createWebhookWorker = (parts: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  projected(position: number): Promise<unknown>;
  pepper: string;
  config: WebhookSettings;
  sole: boolean;
  resolve?: Resolver;
  tickMs?: number;
  onAttempt?: (report: AttemptReport) => void;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}) => {
  const { config } = parts;
  const worker = `webhooks-${process.pid}-${randomBytes(3).toString('hex')}`;
  const sender = createSender({
    allowHttp: config.webhookAllowHttp,
    allowPrivate: config.webhookAllowPrivate,
    resolve: parts.resolve ?? systemResolver,
    timeoutMs: config.webhookTimeoutMs,
    maxSockets: config.webhookConcurrency,
  });
  // one cache of what messages tell of results for the router and the deliverer: a replay's thousand messages about
  // one cached search read its result once, and the router forgets a result reparsed or purged for both
  const summaries = createResultSummaries(parts.queries);
  const deliverer = createDeliverer({
    eventStore: parts.eventStore,
    queries: parts.queries,
    handle: parts.handle,
    projected: parts.projected,
    sender,
    pepper: parts.pepper,
    config: {
      backoffMs: config.webhookBackoffMs,
      timeoutMs: config.webhookTimeoutMs,
      concurrency: config.webhookConcurrency,
      tickMs: parts.tickMs ?? 100,
      giveUpAfterMs: WEBHOOK_GIVE_UP_MS,
    },
    worker,
    ...(parts.sole ? { staleBefore: Date.now() } : {}),
    shareOf: keyShares(parts.queries, config.tiers),
    summaries,
    onAttempt: parts.onAttempt,
    log: parts.log,
  });
  const router = createWebhookRouter({
    eventStore: parts.eventStore,
    readModels: parts.readModels,
    queries: parts.queries,
    handle: parts.handle,
    projected: parts.projected,
    baseUrl: (config.publicBaseUrl ?? '').replace(/\/+$/, ''),
    summaries,
    onScheduled: (list) => {
      for (const s of list) deliverer.remember(s);
      deliverer.kick();
    },
    log: parts.log,
  });
  return {
    async start() {
      await router.start();
      deliverer.start();
    },
    async stop() {
      await router.stop();
      await deliverer.stop();
      sender.close();
    },
  };
};
