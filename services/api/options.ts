import type { Config } from '../config/config.js';

/**
 * What the HTTP layer is configured with: its slice of the service's configuration (docs/configuration.md has each
 * value and its default). A composition root (services/compose) hands it over; the api never reads the environment.
 *
 * - `syncTimeoutMs`: how long `async: false` waits for a result; `presignTtlS`: how long a signed raw-HTML link stays
 *   valid; `retentionDays`: jobs older than this answer 410.
 * - `publicBaseUrl`: the origin signed links and /openapi.json name (absent: the listening address).
 * - `authFailuresPerMin`: bad or missing credentials one client IP may send a minute before 429;
 *   `rawPerAddressPerMin`: requests to signed raw-HTML links one client IP may send a minute.
 * - `tiers`: the tiers a key can be minted in, with their limits; `laneMinShare`: what a lower lane keeps of the fleet
 *   while a higher one has work (queue positions are estimated with it); `monitorSpreadMaxS`: how far a monitor run is
 *   spread (the dashboard plans the monitors' demand with it).
 * - `instanceId`: what `GET /health` names this process (absent: a name made when the app is built).
 * - `proxyUrls`: the routes this process's fleet has: the dashboard leaves out routes of a run before a restart
 *   (absent: it shows every route reported in the last hour).
 */
export type ApiOptions = Partial<Pick<Config, 'instanceId' | 'proxyUrls'>> &
  Pick<
    Config,
    | 'syncTimeoutMs'
    | 'presignTtlS'
    | 'retentionDays'
    | 'publicBaseUrl'
    | 'authFailuresPerMin'
    | 'rawPerAddressPerMin'
    | 'tiers'
    | 'laneMinShare'
    | 'monitorSpreadMaxS'
  >;

/** The secrets the HTTP layer checks and signs with. */
export interface ApiSecrets {
  /** API keys are stored as an HMAC with it */
  keyPepper: string;
  /** signs raw-HTML links */
  linkSecret: string;
  /** the admin token (`/admin`, `/admin/api`, `/metrics`) */
  adminToken: string;
}
