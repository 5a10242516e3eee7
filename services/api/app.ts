import fastifySwagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ReadModelQueries } from '../../projections/index.js';
import type { KeyCommands } from '../application/keys.js';
import type { SearchService } from '../application/searches.js';
import type { Config } from '../compose/config.js';
import type { Secrets } from '../compose/secrets.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { RateLimiter } from '../ports/rateLimiter.js';
import { createAdminGuard, createAuthenticator } from './auth.js';
import { installErrorHandler } from './errors.js';
import { adminRoutes } from './routes/admin/index.js';
import { metaRoutes } from './routes/meta.js';
import { rawRoutes } from './routes/raw.js';
import { v1Routes } from './routes/v1/index.js';

/** Everything the HTTP surfaces need, built by a composition root (services/compose). */
export interface AppDeps {
  config: Pick<Config, 'syncTimeoutMs' | 'presignTtlS' | 'retentionDays' | 'publicBaseUrl'>;
  secrets: Secrets;
  queries: ReadModelQueries;
  searches: SearchService;
  keys: KeyCommands;
  blobStore: BlobStore;
  rateLimiter: RateLimiter;
  /** resolves once the read models include `position` */
  projected(position: number): Promise<void>;
  /** undefined when the location is unknown; the api answers 422 then */
  resolveLocation?: (name: string) => unknown;
}

const openapi: FastifyDynamicSwaggerOptions['openapi'] = {
  openapi: '3.1.0',
  info: {
    title: 'SERP API',
    version: '1.0.0',
    description: 'Live Google results as clean JSON. Submit a search, poll the job, read json, compat or html.',
  },
  components: {
    securitySchemes: {
      apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      bearer: { type: 'http', scheme: 'bearer' },
    },
  },
  security: [{ apiKey: [] }, { bearer: [] }],
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
    // JSON only: a text/plain body must be a 415, not a string that fails validation.
    fastify.removeContentTypeParser('text/plain');
    await fastify.register(fastifySwagger, { openapi, transform: jsonSchemaTransform });

    const baseUrl = (req: FastifyRequest) =>
      deps.config.publicBaseUrl ?? `${req.protocol}://${req.headers.host ?? 'localhost'}`;
    await fastify.register(metaRoutes);
    await fastify.register(rawRoutes, {
      linkSecret: deps.secrets.linkSecret,
      queries: deps.queries,
      blobStore: deps.blobStore,
    });
    await fastify.register(v1Routes, {
      prefix: '/v1',
      searches: deps.searches,
      authenticate: createAuthenticator(deps.queries, deps.secrets.keyPepper),
      limiter: deps.rateLimiter,
      render: {
        linkSecret: deps.secrets.linkSecret,
        presignTtlS: deps.config.presignTtlS,
        resultOf: (job) => deps.searches.resultOf(job),
      },
      baseUrl,
      syncTimeoutMs: deps.config.syncTimeoutMs,
      retentionDays: deps.config.retentionDays,
      resolveLocation: deps.resolveLocation,
    });
    await fastify.register(adminRoutes, {
      prefix: '/admin',
      guard: createAdminGuard(deps.secrets.adminToken),
      queries: deps.queries,
      keys: deps.keys,
      projected: deps.projected,
    });
  },
  { name: 'serp-api', fastify: '5.x' },
);
