import { LANES, type Lane } from '../../contracts/lanes.js';
import type { DocReader } from '../projection.js';
import { type QueuedJobDoc, queueProjection } from './queue.js';

export const queueQueries = (docs: DocReader) => ({
  /** the lane's jobs not yet ended, waiting and crawling, in no particular order */
  ofLane: (lane: Lane) => docs.listByLookup<QueuedJobDoc>(queueProjection.name, lane),
  /** every job not yet ended, by lane */
  all: () =>
    Object.fromEntries(
      LANES.map((lane) => [lane, docs.listByLookup<QueuedJobDoc>(queueProjection.name, lane)]),
    ) as Record<Lane, QueuedJobDoc[]>,
  byId: (jobId: string) => docs.get<QueuedJobDoc>(queueProjection.name, jobId),
});
