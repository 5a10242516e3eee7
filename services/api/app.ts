import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { SerpResult } from '../../contracts/result.js';
import { createMemoryRateLimiter } from '../adapters/rateLimiter/memory.js';
import type { ReadModelStore } from '../adapters/readModel/sqlite.js';
import type { KeyCommands } from '../application/keys.js';
import type { SearchService } from '../application/searches.js';
import type { Config } from '../compose/config.js';
import type { Secrets } from '../compose/secrets.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { RateLimiter } from '../ports/rateLimiter.js';
import type { Projector } from '../projector/projector.js';
import { createAuthenticator } from './auth.js';
import { installErrorHandler } from './errors.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerMetaRoutes } from './routes/meta.js';
import { registerRawRoute } from './routes/raw.js';
import { registerSearchRoutes } from './routes/search.js';
import { registerUsageRoute } from './routes/usage.js';

export interface AppDeps {
  config: Pick<Config, 'syncTimeoutMs' | 'presignTtlS' | 'retentionDays' | 'publicBaseUrl' | 'logLevel'>;
  secrets: Secrets;
  readModels: ReadModelStore;
  searches: SearchService;
  keys: KeyCommands;
  blobStore: BlobStore;
  projector: Projector;
  toCompat: (result: SerpResult) => Record<string, unknown>;
  /** undefined when the location is unknown; the api answers 422 then */
  resolveLocation?: (name: string) => unknown;
  rateLimiter?: RateLimiter;
  logger?: boolean;
}

/** Never log a raw key: the compat surface carries it in the query string. */
const redactUrl = (url: string) => url.replace(/([?&]api_key=)[^&]*/gi, '$1[redacted]');

/** The app as a plugin built from its dependencies (fastify/demo); `server.ts`-style listening lives in compose. */
export const buildApp = async (deps: AppDeps): Promise<FastifyInstance> => {
  const app = Fastify({
    logger:
      deps.logger === false
        ? false
        : {
            level: deps.config.logLevel,
            redact: ['req.headers["x-api-key"]', 'req.headers.authorization'],
            serializers: {
              req: (req) => ({ method: req.method, url: redactUrl(req.url), reqId: req.id }),
            },
          },
    bodyLimit: 1024 * 1024,
    // Fastify answers 414 past 100 characters; a long id is just an unknown job (404, "job not found")
    routerOptions: { maxParamLength: 4096 },
    // a malformed URL (`/v1/search/%ZZ`) is the client's: 400 with a detail, like every other error
    frameworkErrors: (err, _req, reply) =>
      (reply as FastifyReply)
        .code(400)
        .type('application/json')
        .send({
          detail:
            err.code === 'FST_ERR_BAD_URL'
              ? 'malformed URL: percent-encode special characters in the path'
              : `bad request: ${err.message}`,
          code: 'SERP_API_BAD_REQUEST',
        }),
    // a request Node's HTTP parser refuses (bad Content-Length, broken headers) never reaches a route
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return socket.destroy(err);
      const body = JSON.stringify({
        detail: 'malformed HTTP request: check the request line, headers and Content-Length',
        code: 'SERP_API_BAD_HTTP',
      });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
    genReqId: () => `req_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);
  // JSON only: a text/plain body must be a 415, not a string that fails validation.
  app.removeContentTypeParser('text/plain');
  await app.register(fastifySwagger, {
    openapi: {
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
    },
    transform: jsonSchemaTransform,
  });
  const ctx = {
    ...deps,
    authenticate: createAuthenticator(deps.readModels, deps.secrets.keyPepper),
    limiter: deps.rateLimiter ?? createMemoryRateLimiter(),
  };
  registerSearchRoutes(app, ctx);
  registerUsageRoute(app, ctx);
  registerRawRoute(app, ctx);
  registerAdminRoutes(app, ctx);
  registerMetaRoutes(app);
  return app;
};

export type RouteContext = AppDeps & {
  authenticate: ReturnType<typeof createAuthenticator>;
  limiter: RateLimiter;
};
