import { DomainEvent } from '../../contracts/events.js';
import { allProjections, READ_MODELS_VERSION } from '../../projections/index.js';
import type { ProjectedEvent, Projection } from '../../projections/projection.js';
import { isHandedOver, loadResult } from '../answers/resultBlobs.js';
import type { BlobStore } from '../ports/blobStore.js';
import { type EventStore, isAppendedHere, type RecordedEvent, type Subscription } from '../ports/eventStore.js';
import type { DocWrite, ReadModelStore } from '../ports/readModelStore.js';
import { StoreUnavailableError } from '../ports/unavailable.js';

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
/** not a position: the read models' shape version, kept where the checkpoints are */
const VERSION_CHECKPOINT = 'read-models-version';

const validated = new WeakMap<RecordedEvent, ProjectedEvent | null>();

/**
 * Validates a stored event at the edge; events of types this version does not know are skipped, not fatal. Once per
 * event object: the projector, the dispatcher and the metrics are handed the same objects when the event store
 * answers them from memory, and the answer is shared (read-only, as every event is).
 */
export const toProjected = (e: RecordedEvent): ProjectedEvent | undefined => {
  const seen = validated.get(e);
  if (seen !== undefined) return seen ?? undefined;
  if (isAppendedHere(e)) {
    // this process's own append, read back from memory: made by this version's deciders, so already the contract
    const trusted = {
      type: e.type,
      data: e.data,
      streamName: e.streamName,
      globalPosition: e.globalPosition,
      recordedAt: e.metadata.recordedAt,
      eventId: e.metadata.eventId,
      streamVersion: e.streamVersion,
    } as ProjectedEvent;
    validated.set(e, trusted);
    return trusted;
  }
  // a result this process just made and handed over (resultBlobs.ts) is validated without it, then put back as is
  const own = (e.data as { result?: unknown } | undefined)?.result;
  const handed = isHandedOver(own);
  const parsed = DomainEvent.safeParse({
    type: e.type,
    data: handed ? { ...(e.data as object), result: undefined } : e.data,
  });
  if (parsed.success && handed) (parsed.data.data as { result?: unknown }).result = own;
  const projected = parsed.success
    ? {
        ...parsed.data,
        streamName: e.streamName,
        globalPosition: e.globalPosition,
        recordedAt: e.metadata.recordedAt,
        eventId: e.metadata.eventId,
        streamVersion: e.streamVersion,
      }
    : undefined;
  validated.set(e, projected ?? null);
  return projected;
};

const carriesResult = (e: RecordedEvent) => e.type === 'CrawlCompleted' || e.type === 'SearchReparsed';

/**
 * Fills `result` of the batch's CrawlCompleted / SearchReparsed events from their `resultRef` (results live in the
 * blob store so that retention can delete them), a few reads at a time. A result that is gone (purged) stays absent; a
 * store that did not answer (StoreUnavailableError) fails the batch, which is read again.
 */
export const hydrateResults = async (
  blobStore: BlobStore | undefined,
  batch: RecordedEvent[],
): Promise<RecordedEvent[]> => {
  if (!blobStore || !batch.some(carriesResult)) return batch;
  const out = [...batch];
  const indexes = batch.flatMap((e, i) => (carriesResult(e) ? [i] : []));
  for (let i = 0; i < indexes.length; i += 8) {
    await Promise.all(
      indexes.slice(i, i + 8).map(async (at) => {
        const e = batch[at];
        const data = e.data as { result?: unknown; resultRef?: { key: string; sha256: string; bytes: number } };
        if (data.result !== undefined || !data.resultRef) return;
        // A store that did not answer is not a result that is gone: the batch fails and is read again (the
        // subscription retries it), or the job would read "running" for ever while the log says it ended
        const result = await loadResult(blobStore, data as Parameters<typeof loadResult>[1]).catch((err) => {
          if (err instanceof StoreUnavailableError) throw err;
          return undefined;
        });
        if (result !== undefined) out[at] = { ...e, data: { ...data, result } };
      }),
    );
  }
  return out;
};

/**
 * Folds a batch into document writes, reading each document at most once from the store. `pending` carries the writes
 * of earlier batches not yet committed (a rebuild folds several reads into one commit).
 */
const applyBatch = (
  store: ReadModelStore,
  projections: readonly Projection<unknown>[],
  events: ProjectedEvent[],
  pending = new Map<string, DocWrite>(),
) => {
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
  /** where results referenced by events live (absent: only inline results project) */
  blobStore?: BlobStore;
  /**
   * the read models' shape (READ_MODELS_VERSION): read models written under another are dropped at start and built
   * again from the log
   */
  version?: number;
  onError?: (err: unknown) => void;
  /** the read models now include every event up to `position` (the pipeline thread tells the HTTP thread) */
  onProjected?: (position: number) => void;
}): Projector => {
  const { eventStore, readModels, projections } = deps;
  let position = readModels.checkpoint(CHECKPOINT);
  let subscription: Subscription | undefined;
  const waiters: Array<{ position: number; resolve: () => void }> = [];

  const handle = async (received: RecordedEvent[]) => {
    if (received.length === 0) return;
    const last = received[received.length - 1].globalPosition;
    try {
      const batch = await hydrateResults(deps.blobStore, received);
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
    deps.onProjected?.(position);
    // one pass, kept in place: a splice each would be quadratic when many reads wait on one batch
    let kept = 0;
    for (const w of waiters) {
      if (w.position <= position) w.resolve();
      else waiters[kept++] = w;
    }
    waiters.length = kept;
  };

  const waitFor = (target: number) =>
    target <= position
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ position: target, resolve }));

  return {
    async start() {
      if (deps.version !== undefined && readModels.checkpoint(VERSION_CHECKPOINT) !== deps.version) {
        const version = deps.version;
        readModels.exclusive(() => {
          if (readModels.checkpoint(VERSION_CHECKPOINT) === version) return;
          readModels.reset([CHECKPOINT]);
          readModels.commit([], VERSION_CHECKPOINT, version);
        });
        position = 0;
      }
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

/**
 * How a rebuild groups its commits: reads of 1,000 events are folded into one commit until it holds `events` events
 * or `docs` documents, or a batch carries results (a result's documents are large: they are committed at once). A
 * document rewritten by many events (a keyword's month of rank history) is then read, parsed and written once per
 * commit, not once per read.
 */
export interface RebuildBatching {
  events: number;
  docs: number;
}
export const REBUILD_BATCHING: RebuildBatching = { events: 20_000, docs: 10_000 };

/** Drops every read model and replays the whole log into them (`serp-api projections rebuild`). */
export const rebuildReadModels = async (
  eventStore: EventStore,
  readModels: ReadModelStore,
  projections: readonly Projection<unknown>[],
  blobStore?: BlobStore,
  batching: RebuildBatching = REBUILD_BATCHING,
) => {
  readModels.reset([CHECKPOINT]);
  let from = 0;
  let count = 0;
  let pending = new Map<string, DocWrite>();
  let folded = 0;
  for (;;) {
    const read = await eventStore.readAll({ fromPosition: from, maxCount: 1000 });
    const batch = await hydrateResults(blobStore, read);
    if (batch.length === 0) break;
    const events = batch.map(toProjected).filter((e): e is ProjectedEvent => e !== undefined);
    from = batch[batch.length - 1].globalPosition;
    applyBatch(readModels, projections, events, pending);
    folded += batch.length;
    count += batch.length;
    if (folded >= batching.events || pending.size >= batching.docs || read.some(carriesResult)) {
      readModels.commit([...pending.values()], CHECKPOINT, from);
      pending = new Map();
      folded = 0;
    }
  }
  if (pending.size > 0 || folded > 0) readModels.commit([...pending.values()], CHECKPOINT, from);
  return { events: count, position: from };
};

/**
 * The service's own read models' projector: every projection, at the read models' version, so that a store written
 * under another shape is built again from the log. What each mode composes (embedded, the pipeline thread, a cluster
 * process and its projector thread).
 */
export const createReadModelProjector = (
  deps: Omit<Parameters<typeof createProjector>[0], 'projections' | 'version'>,
) => createProjector({ ...deps, projections: allProjections, version: READ_MODELS_VERSION });
