import type { Lane, Priority } from '../../contracts/lanes.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { ApiKeyDoc } from '../../projections/apiKeys/apiKeys.js';
import type { CommandContext } from './commandHandler.js';

/**
 * The search-submit port: how a feature outside the search slice (the monitors' scheduler) submits a search. Slices
 * import each other only through shared layers (docs/architecture.md#slices), so the monitors name this and the
 * composition hands them the search slice's service (services/searches/commands/searches.ts), which implements it.
 */

export interface SubmitOutcome {
  jobId: string;
  status: 'queued' | 'done';
  cached: boolean;
  /** for an answer from cache: the crawled job whose result it is */
  sourceJobId?: string;
  position?: number;
  /** the lane it waits in and its key's share there (docs/fleet.md#lanes-and-fair-share) */
  lane: Lane;
  weight: number;
}

/** a monitor's job: its id derived in advance (two dispatchers submitting it submit one job) and the run it belongs to */
export interface PlannedSearch {
  jobId: string;
  monitor: { monitorId: string; runId: string };
}

export interface SearchSubmitter {
  /**
   * `planned`: a monitor's job (docs/rank-tracking.md); it waits in the `scheduled` lane. Any other job waits in
   * `priority`'s lane (default `live`; docs/fleet.md#lanes-and-fair-share).
   */
  submit(
    key: ApiKeyDoc,
    request: SearchRequest,
    ctx: CommandContext,
    planned?: PlannedSearch,
    priority?: Priority,
  ): Promise<SubmitOutcome>;
}
