import { endedElsewhere } from '../../domain/location/placement.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import { toProjected } from '../projector/projector.js';
import { releaseQuota } from './quota.js';

export interface KeyAudit {
  keyId: string;
  month: string;
  reserved: number;
  released: number;
  charged: number;
  projected: number;
  discrepancies: Array<{ jobId?: string; kind: string; detail: string }>;
}

/**
 * Replays the usage and job streams of one month (docs/operations.md#audit-usage): per key, reserved / released /
 * charged jobs and the projection's value, with every discrepancy. `repair` releases what should have been released:
 * reservations whose job never got submitted (older than the grace period, so a submit in flight is left alone) and
 * failed jobs still holding their reservation.
 */
export const auditUsage = async (deps: {
  eventStore: EventStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  month: string;
  keyId?: string;
  repair?: boolean;
  graceSeconds?: number;
  now?: Date;
  /**
   * Called with the last log position read, before the projection is read: the caller waits there until the read
   * models include that position. Resolving `false` says they did not in time, and a drift is then reported as such.
   */
  caughtUp?: (position: number) => Promise<unknown>;
}): Promise<KeyAudit[]> => {
  const { month } = deps;
  const now = deps.now ?? new Date();
  const grace = (deps.graceSeconds ?? 300) * 1000;
  const reservations = new Map<string, Map<string, string>>();
  const releases = new Map<string, Set<string>>();
  const submitted = new Map<string, { keyId: string; charged: boolean; month: string }>();
  const failed = new Set<string>();
  let from = 0;
  for (;;) {
    const batch = await deps.eventStore.readAll({ fromPosition: from, maxCount: 2000 });
    if (batch.length === 0) break;
    from = batch[batch.length - 1].globalPosition;
    for (const raw of batch) {
      const e = toProjected(raw);
      if (!e) continue;
      if (e.type === 'QuotaReserved' && e.data.month === month) {
        if (!reservations.has(e.data.keyId)) reservations.set(e.data.keyId, new Map());
        reservations.get(e.data.keyId)!.set(e.data.jobId, e.data.reservedAt);
      } else if (e.type === 'QuotaReleased' && e.data.month === month) {
        if (!releases.has(e.data.keyId)) releases.set(e.data.keyId, new Set());
        releases.get(e.data.keyId)!.add(e.data.jobId);
      } else if (e.type === 'SearchSubmitted') {
        submitted.set(e.data.jobId, { keyId: e.data.keyId, charged: e.data.charged, month: e.data.month });
      } else if ((e.type === 'CrawlFailed' && e.data.final) || (e.type === 'CrawlCompleted' && endedElsewhere(e))) {
        failed.add(e.data.jobId);
      }
    }
  }
  const caughtUp = (await deps.caughtUp?.(from)) !== false;
  const keys = new Set([...reservations.keys(), ...releases.keys()]);
  for (const s of submitted.values()) if (s.month === month && s.charged) keys.add(s.keyId);
  const out: KeyAudit[] = [];
  for (const keyId of [...keys].sort()) {
    if (deps.keyId && keyId !== deps.keyId) continue;
    const held = reservations.get(keyId) ?? new Map<string, string>();
    const freed = releases.get(keyId) ?? new Set<string>();
    const discrepancies: KeyAudit['discrepancies'] = [];
    const toRelease: Array<{ jobId: string; reason: string }> = [];
    for (const [jobId, at] of held) {
      if (freed.has(jobId)) continue;
      const job = submitted.get(jobId);
      if (!job) {
        const old = now.getTime() - Date.parse(at) > grace;
        discrepancies.push({
          jobId,
          kind: 'reservation-without-job',
          detail: old ? 'job never submitted' : 'job never submitted (within grace period, may be in flight)',
        });
        if (old) toRelease.push({ jobId, reason: 'audit: job never submitted' });
      } else if (failed.has(jobId)) {
        discrepancies.push({ jobId, kind: 'failed-not-released', detail: 'failed job still holds its reservation' });
        toRelease.push({ jobId, reason: 'audit: crawl failed' });
      }
    }
    for (const [jobId, s] of submitted) {
      if (s.keyId === keyId && s.month === month && s.charged && !held.has(jobId)) {
        discrepancies.push({ jobId, kind: 'job-without-reservation', detail: 'charged job has no reservation' });
      }
    }
    const reserved = held.size;
    const released = [...freed].filter((j) => held.has(j)).length;
    const projected = deps.queries.usage.used(keyId, month);
    if (projected !== reserved - released) {
      discrepancies.push({
        kind: 'projection-drift',
        detail: `projection says ${projected}, log says ${reserved - released}${caughtUp ? '' : ' (the projector had not caught up with the log yet: run the audit again)'}`,
      });
    }
    let repaired = 0;
    if (deps.repair) {
      for (const r of toRelease) {
        const res = await releaseQuota(deps.handle, {
          keyId,
          month,
          jobId: r.jobId,
          reason: r.reason,
          now: now.toISOString(),
        });
        repaired += res.events.length;
      }
    }
    const charged = [...submitted.values()].filter((s) => s.keyId === keyId && s.month === month && s.charged).length;
    out.push({ keyId, month, reserved, released: released + repaired, charged, projected, discrepancies });
  }
  return out;
};
