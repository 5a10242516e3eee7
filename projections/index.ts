import { adminSessionsProjection } from './adminSessions/adminSessions.js';
import { adminSessionsQueries } from './adminSessions/queries.js';
import { apiKeysProjection } from './apiKeys/apiKeys.js';
import { apiKeysQueries } from './apiKeys/queries.js';
import { hourlyOutcomesProjection } from './dashboard/hourlyOutcomes.js';
import { keyDailyProjection } from './dashboard/keyDaily.js';
import { dashboardQueries } from './dashboard/queries.js';
import { routeHealthProjection } from './dashboard/routeHealth.js';
import { jobStatusProjection } from './jobStatus/jobStatus.js';
import { jobStatusQueries } from './jobStatus/queries.js';
import { monitorAlertsProjection } from './monitors/alerts.js';
import { monitorRunsProjection, monitorScheduleProjection, monitorsProjection } from './monitors/monitors.js';
import { monitorQueries } from './monitors/queries.js';
import type { DocReader, Projection } from './projection.js';
import { laneHoursProjection } from './queue/laneHours.js';
import { queueQueries } from './queue/queries.js';
import { rankHistoryQueries } from './rankHistory/queries.js';
import { rankDaysProjection } from './rankHistory/rankDays.js';
import { rankBestProjection, rankHistoryProjection } from './rankHistory/rankHistory.js';
import { resultCacheQueries } from './resultCache/queries.js';
import { resultCacheProjection } from './resultCache/resultCache.js';
import { routePlacementsQueries } from './routePlacements/queries.js';
import { routePlacementsProjection } from './routePlacements/routePlacements.js';
import { searchResultsQueries } from './searchResults/queries.js';
import { searchResultsProjection } from './searchResults/searchResults.js';
import { usageCountersQueries } from './usageCounters/queries.js';
import { usageCountersProjection } from './usageCounters/usageCounters.js';
import { webhookQueries } from './webhooks/queries.js';
import { webhookOpenReplaysProjection, webhookReplaysProjection } from './webhooks/replays.js';
import {
  webhookDeliveriesProjection,
  webhookOutboxBodiesProjection,
  webhookOutboxProjection,
  webhooksProjection,
} from './webhooks/webhooks.js';

/**
 * The read models' shape: bumped whenever a projection changes what it writes (a new view, a new lookup), so that a
 * data directory written by an older version is rebuilt from the log once at start (services/projector).
 * 2: jobStatus finds a key's ended jobs by lookup; keyDaily and hourlyOutcomes (the admin dashboard); SearchPurged.
 * 3: rank tracking (monitors, monitorSchedule, monitorRuns, rankHistory, rankBest); jobStatus keeps a job's monitor.
 * 4: routeHealth (the dashboard's routes); searchResults keeps each crawl's blocks and cost.
 * 5: resultCache keeps each cache key's answers by the depth they cover; searchResults records depth and exhaustion.
 * 6: adminSessions (dashboard sessions, server-side).
 * 7: webhooks, webhookDeliveries, webhookOutbox, monitorAlerts; monitors keep their alert settings.
 * 8: rankDays (each day's successful checks, reduced to what visibility reads).
 * 9: laneHours (pages asked per lane and hour); jobStatus keeps a job's lane, share, place in the log and wait (the
 *    fair scheduler's state at a start).
 * 10: jobStatus and searchResults keep a crawl's location check; routeHealth counts each route's placements.
 * 11: webhookOutboxBodies (each waiting delivery's body, so the deliverer no longer reads its stream for it);
 *     webhookOutbox keeps each delivery's key.
 * 12: webhookReplays and webhookOpenReplays (a replay recorded by reference); a replayed delivery's first claim makes
 *     its webhookDeliveries and webhookOutbox documents.
 * 13: routePlacements (each place's record of the routes that honoured it, which located searches' routes follow).
 */
export const READ_MODELS_VERSION = 13;

/** Every read model the api serves, in the order the projector applies them. */
export const allProjections: readonly Projection<unknown>[] = [
  jobStatusProjection,
  searchResultsProjection,
  usageCountersProjection,
  apiKeysProjection,
  resultCacheProjection,
  keyDailyProjection,
  hourlyOutcomesProjection,
  monitorsProjection,
  monitorScheduleProjection,
  monitorRunsProjection,
  rankHistoryProjection,
  rankBestProjection,
  rankDaysProjection,
  routeHealthProjection,
  routePlacementsProjection,
  adminSessionsProjection,
  webhooksProjection,
  webhookDeliveriesProjection,
  webhookOutboxProjection,
  webhookOutboxBodiesProjection,
  webhookReplaysProjection,
  webhookOpenReplaysProjection,
  monitorAlertsProjection,
  laneHoursProjection,
] as Projection<unknown>[];

/** Every view's typed queries over one document store: what the api, dispatcher and CLI read through. */
export const readModelQueries = (docs: DocReader) => ({
  jobs: jobStatusQueries(docs),
  results: searchResultsQueries(docs),
  cache: resultCacheQueries(docs),
  usage: usageCountersQueries(docs),
  keys: apiKeysQueries(docs),
  dashboard: dashboardQueries(docs),
  monitors: monitorQueries(docs),
  ranks: rankHistoryQueries(docs),
  adminSessions: adminSessionsQueries(docs),
  webhooks: webhookQueries(docs),
  queue: queueQueries(docs),
  routePlacements: routePlacementsQueries(docs),
});
export type ReadModelQueries = ReturnType<typeof readModelQueries>;
