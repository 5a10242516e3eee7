import { createHash } from 'node:crypto';
import { RANK_FEATURES } from '../../contracts/monitors.js';
import type { Projection } from '../projection.js';

/**
 * Rank history (docs/rank-tracking.md): one document per monitor, UTC month and keyword holding that keyword's
 * checks of the month in time order, compactly (a domain, a URL written once per document and then referred to by
 * index; features as bits), so that a point costs tens of bytes of read model, not hundreds. Ids sort by monitor,
 * month, keyword: a month of the whole monitor is one range read, a keyword's year twelve reads.
 */
export interface RankHistoryDoc {
  /** monitor id */
  m: string;
  /** keyword */
  k: string;
  /** the domains the checks refer to by index */
  d: string[];
  /** the URLs the checks refer to by index */
  u: string[];
  /** checks, oldest first */
  c: StoredCheck[];
}

/** [checked at (ms), run id, job id, failure ('' when the search succeeded), ranks] */
export type StoredCheck = [number, string, string, string, StoredRank[]];
/**
 * [domain index, position (0: not ranked), URL index (-1: none), feature bits (RANK_FEATURES order)], and for a check
 * measured in pixels (docs/rank-tracking.md) two more: the best result's pixels from the top (-1: not on the first
 * page) and 1 if it showed on the first screen, else 0
 */
export type StoredRank = [number, number, number, number] | [number, number, number, number, number, number];

const keys = new Map<string, string>();
/**
 * A keyword's key: 16 hex digits of its SHA-1. Remembered (up to 20,000 keywords, then forgotten at once): the
 * history, best and day projections each ask for it on every check, a rebuild hundreds of thousands of times.
 */
export const keywordKey = (keyword: string) => {
  let key = keys.get(keyword);
  if (key === undefined) {
    key = createHash('sha1').update(keyword).digest('hex').slice(0, 16);
    if (keys.size >= 20_000) keys.clear();
    keys.set(keyword, key);
  }
  return key;
};
export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
export const historyId = (monitorId: string, month: string, keyword: string) =>
  `${monitorId}|${month}|${keywordKey(keyword)}`;

export const featureBits = (features: readonly string[]) =>
  features.reduce((bits, f) => {
    const i = (RANK_FEATURES as readonly string[]).indexOf(f);
    return i < 0 ? bits : bits | (1 << i);
  }, 0);
export const featuresOf = (bits: number) => RANK_FEATURES.filter((_, i) => bits & (1 << i));

const indexIn = (list: string[], value: string): [string[], number] => {
  const i = list.indexOf(value);
  return i >= 0 ? [list, i] : [[...list, value], list.length];
};

export const rankHistoryProjection: Projection<RankHistoryDoc> = {
  name: 'rankHistory',
  idOf: (e) =>
    e.type === 'MonitorKeywordChecked'
      ? historyId(e.data.monitorId, monthOf(Date.parse(e.data.checkedAt)), e.data.keyword)
      : undefined,
  evolve(doc, e) {
    if (e.type !== 'MonitorKeywordChecked') return doc ?? null;
    const { monitorId, keyword, checkedAt, runId, jobId, ok, failure, ranks } = e.data;
    let d = doc?.d ?? [];
    let u = doc?.u ?? [];
    const stored: StoredRank[] = ranks.map((r) => {
      let di: number;
      [d, di] = indexIn(d, r.domain);
      let ui = -1;
      if (r.url !== undefined) [u, ui] = indexIn(u, r.url);
      const rank: StoredRank = [di, r.position ?? 0, ui, featureBits(r.features)];
      return r.aboveTheFold === undefined ? rank : [...rank, r.pixelsFromTop ?? -1, r.aboveTheFold ? 1 : 0];
    });
    const t = Date.parse(checkedAt);
    const check: StoredCheck = [t, runId, jobId, ok ? '' : (failure ?? 'failed'), stored];
    const c = doc?.c ?? [];
    // checks arrive in time order but for a backfill or overlapping runs: insert after every check not later
    let at = c.length;
    while (at > 0 && c[at - 1][0] > t) at--;
    return { m: monitorId, k: keyword, d, u, c: [...c.slice(0, at), check, ...c.slice(at)] };
  },
};

/** A keyword's best position ever per domain, and when it was first reached (its URL then). */
export interface RankBestDoc {
  m: string;
  k: string;
  /** domain → [position, url, at] */
  b: Record<string, [number, string, string]>;
}

export const rankBestProjection: Projection<RankBestDoc> = {
  name: 'rankBest',
  lookupOf: (doc) => doc.m,
  idOf: (e) =>
    e.type === 'MonitorKeywordChecked' && e.data.ok ? `${e.data.monitorId}|${keywordKey(e.data.keyword)}` : undefined,
  evolve(doc, e) {
    if (e.type !== 'MonitorKeywordChecked') return doc ?? null;
    let b = doc?.b ?? {};
    for (const r of e.data.ranks) {
      if (r.position === undefined || r.url === undefined) continue;
      const was = b[r.domain];
      // better, or as good and earlier (a backfilled search): the order events arrive in does not matter
      if (!was || r.position < was[0] || (r.position === was[0] && e.data.checkedAt < was[2])) {
        b = { ...b, [r.domain]: [r.position, r.url, e.data.checkedAt] };
      }
    }
    return doc && b === doc.b ? doc : { m: e.data.monitorId, k: e.data.keyword, b };
  },
};
