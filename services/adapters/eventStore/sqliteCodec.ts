import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type EventMetadata, markAppendedHere, type NewEvent, type RecordedEvent } from '../../ports/eventStore.js';

export class CorruptEventError extends Error {
  readonly code = 'SERP_EVENTSTORE_CORRUPT_EVENT';
  constructor(
    readonly globalPosition: unknown,
    readonly reason: string,
  ) {
    super(`stored event at position ${String(globalPosition)} is invalid: ${reason}`);
    this.name = 'CorruptEventError';
  }
}

const StoredRow = z.object({
  global_position: z.number().int().positive(),
  stream: z.string(),
  version: z.number().int().nonnegative(),
  type: z.string().min(1),
  data: z.string(),
  metadata: z.string(),
});

const StoredMetadata = z.object({
  eventId: z.string().min(1),
  correlationId: z.string().optional(),
  causationId: z.string().optional(),
  recordedAt: z.string().min(1),
});

/** stored JSON is validated on the way out: a bad row is reported with its position, never passed on half-parsed */
export const toRecordedEvent = (raw: unknown): RecordedEvent => {
  const row = StoredRow.safeParse(raw);
  const position = (raw as { global_position?: unknown } | undefined)?.global_position;
  if (!row.success) throw new CorruptEventError(position, row.error.message);
  try {
    const metadata = StoredMetadata.safeParse(JSON.parse(row.data.metadata));
    if (!metadata.success) throw new CorruptEventError(position, `metadata: ${metadata.error.message}`);
    return {
      streamName: row.data.stream,
      streamVersion: row.data.version,
      globalPosition: row.data.global_position,
      type: row.data.type,
      data: JSON.parse(row.data.data),
      metadata: metadata.data,
    };
  } catch (error) {
    if (error instanceof CorruptEventError) throw error;
    throw new CorruptEventError(position, String(error));
  }
};

export interface EncodedEvent {
  type: string;
  data: string;
  metadata: string;
}

/** serialised at call time so bad input fails its own append only, and recordedAt is when the caller asked */
export const encode = (event: NewEvent): EncodedEvent => {
  if (typeof event.type !== 'string' || event.type === '') throw new TypeError('event type must be a non-empty string');
  const data = JSON.stringify(event.data);
  if (data === undefined) throw new TypeError(`event ${event.type}: data is not JSON-serialisable`);
  const metadata: EventMetadata = {
    eventId: event.metadata?.eventId ?? randomUUID(),
    correlationId: event.metadata?.correlationId,
    causationId: event.metadata?.causationId,
    recordedAt: event.metadata?.recordedAt ?? new Date().toISOString(),
  };
  return { type: event.type, data, metadata: JSON.stringify(metadata) };
};

/**
 * The event an append just wrote, as a read would return it (the same JSON parsed from the same strings), without
 * reading it back from the file; marked as appended here (the projector trusts this process's own deciders).
 */
export const fromEncoded = (
  event: EncodedEvent,
  streamName: string,
  streamVersion: number,
  globalPosition: number,
): RecordedEvent =>
  markAppendedHere({
    streamName,
    streamVersion,
    globalPosition,
    type: event.type,
    data: JSON.parse(event.data),
    metadata: JSON.parse(event.metadata) as EventMetadata,
  });
