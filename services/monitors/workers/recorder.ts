import { streams } from '../../../contracts/events.js';
import { isWrongPlace } from '../../../domain/location/placement.js';
import { monitorRunDecider } from '../../../domain/monitor/monitorRun.js';
import { rankDomains } from '../../../domain/monitor/ranking.js';
import type { JobStatusDoc } from '../../../projections/jobStatus/jobStatus.js';
import type { FollowerDeps } from '../../application/followerDeps.js';
import { createReactor, type Handled, reactorDeps } from '../../reactor/reactor.js';
import type { PageViews } from '../../render/pageViews.js';
import { withPixelPositions } from '../../render/withPositions.js';

type End = Handled<'CrawlCompleted' | 'CrawlFailed' | 'SearchAnsweredFromCache'>;
/** a job's end: a final failure, a completed crawl, an answer from cache */
const isEnd = (e: End) => e.type !== 'CrawlFailed' || e.data.final;

/**
 * Turns each ended monitor job into its check (docs/rank-tracking.md): the positions of the run's domains in the
 * job's result, or the failure. It follows the log from a checkpoint of its own, waits until the read models hold
 * each batch (the job's monitor and result are read there), and records through the run's decider, which decides one
 * check per job: a second dispatcher, or a batch delivered again, records nothing twice.
 */
export const createRankRecorder = (
  deps: FollowerDeps & {
    /** told of each check recorded, with its points (the metrics) */
    onCheck?: (points: number) => void;
    /** lays out a search's first page, for a monitor with pixel positions (docs/rank-tracking.md); absent: none */
    pages?: Pick<PageViews, 'positions'>;
  },
) => {
  const { queries, handle } = deps;
  const now = () => (deps.now?.() ?? new Date()).toISOString();

  /** the check of one ended monitor job */
  const record = async (job: JobStatusDoc) => {
    const origin = job.monitor;
    if (!origin) return;
    const run = queries.monitors.run(origin.runId)?.run;
    if (!run) return;
    const checkedAt = job.completedAt ?? job.updatedAt;
    const base = {
      type: 'RecordCheck' as const,
      runId: run.runId,
      keyword: job.request.keyword,
      jobId: job.jobId,
      checkedAt,
      now: now(),
    };
    // a search Google placed elsewhere is a failure, never a position (docs/rank-tracking.md)
    const misplaced = isWrongPlace(job.locationCheck);
    if (job.status === 'failed' || misplaced) {
      const failure = misplaced
        ? 'location_mismatch'
        : (job.failure?.kind ?? job.failure?.code?.replace(/^SERP_CRAWL_/, '').toLowerCase() ?? 'failed');
      await handle(streams.monitorRun(run.runId), monitorRunDecider, { ...base, ok: false, failure, ranks: [] });
      return;
    }
    const doc = queries.results.byJobId(job.sourceJobId ?? job.jobId);
    const result = doc?.result;
    let ranks = result ? rankDomains(result, run.domains, run.depth) : [];
    if (doc && run.pixelPositions && deps.pages) {
      // one render a search, its first page, kept in the blob store (docs/rank-tracking.md#pixel-positions); the check
      // records what it measured, so the history is a projection of the log. A render that fails leaves the check
      // without pixels, never failed.
      try {
        const positions = await deps.pages.positions(job.sourceJobId ?? job.jobId, doc, job.request.device, {
          firstPageOnly: true,
        });
        ranks = rankDomains(withPixelPositions(doc.result, positions), run.domains, run.depth, true);
      } catch (err) {
        deps.log?.('monitor check not laid out', { jobId: job.jobId, reason: (err as Error).message });
      }
    }
    await handle(
      streams.monitorRun(run.runId),
      monitorRunDecider,
      result ? { ...base, ok: true, ranks } : { ...base, ok: false, failure: 'result_expired', ranks: [] },
    );
    if (result) deps.onCheck?.(ranks.length);
  };

  const reactor = createReactor(
    {
      name: 'monitor-recorder',
      handles: ['CrawlCompleted', 'CrawlFailed', 'SearchAnsweredFromCache'],
      // the job's monitor and result are read in the read models
      needsProjection: isEnd,
      async handle(events) {
        for (const e of events) {
          if (!isEnd(e)) continue;
          const job = queries.jobs.byId(e.data.jobId);
          if (job?.monitor && (job.status === 'done' || job.status === 'partial' || job.status === 'failed')) {
            await record(job);
          }
        }
      },
    },
    reactorDeps(deps),
  );

  return { ...reactor, record };
};
