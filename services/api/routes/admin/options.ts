import type { Limits } from '../../../../domain/apiKey/apiKey.js';
import type { ReadModelQueries } from '../../../../projections/index.js';
import type { AdminSessionCommands } from '../../../application/adminSessions.js';
import type { KeyCommands } from '../../../application/keys.js';
import type { RunningFleet } from '../../../fairShare/capacity.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { PageViews } from '../../../render/pageViews.js';
import type { AdminGuard, AuthFailureGate } from '../../auth.js';

export interface AdminOptions {
  guard: AdminGuard;
  adminToken: string;
  queries: ReadModelQueries;
  keys: KeyCommands;
  sessions: AdminSessionCommands;
  /** wrong admin tokens count against the per-address ceiling of authentication failures */
  authFailures: AuthFailureGate;
  /** distributed mode: waits until the read models hold the shared log's head (a session started elsewhere) */
  catchUp?: () => Promise<void>;
  /** the tiers a key can be minted in */
  tiers: Record<string, Omit<Limits, 'tier'>>;
  /** resolves once the read models include `position` (admin writes answer only then) */
  projected(position: number): Promise<void>;
  /** queue depth and projection lag where this process sees them */
  snapshot?: Metrics['snapshot'];
  /** SERP_MONITOR_SPREAD_MAX_S in ms: how the monitors' planned demand is spread (docs/fleet.md) */
  monitorSpreadMaxMs: number;
  /**
   * the routes this process's fleet has (SERP_PROXY_URLS) and when it started: routes of a run before a restart leave
   * the routes table and the capacity (docs/operations.md#admin-dashboard); absent: every route of the last hour
   */
  fleet?: RunningFleet;
  now?: () => Date;
  /** a history point's page (docs/screenshots.md) */
  pages: PageViews;
}
