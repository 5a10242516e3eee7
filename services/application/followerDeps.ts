import type { ReadModelQueries } from '../../projections/index.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { ReactorDeps } from '../reactor/reactor.js';

/**
 * What a follower that decides is given (the rank recorder, the alerter, the webhook router, the quota releaser): its
 * reactor's deps and options, the read models' queries it reads its inputs from, and the command handler it decides
 * through; `now` for tests. One type, so the followers are wired alike and a new one takes the same.
 */
export interface FollowerDeps extends ReactorDeps {
  queries: ReadModelQueries;
  handle: CommandHandler;
  now?: () => Date;
}
