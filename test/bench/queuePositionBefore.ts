/**
 * The baseline of test/bench/queueEstimates.ts: queue positions as services/fairShare/queuePosition.ts made them
 * before their estimates came from the lane's recent pace (docs/benchmarks.md#queue-estimates), kept here unchanged
 * but for its import paths and names: the pages ahead over the lane's share of the fleet's capacity, the busiest
 * minute of the last hour for unpaced routes; and a submit's position asked as the 202 asked it (`ofNew`, its key's
 * jobs of the lane at the end, whether or not this process had already followed the submit).
 */
import { LANES, type Lane } from '../../contracts/lanes.js';
import type { QueuePosition } from '../../contracts/search.js';
import { depthOf, pagesFor } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import type { ReadModelQueries } from '../../projections/index.js';
import { type FleetCapacity, fleetCapacity } from '../../services/fairShare/capacity.js';
import type { EventStore } from '../../services/ports/eventStore.js';
import type { ReadModelStore } from '../../services/ports/readModelStore.js';
import { PROJECTOR_CHECKPOINT } from '../../services/projector/projector.js';
import { createReactor } from '../../services/reactor/reactor.js';

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
}

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
 * The estimate: the lane's waiting jobs spaced as the fair queue serves them from now on, each key's jobs in submit
 * order, a job's virtual start its key's pages before it over the key's share (pages are taken as the key's average);
 * the jobs ahead of one are its key's before it and every other key's that start before it. A key with nothing of
 * the lane out with the crawlers sends its first job to the lane's express class: nothing is ahead of it. When it
 * should start divides the pages ahead by the lane's share of the fleet's capacity (capacity.ts) while the other
 * lanes have work.
 */
export const createQueuePositionsBefore = (deps: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries: ReadModelQueries;
  /** SERP_LANE_MIN_SHARE */
  laneMinShare: number;
  now?: () => number;
}) => {
  const now = deps.now ?? Date.now;
  const jobs = new Map<string, Job>();
  const lanes = new Map<Lane, Map<string, KeyQueue>>(LANES.map((l) => [l, new Map()]));
  const waitingIn = new Map<Lane, number>(LANES.map((l) => [l, 0]));
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
  const started = (jobId: string) => {
    const j = jobs.get(jobId);
    if (!j || j.crawling) return;
    const k = keyQueue(j.lane, j.keyId, j.weight);
    unwait(j, k);
    j.crawling = true;
    k.crawling += 1;
  };
  const ended = (jobId: string) => {
    const j = jobs.get(jobId);
    if (!j) return;
    jobs.delete(jobId);
    const k = keyQueue(j.lane, j.keyId, j.weight);
    if (j.crawling) k.crawling -= 1;
    else unwait(j, k);
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
        for (const l of LANES) waitingIn.set(l, 0);
        for (const d of deps.queries.queue.open()) submitted(d.jobId, { ...d, crawling: d.state === 'crawling' });
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
              started(e.data.jobId);
              break;
            case 'CrawlFailed':
              if (e.data.final) ended(e.data.jobId);
              break;
            case 'CrawlCompleted':
            case 'SearchPurged':
              ended(e.data.jobId);
              break;
          }
        }
      },
    },
    { eventStore: deps.eventStore, readModels: deps.readModels, projected: async () => undefined },
  );

  const capacityNow = () => {
    const t = now();
    if (!capacity || t - capacity.at >= 1000) capacity = { value: fleetCapacity(deps.queries, new Date(t)), at: t };
    return capacity.value;
  };

  /** the lane's share of the fleet while the lanes that have jobs waiting compete (the fair queue's lane weights) */
  const laneShare = (lane: Lane) => {
    const busy = LANES.filter((l) => l === lane || (waitingIn.get(l) ?? 0) > 0);
    return busy[0] === lane ? 1 - deps.laneMinShare * (busy.length - 1) : deps.laneMinShare;
  };

  const estimate = (lane: Lane, pagesAhead: number, ahead: number): QueuePosition => {
    if (ahead === 0) return { lane, ahead: 0, estimated_start_s: 0 };
    const perMinute = capacityNow().pagesPerMinute;
    const share = laneShare(lane);
    const rate = perMinute === null || share <= 0 ? null : (perMinute * share) / 60;
    return { lane, ahead, estimated_start_s: rate === null ? null : Math.round((pagesAhead / rate) * 10) / 10 };
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
    start: () => follower.start(),
    stop: () => follower.stop(),
    /** a job this process knows: undefined once it has ended (or before its submit reached this process) */
    of(jobId: string): QueuePosition | undefined {
      const j = jobs.get(jobId);
      if (!j) return undefined;
      if (j.crawling) return { lane: j.lane, ahead: 0, estimated_start_s: 0 };
      const k = lanes.get(j.lane)!.get(j.keyId);
      return positionOf(j.lane, j.keyId, k, k ? indexOf(k.waiting, j.position) : 0, j.weight);
    },
    /** a job just submitted, before this process followed its submit: it joins its key's jobs of the lane at the end */
    ofNew(lane: Lane, keyId: string, weight: number): QueuePosition {
      const k = lanes.get(lane)!.get(keyId);
      return positionOf(lane, keyId, k, k?.waiting.length ?? 0, weight);
    },
  };
};
export type QueuePositionsBefore = ReturnType<typeof createQueuePositionsBefore>;
