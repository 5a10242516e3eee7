import type { LocationCheck, TargetingUsed } from '../../contracts/events.js';
import type { LocationCheckMetadata, SerpResult, TargetingMetadata } from '../../contracts/result.js';
import { depthOf } from '../../contracts/search.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';

/** `search_metadata.targeting` under the native schema's snake_case names. */
const publicTargeting = ({ googleDomain, ...rest }: TargetingUsed): TargetingMetadata => ({
  ...rest,
  google_domain: googleDomain,
});

/** `search_metadata.location_check` under the native schema's names: the verdict, not every page judged. */
const publicLocationCheck = (c: LocationCheck): LocationCheckMetadata => ({
  status: c.status,
  ...(c.requested ? { requested: c.requested } : {}),
  ...(c.detected ? { detected: c.detected } : {}),
  ...(c.detectedPlace ? { detected_place: c.detectedPlace } : {}),
  ...(c.reason ? { reason: c.reason } : {}),
  retries: c.retries,
});

/**
 * `search_metadata`'s cost fields (docs/fleet.md): what the crawl cost in Google requests. A cached answer cost none;
 * a job completed before the cost was recorded shows the blocks it met, which were always recorded.
 */
const costMetadata = (job: JobStatusDoc, doc: SearchResultDoc) => {
  if (job.cached) return { requests: 0, blocked: 0, browser_pages: 0, bytes: 0 };
  if (doc.cost) {
    const { requests, blocked, browserPages, bytes } = doc.cost;
    return { requests, blocked, browser_pages: browserPages, bytes };
  }
  return doc.blocks !== undefined ? { blocked: doc.blocks } : {};
};

/**
 * `queued_ms`: the job's wait from submit to its first Google request (docs/fleet.md#lanes-and-fair-share). A job
 * folded from its stream before the read models held it has no wait yet: from submit to its end, then.
 */
const queuedMs = (job: JobStatusDoc) =>
  job.cached ? 0 : Math.round(job.queuedMs ?? Math.max(0, Date.parse(job.updatedAt) - Date.parse(job.submittedAt)));

/**
 * The native result (`output=json`): the spec's four members; `start` returns one page's worth from that offset. A
 * search answered from a deeper cached crawl gets the top `depth` of it, as its own crawl would have (docs/depth.md).
 */
export const nativeResult = (job: JobStatusDoc, doc: SearchResultDoc, start?: number): SerpResult => {
  const { request } = job;
  const page = <T>(list: T[]) => (start === undefined ? list : list.slice(start, start + 10));
  const all = doc.result.organic_results;
  const depth = depthOf(request);
  const organic = page(all.length > depth ? all.slice(0, depth) : all);
  // a news tab ranks its articles, not organic results: `start` pages through them the same way
  const news = doc.result.serp_features.news_results;
  const serpFeatures =
    start !== undefined && Array.isArray(news)
      ? { ...doc.result.serp_features, news_results: page(news) }
      : doc.result.serp_features;
  const submitted = Date.parse(job.submittedAt);
  const processed = job.completedAt ?? doc.completedAt;
  return {
    search_metadata: {
      id: job.jobId,
      status: doc.status,
      cached: job.cached,
      created_at: job.submittedAt,
      processed_at: processed,
      total_time_taken: job.cached ? 0 : Math.max(0, (Date.parse(doc.completedAt) - submitted) / 1000),
      pages_fetched: doc.pages.length,
      parser_version: doc.parserVersion,
      // a cached job's doc is its source's, so the targeting is the one the source crawl used
      ...(doc.targeting ? { targeting: publicTargeting(doc.targeting) } : {}),
      ...costMetadata(job, doc),
      lane: job.lane ?? laneOf(job),
      queued_ms: queuedMs(job),
      ...(doc.locationCheck ? { location_check: publicLocationCheck(doc.locationCheck) } : {}),
      parameters: { ...request, depth },
      information: doc.result.information,
    },
    organic_results: organic,
    serp_features: serpFeatures,
    ...(request.capture_aio && doc.result.ai_overview ? { ai_overview: doc.result.ai_overview } : {}),
  };
};
