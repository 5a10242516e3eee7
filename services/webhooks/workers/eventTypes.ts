import type { z } from 'zod';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../contracts/webhookEvents.js';
import {
  MonitorAlertData,
  MonitorRunCompletedData,
  QuotaData,
  SearchCompletedData,
  SearchFailedData,
} from '../../../contracts/webhookPayloads.js';
import { endedElsewhere, misplacedSentence } from '../../../domain/location/placement.js';
import { messageIdOf } from '../../../domain/webhook/ids.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import { failureOfJob, publicFailureDetail } from '../../answers/publicFailure.js';
import type { EventType, Handled, LogEvent } from '../../reactor/reactor.js';
import type { Message, ResultSummaries } from './messages.js';
import { firstOfNextMonth, QUOTA_LOW_SHARE, type QuotaTracker, type UsageEvent } from './quota.js';

/** What a build reads with, besides its event. */
export interface BuildContext {
  queries: ReadModelQueries;
  /** the origin links in `data` are built on (SERP_PUBLIC_BASE_URL); empty: paths */
  baseUrl: string;
  summaries: ResultSummaries;
  usage: QuotaTracker;
  /**
   * whether an endpoint of the key takes this type (of this monitor, for a monitor.* type): asked before anything
   * costly is read (a result is tens of kB), so an event nobody takes costs one lookup
   */
  wants(keyId: string, monitorId?: string): boolean;
}

/** A message as its type's build makes it: its id is the event's unless it names its own. */
interface Built<P extends z.ZodType> {
  keyId: string;
  monitorId?: string;
  messageId?: string;
  occurredAt: string;
  data: z.infer<P>;
}

/** One webhook event type: when it is sent, the log events it is made from, what its `data` holds, how it is made. */
interface EventTypeSpec<S extends EventType, P extends z.ZodObject> {
  /** when it is sent, in a few words (the docs' table) */
  sentWhen: string;
  sources: readonly S[];
  payload: P;
  /** the message one event of `sources` makes, or none (nobody takes it; the event is not one that tells) */
  build(e: Handled<S>, ctx: BuildContext): Built<P> | undefined | Promise<Built<P> | undefined>;
}

const eventType = <S extends EventType, P extends z.ZodObject>(spec: EventTypeSpec<S, P>) => spec;

/** any entry, as the registry holds them (each build takes the events of its own sources only) */
interface AnySpec extends Omit<EventTypeSpec<EventType, z.ZodObject>, 'build'> {
  build(e: never, ctx: BuildContext): Built<z.ZodType> | undefined | Promise<Built<z.ZodType> | undefined>;
}

const jsonEndpoint = (baseUrl: string, jobId: string) => `${baseUrl}/v1/search/${jobId}?output=json`;

/** camelCase keys as snake_case (the alert's fields as a receiver reads them) */
type Snake<S extends string> = S extends `${infer H}${infer R}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<R>}`
  : S;
const snakeKeys = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v])) as {
    [K in keyof T as Snake<K & string>]: T[K];
  };

/** a quota line crossed by a reservation: `share` of the month's quota (rounded up) */
const quotaLine = (share: number) => async (e: UsageEvent, ctx: BuildContext) => {
  const { keyId, month } = e.data;
  const crossing = await ctx.usage.crossing(e, ctx.wants(keyId));
  if (!crossing || e.type !== 'QuotaReserved') return undefined;
  const quota = ctx.queries.keys.byId(keyId)?.monthlyQuota ?? 0;
  const line = Math.ceil(quota * share);
  if (quota <= 0 || !(crossing.before < line && crossing.after >= line)) return undefined;
  return {
    keyId,
    occurredAt: e.data.reservedAt,
    data: {
      key_id: keyId,
      month: `${month.slice(0, 4)}-${month.slice(4, 6)}`,
      used: crossing.after,
      monthly_quota: quota,
      remaining: Math.max(0, quota - crossing.after),
      renews_at: firstOfNextMonth(month),
    },
  };
};

/**
 * Every webhook event type, one entry each (docs/webhooks.md#event-types): the one place a type is added. Its name is
 * declared in WEBHOOK_EVENT_TYPES (the events' and bodies' contract), and the compiler then asks for its entry here;
 * the router's and the replay's filter (`SOURCE_TYPES`), the registration error's example, the docs' table
 * (`npm run docs:webhooks`) and the tests are read from it. The `webhook-id` of a message is derived from the id of
 * the event it tells of (a quota line's, from the key and the month).
 */
export const WEBHOOK_EVENTS = {
  'search.completed': eventType({
    sentWhen: 'a search of the key ended with a result (any surface: /v1, compat, MCP, the CLI, a monitor)',
    sources: ['CrawlCompleted', 'SearchAnsweredFromCache'],
    payload: SearchCompletedData,
    build(e, ctx) {
      const job = ctx.queries.jobs.byId(e.data.jobId);
      if (!job || !ctx.wants(job.keyId, job.monitor?.monitorId)) return undefined;
      // placed elsewhere even on another route: the failure's fields, and none of its results
      // (docs/locations.md#what-each-surface-answers)
      const check = e.type === 'CrawlCompleted' && endedElsewhere(e) ? e.data.locationCheck : undefined;
      return {
        keyId: job.keyId,
        ...(job.monitor ? { monitorId: job.monitor.monitorId } : {}),
        occurredAt: e.recordedAt,
        data: {
          job_id: job.jobId,
          status: job.status === 'partial' ? ('partial' as const) : ('done' as const),
          cached: job.cached,
          keyword: job.request.keyword,
          ...(job.request.location ? { location: job.request.location } : {}),
          device: job.request.device ?? 'desktop',
          ...(check
            ? {
                organic_results_count: 0,
                top_results: [],
                failure: 'location_mismatch' as const,
                detail: misplacedSentence({
                  status: check.status,
                  ...(check.requested ? { requested: check.requested } : {}),
                  ...(check.detected?.name ? { detected: check.detected.name } : {}),
                }),
              }
            : ctx.summaries.of(job.sourceJobId ?? job.jobId)),
          ...(job.monitor ? { monitor_id: job.monitor.monitorId, run_id: job.monitor.runId } : {}),
          json_endpoint: jsonEndpoint(ctx.baseUrl, job.jobId),
          completed_at: e.recordedAt,
        },
      };
    },
  }),
  'search.failed': eventType({
    sentWhen: 'a search of the key failed for good (after the crawler’s retries)',
    sources: ['CrawlFailed'],
    payload: SearchFailedData,
    build(e, ctx) {
      if (!e.data.final) return undefined;
      const job = ctx.queries.jobs.byId(e.data.jobId);
      if (!job || !ctx.wants(job.keyId, job.monitor?.monitorId)) return undefined;
      const failure = failureOfJob(job);
      return {
        keyId: job.keyId,
        ...(job.monitor ? { monitorId: job.monitor.monitorId } : {}),
        occurredAt: e.recordedAt,
        data: {
          job_id: job.jobId,
          status: 'failed' as const,
          keyword: job.request.keyword,
          failure: failure?.kind ?? failure?.code ?? 'failed',
          detail: publicFailureDetail(job),
          ...(job.monitor ? { monitor_id: job.monitor.monitorId, run_id: job.monitor.runId } : {}),
          json_endpoint: jsonEndpoint(ctx.baseUrl, job.jobId),
          failed_at: e.recordedAt,
        },
      };
    },
  }),
  'monitor.run_completed': eventType({
    sentWhen: 'a run of one of the key’s monitors completed (every keyword checked or skipped)',
    sources: ['MonitorRunCompleted'],
    payload: MonitorRunCompletedData,
    build(e, ctx) {
      const d = e.data;
      if (!ctx.wants(d.keyId, d.monitorId)) return undefined;
      return {
        keyId: d.keyId,
        monitorId: d.monitorId,
        occurredAt: e.recordedAt,
        data: {
          monitor_id: d.monitorId,
          run_id: d.runId,
          trigger: d.trigger,
          checked: d.checked,
          failed: d.failed,
          skipped: d.skipped,
          ...(d.skipReason ? { skip_reason: d.skipReason } : {}),
          completed_at: d.completedAt,
          history_endpoint: `${ctx.baseUrl}/v1/monitors/${d.monitorId}/history`,
        },
      };
    },
  }),
  'monitor.alert': eventType({
    sentWhen: 'a completed run raised an alert (docs/rank-tracking.md#alerts)',
    sources: ['MonitorAlertRaised'],
    payload: MonitorAlertData,
    build(e, ctx) {
      const { keyId, monitorId, runId, alertId, kind, raisedAt, ...rest } = e.data;
      if (!ctx.wants(keyId, monitorId)) return undefined;
      return {
        keyId,
        monitorId,
        occurredAt: raisedAt,
        data: {
          alert_id: alertId,
          monitor_id: monitorId,
          run_id: runId,
          kind,
          ...snakeKeys(rest),
          alerts_endpoint: `${ctx.baseUrl}/v1/monitors/${monitorId}/alerts`,
        },
      };
    },
  }),
  'quota.low': eventType({
    sentWhen: `a reservation reached ${QUOTA_LOW_SHARE * 100} % of the key’s monthly quota (once per key and month)`,
    sources: ['QuotaReserved', 'QuotaReleased'],
    payload: QuotaData,
    build: async (e, ctx) => {
      const built = await quotaLine(QUOTA_LOW_SHARE)(e, ctx);
      return built && { ...built, messageId: messageIdOf('quota.low', built.keyId, e.data.month) };
    },
  }),
  'quota.exhausted': eventType({
    sentWhen: 'a reservation reached 100 % of the key’s monthly quota (once per key and month)',
    sources: ['QuotaReserved', 'QuotaReleased'],
    payload: QuotaData,
    build: async (e, ctx) => {
      const built = await quotaLine(1)(e, ctx);
      return built && { ...built, messageId: messageIdOf('quota.exhausted', built.keyId, e.data.month) };
    },
  }),
} satisfies { [T in WebhookEventType]: AnySpec };

/** each log event type and the webhook event types made from it, in WEBHOOK_EVENT_TYPES' order */
const bySource = new Map<string, Array<[WebhookEventType, AnySpec]>>();
for (const type of WEBHOOK_EVENT_TYPES) {
  const spec: AnySpec = WEBHOOK_EVENTS[type];
  for (const source of spec.sources) bySource.set(source, [...(bySource.get(source) ?? []), [type, spec]]);
}

/** The log events a message can be made from: what the router follows and a replay reads again. */
export const SOURCE_TYPES: ReadonlySet<EventType> = new Set(bySource.keys() as Iterable<EventType>);

/**
 * The messages one event of the log makes, read against the read models as they are once that event is projected.
 * `interested` says whether an endpoint of the key takes a type (live routing: any endpoint; a replay: its endpoint).
 */
export const messagesOf = async (
  e: LogEvent,
  ctx: Omit<BuildContext, 'wants'> & {
    interested(keyId: string, type: WebhookEventType, monitorId?: string): boolean;
  },
): Promise<Message[]> => {
  const out: Message[] = [];
  for (const [type, spec] of bySource.get(e.type) ?? []) {
    // the event's type is one of the spec's sources: the typed event its build takes
    const built = await (spec.build as (e: LogEvent, ctx: BuildContext) => ReturnType<AnySpec['build']>)(e, {
      ...ctx,
      wants: (keyId, monitorId) => ctx.interested(keyId, type, monitorId),
    });
    if (!built) continue;
    out.push({
      type,
      keyId: built.keyId,
      ...(built.monitorId !== undefined ? { monitorId: built.monitorId } : {}),
      messageId: built.messageId ?? messageIdOf(e.eventId),
      occurredAt: built.occurredAt,
      data: built.data as object,
    });
  }
  return out;
};
