import type { DomainEvent } from '../../contracts/events.js';
import { type Decider, fold } from './decider.js';

/**
 * given(events).when(command) → the events decided, or the error thrown. Tests assert on either with tap:
 * `t.same(spec.given([...]).when(cmd), [...])` and `t.throws(() => spec.given([...]).when(cmd), { code })`.
 */
export const deciderSpec = <State, Command, Event extends DomainEvent>(decider: Decider<State, Command, Event>) => ({
  given: (events: readonly Event[]) => ({
    when: (command: Command): Event[] => decider.decide(command, fold(decider, events)),
    state: (): State => fold(decider, events),
  }),
});
