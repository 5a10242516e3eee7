import { LANES, type Lane } from '../../contracts/lanes.js';
import type { QueuePosition } from '../../contracts/search.js';
import { depthOf, pagesFor } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { EventStore } from '../ports/eventStore.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { PROJECTOR_CHECKPOINT } from '../projector/projector.js';
import { createReactor, type ReactorDeps } from '../reactor/reactor.js';
import { type FleetCapacity, fleetCapacity, type RunningFleet } from './capacity.js';

/** A lane as the dashboard shows it. */
export interface LaneSummary {
  lane: Lane;
  waiting: number;
  waitingPages: number;
  crawling: number;
  topKeys: Array<{ keyId: string; waiting: number; waitingPages: number }>;
}

interface Job {
  lane: Lane;
  keyId: string;
  pages: number;
  weight: number;
  position: number;
  crawling: boolean;
  /** when its crawl started (ms), when this process followed the start */
  startedAt?: number;
}

/** one crawl of a lane that ended: how long it took for the pages it fetched */
interface Crawl {
  at: number;
  seconds: number;
  pages: number;
}

/** how far back the lane's pace is read (docs/fleet.md#lanes-and-fair-share) */
const PACE_WINDOW_MS = 60_000;
/** with no crawl of the lane ended in the window, the last few of this age at most still say more than nothing */
const PACE_STALE_MS = 15 * 60_000;
const PACE_STALE_CRAWLS = 8;
/** crawls kept per lane */
const CRAWLS_KEPT = 64;

/** One key's jobs of one lane not yet ended: those waiting, in submit order, and how many crawl. */
interface KeyQueue {
  /** the waiting jobs' log positions, ascending (a job's place among its key's is its index here) */
  waiting: number[];
  pages: number;
  crawling: number;
  weight: number;
}

/** the index where `x` is (or would go) in the ascending `xs` */
const indexOf = (xs: number[], x: number) => {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * Where a job stands in the fair scheduler's order (docs/fleet.md#lanes-and-fair-share), kept in memory by the
 * process that answers HTTP: loaded from the `queue` read model at start, then following the log, so a position costs
 * a lookup and a pass over the keys that wait (not over the jobs), however long the backlog. Each api process keeps
 * its own and answers the same.
 *
 * `ahead`: the lane's waiting jobs spaced as the fair queue serves them from now on, each key's jobs in submit order,
 * a job's virtual start its key's pages before it over the key's share (pages are taken as the key's average); the
 * jobs ahead of one are its key's before it and every other key's that start before it. A key with nothing of the
 * lane out with the crawlers sends its first job to the lane's express class: nothing is ahead of it.
 *
 * `estimated_start_s`: from the pace the lane gets now, not from what the fleet could do. The jobs ahead take the
 * lane's crawler slots in turn: a free slot at once, a busy one when its crawl ends. How long a crawl takes is read
 * from the lane's crawls that ended in the last minute (seconds per page fetched, which holds whatever share of the
 * routes the other lanes leave it); the crawls under way end when their pages at that pace are done. With no crawl of
 * the lane ended lately, its last few of the last quarter hour, then any lane's, then the fleet's capacity
 * (capacity.ts, the routes this fleet has) over the lane's share. Slots: SERP_CRAWLER_CONCURRENCY per crawler, or as
 * many of the lane's jobs as were seen crawling at once lately (a cluster's crawlers together), whichever is more.
 */
export const createQueuePositions = (deps: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  /** SERP_LANE_MIN_SHARE */
  laneMinShare: number;
  /** SERP_CRAWLER_CONCURRENCY: jobs of each lane one crawler runs at once (absent: as many as seen at once) */
  laneSlots?: number;
  /** the routes this process's fleet has: a route of a run before a restart adds no capacity */
  fleet?: RunningFleet;
  now?: () => number;
  /** the reactor's options (tests): a poison's report, its slices */
  onPoison?: ReactorDeps['onPoison'];
  slice?: ReactorDeps['slice'];
}) => {
  const now = deps.now ?? Date.now;
  const jobs = new Map<string, Job>();
  const lanes = new Map<Lane, Map<string, KeyQueue>>(LANES.map((l) => [l, new Map()]));
  const waitingIn = new Map<Lane, number>(LANES.map((l) => [l, 0]));
  /** each lane's jobs crawling now (a few: the crawlers' slots) */
  const crawlingIn = new Map<Lane, Set<Job>>(LANES.map((l) => [l, new Set()]));
  /** each lane's latest ended crawls, oldest first */
  const crawlsOf = new Map<Lane, Crawl[]>(LANES.map((l) => [l, []]));
  /** the most of a lane's jobs seen crawling at once, and when */
  const peakOf = new Map<Lane, { count: number; at: number }>();
  let capacity: { value: FleetCapacity; at: number } | undefined;

  const keyQueue = (lane: Lane, keyId: string, weight: number) => {
    const keys = lanes.get(lane)!;
    let k = keys.get(keyId);
    if (!k) {
      k = { waiting: [], pages: 0, crawling: 0, weight };
      keys.set(keyId, k);
    }
    return k;
  };
  const dropIfEmpty = (lane: Lane, keyId: string, k: KeyQueue) => {
    if (k.waiting.length === 0 && k.crawling === 0) lanes.get(lane)!.delete(keyId);
  };
  const unwait = (j: Job, k: KeyQueue) => {
    const i = indexOf(k.waiting, j.position);
    if (k.waiting[i] === j.position) k.waiting.splice(i, 1);
    k.pages -= j.pages;
    waitingIn.set(j.lane, (waitingIn.get(j.lane) ?? 1) - 1);
  };

  const submitted = (jobId: string, j: Job) => {
    if (jobs.has(jobId)) return;
    jobs.set(jobId, j);
    const k = keyQueue(j.lane, j.keyId, j.weight);
    k.weight = j.weight;
    if (j.crawling) {
      k.crawling += 1;
      return;
    }
    k.waiting.splice(indexOf(k.waiting, j.position), 0, j.position);
    k.pages += j.pages;
    waitingIn.set(j.lane, (waitingIn.get(j.lane) ?? 0) + 1);
  };
  const crawls = (j: Job) => {
    const set = crawlingIn.get(j.lane)!;
    set.add(j);
    const peak = peakOf.get(j.lane);
    const t = now();
    if (!peak || set.size >= peak.count || t - peak.at > PACE_WINDOW_MS) peakOf.set(j.lane, { count: set.size, at: t });
  };
  const started = (jobId: string, at?: string) => {
    const j = jobs.get(jobId);
    if (!j || j.crawling) return;
    const k = keyQueue(j.lane, j.keyId, j.weight);
    unwait(j, k);
    j.crawling = true;
    j.startedAt = at ? Date.parse(at) : now();
    k.crawling += 1;
    crawls(j);
  };
  /** `fetched`: the pages the crawl fetched, when it ended with its result (its duration then counts for the pace) */
  const ended = (jobId: string, at?: string, fetched?: number) => {
    const j = jobs.get(jobId);
    if (!j) return;
    jobs.delete(jobId);
    const k = keyQueue(j.lane, j.keyId, j.weight);
    if (j.crawling) {
      k.crawling -= 1;
      crawlingIn.get(j.lane)!.delete(j);
      const end = at ? Date.parse(at) : now();
      if (fetched && fetched > 0 && j.startedAt !== undefined && end >= j.startedAt) {
        const list = crawlsOf.get(j.lane)!;
        list.push({ at: end, seconds: (end - j.startedAt) / 1000, pages: fetched });
        if (list.length > CRAWLS_KEPT) list.shift();
      }
    } else unwait(j, k);
    dropIfEmpty(j.lane, j.keyId, k);
  };

  const follower = createReactor(
    {
      name: 'queue-positions',
      handles: ['SearchSubmitted', 'CrawlStarted', 'CrawlCompleted', 'CrawlFailed', 'SearchPurged'],
      load() {
        const at = deps.readModels.checkpoint(PROJECTOR_CHECKPOINT);
        jobs.clear();
        for (const keys of lanes.values()) keys.clear();
        for (const set of crawlingIn.values()) set.clear();
        for (const l of LANES) waitingIn.set(l, 0);
        for (const d of deps.queries.queue.open()) submitted(d.jobId, { ...d, crawling: d.state === 'crawling' });
        for (const j of jobs.values()) if (j.crawling) crawls(j);
        return at;
      },
      handle(events) {
        for (const e of events) {
          switch (e.type) {
            case 'SearchSubmitted':
              if (e.data.charged) {
                submitted(e.data.jobId, {
                  lane: laneOf(e.data),
                  keyId: e.data.keyId,
                  pages: pagesFor(depthOf(e.data.request)),
                  weight: e.data.weight ?? 1,
                  position: e.globalPosition,
                  crawling: false,
                });
              }
              break;
            case 'CrawlStarted':
              started(e.data.jobId, e.data.startedAt);
              break;
            case 'CrawlFailed':
              if (e.data.final) ended(e.data.jobId, e.data.failedAt);
              break;
            case 'CrawlCompleted':
              ended(e.data.jobId, e.data.completedAt, e.data.pages.length);
              break;
            case 'SearchPurged':
              ended(e.data.jobId);
              break;
          }
        }
      },
    },
    {
      eventStore: deps.eventStore,
      readModels: deps.readModels,
      // it reads the read models only at start, where they stand: it waits for no projection
      projected: async () => undefined,
      ...(deps.onPoison ? { onPoison: deps.onPoison } : {}),
      ...(deps.slice ? { slice: deps.slice } : {}),
    },
  );

  const capacityNow = () => {
    const t = now();
    if (!capacity || t - capacity.at >= 1000) {
      capacity = { value: fleetCapacity(deps.queries, new Date(t), deps.fleet), at: t };
    }
    return capacity.value;
  };

  /** the lane's share of the fleet while the lanes that have jobs waiting compete (the fair queue's lane weights) */
  const laneShare = (lane: Lane) => {
    const busy = LANES.filter((l) => l === lane || (waitingIn.get(l) ?? 0) > 0);
    return busy[0] === lane ? 1 - deps.laneMinShare * (busy.length - 1) : deps.laneMinShare;
  };

  const paceOf = (crawls: Crawl[]) => {
    let seconds = 0;
    let pages = 0;
    for (const c of crawls) {
      seconds += c.seconds;
      pages += c.pages;
    }
    return pages > 0 ? seconds / pages : undefined;
  };

  /** the seconds a page of one of the lane's crawls takes now (undefined: nothing says) */
  const secondsPerPage = (lane: Lane, slots: number, t: number): number | undefined => {
    const own = crawlsOf.get(lane)!;
    const recent = own.filter((c) => t - c.at <= PACE_WINDOW_MS);
    if (recent.length > 0) return paceOf(recent);
    const lately = (cs: Crawl[]) => cs.filter((c) => t - c.at <= PACE_STALE_MS).slice(-PACE_STALE_CRAWLS);
    const older = lately(own);
    if (older.length > 0) return paceOf(older);
    const any = lately(LANES.flatMap((l) => crawlsOf.get(l)!).sort((x, y) => x.at - y.at));
    if (any.length > 0) return paceOf(any);
    // no crawl to go by: the lane's share of the fleet's pages a second, spread over its slots
    const perMinute = capacityNow().pagesPerMinute;
    const share = laneShare(lane);
    return perMinute && share > 0 ? slots / ((perMinute * share) / 60) : undefined;
  };

  /**
   * how long the higher lanes' work holds this lane up: the fair queue gives a lower lane only its minimum share while
   * a higher one has pages to fetch, so the pages the higher lanes have waiting, and half those of their crawls under
   * way, go first at the fleet's recent pace (every lane's crawls of the last minute: pages over the time they ran)
   */
  const higherLanesFirst = (lane: Lane, t: number) => {
    let pages = 0;
    for (const l of LANES) {
      if (l === lane) break;
      for (const k of lanes.get(l)!.values()) pages += k.pages;
      for (const j of crawlingIn.get(l)!) pages += j.pages / 2;
    }
    if (pages === 0) return 0;
    let fetched = 0;
    let from = t;
    let to = 0;
    for (const l of LANES) {
      for (const c of crawlsOf.get(l)!) {
        if (t - c.at > PACE_WINDOW_MS) continue;
        fetched += c.pages;
        from = Math.min(from, c.at - c.seconds * 1000);
        to = Math.max(to, c.at);
      }
    }
    // the pages a second while those crawls ran (an idle gap since is no slower fleet)
    return fetched > 0 && to > from ? (pages / (fetched / ((to - from) / 1000))) * (1 - deps.laneMinShare) : 0;
  };

  /** a waiting job with `ahead` jobs of its lane (`pagesAhead` pages) to start before it */
  const estimate = (lane: Lane, pagesAhead: number, ahead: number): QueuePosition => {
    const t = now();
    const crawling = [...crawlingIn.get(lane)!];
    const peak = peakOf.get(lane);
    const seen = peak && t - peak.at <= PACE_WINDOW_MS ? peak.count : 0;
    const slots = Math.max(1, deps.laneSlots ?? 0, seen, crawling.length);
    // a slot is free for it and for every job before it: it starts now
    if (ahead < slots - crawling.length) return { lane, ahead, estimated_start_s: 0 };
    const perPage = secondsPerPage(lane, slots, t);
    if (perPage === undefined) return { lane, ahead, estimated_start_s: null };
    // when each slot is next free: a free one now, a busy one once its crawl's pages are done at the lane's pace
    // (a crawl this process saw start only as crawling, at a start: half its time left)
    const freeAt = crawling.map((j) =>
      j.startedAt === undefined ? (j.pages * perPage) / 2 : Math.max(0, j.pages * perPage - (t - j.startedAt) / 1000),
    );
    while (freeAt.length < slots) freeAt.push(0);
    freeAt.sort((x, y) => x - y);
    // the jobs ahead take the slots in turn as they come free, each for a crawl of their average pages
    const crawl = ahead > 0 ? (pagesAhead / ahead) * perPage : 0;
    const s = freeAt[ahead % freeAt.length]! + Math.floor(ahead / freeAt.length) * crawl;
    return { lane, ahead, estimated_start_s: Math.round((s + higherLanesFirst(lane, t)) * 10) / 10 };
  };

  /** jobs and pages of the other keys of the lane whose jobs start before virtual start `s` */
  const othersBefore = (lane: Lane, keyId: string, s: number, ties: boolean) => {
    let ahead = 0;
    let pages = 0;
    for (const [other, k] of lanes.get(lane)!) {
      const n = k.waiting.length;
      if (other === keyId || n === 0) continue;
      const avg = k.pages / n;
      // job i of that key starts at i × avg / weight
      const before = Math.min(n, Math.max(0, Math.ceil(((ties ? s + 1e-9 : s) * k.weight) / avg)));
      ahead += before;
      pages += before * avg;
    }
    return { ahead, pages };
  };

  /** a job of `keyId` with `mine` of its key's waiting jobs before it */
  const positionOf = (lane: Lane, keyId: string, k: KeyQueue | undefined, mine: number, weight: number) => {
    if (!k || (mine === 0 && k.crawling === 0)) return { lane, ahead: 0, estimated_start_s: 0 };
    const avg = k.waiting.length ? k.pages / k.waiting.length : 0;
    const pagesMine = mine * avg;
    const others = othersBefore(lane, keyId, pagesMine / weight, k.crawling > 0);
    return estimate(lane, others.pages + pagesMine, others.ahead + mine);
  };

  /** a job this process knows: undefined once it has ended (or before its submit reached this process) */
  const of = (jobId: string): QueuePosition | undefined => {
    const j = jobs.get(jobId);
    if (!j) return undefined;
    if (j.crawling) return { lane: j.lane, ahead: 0, estimated_start_s: 0 };
    const k = lanes.get(j.lane)!.get(j.keyId);
    return positionOf(j.lane, j.keyId, k, k ? indexOf(k.waiting, j.position) : 0, j.weight);
  };

  return {
    /** jobs not yet ended per lane, waiting or crawling (the metrics' gauge) */
    counts(): Record<Lane, { waiting: number; crawling: number }> {
      return Object.fromEntries(
        LANES.map((lane) => {
          let crawling = 0;
          for (const k of lanes.get(lane)!.values()) crawling += k.crawling;
          return [lane, { waiting: waitingIn.get(lane) ?? 0, crawling }];
        }),
      ) as Record<Lane, { waiting: number; crawling: number }>;
    },
    /** a lane's jobs, and the keys whose pages wait most in it (the dashboard's queue view) */
    lane(lane: Lane, top = 5): LaneSummary {
      let pages = 0;
      let crawling = 0;
      const keys: LaneSummary['topKeys'] = [];
      for (const [keyId, k] of lanes.get(lane)!) {
        pages += k.pages;
        crawling += k.crawling;
        if (k.waiting.length > 0) keys.push({ keyId, waiting: k.waiting.length, waitingPages: k.pages });
      }
      keys.sort((a, b) => b.waitingPages - a.waitingPages || a.keyId.localeCompare(b.keyId));
      return { lane, waiting: waitingIn.get(lane) ?? 0, waitingPages: pages, crawling, topKeys: keys.slice(0, top) };
    },
    name: follower.name,
    start: () => follower.start(),
    stop: () => follower.stop(),
    /** the log position its view includes */
    position: () => follower.position(),
    /** a job this process knows: undefined once it has ended (or before its submit reached this process) */
    of,
    /**
     * a job just submitted: where it stands once this process followed its submit; before that, at the end of its
     * key's jobs of the lane (not also behind itself)
     */
    ofNew(jobId: string, lane: Lane, keyId: string, weight: number): QueuePosition {
      const known = of(jobId);
      if (known) return known;
      const k = lanes.get(lane)!.get(keyId);
      return positionOf(lane, keyId, k, k?.waiting.length ?? 0, weight);
    },
  };
};
export type QueuePositions = ReturnType<typeof createQueuePositions>;
