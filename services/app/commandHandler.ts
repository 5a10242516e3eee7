import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../../contracts/events.js';
import type { Decider } from '../../domain/kernel/decider.js';
import { type EventStore, type NewEvent, WrongExpectedVersionError } from '../ports/eventStore.js';

export interface CommandContext {
  correlationId?: string;
  causationId?: string;
}

export interface CommandResult<Event> {
  events: Event[];
  /** global position of the last appended event, or undefined when nothing was decided */
  position?: number;
}

/**
 * Emmett's command handler: read the stream, fold, decide, append with the expected version, and retry only on a
 * version conflict (another process wrote first). Commands on one stream are serialised inside this process, so
 * a burst on one key waits in line instead of burning retries; across processes the expected version still guards.
 */
export const createCommandHandler = (eventStore: EventStore, options: { maxRetries?: number } = {}) => {
  const maxRetries = options.maxRetries ?? 20;
  const tails = new Map<string, Promise<unknown>>();

  const once = async <S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    ctx: CommandContext,
  ): Promise<CommandResult<E>> => {
    for (let attempt = 0; ; attempt++) {
      const { events, currentVersion } = await eventStore.readStream(stream);
      const state = events.reduce(
        (s, e) => decider.evolve(s, { type: e.type, data: e.data } as E),
        decider.initialState(),
      );
      const decided = decider.decide(command, state);
      if (decided.length === 0) return { events: [] };
      const toAppend: NewEvent[] = decided.map((e) => ({
        type: e.type,
        data: e.data,
        metadata: { eventId: randomUUID(), correlationId: ctx.correlationId, causationId: ctx.causationId },
      }));
      try {
        const res = await eventStore.appendToStream(stream, toAppend, {
          expectedVersion: currentVersion < 0 ? 'no_stream' : currentVersion,
        });
        return { events: decided, position: res.lastGlobalPosition };
      } catch (err) {
        if (!(err instanceof WrongExpectedVersionError) || attempt >= maxRetries) throw err;
      }
    }
  };

  return <S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    ctx: CommandContext = {},
  ): Promise<CommandResult<E>> => {
    const prev = tails.get(stream) ?? Promise.resolve();
    const run = prev.then(
      () => once(stream, decider, command, ctx),
      () => once(stream, decider, command, ctx),
    );
    const tail = run.catch(() => undefined);
    tails.set(stream, tail);
    void tail.then(() => {
      if (tails.get(stream) === tail) tails.delete(stream);
    });
    return run;
  };
};

export type CommandHandler = ReturnType<typeof createCommandHandler>;
