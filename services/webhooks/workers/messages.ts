import type { WebhookEventType } from '../../../contracts/webhookEvents.js';
import type { ReadModelQueries } from '../../../projections/index.js';

/** One message to send: the event type, who it belongs to, its `webhook-id` and its small `data` (docs/webhooks.md). */
export interface Message {
  type: WebhookEventType;
  keyId: string;
  monitorId?: string;
  messageId: string;
  /** when what it tells of happened (the body's `timestamp`) */
  occurredAt: string;
  data: object;
}

/** The body every attempt sends: Standard Webhooks' `{type, timestamp, data}`. */
export const bodyOf = (m: Message) => JSON.stringify({ type: m.type, timestamp: m.occurredAt, data: m.data });

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
