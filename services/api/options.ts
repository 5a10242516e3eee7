/**
 * What the HTTP layer is configured with. A composition root (services/compose) maps the service's configuration
 * onto it; the api never reads the configuration or the environment itself.
 */
export interface ApiOptions {
  /** how long `async: false` waits for a result (SERP_SYNC_TIMEOUT_MS) */
  syncTimeoutMs: number;
  /** how long a signed raw-HTML link stays valid (SERP_PRESIGN_TTL_S) */
  presignTtlS: number;
  /** jobs older than this answer 410 (SERP_RETENTION_DAYS) */
  retentionDays: number;
  /** the origin signed links and /openapi.json name; default: the listening address (SERP_PUBLIC_BASE_URL) */
  publicBaseUrl?: string;
  /**
   * bad or missing credentials (API keys, admin tokens, link signatures) one client IP may send a minute before 429
   * (SERP_AUTH_FAILURES_PER_MIN, default 30)
   */
  authFailuresPerMin?: number;
  /** requests to signed raw-HTML links one client IP may send a minute (SERP_RAW_PER_ADDRESS_PER_MIN, default 60) */
  rawPerAddressPerMin?: number;
  /** what `GET /health` names this process (SERP_INSTANCE_ID); default: a name made when the app is built */
  instanceId?: string;
  /** the tiers a key can be minted in, with their limits (SERP_TIERS) */
  tiers?: Record<string, { monthlyQuota: number; rateLimitPerMin: number }>;
  /** what a lower lane keeps of the fleet while a higher one has work (SERP_LANE_MIN_SHARE, default 0.1) */
  laneMinShare?: number;
  /** SERP_MONITOR_SPREAD_MAX_S: the dashboard plans the monitors' demand with it */
  monitorSpreadMaxS?: number;
}

/** The secrets the HTTP layer checks and signs with. */
export interface ApiSecrets {
  /** API keys are stored as an HMAC with it */
  keyPepper: string;
  /** signs raw-HTML links */
  linkSecret: string;
  /** the admin token (`/admin`, `/admin/api`, `/metrics`) */
  adminToken: string;
}
