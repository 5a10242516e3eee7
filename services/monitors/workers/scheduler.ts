import { streams } from '../../../contracts/events.js';
import type { SearchRequest } from '../../../contracts/search.js';
import { pagesFor } from '../../../contracts/search.js';
import { DomainError, errorCodes } from '../../../domain/kernel/errors.js';
import { backfillRunId, scheduledRunId } from '../../../domain/monitor/ids.js';
import {
  keywordCountOf,
  monitorRunDecider,
  plannedJobs,
  type RunStartedData,
  runRecord,
} from '../../../domain/monitor/monitorRun.js';
import { nextSlot, pacing, slotAt } from '../../../domain/monitor/schedule.js';
import { usageMonth } from '../../../domain/usage/usage.js';
import type { ApiKeyDoc } from '../../../projections/apiKeys/apiKeys.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { MonitorRunDoc, MonitorScheduleDoc } from '../../../projections/monitors/monitors.js';
import { fleetCapacity } from '../../fairShare/capacity.js';
import { livePeakPerHour, monitorsShare, spreadWindowMs } from '../../fairShare/demand.js';
import type { CommandHandler } from '../../ports/commandHandler.js';
import type { RateLimiter } from '../../ports/rateLimiter.js';
import type { SearchSubmitter } from '../../ports/searchSubmitter.js';
import type { MonitorVersions } from '../commands/monitorVersions.js';
import { backfillSources } from './backfill.js';
import type { createRankRecorder } from './recorder.js';

export interface SchedulerDeps {
  queries: ReadModelQueries;
  handle: CommandHandler;
  searches: SearchSubmitter;
  /** the key's submit rate, shared with the api where the deployment shares it */
  limiter: RateLimiter;
  recorder: ReturnType<typeof createRankRecorder>;
  /** resolves once the read models hold `position` */
  projected(position: number): Promise<unknown>;
  /** a monitor's keywords at a version of its stream: what a run references */
  versions: MonitorVersions;
  /** a scheduled run's searches are spread over its slot, at most this long */
  spreadMaxMs: number;
  now?: () => Date;
  onSkip?: (reason: string, keywords: number) => void;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

const usable = (key: ApiKeyDoc | undefined): key is ApiKeyDoc => key !== undefined && key.status === 'active';

/**
 * The monitor scheduler (docs/rank-tracking.md), one `tick` at a time:
 * 1. a pending backfill is recorded first (its run id is derived from the monitor, so it happens once);
 * 2. each monitor whose next slot has come starts that slot's run (its id derived from monitor and slot: however
 *    many dispatchers see the slot, the run's stream takes one start), or records it skipped when the key has no
 *    quota left; missed slots (the service was down) collapse into the latest one;
 * 3. each open run's searches whose time has come are submitted with their derived job ids (a job submitted twice is
 *    one job), at most the key's rate a minute; a key out of quota, revoked, or a monitor paused or deleted skips what
 *    is left, with the reason.
 * Everything it knows comes from the read models, so a restart carries on where the log says the runs are.
 */
export const createMonitorScheduler = (deps: SchedulerDeps) => {
  const { queries, handle } = deps;
  const clock = () => deps.now?.() ?? new Date();
  /** per open run: how many of its planned jobs are known submitted (a cursor; rebuilt after a restart) */
  const cursors = new Map<string, number>();
  /** jobs this scheduler has claimed and not yet submitted (see advance) */
  const claimed = new Set<string>();
  const started = new Set<string>();

  /** the run's searches from `fromIndex` on that are not made yet will not be: a count and a reason */
  const skip = async (runId: string, fromIndex: number, total: number, reason: string) => {
    if (fromIndex >= total) return;
    const res = await handle(streams.monitorRun(runId), monitorRunDecider, {
      type: 'SkipRest',
      runId,
      fromIndex,
      reason,
      now: clock().toISOString(),
    });
    const skipped = res.events.find((e) => e.type === 'MonitorKeywordsSkipped');
    if (skipped && skipped.type === 'MonitorKeywordsSkipped') deps.onSkip?.(reason, skipped.data.count ?? 0);
  };

  const outOfQuota = (key: ApiKeyDoc, at: Date) =>
    key.monthlyQuota > 0 && queries.usage.used(key.keyId, usageMonth(at.toISOString())) >= key.monthlyQuota;

  const backfill = async (s: MonitorScheduleDoc) => {
    const doc = queries.monitors.byId(s.monitorId);
    if (!doc) return;
    const runId = backfillRunId(doc.monitorId, doc.createdAt);
    if (started.has(runId)) return;
    const sources = backfillSources(queries, doc);
    const run = runRecord(
      doc,
      { backfill: sources.map((j) => j.request.keyword), sources: sources.map((j) => j.jobId) },
      {
        runId,
        trigger: 'backfill',
        noCache: false,
        startAt: doc.createdAt,
        intervalMs: 0,
        startedAt: clock().toISOString(),
      },
    );
    const res = await handle(streams.monitorRun(runId), monitorRunDecider, { type: 'StartRun', run });
    if (res.position !== undefined) await deps.projected(res.position);
    for (const job of sources) {
      await deps.recorder.record({ ...job, monitor: { monitorId: doc.monitorId, runId } });
    }
    started.add(runId);
  };

  const startSlot = async (s: MonitorScheduleDoc, key: ApiKeyDoc, at: Date) => {
    if (!s.nextSlot || Date.parse(s.nextSlot) > at.getTime()) return;
    const current = slotAt(s.schedule, at);
    if (!current) return;
    const slot = (current.toISOString() < s.nextSlot ? new Date(s.nextSlot) : current).toISOString();
    const runId = scheduledRunId(s.monitorId, slot);
    if (started.has(runId)) return;
    const doc = queries.monitors.byId(s.monitorId);
    // the keywords the run searches are the monitor's at its current version, which the run references
    const monitor = doc && (await deps.versions.current(doc.monitorId));
    if (!doc || !monitor) return;
    const following = nextSlot(s.schedule, new Date(slot))?.getTime() ?? at.getTime() + deps.spreadMaxMs;
    // over its slot, at most SERP_MONITOR_SPREAD_MAX_S, unless the fleet's capacity left after live searches needs
    // longer to crawl it: then over what it needs, up to the next slot (docs/fleet.md#capacity-against-demand)
    const windowMs = spreadWindowMs(
      Math.max(0, following - at.getTime()),
      deps.spreadMaxMs,
      monitor.keywords.length * pagesFor(doc.depth),
      monitorsShare(fleetCapacity(queries, at).pagesPerMinute, livePeakPerHour(queries, at)),
    );
    const run = runRecord(doc, monitor, {
      runId,
      trigger: 'schedule',
      slot,
      noCache: true,
      startAt: at.toISOString(),
      intervalMs: pacing(monitor.keywords.length, windowMs, key.rateLimitPerMin).intervalMs,
      startedAt: at.toISOString(),
    });
    const skipAll = outOfQuota(key, at) ? 'quota_exhausted' : undefined;
    const res = await handle(streams.monitorRun(runId), monitorRunDecider, { type: 'StartRun', run, skipAll });
    if (skipAll && res.events.length > 0) deps.onSkip?.(skipAll, keywordCountOf(run));
    started.add(runId);
  };

  /** a run's search: the monitor's targeting, and its depth so the crawl asks Google for no more (docs/depth.md) */
  const requestOf = (run: RunStartedData, keyword: string): SearchRequest =>
    ({ keyword, ...run.search, depth: run.depth, capture_aio: true, no_cache: run.noCache }) as SearchRequest;

  /** submits what is due of one open run; false when the key's rate ran out for now */
  const advance = async (doc: MonitorRunDoc, at: Date) => {
    const { run } = doc;
    const plan = plannedJobs(run, await deps.versions.ofRun(run));
    let i = cursors.get(run.runId) ?? 0;
    const rest = (reason: string) => skip(run.runId, i, plan.length, reason);
    const key = queries.keys.byId(run.keyId);
    const monitor = queries.monitors.byId(run.monitorId);
    if (!usable(key)) return rest('key_revoked');
    if (!monitor) return rest('monitor_deleted');
    if (monitor.paused) return rest('monitor_paused');
    for (; i < plan.length && plan[i].submitAt <= at.getTime(); i++) {
      const job = plan[i];
      if (queries.jobs.byId(job.jobId)) {
        claimed.delete(job.jobId);
        continue;
      }
      // Another dispatcher may be on this very job (its submit not yet projected): claim it first, so that one of
      // them, not each, takes a token of the key's rate. A claim is held for its minute (the limiter's window); the
      // claimant keeps it across ticks until it submits, and a claim lost with its dispatcher lapses with the window.
      if (!claimed.has(job.jobId)) {
        const claim = await deps.limiter.hit(`monitor-claim:${job.jobId}`, 1);
        if (!claim.allowed) break;
        claimed.add(job.jobId);
      }
      const rate = await deps.limiter.hit(`submit:${key.keyId}`, key.rateLimitPerMin);
      if (!rate.allowed) break;
      try {
        await deps.searches.submit(
          key,
          requestOf(run, job.keyword),
          {},
          {
            jobId: job.jobId,
            monitor: { monitorId: run.monitorId, runId: run.runId },
          },
        );
        claimed.delete(job.jobId);
      } catch (err) {
        claimed.delete(job.jobId);
        if (err instanceof DomainError && err.code === errorCodes.quotaExceeded) {
          cursors.set(run.runId, i);
          return rest('quota_exhausted');
        }
        throw err;
      }
    }
    cursors.set(run.runId, i);
  };

  return {
    /** one pass: backfills, due slots, due searches of open runs */
    async tick() {
      const at = clock();
      for (const s of queries.monitors.scheduled()) {
        const key = queries.keys.byId(s.keyId);
        if (!usable(key)) continue;
        try {
          if (s.backfill === 'pending') await backfill(s);
          else await startSlot(s, key, at);
        } catch (err) {
          deps.log?.('monitor schedule failed', { monitorId: s.monitorId, reason: (err as Error).message });
        }
      }
      const open = queries.monitors.openRuns();
      const live = new Set(open.map((r) => r.run.runId));
      for (const id of cursors.keys()) if (!live.has(id)) cursors.delete(id);
      for (const doc of open) {
        if (doc.run.trigger === 'backfill') continue;
        try {
          await advance(doc, at);
        } catch (err) {
          deps.log?.('monitor run failed', { runId: doc.run.runId, reason: (err as Error).message });
        }
      }
    },
    /** how many monitors have a slot due now (the metrics' due runs) */
    due(at = clock()) {
      return queries.monitors
        .scheduled()
        .filter((s) => s.nextSlot && Date.parse(s.nextSlot) <= at.getTime() && usable(queries.keys.byId(s.keyId)))
        .length;
    },
  };
};
