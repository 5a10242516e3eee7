import { streams } from '../../contracts/events.js';
import type { JobMessage } from '../../contracts/jobMessage.js';
import { usageDecider } from '../../domain/usage/usage.js';
import { jobStatusQueries } from '../../projections/jobStatus/queries.js';
import type { CommandHandler } from '../application/commandHandler.js';
import { readJobState } from '../application/jobState.js';
import type { EventStore, RecordedEvent, Subscription } from '../ports/eventStore.js';
import type { JobQueue } from '../ports/jobQueue.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { toProjected } from '../projector/projector.js';

const CHECKPOINT = 'dispatcher';

/**
 * Turns `SearchSubmitted` into a job on the queue and a final `CrawlFailed` into a quota release. The api never
 * writes to the queue itself, so a queue outage delays work and loses none; on start, every job the read model
 * still has open is enqueued again (the in-process queue forgets everything in a crash), and the queue's dedupe
 * (jobId + dispatch number) drops the ones it already holds.
 */
export const createDispatcher = (deps: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queue: JobQueue;
  handle: CommandHandler;
}) => {
  const { eventStore, readModels, queue, handle } = deps;
  let subscription: Subscription | undefined;
  /** the log's head when this dispatcher started: events up to it are catch-up, after it live */
  let headAtStart = 0;
  /** the checkpoint as last written, and when */
  let saved = { position: 0, at: 0 };
  let processed = 0;
  const saveCheckpoint = () => {
    if (processed === saved.position) return;
    readModels.commit([], CHECKPOINT, processed);
    saved = { position: processed, at: Date.now() };
  };

  const enqueue = (m: JobMessage) => queue.enqueue(m);

  const onBatch = async (batch: RecordedEvent[]) => {
    for (const raw of batch) {
      const e = toProjected(raw);
      if (e?.type === 'SearchSubmitted' && e.data.charged) {
        const { jobId, keyId, cacheKey, submittedAt, request } = e.data;
        // a dispatcher catching up from far behind (a new one, a fresh data directory) skips the jobs its read model
        // already knows finished, instead of handing them to crawlers that would only decide nothing; a live job
        // cannot have finished before it was first dispatched, so live events skip the read (a tenth of a submit)
        if (raw.globalPosition <= headAtStart) {
          const known = jobStatusQueries(readModels).byId(jobId);
          if (known && known.status !== 'queued' && known.status !== 'running') continue;
        }
        await enqueue({ jobId, dispatch: 0, keyId, cacheKey, submittedAt, request });
      } else if (e?.type === 'CrawlFailed' && e.data.final) {
        const s = await readJobState(eventStore, e.data.jobId);
        if (s.charged && s.keyId && s.month) {
          await handle(
            streams.usage(s.keyId, s.month),
            usageDecider,
            {
              type: 'ReleaseQuota',
              keyId: s.keyId,
              month: s.month,
              jobId: e.data.jobId,
              reason: 'crawl failed',
              now: e.data.failedAt,
            },
            { causationId: raw.metadata.eventId },
          );
        }
      }
    }
    if (batch.length === 0) return;
    processed = batch[batch.length - 1].globalPosition;
    // Live, the checkpoint is written at most once a second (and on stop), not once per batch: a replay from an older
    // one only enqueues again what the queue drops as a duplicate, and releases quota that is already released.
    if (processed <= headAtStart || Date.now() - saved.at >= 1000) saveCheckpoint();
  };

  return {
    async start() {
      for (const job of jobStatusQueries(readModels).open()) {
        if (!job.charged) continue;
        await enqueue({
          jobId: job.jobId,
          dispatch: job.attempts,
          keyId: job.keyId,
          cacheKey: job.cacheKey,
          submittedAt: job.submittedAt,
          request: job.request,
        });
      }
      headAtStart = await eventStore.headPosition();
      processed = readModels.checkpoint(CHECKPOINT);
      saved = { position: processed, at: Date.now() };
      subscription = eventStore.subscribeToAll(processed, onBatch);
    },
    async stop() {
      await subscription?.stop();
      try {
        saveCheckpoint();
      } catch {
        // the store went first: the next start replays from the older checkpoint, which is harmless (see onBatch)
      }
    },
  };
};
