import { randomBytes } from 'node:crypto';
import fastifySwagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import helmet from 'helmet';
import { Gauge } from 'prom-client';
import { z } from 'zod';
import { CompatError } from '../../contracts/compat.js';
import { ErrorBody } from '../../contracts/errors.js';
import type { ReadModelQueries } from '../../projections/index.js';
import { type RenderDeps, withinBudget } from '../answers/render.js';
import type { AdminSessionCommands } from '../application/adminSessions.js';
import type { KeyCommands } from '../application/keys.js';
import { runningFleet } from '../fairShare/capacity.js';
import type { QueuePositions } from '../fairShare/queuePosition.js';
import { createMetrics, type Metrics } from '../metrics/metrics.js';
import type { MonitorService } from '../monitors/commands/monitors.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { RateLimiter } from '../ports/rateLimiter.js';
import type { PageViews } from '../render/pageViews.js';
import type { SearchService } from '../searches/commands/searches.js';
import type { WebhookService } from '../webhooks/commands/webhooks.js';
import { createAdminGuard, createAuthenticator, createAuthFailureGate } from './auth.js';
import {
  documentRequestErrors,
  documentThrottled,
  documentUnavailable,
  installErrorHandler,
  installMethodNotAllowed,
} from './errors.js';
import type { ApiOptions, ApiSecrets } from './options.js';
import { createStoredAnswers } from './render/stored.js';
import { adminRoutes } from './routes/admin/index.js';
import { type CompatOptions, compatRoutes } from './routes/compat/index.js';
import { type McpRouteOptions, mcpRoutes } from './routes/mcp/index.js';
import { metaRoutes } from './routes/meta.js';
import { metricsRoute } from './routes/metrics.js';
import { rawRoutes } from './routes/raw.js';
import { v1Routes } from './routes/v1/index.js';

/**
 * Everything the HTTP surfaces need, composed in one place (services/compose/application.ts `composeApi`) for every
 * mode. A route's service is required: a composition that lacks one fails at start-up, never by answering 404.
 */
export interface AppDeps {
  config: ApiOptions;
  secrets: ApiSecrets;
  queries: ReadModelQueries;
  searches: SearchService;
  keys: KeyCommands;
  /** dashboard sessions, kept in the log */
  adminSessions: AdminSessionCommands;
  blobStore: BlobStore;
  rateLimiter: RateLimiter;
  /** resolves once the read models include `position` */
  projected(position: number): Promise<void>;
  /**
   * Distributed mode: resolves once the read models hold what the shared event store held when called (bounded), so
   * a key minted on another api process is found (`createCatchUp`). Embedded mode has one writer and needs none.
   */
  catchUp?: () => Promise<void>;
  /** undefined when the location is unknown; the api answers 422 then */
  resolveLocation: (name: string) => unknown;
  /** the closest places to a location that did not resolve (the 422's "did you mean") */
  suggestLocations: (name: string, limit: number) => string[];
  /** location search and lookup by Google id (compat /locations.json and `location=<id>`) */
  locations: NonNullable<CompatOptions['locations']>;
  /** the service's version, as the MCP server names itself */
  version?: string;
  /** a finished result's answer rendered on the pipeline thread (RenderDeps.renderElsewhere); absent: here */
  renderElsewhere?: RenderDeps['renderElsewhere'];
  /** rank tracking's commands (docs/rank-tracking.md): the /v1/monitors routes */
  monitors: MonitorService;
  /** webhooks' commands (docs/webhooks.md): the /v1/webhooks routes */
  webhooks: WebhookService;
  /** Prometheus metrics (served at /metrics behind the admin token); the app makes its own HTTP-only ones without */
  metrics?: Metrics;
  /** where queued jobs stand (services/fairShare/queuePosition.ts), started by the composition; absent: no `queue` */
  queuePositions?: QueuePositions;
  /** screenshots and pixel positions of stored pages (docs/screenshots.md) */
  pages: PageViews;
}

const openapi = (serverUrl: string): FastifyDynamicSwaggerOptions['openapi'] => ({
  openapi: '3.1.0',
  info: {
    title: 'SERP API',
    version: '1.0.0',
    description: 'Live Google results as clean JSON. Submit a search, poll the job, read json, compat or html.',
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  },
  servers: [{ url: serverUrl, description: 'this service (SERP_PUBLIC_BASE_URL, else its listening address)' }],
  tags: [
    { name: 'native', description: 'The native API under /v1: submit, poll, usage' },
    {
      name: 'rank tracking',
      description: 'Monitors that search keywords on a schedule; position history, visibility and changes',
    },
    {
      name: 'webhooks',
      description:
        'Signed (Standard Webhooks), durable, replayable deliveries of searches, monitor runs, alerts and quota',
    },
    { name: 'admin', description: 'Key management, behind SERP_ADMIN_TOKEN' },
    { name: 'meta', description: 'Keyless documents: health, this schema, llms.txt' },
    { name: 'mcp', description: 'The MCP tools (serp_search, serp_get_results, serp_usage) over Streamable HTTP' },
    {
      name: 'compat',
      description:
        "SerpApi's paths, parameter names and envelope at the root: an existing client changes only its host",
    },
  ],
  components: {
    securitySchemes: {
      apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      apiKeyQuery: {
        type: 'apiKey',
        in: 'query',
        name: 'api_key',
        description: 'compat routes only (SerpApi clients)',
      },
      bearer: { type: 'http', scheme: 'bearer' },
      adminToken: { type: 'http', scheme: 'bearer', description: 'SERP_ADMIN_TOKEN (printed once on first start)' },
    },
  },
  security: [{ apiKey: [] }, { bearer: [] }],
});

/**
 * The origin signed links are built on: SERP_PUBLIC_BASE_URL, else the address the server listens on, never the
 * request's Host header (a client could make us sign a link to its own host).
 */
export const listeningBaseUrl = (fastify: FastifyInstance, configured: string | undefined): string => {
  if (configured) return configured.replace(/\/+$/, '');
  const address = fastify.server.address();
  if (!address || typeof address === 'string') return 'http://127.0.0.1';
  const host =
    address.address === '0.0.0.0' || address.address === '::'
      ? '127.0.0.1'
      : address.family === 'IPv6'
        ? `[${address.address}]`
        : address.address;
  return `http://${host}:${address.port}`;
};

/**
 * A `DELETE` carries no body, but a client that sends the same headers to every route (a JSON content type, no body)
 * should not get a 400 for it: an empty JSON body on a DELETE is no body. Any other method still needs one
 * (docs/api.md#errors).
 */
const acceptEmptyJsonOnDelete = (fastify: FastifyInstance) => {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = fastify.initialConfig;
  const json = fastify.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (req.method === 'DELETE' && body.length === 0) return done(null, undefined);
    // parseAs 'string' hands a string; the parser's type allows a Buffer for parseAs 'buffer'
    return json(req, body as string, (err, value) => {
      // Fastify says "not valid JSON" for JSON it refuses for a poisoning key too: tell the two apart
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && parses(body as string)) {
        return done(forbiddenKey(), undefined);
      }
      return done(err, value);
    });
  });
};

/** whether `text` is JSON by the plain parser (which makes `__proto__` an own key, never a prototype) */
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** valid JSON refused for a `__proto__` or `constructor.prototype` key (docs/api.md#errors) */
const forbiddenKey = () =>
  Object.assign(
    new Error(
      'the body is valid JSON but has a "__proto__" key, or a "constructor" key holding "prototype": such keys are refused (they could reach the prototype of the objects the service builds); remove or rename them',
    ),
    { statusCode: 400, code: 'SERP_API_FORBIDDEN_KEY' },
  );

/**
 * jsonSchemaTransform converts a body as its input type, and zod then drops the body's `examples` when any field of it
 * transforms (a trimmed keyword, a default): they are written as clients send them, so they are put back. The
 * examples of the live OpenAPI are each sent by a test (docs/api.md#examples).
 */
const keepBodyExamples: typeof jsonSchemaTransform = (input) => {
  const out = jsonSchemaTransform(input);
  const body = (input.schema as { body?: unknown } | undefined)?.body;
  const examples = body instanceof z.ZodType ? z.globalRegistry.get(body)?.examples : undefined;
  const converted = (out.schema as { body?: Record<string, unknown> }).body;
  if (examples && converted && converted.examples === undefined) converted.examples = examples;
  return out;
};

/**
 * The whole HTTP surface as one plugin (fastify/demo's shape): `server.ts` builds the Fastify instance and listens,
 * tests register this on an instance of their own and use `inject`. Each scope registers its routes with its own auth:
 * `/v1` the API key, `/admin` the admin token, `/raw` a link signature, the meta routes none.
 */
export const app = fp<AppDeps>(
  async (fastify, deps) => {
    fastify.setValidatorCompiler(validatorCompiler);
    fastify.setSerializerCompiler(serializerCompiler);
    installErrorHandler(fastify);
    installMethodNotAllowed(fastify);
    acceptEmptyJsonOnDelete(fastify);
    const metrics = deps.metrics ?? createMetrics({ processMetrics: false });
    // one log line per answered request (server.ts turns Fastify's two request lines off): what an operator greps by
    fastify.addHook('onResponse', async (req, reply) => {
      const route = req.routeOptions.url ?? 'unmatched';
      const ms = reply.elapsedTime;
      metrics.observeHttp(route, req.method, reply.statusCode, ms / 1000);
      const params = req.params as { job_id?: string; id?: string } | undefined;
      // req.log already carries reqId (Fastify's child logger): the line names it once
      req.log.info(
        {
          method: req.method,
          route,
          status: reply.statusCode,
          ms: Math.round(ms * 10) / 10,
          keyId: req.apiKey?.keyId,
          jobId: req.submittedJobId ?? params?.job_id ?? params?.id,
        },
        'request',
      );
    });
    documentRequestErrors(fastify, ErrorBody);
    // the routes that read or write a store may answer 503 in a distributed deployment: say so in the OpenAPI
    documentUnavailable(fastify, (url) =>
      /^\/(v1|admin|raw)\b/.test(url)
        ? ErrorBody
        : /^\/(search|searches|account|locations)\b/.test(url)
          ? CompatError
          : undefined,
    );
    // Security headers for a JSON API: nothing may be framed, sniffed or run; HTML routes set their own CSP. Helmet's
    // middleware is built once here: @fastify/helmet builds it again on every request (its options parsed, its CSP
    // compiled), a few percent of a submit's time.
    const securityHeaders = helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginResourcePolicy: { policy: 'same-site' },
      hsts: false,
    });
    fastify.addHook('onRequest', (req, reply, done) =>
      securityHeaders(req.raw, reply.raw, (err?: unknown) => done(err as Error | undefined)),
    );
    // JSON only: a text/plain body must be a 415, not a string that fails validation.
    fastify.removeContentTypeParser('text/plain');
    const baseUrl = () => listeningBaseUrl(fastify, deps.config.publicBaseUrl);
    await fastify.register(fastifySwagger, {
      openapi: openapi(deps.config.publicBaseUrl ?? '/'),
      transform: keepBodyExamples,
    });
    // the per-address ceiling on credential failures and the raw link's ceiling answer 429 on these routes
    documentThrottled(fastify, (url) => (/^\/(v1|admin|metrics|raw|mcp)\b/.test(url) ? ErrorBody : undefined));
    const authenticate = createAuthenticator(deps.queries, deps.secrets.keyPepper, deps.catchUp);
    const authFailures = createAuthFailureGate(deps.rateLimiter, deps.config.authFailuresPerMin);
    const adminGuard = createAdminGuard(deps.secrets.adminToken, authFailures);
    await fastify.register(metaRoutes, {
      version: deps.version ?? '0.0.0',
      instanceId: deps.config.instanceId ?? `ins_${randomBytes(6).toString('hex')}`,
    });
    await fastify.register(metricsRoute, { guard: adminGuard, metrics });
    await fastify.register(rawRoutes, {
      linkSecret: deps.secrets.linkSecret,
      queries: deps.queries,
      blobStore: deps.blobStore,
      limiter: deps.rateLimiter,
      authFailures,
      perAddressPerMin: deps.config.rawPerAddressPerMin,
    });
    // finished answers kept as bytes, one memory bound for both surfaces (their keys differ by output)
    const stored = createStoredAnswers();
    // its bytes against its bound (docs/operations.md#metrics-and-logs): a cache that fills to its bound by design is
    // resident memory that grows after a start, and the soak tells it from a leak by this (docs/operations.md#the-soak)
    if (!metrics.registry.getSingleMetric('serp_stored_answers_bytes')) {
      new Gauge({
        name: 'serp_stored_answers_bytes',
        help: 'Bytes of the stored answers (finished results kept as bytes, with their compressed forms), and their bound (state=used|bound)',
        labelNames: ['state'] as const,
        registers: [metrics.registry],
        collect() {
          this.set({ state: 'used' }, stored.size);
          this.set({ state: 'bound' }, stored.maxBytes);
        },
      });
    }
    const { queuePositions } = deps;
    await fastify.register(v1Routes, {
      prefix: '/v1',
      searches: deps.searches,
      authenticate,
      authFailures,
      limiter: deps.rateLimiter,
      render: {
        linkSecret: deps.secrets.linkSecret,
        presignTtlS: deps.config.presignTtlS,
        resultOf: (job) => deps.searches.resultOf(job),
        hasResult: (job) => deps.searches.hasResult(job),
        // the HTTP thread does not wait on background-priority work past a budget (render/index.ts)
        ...(deps.renderElsewhere ? { renderElsewhere: withinBudget(deps.renderElsewhere) } : {}),
        ...(queuePositions ? { queuePosition: (jobId: string) => queuePositions.of(jobId) } : {}),
      },
      queuePositions,
      baseUrl,
      stored,
      syncTimeoutMs: deps.config.syncTimeoutMs,
      retentionDays: deps.config.retentionDays,
      resolveLocation: deps.resolveLocation,
      suggestLocations: deps.suggestLocations,
      queries: deps.queries,
      monitors: deps.monitors,
      webhooks: deps.webhooks,
      pages: deps.pages,
    });
    await fastify.register(compatRoutes, {
      searches: deps.searches,
      authenticate,
      authFailures,
      limiter: deps.rateLimiter,
      links: { linkSecret: deps.secrets.linkSecret, presignTtlS: deps.config.presignTtlS },
      blobStore: deps.blobStore,
      resultOf: (job) => deps.searches.resultOf(job),
      stored,
      baseUrl,
      syncTimeoutMs: deps.config.syncTimeoutMs,
      retentionDays: deps.config.retentionDays,
      resolveLocation: deps.resolveLocation,
      suggestLocations: deps.suggestLocations,
      locations: deps.locations,
      pages: deps.pages,
    });
    const inject: McpRouteOptions['inject'] = async (request, remoteAddress) => {
      const res = await fastify.inject({
        method: request.method as 'GET' | 'POST',
        url: request.url,
        headers: request.headers,
        payload: request.body,
        remoteAddress,
      });
      return {
        status: res.statusCode,
        headers: { get: (name: string) => (res.headers[name.toLowerCase()] as string | undefined) ?? null },
        text: async () => res.payload,
        bytes: async () => res.rawPayload,
      };
    };
    await fastify.register(mcpRoutes, {
      authenticate,
      authFailures,
      limiter: deps.rateLimiter,
      version: deps.version ?? '0.0.0',
      inject,
    });
    await fastify.register(adminRoutes, {
      guard: adminGuard,
      adminToken: deps.secrets.adminToken,
      queries: deps.queries,
      keys: deps.keys,
      sessions: deps.adminSessions,
      authFailures,
      catchUp: deps.catchUp,
      tiers: deps.config.tiers,
      projected: deps.projected,
      snapshot: () => metrics.snapshot(),
      monitorSpreadMaxMs: deps.config.monitorSpreadMaxS * 1000,
      pages: deps.pages,
      ...(deps.config.proxyUrls ? { fleet: runningFleet(deps.config.proxyUrls) } : {}),
    });
  },
  { name: 'serp-api', fastify: '5.x' },
);
