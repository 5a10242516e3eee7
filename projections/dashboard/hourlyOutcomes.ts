import type { Projection } from '../projection.js';

/**
 * The whole service's jobs per UTC hour (the dashboard's service view): searches submitted and answered from cache
 * in that hour, crawls that ended done or partial, and final failures by kind (captcha, js_challenge, timeout, …).
 * Counts only: nothing here names a key or a keyword, so retention leaves it.
 */
export interface HourlyOutcomesDoc {
  hour: string;
  submitted: number;
  cached: number;
  done: number;
  partial: number;
  failed: Record<string, number>;
}

/** `2026-11-25T14` */
export const hourOf = (iso: string) => iso.slice(0, 13);

export const hourlyOutcomesProjection: Projection<HourlyOutcomesDoc> = {
  name: 'hourlyOutcomes',
  idOf(e) {
    switch (e.type) {
      case 'SearchSubmitted':
        return hourOf(e.data.submittedAt);
      case 'SearchAnsweredFromCache':
        return hourOf(e.data.answeredAt);
      case 'CrawlCompleted':
        return hourOf(e.data.completedAt);
      case 'CrawlFailed':
        return e.data.final ? hourOf(e.data.failedAt) : undefined;
      default:
        return undefined;
    }
  },
  evolve(doc, e) {
    const d: HourlyOutcomesDoc = doc ?? { hour: '', submitted: 0, cached: 0, done: 0, partial: 0, failed: {} };
    switch (e.type) {
      case 'SearchSubmitted':
        return { ...d, hour: hourOf(e.data.submittedAt), submitted: d.submitted + 1 };
      case 'SearchAnsweredFromCache':
        return { ...d, hour: hourOf(e.data.answeredAt), cached: d.cached + 1 };
      case 'CrawlCompleted':
        return { ...d, hour: hourOf(e.data.completedAt), [e.data.status]: d[e.data.status] + 1 };
      case 'CrawlFailed': {
        const kind = e.data.failure?.kind ?? e.data.failure?.code ?? 'unknown';
        return { ...d, hour: hourOf(e.data.failedAt), failed: { ...d.failed, [kind]: (d.failed[kind] ?? 0) + 1 } };
      }
      default:
        return doc ?? null;
    }
  },
};
