import type { DomainEvent } from '../../contracts/events.js';
import type { ProjectedEvent } from '../../projections/projection.js';
import type { EventStore, RecordedEvent, Subscription } from '../ports/eventStore.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { toProjected } from '../projector/projector.js';

export type EventType = DomainEvent['type'];
/**
 * An event of the log validated against its contract, with where it sits (its stream's version, its global position)
 * and its id: what a reactor's own appends name as their cause, and what messages derived from it are named after.
 */
export type LogEvent = ProjectedEvent & { eventId: string; streamVersion: number };
/** a log event of one of the types a reactor handles */
export type Handled<T extends EventType> = Extract<ProjectedEvent, { type: T }> & {
  eventId: string;
  streamVersion: number;
};

/**
 * a stored event as a LogEvent, or undefined when it breaks its contract (or is of a type this version lacks); one
 * object per stored event, shared by every follower and the projector (toProjected keeps it)
 */
export const logEventOf = (raw: RecordedEvent): LogEvent | undefined => toProjected(raw) as LogEvent | undefined;

/**
 * Every reactor of the service, by name (its checkpoint's name, and the name in log lines), with where it starts:
 * - `checkpoint`: from its own checkpoint in the read models (the default);
 * - `read models`: from where the read models stand, its state loaded there (`load`);
 * - `head`: from the log's head at its start, with no state to load and no checkpoint (counters since the process
 *   started: the metrics).
 * A reactor must be named here (`ReactorDefinition.name` is one of these names), and the reactor conformance suite
 * holds a case for every name (test/conformance/reactors.test.ts: a record keyed by `ReactorName`, so the compiler
 * asks for a new reactor's case; docs/architecture.md#background-workers).
 */
export const REACTORS = {
  /** the fair dispatcher (services/dispatcher/): jobs onto the queue in fair order */
  'fair-dispatcher': 'read models',
  /** the quota releaser (services/dispatcher/); the name the dispatcher's checkpoint had, so an upgrade goes on */
  dispatcher: 'checkpoint',
  /** rank tracking's recorder and alerter (services/monitors/) */
  'monitor-recorder': 'checkpoint',
  'monitor-alerter': 'checkpoint',
  /** the webhook router (services/webhooks/) */
  'webhook-router': 'checkpoint',
  /** where each waiting job stands, in memory in the process that answers HTTP (services/fairShare/) */
  'queue-positions': 'read models',
  /** the counters of services/metrics/ that come from the log */
  metrics: 'head',
} as const satisfies Record<string, 'checkpoint' | 'read models' | 'head'>;
export type ReactorName = keyof typeof REACTORS;
export type ReactorStart = (typeof REACTORS)[ReactorName];

/**
 * A log follower of the write side (docs/architecture.md#background-workers): it reacts to events of some types by
 * deciding something (a job on the queue, a check recorded, a delivery scheduled). Every follower is one of these,
 * so they subscribe, validate, wait for the read models and checkpoint one way:
 * - **Validated.** Each event of a handled type is checked against its contract (the projector's `toProjected`) before
 *   the handler sees it; one that fails (a poison event: written by a newer or broken version) is reported and skipped,
 *   and the reactor goes on. Events of other types are never parsed.
 * - **Read models first, where asked.** `needsProjection` names the events that may be handled only once the read
 *   models hold them (the handler reads its inputs there); the reactor waits for the batch's last such event once.
 * - **In slices.** A batch's handled events go to the handler at most `REACTOR_SLICE` at a time, with a turn of the
 *   event loop between two slices: `last` is then the slice's last event, and the whole batch is still handed over
 *   again when a slice throws.
 * - **One checkpoint policy.** The checkpoint moves after a batch at most once a second, at least every 500 events,
 *   and on stop. Handlers are idempotent (they decide on streams with expected versions or derived ids), so a restart
 *   from an older checkpoint hands them events again and they decide nothing twice.
 * - **Or no checkpoint.** A reactor whose state is a read model (the fair dispatcher) starts where the read models
 *   stand instead: `load` reads its state there, synchronously, and the reactor follows the log from that position.
 */
export interface ReactorDefinition<T extends EventType> {
  /** the checkpoint's name and the name in log lines (REACTORS says where it starts) */
  name: ReactorName;
  /** the event types it reacts to; every other event only moves its checkpoint */
  handles: readonly T[];
  /** events that may be handled only once the read models hold them (default: none) */
  needsProjection?: boolean | ((e: Handled<T>) => boolean);
  /** the batch's events of the handled types, in log order; throws to have the batch delivered again */
  handle(events: Handled<T>[], batch: { last: number }): Promise<void> | void;
  /**
   * start from the read models instead of a checkpoint: called while no projection can move them (synchronously,
   * inside the store's write lock), it loads the reactor's state and returns the position that state includes
   */
  load?(): number;
  /** called after the subscription stopped, before the last checkpoint */
  stop?(): Promise<void> | void;
}

/** What a reactor that starts at the log's head needs: the log, and the options every reactor takes. */
export interface HeadReactorDeps {
  eventStore: EventStore;
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** a handled type's event that failed its contract was skipped */
  onPoison?: (e: RecordedEvent) => void;
  /** the checkpoint policy (tests): at most once per `ms`, at least every `events` */
  checkpoint?: { ms?: number; events?: number };
  /** the most events handed to the handler at once (default REACTOR_SLICE) */
  slice?: number;
  clock?: () => number;
}

export interface ReactorDeps extends HeadReactorDeps {
  /** where the checkpoint is kept: the read models beside the projector that `projected` waits for */
  readModels: ReadModelStore;
  /** resolves once the read models include `position` */
  projected(position: number): Promise<unknown>;
}

/** a follower's deps as its reactor takes them (the follower's own deps may carry more) */
export const reactorDeps = (d: ReactorDeps): ReactorDeps => ({
  eventStore: d.eventStore,
  readModels: d.readModels,
  projected: d.projected,
  ...(d.log ? { log: d.log } : {}),
  ...(d.onPoison ? { onPoison: d.onPoison } : {}),
  ...(d.checkpoint ? { checkpoint: d.checkpoint } : {}),
  ...(d.clock ? { clock: d.clock } : {}),
  ...(d.slice ? { slice: d.slice } : {}),
});

/**
 * The most events of a batch a handler is given at once; the rest wait for the next turn of the event loop, so one
 * follower's long batch (a day's searches replayed into the router, a monitor's thousands of checks) delays the
 * projector, the dispatcher and the crawler by one slice at a time, not by the whole batch.
 */
export const REACTOR_SLICE = 100;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface Reactor {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** the position the reactor has handled everything up to (tests, metrics) */
  position(): number;
}

/** the definition of a reactor that starts at the log's head: it reads no read model, so it waits for none */
export type HeadReactorDefinition<T extends EventType> = Omit<ReactorDefinition<T>, 'load' | 'needsProjection'>;

interface CreateReactor {
  /** a reactor that starts at the log's head (REACTORS says `head`): it needs the log only */
  <T extends EventType>(def: HeadReactorDefinition<T>, deps: HeadReactorDeps): Reactor;
  <T extends EventType>(def: ReactorDefinition<T>, deps: ReactorDeps): Reactor;
}

/** a reactor's definition that disagrees with REACTORS: a programming error, thrown where the reactor is made */
const startOf = (def: ReactorDefinition<EventType>, deps: HeadReactorDeps & Partial<ReactorDeps>): ReactorStart => {
  const start = REACTORS[def.name];
  const problem =
    start === 'read models' && !def.load
      ? 'starts from the read models but has no load()'
      : start !== 'read models' && def.load
        ? `starts from its ${start} but has a load()`
        : start !== 'head' && (!deps.readModels || !deps.projected)
          ? 'needs the read models and projected()'
          : undefined;
  if (problem) throw new Error(`reactor ${def.name} ${problem} (REACTORS, services/reactor/reactor.ts)`);
  return start;
};

export const createReactor: CreateReactor = <T extends EventType>(
  def: ReactorDefinition<T>,
  deps: HeadReactorDeps & Partial<ReactorDeps>,
): Reactor => {
  const start = startOf(def as unknown as ReactorDefinition<EventType>, deps);
  const types = new Set<string>(def.handles);
  const now = deps.clock ?? Date.now;
  const everyMs = deps.checkpoint?.ms ?? 1000;
  const everyEvents = deps.checkpoint?.events ?? 500;
  const slice = deps.slice ?? REACTOR_SLICE;
  const needs =
    typeof def.needsProjection === 'function' ? def.needsProjection : def.needsProjection ? () => true : () => false;
  let subscription: Subscription | undefined;
  let processed = 0;
  let saved = { position: 0, at: 0 };

  const save = () => {
    if (start !== 'checkpoint' || processed === saved.position) return;
    deps.readModels?.commit([], def.name, processed);
    saved = { position: processed, at: now() };
  };

  const onBatch = async (batch: RecordedEvent[]) => {
    if (batch.length === 0) return;
    const last = batch[batch.length - 1]!.globalPosition;
    const events: Handled<T>[] = [];
    let waitFor = 0;
    for (const raw of batch) {
      if (!types.has(raw.type)) continue;
      const e = logEventOf(raw) as Handled<T> | undefined;
      if (!e) {
        deps.log?.('event skipped: it does not match its contract', {
          reactor: def.name,
          type: raw.type,
          position: raw.globalPosition,
        });
        deps.onPoison?.(raw);
        continue;
      }
      events.push(e);
      if (needs(e)) waitFor = e.globalPosition;
    }
    if (waitFor > 0) await deps.projected?.(waitFor);
    // a long batch is handed over in slices, the thread's other work running between two (the projector, the
    // dispatcher, the crawler and the HTTP answers share the pipeline thread: docs/architecture.md#background-workers)
    for (let i = 0; i < events.length; i += slice) {
      if (i > 0) await nextTurn();
      const part = events.slice(i, i + slice);
      await def.handle(part, { last: i + slice >= events.length ? last : part[part.length - 1]!.globalPosition });
    }
    processed = last;
    if (processed - saved.position >= everyEvents || now() - saved.at >= everyMs) save();
  };

  return {
    name: def.name,
    async start() {
      if (subscription) throw new Error(`reactor ${def.name} already started`);
      const { load } = def;
      const readModels = deps.readModels;
      processed =
        start === 'head' || !readModels
          ? await deps.eventStore.headPosition()
          : load
            ? readModels.exclusive(() => load())
            : readModels.checkpoint(def.name);
      saved = { position: processed, at: now() };
      subscription = deps.eventStore.subscribeToAll(processed, onBatch);
    },
    async stop() {
      await subscription?.stop();
      subscription = undefined;
      await def.stop?.();
      try {
        save();
      } catch {
        // the store went first: the next start hands the reactor what it saw since its older checkpoint (harmless)
      }
    },
    position: () => processed,
  };
};
