import type { EventStore, RecordedEvent } from '../../services/ports/eventStore.js';

/**
 * The soak's reading of the event log, beside the running service (docs/design.md#streams-and-events): per job, when
 * it was submitted and every way it ended; per key, its reservations and releases; per run, its completion. The log
 * is what the service itself holds true, so an invariant read here is the service's own account.
 */

export interface JobRecord {
  id: string;
  keyId: string;
  keyword: string;
  lane: string;
  depth: number;
  charged: boolean;
  submittedAt: number;
  monitorRunId?: string;
  starts: number;
  /** the worker of its last crawl start (`crawler-<pid>-…`) */
  worker?: string;
  /** every terminal event: a job must have exactly one */
  ends: { type: string; status: string; at: number; kind?: string }[];
}

export interface Journal {
  jobs: Map<string, JobRecord>;
  /** per key: job id → reservations and releases */
  reserved: Map<string, Map<string, number>>;
  released: Map<string, Map<string, number>>;
  /** completed monitor runs: run id → its monitor */
  runsCompleted: Map<string, string>;
  events: number;
  /** reads what the log gained since the last call */
  catchUp(): Promise<void>;
}

const bump = (m: Map<string, Map<string, number>>, key: string, job: string) => {
  let k = m.get(key);
  if (!k) {
    k = new Map();
    m.set(key, k);
  }
  k.set(job, (k.get(job) ?? 0) + 1);
};

export const openJournal = (store: EventStore): Journal => {
  const jobs = new Map<string, JobRecord>();
  const reserved = new Map<string, Map<string, number>>();
  const released = new Map<string, Map<string, number>>();
  const runsCompleted = new Map<string, string>();
  /** terminal events that came before their job's SearchSubmitted in the order read (never in one log; kept anyway) */
  let position = 0;
  let events = 0;
  let reading: Promise<void> | undefined;

  const apply = (e: RecordedEvent) => {
    const d = e.data as Record<string, any>;
    const at = Date.parse(e.metadata.recordedAt);
    switch (e.type) {
      case 'SearchSubmitted':
        jobs.set(d.jobId, {
          id: d.jobId,
          keyId: d.keyId,
          keyword: d.request?.keyword ?? '',
          lane: d.lane ?? (d.monitor ? 'scheduled' : 'live'),
          depth: d.request?.depth ?? 100,
          charged: d.charged,
          submittedAt: Date.parse(d.submittedAt),
          monitorRunId: d.monitor?.runId,
          starts: 0,
          ends: [],
        });
        return;
      case 'CrawlStarted': {
        const j = jobs.get(d.jobId);
        if (j) {
          j.starts += 1;
          j.worker = d.worker;
        }
        return;
      }
      case 'CrawlCompleted':
        jobs.get(d.jobId)?.ends.push({
          type: e.type,
          status: d.status,
          at,
          ...(['mismatched', 'region_only', 'country_only'].includes(d.locationCheck?.status)
            ? { kind: 'placed_elsewhere' }
            : {}),
        });
        return;
      case 'CrawlFailed':
        if (d.final) jobs.get(d.jobId)?.ends.push({ type: e.type, status: 'failed', at, kind: d.failure?.kind });
        return;
      case 'SearchAnsweredFromCache':
        jobs.get(d.jobId)?.ends.push({ type: e.type, status: 'cached', at });
        return;
      case 'QuotaReserved':
        bump(reserved, d.keyId, d.jobId);
        return;
      case 'QuotaReleased':
        bump(released, d.keyId, d.jobId);
        return;
      case 'MonitorRunCompleted':
        runsCompleted.set(d.runId, d.monitorId);
        return;
    }
  };

  const readMore = async () => {
    for (;;) {
      const batch = await store.readAll({ fromPosition: position, maxCount: 1000 });
      if (batch.length === 0) return;
      for (const e of batch) {
        apply(e);
        position = e.globalPosition;
        events += 1;
      }
    }
  };

  return {
    jobs,
    reserved,
    released,
    runsCompleted,
    get events() {
      return events;
    },
    async catchUp() {
      // one reader at a time: a periodic check and the final one never interleave
      while (reading) await reading;
      reading = readMore().finally(() => {
        reading = undefined;
      });
      await reading;
    },
  };
};
