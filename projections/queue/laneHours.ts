import type { Lane } from '../../contracts/lanes.js';
import { depthOf, pagesFor } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import { hourOf } from '../dashboard/hourlyOutcomes.js';
import type { Projection } from '../projection.js';

/**
 * What each lane asked of the fleet per UTC hour: the searches submitted (charged: a cache answer asks nothing) and
 * the Google pages their depth asks for at most. Capacity against demand (docs/fleet.md#capacity-against-demand)
 * reads the live lane's busiest recent hour from it. Counts only, no key: retention leaves it.
 */
export interface LaneHourDoc {
  hour: string;
  jobs: Partial<Record<Lane, number>>;
  pages: Partial<Record<Lane, number>>;
}

export const laneHoursProjection: Projection<LaneHourDoc> = {
  name: 'laneHours',
  idOf: (e) => (e.type === 'SearchSubmitted' && e.data.charged ? hourOf(e.data.submittedAt) : undefined),
  evolve(doc, e) {
    if (e.type !== 'SearchSubmitted' || !e.data.charged) return doc ?? null;
    const lane = laneOf(e.data);
    const pages = pagesFor(depthOf(e.data.request));
    return {
      hour: hourOf(e.data.submittedAt),
      jobs: { ...doc?.jobs, [lane]: (doc?.jobs[lane] ?? 0) + 1 },
      pages: { ...doc?.pages, [lane]: (doc?.pages[lane] ?? 0) + pages },
    };
  },
};
