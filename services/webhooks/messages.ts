import type { WebhookEventType } from '../../contracts/webhookEvents.js';
import { messageIdOf } from '../../domain/webhook/ids.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { failureOfJob, publicFailureDetail } from '../crawler/publicFailure.js';
import type { LogEvent } from '../reactor/reactor.js';

/** One message to send: the event type, who it belongs to, its `webhook-id` and its small `data` (docs/webhooks.md). */
export interface Message {
  type: WebhookEventType;
  keyId: string;
  monitorId?: string;
  messageId: string;
  /** when what it tells of happened (the body's `timestamp`) */
  occurredAt: string;
  data: Record<string, unknown>;
}

/** The event types that can become messages (the router reads nothing else). */
export const SOURCE_TYPES = new Set([
  'CrawlCompleted',
  'CrawlFailed',
  'SearchAnsweredFromCache',
  'MonitorRunCompleted',
  'MonitorAlertRaised',
]);

/** The body every attempt sends: Standard Webhooks' `{type, timestamp, data}`. */
export const bodyOf = (m: Message) => JSON.stringify({ type: m.type, timestamp: m.occurredAt, data: m.data });

const jsonEndpoint = (baseUrl: string, jobId: string) => `${baseUrl}/v1/search/${jobId}?output=json`;

interface ResultSummary {
  organic_results_count: number;
  top_results: Array<{ position: number; title: string; link: string | null }>;
}

const summarize = (queries: ReadModelQueries, jobId: string): ResultSummary => {
  const organic = queries.results.byJobId(jobId)?.result.organic_results ?? [];
  return {
    organic_results_count: organic.length,
    top_results: organic.slice(0, 3).map((o) => ({ position: o.position, title: o.title, link: o.link ?? null })),
  };
};

/**
 * What `data` tells of a result (its count and top three), kept for the `max` results read last: a search answered
 * from the cache sends the result of the crawl it reuses, and reading that document (tens of kB) for every such
 * message was most of the router's time. A reparse or a purge changes a result: the router forgets it then.
 */
export const createResultSummaries = (queries: ReadModelQueries, max = 1_000) => {
  const kept = new Map<string, ResultSummary>();
  return {
    of(jobId: string) {
      const hit = kept.get(jobId);
      if (hit) {
        kept.delete(jobId);
        kept.set(jobId, hit);
        return hit;
      }
      const summary = summarize(queries, jobId);
      // an empty summary may be a result not projected yet: never kept
      if (summary.organic_results_count > 0) {
        kept.set(jobId, summary);
        if (kept.size > max) kept.delete(kept.keys().next().value as string);
      }
      return summary;
    },
    forget(jobId: string) {
      kept.delete(jobId);
    },
  };
};
export type ResultSummaries = ReturnType<typeof createResultSummaries>;

const searchData = (job: JobStatusDoc, queries: ReadModelQueries, baseUrl: string, summaries?: ResultSummaries) => {
  const resultJobId = job.sourceJobId ?? job.jobId;
  return {
    job_id: job.jobId,
    status: job.status,
    cached: job.cached,
    keyword: job.request.keyword,
    ...(job.request.location ? { location: job.request.location } : {}),
    device: job.request.device ?? 'desktop',
    ...(summaries ? summaries.of(resultJobId) : summarize(queries, resultJobId)),
    ...(job.monitor ? { monitor_id: job.monitor.monitorId, run_id: job.monitor.runId } : {}),
    json_endpoint: jsonEndpoint(baseUrl, job.jobId),
  };
};

/**
 * The messages one event of the log makes, read against the read models as they are once that event is projected:
 * a finished search (`search.completed`, `search.failed`), a completed monitor run, a monitor alert. Quota messages
 * come from the usage streams (quota.ts). The `webhook-id` is derived from the event's id in the log.
 */
export const messagesOf = (
  e: LogEvent,
  queries: ReadModelQueries,
  baseUrl: string,
  /** whether anyone takes such a message: the result is read only then (results are tens of kB) */
  interested: (keyId: string, type: WebhookEventType, monitorId?: string) => boolean = () => true,
  /** results' summaries kept across messages (createResultSummaries); without it, each is read */
  summaries?: ResultSummaries,
): Message[] => {
  const id = e.eventId;
  const at = e.recordedAt;
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'CrawlCompleted':
    case 'SearchAnsweredFromCache': {
      const job = queries.jobs.byId(d.jobId as string);
      if (!job || !interested(job.keyId, 'search.completed', job.monitor?.monitorId)) return [];
      return [
        {
          type: 'search.completed',
          keyId: job.keyId,
          ...(job.monitor ? { monitorId: job.monitor.monitorId } : {}),
          messageId: messageIdOf(id),
          occurredAt: at,
          data: { ...searchData(job, queries, baseUrl, summaries), completed_at: at },
        },
      ];
    }
    case 'CrawlFailed': {
      if (d.final !== true) return [];
      const job = queries.jobs.byId(d.jobId as string);
      if (!job || !interested(job.keyId, 'search.failed', job.monitor?.monitorId)) return [];
      const failure = failureOfJob(job);
      return [
        {
          type: 'search.failed',
          keyId: job.keyId,
          ...(job.monitor ? { monitorId: job.monitor.monitorId } : {}),
          messageId: messageIdOf(id),
          occurredAt: at,
          data: {
            job_id: job.jobId,
            status: 'failed',
            keyword: job.request.keyword,
            failure: failure?.kind ?? failure?.code ?? 'failed',
            detail: publicFailureDetail(job),
            ...(job.monitor ? { monitor_id: job.monitor.monitorId, run_id: job.monitor.runId } : {}),
            json_endpoint: jsonEndpoint(baseUrl, job.jobId),
            failed_at: at,
          },
        },
      ];
    }
    case 'MonitorRunCompleted':
      return [
        {
          type: 'monitor.run_completed',
          keyId: d.keyId as string,
          monitorId: d.monitorId as string,
          messageId: messageIdOf(id),
          occurredAt: at,
          data: {
            monitor_id: d.monitorId,
            run_id: d.runId,
            trigger: d.trigger,
            checked: d.checked,
            failed: d.failed,
            skipped: d.skipped,
            ...(d.skipReason ? { skip_reason: d.skipReason } : {}),
            completed_at: d.completedAt,
            history_endpoint: `${baseUrl}/v1/monitors/${d.monitorId}/history`,
          },
        },
      ];
    case 'MonitorAlertRaised': {
      const { keyId, monitorId, runId, alertId, kind, raisedAt, ...rest } = d as Record<string, string>;
      const snake = Object.fromEntries(
        Object.entries(rest).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]),
      );
      return [
        {
          type: 'monitor.alert',
          keyId,
          monitorId,
          messageId: messageIdOf(id),
          occurredAt: raisedAt,
          data: {
            alert_id: alertId,
            monitor_id: monitorId,
            run_id: runId,
            kind,
            ...snake,
            alerts_endpoint: `${baseUrl}/v1/monitors/${monitorId}/alerts`,
          },
        },
      ];
    }
    default:
      return [];
  }
};
