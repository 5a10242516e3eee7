import type { CrawlFailure, LocationStatus } from '../../contracts/events.js';
import type { Lane } from '../../contracts/lanes.js';
import type { SearchRequest } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
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
  /** the final failure's raw reason (never served: see services/answers/publicFailure.ts) */
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
  /** the lane it waited in (docs/fleet.md#lanes-and-fair-share); absent in docs folded by hand (laneOf) */
  lane?: Lane;
  /** its key's share in the lane, when not 1 */
  weight?: number;
  /** where its submit sits in the log: the order a key's jobs are served in */
  position?: number;
  /** when its first crawl started */
  startedAt?: string;
  /** when its first Google request went, once an attempt that made one has ended */
  firstRequestAt?: string;
  /**
   * from submit to its first Google request (its wait in the queue); 0 for an answer from cache; absent until its
   * crawl ended (crawls recorded before the first request's time was: until its first crawl started)
   */
  queuedMs?: number;
}

/** the end of the job's wait: its first attempt's first request (an earlier attempt's, when one failed first) */
const waited = (doc: JobStatusDoc, firstRequestAt: string | undefined) => {
  const first = doc.firstRequestAt ?? firstRequestAt;
  const at = first ?? doc.startedAt;
  return at === undefined
    ? {}
    : {
        ...(first ? { firstRequestAt: first } : {}),
        queuedMs: Math.max(0, Date.parse(at) - Date.parse(doc.submittedAt)),
      };
};

export const terminalStatuses = new Set(['done', 'partial', 'failed']);

export const jobStatusProjection: Projection<JobStatusDoc> = {
  name: 'jobStatus',
  /** open jobs are findable as a set (a restarted dispatcher re-enqueues them), ended ones by key (the dashboard) */
  lookupOf: (doc) => (terminalStatuses.has(doc.status) ? `key:${doc.keyId}` : 'open'),
  idOf: (e) => (e.streamName.startsWith('searchJob-') ? (e.data as { jobId: string }).jobId : undefined),
  evolve(doc, e) {
    if (e.type === 'SearchSubmitted') {
      const { jobId, keyId, request, cacheKey, month, charged, submittedAt, monitor, weight } = e.data;
      return {
        ...(monitor ? { monitor } : {}),
        lane: laneOf(e.data),
        ...(weight !== undefined && weight !== 1 ? { weight } : {}),
        position: e.globalPosition,
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
          queuedMs: 0,
        };
      case 'CrawlStarted':
        return {
          ...doc,
          status: 'running',
          attempts: e.data.attempt,
          updatedAt: e.data.startedAt,
          startedAt: doc.startedAt ?? e.data.startedAt,
        };
      case 'CrawlCompleted':
        return {
          ...doc,
          ...waited(doc, e.data.firstRequestAt),
          status: e.data.status,
          pagesFetched: e.data.pages.length,
          blocks: e.data.blocks,
          parserVersion: e.data.parserVersion,
          ...(e.data.locationCheck ? { locationCheck: e.data.locationCheck.status } : {}),
          updatedAt: e.data.completedAt,
          completedAt: e.data.completedAt,
        };
      case 'CrawlFailed':
        if (!e.data.final) {
          const first = doc.firstRequestAt ?? e.data.firstRequestAt;
          return { ...doc, ...(first ? { firstRequestAt: first } : {}), updatedAt: e.data.failedAt };
        }
        return {
          ...doc,
          ...waited(doc, e.data.firstRequestAt),
          status: 'failed',
          detail: e.data.reason,
          ...(e.data.failure ? { failure: e.data.failure } : {}),
          updatedAt: e.data.failedAt,
          completedAt: e.data.failedAt,
        };
      case 'SearchReparsed':
        return { ...doc, parserVersion: e.data.parserVersion, updatedAt: e.data.reparsedAt };
      case 'SearchPurged':
        // past retention the row goes; the api folds the stream and answers 410 (services/searches/commands/searches.ts)
        return null;
      default:
        return doc;
    }
  },
};
