import type { MonitorSearch } from '../../../contracts/events.js';
import { depthOf, GOOGLE_PASS_THROUGH } from '../../../contracts/search.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { JobStatusDoc } from '../../../projections/jobStatus/jobStatus.js';
import type { MonitorDoc } from '../../../projections/monitors/monitors.js';

const TARGETING = ['uule', 'lat', 'lon', 'radius', 'device', 'gl', 'hl', 'engine_domain'] as const;
const place = (s?: string) =>
  s
    ?.toLowerCase()
    .replace(/\s*,\s*/g, ',')
    .replace(/\s+/g, ' ');

/** the same place, device, country, language and Google domain; no filter or tab that changes the results */
const sameTargeting = (request: JobStatusDoc['request'], search: MonitorSearch) =>
  place(request.location) === place(search.location) &&
  TARGETING.every((k) => (request[k] ?? undefined) === (search[k] ?? (k === 'device' ? 'desktop' : undefined))) &&
  request.stop_domain === undefined &&
  GOOGLE_PASS_THROUGH.every((k) => request[k] === undefined);

/**
 * The stored searches a new monitor's backfill turns into history (docs/rank-tracking.md): this key's ended jobs
 * with a result (done or partial, not purged by retention), submitted before the monitor was created, for one of its
 * keywords with its targeting and at least its depth (a top-10 search cannot say a domain is absent from the top
 * 100: docs/depth.md), oldest first.
 */
export const backfillSources = (queries: ReadModelQueries, monitor: MonitorDoc): JobStatusDoc[] => {
  const keywords = new Set(monitor.keywords);
  return queries.jobs
    .endedOfKey(monitor.keyId)
    .filter(
      (j) =>
        (j.status === 'done' || j.status === 'partial') &&
        j.submittedAt < monitor.createdAt &&
        keywords.has(j.request.keyword) &&
        sameTargeting(j.request, monitor.search) &&
        depthOf(j.request) >= monitor.depth &&
        queries.results.has(j.sourceJobId ?? j.jobId),
    )
    .sort((a, b) => ((a.completedAt ?? '') < (b.completedAt ?? '') ? -1 : 1));
};
