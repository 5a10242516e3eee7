import type { TargetingResolved } from '../../contracts/events.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { ReadModelQueries } from '../../projections/index.js';
import type { AppDeps } from '../api/app.js';
import type { ApiSecrets } from '../api/options.js';
import { type AdminSessionCommands, createAdminSessionCommands } from '../application/adminSessions.js';
import { createKeyCommands, type KeyCommands } from '../application/keys.js';
import type { Config } from '../config/config.js';
import { createTargetingResolver } from '../crawler/targeting.js';
import type { LocationResolver } from '../geo/locations.js';
import { createMonitorService, type MonitorService } from '../monitors/commands/monitors.js';
import { createMonitorVersions } from '../monitors/commands/monitorVersions.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import type { RateLimiter } from '../ports/rateLimiter.js';
import type { PageRenderer } from '../render/pageRenderer.js';
import { createPageViews } from '../render/pageViews.js';
import { createSearchService, type SearchService } from '../searches/commands/searches.js';
import { type Resolver, systemResolver } from '../webhooks/commands/webhookSafety.js';
import { createWebhookService, type WebhookService } from '../webhooks/commands/webhooks.js';

/** The ports the application services run on, in whichever process answers HTTP. */
export interface ApplicationPorts {
  eventStore: EventStore;
  queries: ReadModelQueries;
  handle: CommandHandler;
  secrets: ApiSecrets;
  /** resolves once this process's read models include `position` */
  projected(position: number): Promise<void>;
  /**
   * resolves once the read models hold this process's own appends for a key (bounded): embedded mode with the pipeline
   * thread, where they are projected on another thread (searches/commands/searches.ts, projector/ownWrites.ts)
   */
  ownWritesProjected?: (keyId: string) => Promise<void>;
  /** how webhook hosts resolve (default: the system's resolver; tests answer without DNS) */
  resolveHost?: Resolver;
  /** a request's location resolved where the geotargets are, recorded with its job (the api's processes) */
  resolveTargeting?: (request: SearchRequest) => TargetingResolved;
}

/** The application services' slice of the configuration. */
export type ApplicationConfig = Pick<
  Config,
  'cacheTtlS' | 'cacheScope' | 'tiers' | 'webhookAllowHttp' | 'webhookAllowPrivate' | 'monitorSpreadMaxS'
>;

/** The commands and queries the surfaces call: every one of them, for every mode (docs/architecture.md). */
export interface ApplicationServices {
  searches: SearchService;
  keys: KeyCommands;
  adminSessions: AdminSessionCommands;
  monitors: MonitorService;
  webhooks: WebhookService;
}

/**
 * The search service, composed one way for every caller: the HTTP layer's (composeApplication below) and the write
 * side's, where rank tracking's scheduler submits a run's searches (backgroundWorkers.ts).
 */
export const composeSearches = (
  ports: Pick<ApplicationPorts, 'eventStore' | 'queries' | 'handle' | 'ownWritesProjected' | 'resolveTargeting'>,
  config: Pick<ApplicationConfig, 'cacheTtlS' | 'cacheScope' | 'tiers'>,
): SearchService =>
  createSearchService({
    eventStore: ports.eventStore,
    queries: ports.queries,
    handle: ports.handle,
    config,
    ...(ports.ownWritesProjected ? { ownWritesProjected: ports.ownWritesProjected } : {}),
    ...(ports.resolveTargeting ? { resolveTargeting: ports.resolveTargeting } : {}),
  });

/**
 * The application services over their ports: the one place they are composed, by embedded mode, distributed mode's
 * api role, the CLI's commands on a data directory and the tests. A service added here is handed to the HTTP layer by
 * `composeApi` with the others, so no composition can leave one out.
 */
export const composeApplication = (ports: ApplicationPorts, config: ApplicationConfig): ApplicationServices => {
  const { eventStore, queries, handle, projected } = ports;
  const pepper = ports.secrets.keyPepper;
  return {
    searches: composeSearches(ports, config),
    keys: createKeyCommands({ handle, pepper, tiers: config.tiers }),
    adminSessions: createAdminSessionCommands({ handle }),
    monitors: createMonitorService({
      queries,
      handle,
      projected,
      tiers: config.tiers,
      versions: createMonitorVersions(eventStore),
      spreadMaxMs: config.monitorSpreadMaxS * 1000,
    }),
    webhooks: createWebhookService({
      queries,
      handle,
      projected,
      pepper,
      safety: { allowHttp: config.webhookAllowHttp, allowPrivate: config.webhookAllowPrivate },
      resolve: ports.resolveHost ?? systemResolver,
    }),
  };
};

/** What the HTTP layer runs on beyond the application's ports: each mode's and each process's own parts. */
export interface ApiPorts extends ApplicationPorts {
  blobStore: BlobStore;
  rateLimiter: RateLimiter;
  /** the process's location index (the crawler targets with the same one) */
  locations: Pick<LocationResolver, 'resolveLocation' | 'suggestLocations' | 'searchLocations' | 'locationById'>;
  catchUp?: AppDeps['catchUp'];
  metrics?: AppDeps['metrics'];
  version?: AppDeps['version'];
  renderElsewhere?: AppDeps['renderElsewhere'];
  queuePositions?: AppDeps['queuePositions'];
  /** the process's renderer of stored pages (docs/screenshots.md); absent: screenshots answer 503 */
  renderer?: PageRenderer;
}

/** Everything the HTTP surfaces need (services/api/app.ts): the application services and the ports they share. */
export const composeApi = (ports: ApiPorts, config: ApplicationConfig & AppDeps['config']): AppDeps => {
  const { locations } = ports;
  return {
    // the api resolves each location once, at submit: its crawl takes it from the job (docs/locations.md)
    ...composeApplication({ resolveTargeting: createTargetingResolver(locations), ...ports }, config),
    config,
    secrets: ports.secrets,
    queries: ports.queries,
    blobStore: ports.blobStore,
    rateLimiter: ports.rateLimiter,
    projected: ports.projected,
    resolveLocation: (name) => locations.resolveLocation(name),
    suggestLocations: (name, limit) => locations.suggestLocations(name, limit),
    locations: {
      search: (query, limit) => locations.searchLocations(query, limit),
      byId: (id) => locations.locationById(id),
    },
    ...(ports.catchUp ? { catchUp: ports.catchUp } : {}),
    ...(ports.metrics ? { metrics: ports.metrics } : {}),
    ...(ports.version ? { version: ports.version } : {}),
    ...(ports.renderElsewhere ? { renderElsewhere: ports.renderElsewhere } : {}),
    ...(ports.queuePositions ? { queuePositions: ports.queuePositions } : {}),
    pages: createPageViews({ blobStore: ports.blobStore, ...(ports.renderer ? { renderer: ports.renderer } : {}) }),
  };
};
