import { LANES, type Lane } from '../../../../contracts/lanes.js';
import type { ReadModelQueries } from '../../../../projections/index.js';
import type { QueuedJob } from '../../../../projections/queue/queries.js';

/** a key's jobs of one lane not yet ended */
interface KeyJobs {
  keyId: string;
  waiting: number;
  waitingPages: number;
  crawling: number;
}

export interface LaneJobs {
  lane: Lane;
  waiting: number;
  waitingPages: number;
  crawling: number;
  /** the keys with jobs of the lane not yet ended: most pages waiting first, then most crawling */
  topKeys: Array<KeyJobs & { prefix?: string; label?: string }>;
}

export interface QueueView {
  lanes: LaneJobs[];
  /** the lanes summed: what the Queue depth card shows */
  waiting: number;
  crawling: number;
  /** when the job waiting longest was submitted (undefined: none waits) */
  oldestWaitingSince?: string;
}

/**
 * Every number the dashboard shows about jobs not yet ended, from one read of the `queue` view
 * (docs/fleet.md#lanes-and-fair-share): per lane the jobs waiting (in the fair scheduler or on the work queue, not
 * started) and crawling, the keys with the most of them, and the totals the Queue depth card shows, so the card and the
 * lanes table cannot disagree (docs/operations.md#admin-dashboard). A key whose jobs all crawl is still listed: its
 * backlog is being done.
 */
export const queueView = (queries: ReadModelQueries, open: QueuedJob[] = queries.queue.open(), top = 5): QueueView => {
  const byLane = new Map<Lane, Map<string, KeyJobs>>(LANES.map((l) => [l, new Map()]));
  let oldest: string | undefined;
  for (const j of open) {
    const keys = byLane.get(j.lane)!;
    const k = keys.get(j.keyId) ?? { keyId: j.keyId, waiting: 0, waitingPages: 0, crawling: 0 };
    if (j.state === 'crawling') k.crawling += 1;
    else {
      k.waiting += 1;
      k.waitingPages += j.pages;
      if (oldest === undefined || j.submittedAt < oldest) oldest = j.submittedAt;
    }
    keys.set(j.keyId, k);
  }
  const lanes = LANES.map((lane): LaneJobs => {
    const keys = [...byLane.get(lane)!.values()];
    const sum = (f: (k: KeyJobs) => number) => keys.reduce((n, k) => n + f(k), 0);
    keys.sort((a, b) => b.waitingPages - a.waitingPages || b.crawling - a.crawling || a.keyId.localeCompare(b.keyId));
    return {
      lane,
      waiting: sum((k) => k.waiting),
      waitingPages: sum((k) => k.waitingPages),
      crawling: sum((k) => k.crawling),
      topKeys: keys.slice(0, top).map((k) => {
        const key = queries.keys.byId(k.keyId);
        return { ...k, ...(key ? { prefix: key.prefix } : {}), ...(key?.label ? { label: key.label } : {}) };
      }),
    };
  });
  return {
    lanes,
    waiting: lanes.reduce((n, l) => n + l.waiting, 0),
    crawling: lanes.reduce((n, l) => n + l.crawling, 0),
    ...(oldest !== undefined ? { oldestWaitingSince: oldest } : {}),
  };
};
