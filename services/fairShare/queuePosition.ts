import { LANES, type Lane } from '../../contracts/lanes.js';
import type { QueuePosition } from '../../contracts/search.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { QueuedJobDoc } from '../../projections/queue/queue.js';
import { type FleetCapacity, fleetCapacity } from './capacity.js';

/** One key's waiting jobs of a lane, as the fair order spaces them. */
interface Flow {
  /** each waiting job's virtual start: the pages before it of its key, over its key's share */
  starts: number[];
  /** pages of the key's jobs before each one (the last entry: all of them) */
  pagesBefore: number[];
  jobIds: string[];
  /** the key has a job of the lane crawling (or on the queue): its first waiting job does not go express */
  busy: boolean;
}

interface LaneView {
  flows: Map<string, Flow>;
  waiting: number;
  at: number;
}

/** the count of `xs` (sorted) below `x`, and the index where it would go */
const below = (xs: number[], x: number) => {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

const viewOf = (jobs: QueuedJobDoc[], at: number): LaneView => {
  const flows = new Map<string, Flow>();
  let waiting = 0;
  for (const j of [...jobs].sort((a, b) => a.position - b.position)) {
    let f = flows.get(j.keyId);
    if (!f) {
      f = { starts: [], pagesBefore: [0], jobIds: [], busy: false };
      flows.set(j.keyId, f);
    }
    if (j.state !== 'waiting') {
      f.busy = true;
      continue;
    }
    waiting += 1;
    const before = f.pagesBefore[f.pagesBefore.length - 1]!;
    f.starts.push(before / j.weight);
    f.pagesBefore.push(before + j.pages);
    f.jobIds.push(j.jobId);
  }
  return { flows, waiting, at };
};

/**
 * Where a job stands in the fair scheduler's order (docs/fleet.md#lanes-and-fair-share), estimated from the `queue`
 * read model so that every api process answers the same: the lane's waiting jobs are spaced as the fair queue serves
 * them from now on (each key's jobs in submit order, a job's virtual start the pages of its key before it over the
 * key's share), and the jobs ahead of one are those of every key that start before it. A key with nothing of the lane
 * out with the crawlers sends its first job to the lane's express class: nothing is ahead of it. The lane's view is
 * computed at most once a second (sooner for a job submitted after it was made); the estimate of when a job starts divides the pages ahead by the share of the
 * fleet's capacity (capacity.ts) that the lane gets while the other lanes have work.
 */
export const createQueuePositions = (deps: {
  queries: ReadModelQueries;
  /** SERP_LANE_MIN_SHARE */
  laneMinShare: number;
  now?: () => number;
}) => {
  const now = deps.now ?? Date.now;
  const views = new Map<Lane, LaneView>();
  let capacity: { value: FleetCapacity; at: number } | undefined;

  /** the lane's view, computed again when older than `maxAgeMs` */
  const view = (lane: Lane, maxAgeMs = 1000) => {
    const t = now();
    const cached = views.get(lane);
    if (cached && t - cached.at < maxAgeMs) return cached;
    const fresh = viewOf(deps.queries.queue.ofLane(lane), t);
    views.set(lane, fresh);
    return fresh;
  };

  const capacityNow = () => {
    const t = now();
    if (!capacity || t - capacity.at >= 1000) capacity = { value: fleetCapacity(deps.queries, new Date(t)), at: t };
    return capacity.value;
  };

  /** the lane's share of the fleet while the lanes that have jobs waiting compete (the fair queue's lane weights) */
  const laneShare = (lane: Lane) => {
    const busy = LANES.filter((l) => l === lane || view(l).waiting > 0);
    const highest = busy[0] === lane;
    return highest ? 1 - deps.laneMinShare * (busy.length - 1) : deps.laneMinShare;
  };

  const estimate = (lane: Lane, pagesAhead: number, ahead: number): QueuePosition => {
    if (ahead === 0) return { lane, ahead: 0, estimated_start_s: 0 };
    const perMinute = capacityNow().pagesPerMinute;
    const share = laneShare(lane);
    const rate = perMinute === null || share <= 0 ? null : (perMinute * share) / 60;
    return {
      lane,
      ahead,
      estimated_start_s: rate === null ? null : Math.round((pagesAhead / rate) * 10) / 10,
    };
  };

  /** jobs and pages of other keys that start before virtual start `s` (ties too, for a key already served) */
  const othersBefore = (v: LaneView, keyId: string, s: number, ties: boolean) => {
    let ahead = 0;
    let pages = 0;
    for (const [other, f] of v.flows) {
      if (other === keyId || f.starts.length === 0) continue;
      const n = below(f.starts, ties ? s + 1e-9 : s);
      ahead += n;
      pages += f.pagesBefore[n]!;
    }
    return { ahead, pages };
  };

  return {
    /** a job the read models know: undefined once it is crawling or has ended (no position then) */
    of(jobId: string): QueuePosition | undefined {
      const doc = deps.queries.queue.byId(jobId);
      if (!doc) return undefined;
      if (doc.state !== 'waiting') return { lane: doc.lane, ahead: 0, estimated_start_s: 0 };
      let v = view(doc.lane);
      let f = v.flows.get(doc.keyId);
      let i = f ? f.jobIds.indexOf(doc.jobId) : -1;
      // submitted after the lane's view was made: made again (a job just submitted is polled at once)
      if (!f || i < 0) {
        v = view(doc.lane, 50);
        f = v.flows.get(doc.keyId);
        i = f ? f.jobIds.indexOf(doc.jobId) : -1;
      }
      if (!f || i < 0) return this.ofNew(doc.lane, doc.keyId, doc.weight);
      if (i === 0 && !f.busy) return { lane: doc.lane, ahead: 0, estimated_start_s: 0 };
      const others = othersBefore(v, doc.keyId, f.starts[i]!, f.busy);
      return estimate(doc.lane, others.pages + f.pagesBefore[i]!, others.ahead + i);
    },
    /** a job just submitted, before the read models hold it: it joins its key's jobs of the lane at their end */
    ofNew(lane: Lane, keyId: string, weight: number): QueuePosition {
      const v = view(lane, 250);
      const f = v.flows.get(keyId);
      if (!f || (f.starts.length === 0 && !f.busy)) return { lane, ahead: 0, estimated_start_s: 0 };
      const mine = f.starts.length;
      const pagesMine = f.pagesBefore[mine]!;
      const others = othersBefore(v, keyId, pagesMine / weight, f.busy);
      return estimate(lane, others.pages + pagesMine, others.ahead + mine);
    },
  };
};
export type QueuePositions = ReturnType<typeof createQueuePositions>;
