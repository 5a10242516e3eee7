import type { DomainEvent } from '../../contracts/events.js';
import type { Decider } from '../../domain/kernel/decider.js';

/**
 * The command-handler port: how every writer of the log (the application services, the slices' commands and the
 * workers of the fleet) decides a command on a stream and appends its events. Here, below all of them, so that a
 * worker names what it commands through without importing application/, which composes it
 * (docs/architecture.md#folders). The one implementation is application/commandHandler.ts.
 */

export interface CommandContext {
  correlationId?: string;
  causationId?: string;
  /**
   * The caller made the stream's name just now (a new job's random id): the first decision starts from the initial
   * state without reading the stream. Only a hint: the append still expects `no_stream`, and should the stream exist
   * after all, the conflict reads it and decides again.
   */
  newStream?: boolean;
}

export interface CommandResult<Event> {
  events: Event[];
  /** global position of the append that holds these events, or undefined when nothing was decided */
  position?: number;
}

/** Decides `command` on `stream`'s folded state with `decider` and appends what it decided, in one append. */
export type CommandHandler = <S, C, E extends DomainEvent>(
  stream: string,
  decider: Decider<S, C, E>,
  command: C,
  ctx?: CommandContext,
) => Promise<CommandResult<E>>;
