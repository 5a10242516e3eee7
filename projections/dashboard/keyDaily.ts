import type { Projection } from '../projection.js';

/**
 * One key's searches on one UTC day (the dashboard's 30-day usage chart): submitted, answered from cache (free),
 * reserved against the quota, and reservations handed back (a failed job's, counted on the day it was released).
 */
export interface KeyDailyDoc {
  keyId: string;
  day: string;
  searches: number;
  cached: number;
  reserved: number;
  released: number;
}

const dayOf = (iso: string) => iso.slice(0, 10);

export const keyDailyProjection: Projection<KeyDailyDoc> = {
  name: 'keyDaily',
  // the day sorts after the key id: a key's days are one lookup, in date order
  lookupOf: (doc) => doc.keyId,
  idOf(e) {
    if (e.type === 'SearchSubmitted') return `${e.data.keyId}|${dayOf(e.data.submittedAt)}`;
    if (e.type === 'QuotaReleased') return `${e.data.keyId}|${dayOf(e.data.releasedAt)}`;
    return undefined;
  },
  evolve(doc, e) {
    const base = (keyId: string, at: string): KeyDailyDoc =>
      doc ?? { keyId, day: dayOf(at), searches: 0, cached: 0, reserved: 0, released: 0 };
    if (e.type === 'SearchSubmitted') {
      const d = base(e.data.keyId, e.data.submittedAt);
      return {
        ...d,
        searches: d.searches + 1,
        cached: d.cached + (e.data.charged ? 0 : 1),
        reserved: d.reserved + (e.data.charged ? 1 : 0),
      };
    }
    if (e.type === 'QuotaReleased') {
      const d = base(e.data.keyId, e.data.releasedAt);
      return { ...d, released: d.released + 1 };
    }
    return doc ?? null;
  },
};
