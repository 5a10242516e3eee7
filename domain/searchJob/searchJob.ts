import type {
  CrawlCost,
  CrawlFailure,
  EventOf,
  LocationCheck,
  PageFetched,
  RawHtmlRef,
  TargetingResolved,
  TargetingUsed,
} from '../../contracts/events.js';
import type { Lane } from '../../contracts/lanes.js';
import { depthOf, type SearchRequest } from '../../contracts/search.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';

export type SearchJobEvent =
  | EventOf<'SearchSubmitted'>
  | EventOf<'SearchAnsweredFromCache'>
  | EventOf<'CrawlStarted'>
  | EventOf<'CrawlCompleted'>
  | EventOf<'CrawlFailed'>
  | EventOf<'SearchReparsed'>
  | EventOf<'SearchPurged'>;

export type SearchJobStatus = 'none' | 'queued' | 'running' | 'done' | 'partial' | 'failed';

export interface SearchJobState {
  status: SearchJobStatus;
  jobId?: string;
  keyId?: string;
  month?: string;
  charged?: boolean;
  cacheKey?: string;
  request?: SearchRequest;
  submittedAt?: string;
  sourceJobId?: string;
  attempts: number;
  /** the final failure's raw reason */
  failure?: string;
  /** the final failure's code and kind (absent for failures recorded before they were) */
  failureCause?: CrawlFailure;
  parserVersion?: string;
  /** the blob keys of its raw HTML and results (what a purge deletes) */
  blobs: string[];
  /** set once retention deleted its raw HTML, results and read-model rows */
  purgedAt?: string;
}

interface Submission {
  jobId: string;
  keyId: string;
  request: SearchRequest;
  cacheKey: string;
  month: string;
  now: string;
  /** the monitor run this job searches a keyword of */
  monitor?: { monitorId: string; runId: string };
  /** the lane it waits in (absent: `scheduled` for a monitor's job, else `live`) */
  lane?: Lane;
  /** its key's share in the lane (absent: 1) */
  weight?: number;
  /** its location as resolved at submit */
  targeting?: TargetingResolved;
}

export type SearchJobCommand =
  | ({ type: 'SubmitSearch' } & Submission)
  | ({ type: 'AnswerFromCache'; sourceJobId: string } & Submission)
  | { type: 'StartCrawl'; jobId: string; attempt: number; worker: string; now: string }
  | {
      type: 'CompleteCrawl';
      jobId: string;
      status: 'done' | 'partial';
      pages: PageFetched[];
      /** the parsed result, already in the blob store */
      resultRef: RawHtmlRef;
      rawHtmlRef: RawHtmlRef;
      parserVersion: string;
      blocks: number;
      /** the targeting the crawl used, recorded for `search_metadata.targeting` */
      targeting?: TargetingUsed;
      /** the crawl ended before its depth did (the last page, or stop_domain found) */
      exhausted?: boolean;
      /** what the crawl cost in Google requests */
      cost?: CrawlCost;
      /** when its first Google request went */
      firstRequestAt?: string;
      /** where Google placed the search against where it was asked to */
      locationCheck?: LocationCheck;
      now: string;
    }
  | {
      type: 'FailCrawl';
      jobId: string;
      attempt: number;
      reason: string;
      failure?: CrawlFailure;
      cost?: CrawlCost;
      firstRequestAt?: string;
      final: boolean;
      now: string;
    }
  | { type: 'ReparseSearch'; jobId: string; parserVersion: string; resultRef: RawHtmlRef; now: string }
  | { type: 'PurgeSearch'; jobId: string; now: string };

export const isTerminal = (s: SearchJobStatus) => s === 'done' || s === 'partial' || s === 'failed';

const submitted = (c: Submission, charged: boolean): EventOf<'SearchSubmitted'> => ({
  type: 'SearchSubmitted',
  data: {
    jobId: c.jobId,
    keyId: c.keyId,
    request: c.request,
    cacheKey: c.cacheKey,
    charged,
    month: c.month,
    submittedAt: c.now,
    ...(c.monitor ? { monitor: c.monitor } : {}),
    ...(c.lane ? { lane: c.lane } : {}),
    ...(c.weight !== undefined && c.weight !== 1 ? { weight: c.weight } : {}),
    ...(c.targeting ? { targeting: c.targeting } : {}),
  },
});

/** The lane a submitted job waits in: recorded since lanes exist; before, a monitor's job was `scheduled`. */
export const laneOf = (data: { lane?: Lane; monitor?: unknown }): Lane =>
  data.lane ?? (data.monitor ? 'scheduled' : 'live');

/**
 * A job is submitted once, crawled until it ends exactly once (done, partial or failed), and may be re-parsed later.
 * Commands that arrive after the end (a redelivered job, a late worker) decide nothing: that is what keeps
 * at-least-once delivery from charging or finishing a job twice.
 */
export const searchJobDecider: Decider<SearchJobState, SearchJobCommand, SearchJobEvent> = {
  initialState: () => ({ status: 'none', attempts: 0, blobs: [] }),
  decide(command, state) {
    switch (command.type) {
      case 'SubmitSearch':
        if (state.status !== 'none') return [];
        return [submitted(command, true)];
      case 'AnswerFromCache':
        if (state.status !== 'none') return [];
        return [
          submitted(command, false),
          {
            type: 'SearchAnsweredFromCache',
            data: { jobId: command.jobId, sourceJobId: command.sourceJobId, answeredAt: command.now },
          },
        ];
      case 'ReparseSearch':
        if (state.purgedAt) throw new DomainError(errorCodes.jobNotTerminal, `job ${command.jobId} was purged`);
        if (state.status !== 'done' && state.status !== 'partial') {
          throw new DomainError(errorCodes.jobNotTerminal, `job ${command.jobId} has no result to re-parse`);
        }
        if (state.sourceJobId) return [];
        return [
          {
            type: 'SearchReparsed',
            data: {
              jobId: command.jobId,
              parserVersion: command.parserVersion,
              resultRef: command.resultRef,
              reparsedAt: command.now,
            },
          },
        ];
    }
    if (state.status === 'none') throw new DomainError(errorCodes.jobNotFound, `job ${command.jobId} not found`);
    if (command.type === 'PurgeSearch') {
      // only an ended job is purged, and only once
      if (!isTerminal(state.status) || state.purgedAt) return [];
      return [
        {
          type: 'SearchPurged',
          data: { jobId: command.jobId, cacheKey: state.cacheKey ?? '', blobs: state.blobs, purgedAt: command.now },
        },
      ];
    }
    if (isTerminal(state.status)) return [];
    switch (command.type) {
      case 'StartCrawl':
        return [
          {
            type: 'CrawlStarted',
            data: { jobId: command.jobId, attempt: command.attempt, worker: command.worker, startedAt: command.now },
          },
        ];
      case 'CompleteCrawl': {
        const { type: _type, now, targeting, exhausted, cost, firstRequestAt, locationCheck, ...data } = command;
        return [
          {
            type: 'CrawlCompleted',
            data: {
              ...data,
              cacheKey: state.cacheKey ?? '',
              ...(targeting ? { targeting } : {}),
              ...(cost ? { cost } : {}),
              ...(firstRequestAt ? { firstRequestAt } : {}),
              depth: depthOf(state.request ?? {}),
              exhausted: exhausted ?? false,
              ...(locationCheck ? { locationCheck } : {}),
              completedAt: now,
            },
          },
        ];
      }
      case 'FailCrawl':
        return [
          {
            type: 'CrawlFailed',
            data: {
              jobId: command.jobId,
              attempt: command.attempt,
              reason: command.reason,
              ...(command.failure ? { failure: command.failure } : {}),
              ...(command.cost ? { cost: command.cost } : {}),
              ...(command.firstRequestAt ? { firstRequestAt: command.firstRequestAt } : {}),
              final: command.final,
              failedAt: command.now,
            },
          },
        ];
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'SearchSubmitted': {
        const { jobId, keyId, month, charged, cacheKey, request, submittedAt } = event.data;
        return { ...state, status: 'queued', jobId, keyId, month, charged, cacheKey, request, submittedAt };
      }
      case 'SearchAnsweredFromCache':
        return { ...state, status: 'done', sourceJobId: event.data.sourceJobId };
      case 'CrawlStarted':
        return { ...state, status: 'running', attempts: Math.max(state.attempts, event.data.attempt) };
      case 'CrawlCompleted': {
        const { rawHtmlRef, resultRef } = event.data;
        const blobs = [...state.blobs, rawHtmlRef.key, ...(resultRef ? [resultRef.key] : [])];
        return { ...state, status: event.data.status, parserVersion: event.data.parserVersion, blobs };
      }
      case 'CrawlFailed':
        return event.data.final
          ? { ...state, status: 'failed', failure: event.data.reason, failureCause: event.data.failure }
          : state;
      case 'SearchReparsed': {
        const blobs = event.data.resultRef ? [...state.blobs, event.data.resultRef.key] : state.blobs;
        return { ...state, parserVersion: event.data.parserVersion, blobs };
      }
      case 'SearchPurged':
        return { ...state, purgedAt: event.data.purgedAt };
    }
  },
};
