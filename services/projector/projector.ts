import { DomainEvent } from '../../contracts/events.js';
import type { ProjectedEvent, Projection } from '../../projections/projection.js';
import type { EventStore, RecordedEvent, Subscription } from '../ports/eventStore.js';
import type { DocWrite, ReadModelStore } from '../ports/readModelStore.js';

export interface Projector {
  /** catches up with the log, then follows it live; resolves once caught up */
  start(): Promise<void>;
  /** resolves once every event up to `position` is in the read models */
  waitFor(position: number): Promise<void>;
  stop(): Promise<void>;
}

/** The projector's checkpoint name in the read-model store (a CLI beside a service waits on it). */
export const PROJECTOR_CHECKPOINT = 'projector';
const CHECKPOINT = PROJECTOR_CHECKPOINT;

/** Validates a stored event at the edge; events of types this version does not know are skipped, not fatal. */
export const toProjected = (e: RecordedEvent): ProjectedEvent | undefined => {
  const parsed = DomainEvent.safeParse({ type: e.type, data: e.data });
  if (!parsed.success) return undefined;
  return {
    ...parsed.data,
    streamName: e.streamName,
    globalPosition: e.globalPosition,
    recordedAt: e.metadata.recordedAt,
  };
};

/** Folds a batch into document writes, reading each document at most once from the store. */
const applyBatch = (store: ReadModelStore, projections: readonly Projection<unknown>[], events: ProjectedEvent[]) => {
  const pending = new Map<string, DocWrite>();
  for (const event of events) {
    for (const p of projections) {
      const id = p.idOf(event);
      if (id === undefined) continue;
      const k = `${p.name}\u0000${id}`;
      const current = pending.has(k) ? (pending.get(k)?.doc ?? undefined) : store.get(p.name, id);
      const next = p.evolve(current, event);
      pending.set(k, { view: p.name, id, doc: next, lookup: next === null ? undefined : p.lookupOf?.(next) });
    }
  }
  return [...pending.values()];
};

export const createProjector = (deps: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  projections: readonly Projection<unknown>[];
  onError?: (err: unknown) => void;
}): Projector => {
  const { eventStore, readModels, projections } = deps;
  let position = readModels.checkpoint(CHECKPOINT);
  let subscription: Subscription | undefined;
  const waiters: Array<{ position: number; resolve: () => void }> = [];

  const handle = (batch: RecordedEvent[]) => {
    if (batch.length === 0) return;
    const last = batch[batch.length - 1].globalPosition;
    try {
      // Another process may project into the same file (a CLI command beside the service): under the write lock,
      // apply only what the stored checkpoint does not already include, so no event is ever applied twice.
      position = readModels.exclusive(() => {
        const stored = readModels.checkpoint(CHECKPOINT);
        if (stored >= last) return stored;
        const events = batch
          .filter((e) => e.globalPosition > stored)
          .map(toProjected)
          .filter((e): e is ProjectedEvent => e !== undefined);
        readModels.commit(applyBatch(readModels, projections, events), CHECKPOINT, last);
        return last;
      });
    } catch (err) {
      deps.onError?.(err);
      throw err;
    }
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].position <= position) {
        waiters[i].resolve();
        waiters.splice(i, 1);
      }
    }
  };

  const waitFor = (target: number) =>
    target <= position
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ position: target, resolve }));

  return {
    async start() {
      const head = await eventStore.headPosition();
      subscription = eventStore.subscribeToAll(position, handle);
      await waitFor(head);
    },
    waitFor,
    async stop() {
      await subscription?.stop();
      subscription = undefined;
    },
  };
};

/** Drops every read model and replays the whole log into them (`serp-api projections rebuild`). */
export const rebuildReadModels = async (
  eventStore: EventStore,
  readModels: ReadModelStore,
  projections: readonly Projection<unknown>[],
) => {
  readModels.reset([CHECKPOINT]);
  let from = 0;
  let count = 0;
  for (;;) {
    const batch = await eventStore.readAll({ fromPosition: from, maxCount: 1000 });
    if (batch.length === 0) break;
    const events = batch.map(toProjected).filter((e): e is ProjectedEvent => e !== undefined);
    from = batch[batch.length - 1].globalPosition;
    readModels.commit(applyBatch(readModels, projections, events), CHECKPOINT, from);
    count += batch.length;
  }
  return { events: count, position: from };
};
