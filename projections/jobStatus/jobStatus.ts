import type { CrawlFailure, LocationStatus } from '../../contracts/events.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { Projection } from '../projection.js';

export interface JobStatusDoc {
  jobId: string;
  keyId: string;
  status: 'queued' | 'running' | 'done' | 'partial' | 'failed';
  cached: boolean;
  sourceJobId?: string;
  request: SearchRequest;
  cacheKey: string;
  month: string;
  charged: boolean;
  submittedAt: string;
  updatedAt: string;
  completedAt?: string;
  attempts: number;
  pagesFetched?: number;
  blocks?: number;
  /** the final failure's raw reason (never served: see services/api/render/failure.ts) */
  detail?: string;
  /** the final failure's code and kind; absent for failures recorded before CrawlFailed carried them */
  failure?: CrawlFailure;
  parserVersion?: string;
  /**
   * where Google placed the search against where it was asked to (docs/locations.md#the-check); absent for crawls
   * before the check existed and for cache answers (their source's is the one)
   */
  locationCheck?: LocationStatus;
  /** the monitor run this job searches a keyword of (docs/rank-tracking.md) */
  monitor?: { monitorId: string; runId: string };
  /** only on a doc folded from the stream of a job retention purged (the read model has no row for it) */
  purgedAt?: string;
}

export const terminalStatuses = new Set(['done', 'partial', 'failed']);

export const jobStatusProjection: Projection<JobStatusDoc> = {
  name: 'jobStatus',
  /** open jobs are findable as a set (a restarted dispatcher re-enqueues them), ended ones by key (the dashboard) */
  lookupOf: (doc) => (terminalStatuses.has(doc.status) ? `key:${doc.keyId}` : 'open'),
  idOf: (e) => (e.streamName.startsWith('searchJob-') ? (e.data as { jobId: string }).jobId : undefined),
  evolve(doc, e) {
    if (e.type === 'SearchSubmitted') {
      const { jobId, keyId, request, cacheKey, month, charged, submittedAt, monitor } = e.data;
      return {
        ...(monitor ? { monitor } : {}),
        jobId,
        keyId,
        status: 'queued',
        cached: false,
        request,
        cacheKey,
        month,
        charged,
        submittedAt,
        updatedAt: submittedAt,
        attempts: 0,
      };
    }
    if (!doc) return null;
    switch (e.type) {
      case 'SearchAnsweredFromCache':
        return {
          ...doc,
          status: 'done',
          cached: true,
          sourceJobId: e.data.sourceJobId,
          updatedAt: e.data.answeredAt,
          completedAt: e.data.answeredAt,
        };
      case 'CrawlStarted':
        return { ...doc, status: 'running', attempts: e.data.attempt, updatedAt: e.data.startedAt };
      case 'CrawlCompleted':
        return {
          ...doc,
          status: e.data.status,
          pagesFetched: e.data.pages.length,
          blocks: e.data.blocks,
          parserVersion: e.data.parserVersion,
          ...(e.data.locationCheck ? { locationCheck: e.data.locationCheck.status } : {}),
          updatedAt: e.data.completedAt,
          completedAt: e.data.completedAt,
        };
      case 'CrawlFailed':
        if (!e.data.final) return { ...doc, updatedAt: e.data.failedAt };
        return {
          ...doc,
          status: 'failed',
          detail: e.data.reason,
          ...(e.data.failure ? { failure: e.data.failure } : {}),
          updatedAt: e.data.failedAt,
          completedAt: e.data.failedAt,
        };
      case 'SearchReparsed':
        return { ...doc, parserVersion: e.data.parserVersion, updatedAt: e.data.reparsedAt };
      case 'SearchPurged':
        // past retention the row goes; the api folds the stream and answers 410 (services/application/searches.ts)
        return null;
      default:
        return doc;
    }
  },
};
