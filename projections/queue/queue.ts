import type { Lane } from '../../contracts/lanes.js';
import { depthOf, pagesFor } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import type { Projection } from '../projection.js';

/**
 * A job that has not ended, as the fair scheduler sees it (docs/fleet.md#lanes-and-fair-share): its lane, its key,
 * what it costs in pages and its key's share. `waiting` until a crawler starts it, then `crawling`; gone once it ends.
 * Small on purpose: the queue's position and wait are computed over every waiting job of a lane.
 */
export interface QueuedJobDoc {
  jobId: string;
  keyId: string;
  lane: Lane;
  /** Google pages its depth asks for at most (top 100: 10) */
  pages: number;
  /** its key's share in the lane */
  weight: number;
  submittedAt: string;
  /** where its submit sits in the log: the order jobs of one key are served in */
  position: number;
  state: 'waiting' | 'crawling';
  /** when its first crawl started */
  startedAt?: string;
}

/** Jobs not yet ended, by lane (the lookup). Charged jobs only: an answer from cache never waits. */
export const queueProjection: Projection<QueuedJobDoc> = {
  name: 'queue',
  lookupOf: (doc) => doc.lane,
  idOf: (e) => {
    switch (e.type) {
      case 'SearchSubmitted':
      case 'CrawlStarted':
      case 'CrawlCompleted':
      case 'CrawlFailed':
      case 'SearchPurged':
        return e.data.jobId;
      default:
        return undefined;
    }
  },
  evolve(doc, e) {
    switch (e.type) {
      case 'SearchSubmitted': {
        if (!e.data.charged || doc) return doc ?? null;
        const { jobId, keyId, request, weight, submittedAt } = e.data;
        return {
          jobId,
          keyId,
          lane: laneOf(e.data),
          pages: pagesFor(depthOf(request)),
          weight: weight ?? 1,
          submittedAt,
          position: e.globalPosition,
          state: 'waiting',
        };
      }
      case 'CrawlStarted':
        if (!doc || doc.state === 'crawling') return doc ?? null;
        return { ...doc, state: 'crawling', startedAt: e.data.startedAt };
      case 'CrawlFailed':
        return e.data.final ? null : (doc ?? null);
      case 'CrawlCompleted':
      case 'SearchPurged':
        return null;
      default:
        return doc ?? null;
    }
  },
};
