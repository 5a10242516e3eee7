import type { ReadModelQueries } from '../../../../projections/index.js';
import type { RenderDeps } from '../../../answers/render.js';
import type { QueuePositions } from '../../../fairShare/queuePosition.js';
import type { MonitorService } from '../../../monitors/commands/monitors.js';
import type { RateLimiter } from '../../../ports/rateLimiter.js';
import type { PageViews } from '../../../render/pageViews.js';
import type { SearchService } from '../../../searches/commands/searches.js';
import type { WebhookService } from '../../../webhooks/commands/webhooks.js';
import type { Authenticator, AuthFailureGate } from '../../auth.js';
import type { StoredAnswers } from '../../render/stored.js';

/** What the native surface needs; compose builds it. */
export interface V1Options {
  searches: SearchService;
  authenticate: Authenticator;
  authFailures: AuthFailureGate;
  limiter: RateLimiter;
  render: RenderDeps;
  /** the origin signed links are built on */
  baseUrl(): string;
  /** SERP_SYNC_TIMEOUT_MS: how long `async: false` waits */
  syncTimeoutMs: number;
  /** SERP_RETENTION_DAYS: older jobs answer 410 */
  retentionDays: number;
  /** finished results as stored bytes, with ETag and compressed forms */
  stored: StoredAnswers;
  /** undefined when the location is unknown; the api answers 422 then */
  resolveLocation?: (name: string) => unknown;
  /** the closest places to a location that did not resolve, for the 422's "did you mean" */
  suggestLocations?: (name: string, limit: number) => string[];
  /** the read models (rank tracking reads its views through them) */
  queries: ReadModelQueries;
  /** rank tracking's commands (docs/rank-tracking.md): the /v1/monitors routes */
  monitors: MonitorService;
  /** webhooks (docs/webhooks.md): the /v1/webhooks routes */
  webhooks: WebhookService;
  /** screenshots and pixel positions of stored pages (docs/screenshots.md) */
  pages: PageViews;
  /** where queued jobs stand in the fair scheduler (docs/fleet.md#lanes-and-fair-share) */
  queuePositions?: QueuePositions;
}
