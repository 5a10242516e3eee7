import { createHash, randomFillSync } from 'node:crypto';
import { streams, type TargetingResolved } from '../../../contracts/events.js';
import type { Lane, Priority } from '../../../contracts/lanes.js';
import { depthOf, type SearchRequest } from '../../../contracts/search.js';
import { searchJobDecider } from '../../../domain/searchJob/searchJob.js';
import { usageDecider, usageMonth } from '../../../domain/usage/usage.js';
import type { ApiKeyDoc } from '../../../projections/apiKeys/apiKeys.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { JobStatusDoc } from '../../../projections/jobStatus/jobStatus.js';
import { cachedAnswer } from '../../../projections/resultCache/resultCache.js';
import type { SearchResultDoc } from '../../../projections/searchResults/searchResults.js';
import { readJobState } from '../../application/jobState.js';
import { releaseQuota } from '../../application/quota.js';
import { type Config, tierShare } from '../../config/config.js';
import type { CommandContext, CommandHandler } from '../../ports/commandHandler.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { PlannedSearch, SubmitOutcome } from '../../ports/searchSubmitter.js';

// Random bytes for job ids, drawn 256 ids at a time: a randomBytes(6) call per submit was ~3% of its time (Node's
// randomUUID keeps such a pool for the same reason). Each id takes bytes no other id took.
const idEntropy = Buffer.alloc(6 * 256);
let idEntropyAt = idEntropy.length;
const randomHex6 = () => {
  if (idEntropyAt === idEntropy.length) {
    randomFillSync(idEntropy);
    idEntropyAt = 0;
  }
  idEntropyAt += 6;
  return idEntropy.toString('hex', idEntropyAt - 6, idEntropyAt);
};

/** 24 lowercase hex characters, time-ordered: 12 of milliseconds, 12 random (a SerpApi-shaped id). */
export const newJobId = (now = Date.now()) => now.toString(16).padStart(12, '0').slice(-12) + randomHex6();

/**
 * Members that change what Google is asked; `async` and `no_cache` change only how we answer. `depth` is left out:
 * it says how far down the same search goes, and a deeper cached result answers a shallower search (docs/depth.md).
 * With `keyId` (the cache scoped per key, SERP_CACHE_SCOPE=key, the default) the key is part of it: one key's cached
 * search never answers another key, which would tell that key what the first one searched (docs/security.md).
 */
export const cacheKeyOf = (request: SearchRequest, keyId?: string) => {
  // pixel positions are read from the same page: they do not make it another search
  const { no_cache: _n, depth: _d, pixel_positions: _p, ...fields } = request;
  // "Austin, Texas, United States" and "austin,texas,united states" target the same place
  const rest = fields.location
    ? {
        ...fields,
        location: fields.location
          .toLowerCase()
          .replace(/\s*,\s*/g, ',')
          .replace(/\s+/g, ' '),
      }
    : fields;
  const canonical = Object.keys(rest)
    .sort()
    .map((k) => [k, rest[k as keyof typeof rest]])
    .filter(([, v]) => v !== undefined);
  if (keyId !== undefined) canonical.push(['\u0000key', keyId]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
};

export const createSearchService = (deps: {
  eventStore: EventStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  /**
   * how long a result answers from cache, whose results may answer a search (the same key's or any key's), and the
   * tiers, whose share weighs a key's jobs against other keys' in a lane (docs/fleet.md#lanes-and-fair-share)
   */
  config: Pick<Config, 'cacheTtlS' | 'cacheScope' | 'tiers'>;
  now?: () => Date;
  /**
   * resolves once the read models hold this process's own appends so far for a key (bounded): where they are
   * projected on another thread (SERP_PIPELINE_THREAD), usage read right after a submit would otherwise not count it yet
   */
  ownWritesProjected?: (keyId: string) => Promise<void>;
  /**
   * a request's location as gl / hl / uule, resolved here where the geotargets are (the api's process): recorded with
   * the job, so a crawl does not resolve it again (absent, or the location unknown: the crawl resolves it)
   */
  resolveTargeting?: (request: SearchRequest) => TargetingResolved;
}) => {
  const { queries, handle } = deps;
  /** the targeting to record with a job; none when the location does not resolve (the crawl then fails it as ever) */
  const resolvedOf = (request: SearchRequest): TargetingResolved | undefined => {
    if (!deps.resolveTargeting || (!request.location && request.lat === undefined)) return undefined;
    try {
      return deps.resolveTargeting(request);
    } catch {
      return undefined;
    }
  };
  const now = () => deps.now?.() ?? new Date();
  const shareOf = tierShare(deps.config.tiers);

  /** The job as the read model has it, or folded from its stream when this node has not projected it yet. */
  const jobDoc = async (jobId: string): Promise<JobStatusDoc | undefined> => {
    const doc = queries.jobs.byId(jobId);
    if (doc) return doc;
    const s = await readJobState(deps.eventStore, jobId);
    if (s.status === 'none' || !s.jobId || !s.keyId || !s.request || !s.submittedAt) return undefined;
    return {
      jobId: s.jobId,
      keyId: s.keyId,
      status: s.status,
      cached: Boolean(s.sourceJobId),
      sourceJobId: s.sourceJobId,
      request: s.request,
      cacheKey: s.cacheKey ?? '',
      month: s.month ?? '',
      charged: s.charged ?? false,
      submittedAt: s.submittedAt,
      updatedAt: s.submittedAt,
      attempts: s.attempts,
      detail: s.failure,
      ...(s.failureCause ? { failure: s.failureCause } : {}),
      ...(s.purgedAt ? { purgedAt: s.purgedAt } : {}),
    };
  };

  return {
    jobDoc,
    /**
     * `planned`: a monitor's job (docs/rank-tracking.md), whose id was derived in advance so that two dispatchers
     * submitting it submit one job, and which carries its monitor run; it waits in the `scheduled` lane. Any other
     * job waits in `priority`'s lane (default `live`; docs/fleet.md#lanes-and-fair-share).
     */
    async submit(
      key: ApiKeyDoc,
      request: SearchRequest,
      ctx: CommandContext,
      planned?: PlannedSearch,
      priority: Priority = 'live',
    ): Promise<SubmitOutcome> {
      const at = now();
      const jobId = planned?.jobId ?? newJobId(at.getTime());
      const cacheKey = cacheKeyOf(request, deps.config.cacheScope === 'shared' ? undefined : key.keyId);
      const lane: Lane = planned ? 'scheduled' : priority;
      const targeting = resolvedOf(request);
      const submission = {
        jobId,
        keyId: key.keyId,
        request,
        cacheKey,
        month: usageMonth(at.toISOString()),
        now: at.toISOString(),
        ...(planned ? { monitor: planned.monitor } : {}),
        lane,
        weight: shareOf(key.tier),
        ...(targeting ? { targeting } : {}),
      };
      if (!request.no_cache) {
        const doc = queries.cache.byCacheKey(cacheKey);
        const hit = doc && cachedAnswer(doc, depthOf(request), at, deps.config.cacheTtlS);
        if (hit) {
          const res = await handle(
            streams.searchJob(jobId),
            searchJobDecider,
            {
              type: 'AnswerFromCache',
              sourceJobId: hit.jobId,
              ...submission,
            },
            { ...ctx, newStream: !planned },
          );
          return {
            jobId,
            status: 'done',
            cached: true,
            sourceJobId: hit.jobId,
            position: res.position,
            lane,
            weight: submission.weight,
          };
        }
      }
      // Reserve first: a crash between the two appends leaves a reservation without a job, which
      // `serp-api audit usage --repair` releases; the other order could run a job nobody paid for.
      await handle(
        streams.usage(key.keyId, submission.month),
        usageDecider,
        {
          type: 'ReserveQuota',
          keyId: key.keyId,
          month: submission.month,
          jobId,
          monthlyQuota: key.monthlyQuota,
          now: submission.now,
        },
        ctx,
      );
      let res: Awaited<ReturnType<typeof handle>>;
      try {
        res = await handle(
          streams.searchJob(jobId),
          searchJobDecider,
          { type: 'SubmitSearch', ...submission },
          { ...ctx, newStream: !planned },
        );
      } catch (err) {
        // The job's append failed (a distributed store away for a moment). Its outcome may be unknown: if the job is
        // there after all, the submit stands; if it is not, hand the reservation back so a failed submit costs
        // nothing. When even that cannot be done, `audit usage --repair` releases it later.
        const settled = await (async () => {
          const state = await readJobState(deps.eventStore, jobId);
          if (state.keyId) return 'landed' as const;
          await releaseQuota(
            handle,
            { keyId: key.keyId, month: submission.month, jobId, reason: 'submit failed', now: submission.now },
            ctx,
          );
          return 'released' as const;
        })().catch(() => 'unknown' as const);
        if (settled !== 'landed') throw err;
        return {
          jobId,
          status: 'queued' as const,
          cached: false,
          position: undefined,
          lane,
          weight: submission.weight,
        };
      }
      return { jobId, status: 'queued', cached: false, position: res.position, lane, weight: submission.weight };
    },

    /** The result document behind a terminal job (a cached job reads its source's). */
    resultOf(job: JobStatusDoc): SearchResultDoc | undefined {
      return queries.results.byJobId(job.sourceJobId ?? job.jobId);
    },

    /** whether resultOf has a document, without reading it */
    hasResult(job: JobStatusDoc): boolean {
      return queries.results.has(job.sourceJobId ?? job.jobId);
    },

    /**
     * resolves once what this process appended so far for `keyId` is in the read models: call before usage and
     * recentSearches of that key (its submits, releases and changes; other keys' appends are not waited for)
     */
    settled: async (keyId: string): Promise<void> => {
      await deps.ownWritesProjected?.(keyId);
    },

    usage(key: ApiKeyDoc) {
      const month = usageMonth(now().toISOString());
      const used = queries.usage.used(key.keyId, month);
      return {
        tier: key.tier,
        monthly_quota: key.monthlyQuota,
        used_this_month: used,
        remaining: key.monthlyQuota === 0 ? null : Math.max(0, key.monthlyQuota - used),
        rate_limit_per_min: key.rateLimitPerMin,
      };
    },

    /** Searches submitted in the last 60 minutes and in this clock hour (cache hits are free and not counted). */
    recentSearches(key: ApiKeyDoc) {
      const at = now();
      const hourAgo = new Date(at.getTime() - 3_600_000).toISOString();
      return queries.usage.recent(key.keyId, [usageMonth(at.toISOString()), usageMonth(hourAgo)], at);
    },
  };
};
export type SearchService = ReturnType<typeof createSearchService>;
