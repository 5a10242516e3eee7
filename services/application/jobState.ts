import { streams } from '../../contracts/events.js';
import { fold } from '../../domain/kernel/decider.js';
import { type SearchJobEvent, searchJobDecider } from '../../domain/searchJob/searchJob.js';
import type { EventStore } from '../ports/eventStore.js';

/** A job's state folded straight from its stream: for when the read model may not have it yet. */
export const readJobState = async (eventStore: EventStore, jobId: string) => {
  const { events } = await eventStore.readStream(streams.searchJob(jobId));
  return fold(
    searchJobDecider,
    events.map((e) => ({ type: e.type, data: e.data }) as SearchJobEvent),
  );
};
