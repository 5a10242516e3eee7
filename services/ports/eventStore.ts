/**
 * The event store port (Emmett's shape): streams with 0-based versions, one global order, optimistic concurrency.
 * Every adapter passes test/conformance/eventStoreSuite.ts (`eventStoreConformance`).
 */
export type ExpectedVersion = number | 'no_stream' | 'stream_exists' | 'any';

export interface EventMetadata {
  eventId: string;
  /** the HTTP request id that led to this event */
  correlationId?: string;
  /** the event id that caused this one */
  causationId?: string;
  recordedAt: string;
}

export interface NewEvent {
  type: string;
  data: unknown;
  metadata?: Partial<EventMetadata>;
}

export interface RecordedEvent {
  streamName: string;
  /** 0-based position of the event inside its stream */
  streamVersion: number;
  /** 1-based position in the global order; a checkpoint is the last position processed (0 = none) */
  globalPosition: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}

export interface AppendResult {
  /** version of the last event appended: pass it as the next expected version */
  nextExpectedVersion: number;
  lastGlobalPosition: number;
}

export interface ReadStreamResult {
  events: RecordedEvent[];
  /** version of the stream's last event, -1 when the stream does not exist */
  currentVersion: number;
}

export interface Subscription {
  /** stops delivering; resolves once the handler in flight has finished */
  stop(): Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically. Resolves only once the events are durable (fsync'd), so a 2xx built on it survives a crash.
   * Rejects with WrongExpectedVersionError when the stream is not at `expectedVersion`.
   */
  appendToStream(
    stream: string,
    events: NewEvent[],
    options?: { expectedVersion?: ExpectedVersion },
  ): Promise<AppendResult>;
  readStream(stream: string, options?: { fromVersion?: number; maxCount?: number }): Promise<ReadStreamResult>;
  /** events after `fromPosition` (exclusive) in global order */
  readAll(options?: { fromPosition?: number; maxCount?: number }): Promise<RecordedEvent[]>;
  /**
   * catch-up from the checkpoint, then live; batches arrive in order and the next waits for the handler.
   * A batch whose handler threw is delivered again (at-least-once), so handlers must be idempotent; a handler must not
   * await its own subscription's `stop()` (stop waits for that very handler).
   */
  subscribeToAll(fromPosition: number, handler: (events: RecordedEvent[]) => Promise<void> | void): Subscription;
  /** the global position of the newest event (0 when empty) */
  headPosition(): Promise<number>;
  close(): Promise<void>;
}

const appendedHere = new WeakSet<RecordedEvent>();

/**
 * An adapter marks the events it hands to this process's subscriptions straight from this process's own appends
 * (the SQLite store's in-memory tail): the same JSON a read returns, made by this version's deciders from commands
 * already validated at the edge. The projector does not validate those again; an event read from the log (another
 * process, an older version, a rebuild) is validated as always.
 */
export const markAppendedHere = (e: RecordedEvent): RecordedEvent => {
  appendedHere.add(e);
  return e;
};
export const isAppendedHere = (e: RecordedEvent) => appendedHere.has(e);

/** whether a stream at `current` (-1: none) satisfies an append's expected version (adapters that check it themselves) */
export const expectedVersionMatches = (expected: ExpectedVersion, current: number) =>
  expected === 'any' ||
  (expected === 'no_stream' && current === -1) ||
  (expected === 'stream_exists' && current >= 0) ||
  expected === current;

export class WrongExpectedVersionError extends Error {
  readonly code = 'SERP_EVENTSTORE_WRONG_EXPECTED_VERSION';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${stream} is at version ${actual}, expected ${String(expected)}`);
    this.name = 'WrongExpectedVersionError';
  }
}

export { StoreUnavailableError } from './unavailable.js';
