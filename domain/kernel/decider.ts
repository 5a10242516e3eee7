import type { DomainEvent } from '../../contracts/events.js';

/** Emmett's shape: a pure `decide` that returns events (`[]` = nothing to do) and a pure `evolve` that folds them. */
export interface Decider<State, Command, Event extends DomainEvent = DomainEvent> {
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

export const fold = <State, Command, Event extends DomainEvent>(
  decider: Decider<State, Command, Event>,
  events: readonly Event[],
): State => events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
