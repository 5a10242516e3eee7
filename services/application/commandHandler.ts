import { randomUUID } from 'node:crypto';
import { DomainEvent } from '../../contracts/events.js';
import type { Decider } from '../../domain/kernel/decider.js';
import { DomainError, errorCodes } from '../../domain/kernel/errors.js';
import type { CommandContext, CommandHandler, CommandResult } from '../ports/commandHandler.js';
import { type EventStore, type NewEvent, WrongExpectedVersionError } from '../ports/eventStore.js';

// biome-ignore lint/suspicious/noExplicitAny: one handler serves every decider; each call is typed at its call site
type AnyDecider = Decider<any, any, any>;

interface Pending {
  decider: AnyDecider;
  command: unknown;
  ctx: CommandContext;
  resolve: (r: CommandResult<DomainEvent>) => void;
  reject: (err: unknown) => void;
}

interface Folded {
  decider: AnyDecider;
  state: unknown;
  /** stream version the state includes; -1 = no stream */
  version: number;
}

/**
 * The log is immutable: an event that does not match its contract is refused before it is appended, whatever
 * decided it (a command built from input no edge checked, a decider's bug). The command rejects with
 * SERP_EVENT_INVALID (an HTTP 422) and appends nothing; the other commands of its batch go on.
 */
const refuseInvalid = (e: DomainEvent): void => {
  const checked = DomainEvent.safeParse({ type: e.type, data: e.data });
  if (checked.success) return;
  const issue = checked.error.issues[0];
  const where = issue?.path.filter((p) => p !== 'data').join('.') || 'data';
  throw new DomainError(
    errorCodes.eventInvalid,
    `refused: ${e.type} would record ${where}: ${issue?.message ?? 'invalid'}`,
  );
};

/**
 * Emmett's command handler (read, fold, decide, append with the expected version, retry on a version conflict),
 * made cheap for hot streams:
 *
 * - Folded states are kept per stream (LRU). Before every decision the handler reads only the events after the
 *   version it holds, so a decision always sees the whole stream, including what other processes appended.
 * - Commands on one stream queue in this process, and the queue is decided in batches: each command is decided on
 *   the state its predecessors left, and all their events go out in ONE append (one fsync). A burst of 200
 *   submissions on one key is a few appends, not 200 fsyncs in a row. Each command still gets its own outcome: a
 *   command that throws (quota exceeded) rejects alone, the others are appended.
 * - A version conflict (another process wrote first) re-reads the new events and decides the whole batch again.
 *
 * Deciders must be pure (they are: domain/), since a state is reused after a conflict.
 */
export const createCommandHandler = (
  eventStore: EventStore,
  options: { maxRetries?: number; maxBatch?: number; cachedStreams?: number } = {},
): CommandHandler => {
  const maxRetries = options.maxRetries ?? 20;
  const maxBatch = options.maxBatch ?? 128;
  const cachedStreams = options.cachedStreams ?? 10_000;
  const lanes = new Map<string, Pending[]>();
  /**
   * The folded states, in two generations: `recent` takes every write; when it holds half the budget it becomes
   * `older` and the one before is dropped. A state read from `older` moves back to `recent`. Roughly LRU, without
   * deleting from the front of one big Map on every new stream: V8 leaves a deleted entry's slot in place until the
   * table is rebuilt, and finding the oldest key then walks over all of them (~3% of a submit's time).
   */
  let recent = new Map<string, Folded>();
  let older = new Map<string, Folded>();
  const folded = {
    get(stream: string) {
      const f = recent.get(stream);
      if (f !== undefined) return f;
      const old = older.get(stream);
      if (old !== undefined) remember(stream, old);
      return old;
    },
    delete(stream: string) {
      recent.delete(stream);
      older.delete(stream);
    },
  };
  const remember = (stream: string, f: Folded) => {
    recent.set(stream, f);
    if (recent.size >= Math.max(1, cachedStreams / 2)) {
      older = recent;
      recent = new Map();
    }
  };

  /** The stream's state up to its last event: the cached fold plus whatever was appended since. */
  const load = async (stream: string, decider: AnyDecider, assumeNew = false): Promise<Folded> => {
    const known = folded.get(stream);
    const base = known && known.decider === decider ? known : { decider, state: decider.initialState(), version: -1 };
    if (assumeNew && base.version === -1) return base;
    const { events, currentVersion } = await eventStore.readStream(stream, { fromVersion: base.version + 1 });
    if (events.length === 0 && currentVersion === base.version) return base;
    let state = base.state;
    for (const e of events) state = decider.evolve(state, { type: e.type, data: e.data } as DomainEvent);
    return { decider, state, version: currentVersion };
  };

  const runBatch = async (stream: string, batch: Pending[]) => {
    const { decider } = batch[0]!;
    for (let attempt = 0; ; attempt++) {
      let current: Folded;
      try {
        current = await load(stream, decider, attempt === 0 && batch.every((p) => p.ctx.newStream));
      } catch (err) {
        for (const p of batch) p.reject(err);
        return;
      }
      let state = current.state;
      const toAppend: NewEvent[] = [];
      const outcomes: ({ events: DomainEvent[] } | { error: unknown })[] = [];
      for (const p of batch) {
        try {
          const decided: DomainEvent[] = decider.decide(p.command, state);
          for (const e of decided) refuseInvalid(e);
          for (const e of decided) state = decider.evolve(state, e);
          for (const e of decided) {
            toAppend.push({
              type: e.type,
              data: e.data,
              metadata: { eventId: randomUUID(), correlationId: p.ctx.correlationId, causationId: p.ctx.causationId },
            });
          }
          outcomes.push({ events: decided });
        } catch (error) {
          outcomes.push({ error });
        }
      }
      let position: number | undefined;
      if (toAppend.length > 0) {
        try {
          const res = await eventStore.appendToStream(stream, toAppend, {
            expectedVersion: current.version < 0 ? 'no_stream' : current.version,
          });
          position = res.lastGlobalPosition;
          remember(stream, { decider, state, version: res.nextExpectedVersion });
        } catch (err) {
          remember(stream, current);
          if (err instanceof WrongExpectedVersionError && attempt < maxRetries) continue;
          folded.delete(stream);
          for (const p of batch) p.reject(err);
          return;
        }
      } else {
        remember(stream, current);
      }
      batch.forEach((p, i) => {
        const o = outcomes[i]!;
        if ('error' in o) p.reject(o.error);
        else p.resolve({ events: o.events, position: o.events.length > 0 ? position : undefined });
      });
      return;
    }
  };

  const drain = async (stream: string, queue: Pending[]) => {
    try {
      while (queue.length > 0) {
        // one decider per batch (a stream has one in practice; a mismatch only shortens the batch)
        const first = queue[0]!;
        let n = 1;
        while (n < queue.length && n < maxBatch && queue[n]!.decider === first.decider) n++;
        await runBatch(stream, queue.splice(0, n));
      }
    } finally {
      lanes.delete(stream);
    }
  };

  return <S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    ctx: CommandContext = {},
  ): Promise<CommandResult<E>> =>
    new Promise<CommandResult<E>>((resolve, reject) => {
      const pending: Pending = {
        decider,
        command,
        ctx,
        resolve: resolve as (r: CommandResult<DomainEvent>) => void,
        reject,
      };
      const queue = lanes.get(stream);
      if (queue) {
        queue.push(pending);
        return;
      }
      const fresh = [pending];
      lanes.set(stream, fresh);
      void drain(stream, fresh);
    });
};
