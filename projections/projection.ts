import type { DomainEvent } from '../contracts/events.js';

/** A domain event as the projector hands it over: with where it sits in the log and when it was recorded. */
export type ProjectedEvent = DomainEvent & {
  streamName: string;
  globalPosition: number;
  recordedAt: string;
  /** the event's id and its version in its stream (a follower's appends name it as their cause); always set by the projector */
  eventId?: string;
  streamVersion?: number;
};

/**
 * A read model as a pure fold over the log: each event touches at most one document, found by `idOf`;
 * `evolve` returns the new document, or null to delete it. `lookupOf` gives a secondary key to find documents by.
 * Pure and deterministic (times come from the events), so replaying the log rebuilds the view byte for byte.
 */
export interface Projection<Doc> {
  readonly name: string;
  idOf(event: ProjectedEvent): string | undefined;
  evolve(doc: Doc | undefined, event: ProjectedEvent): Doc | null;
  lookupOf?(doc: Doc): string | undefined;
}

/**
 * Reading the documents the projections wrote (the read side of services/ports/readModelStore.ts). Services reach
 * them through each view's typed queries (`projections/<view>/queries.ts`), never by view name.
 */
export interface DocReader {
  get<T>(view: string, id: string): T | undefined;
  /** whether the document exists, without reading it */
  has(view: string, id: string): boolean;
  findByLookup<T>(view: string, lookup: string): T | undefined;
  list<T>(view: string): T[];
  /**
   * by id; with `last`, only the last `last` of them (ids of time-ordered documents: the newest). `equal` and `atLeast`
   * keep the documents whose top-level string fields equal, or sort at or after, the values given: the store filters
   * and pages (an index walk from the newest), so a page costs its own documents, not the lookup's.
   */
  listByLookup<T>(
    view: string,
    lookup: string,
    options?: { last?: number; equal?: Record<string, string>; atLeast?: Record<string, string> },
  ): T[];
  /** documents with `after` < id < `before`, by id, at most `limit` (time-ordered ids: a page of what is older) */
  listBetween<T>(view: string, after: string, before: string, limit: number): T[];
}
