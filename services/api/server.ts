import type { Server } from 'node:http';
import Fastify, {
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  LogController,
  type RouteOptions,
} from 'fastify';
import type { Config } from '../config/config.js';
import { type AppDeps, app } from './app.js';
import { clip } from './errors.js';

/** Never log a raw key: the compat surface carries it in the query string. */
const redactUrl = (url: string) => url.replace(/([?&]api_key=)[^&]*/gi, '$1[redacted]');

/**
 * The server's configuration: its log level, and how long a client may take to send its request, headers and body
 * (`requestTimeoutMs`), the headers alone (`headersTimeoutMs`), and how long an idle keep-alive connection stays open
 * (`keepAliveTimeoutMs`): slow clients must not pin connections (docs/decisions.md#http-hardening).
 */
export type ServerSettings = Pick<Config, 'logLevel' | 'requestTimeoutMs' | 'headersTimeoutMs' | 'keepAliveTimeoutMs'>;

/** The Fastify instance's own settings: logging, limits, and errors that never reach a route. */
export const serverOptions = (options: { settings: ServerSettings; logger?: boolean }): FastifyHttpOptions<Server> => ({
  logger:
    options.logger === false
      ? false
      : {
          level: options.settings.logLevel,
          redact: ['req.headers["x-api-key"]', 'req.headers.authorization'],
          serializers: {
            req: (req) => ({ method: req.method, url: redactUrl(req.url), reqId: req.id }),
          },
        },
  // app.ts logs one line per answered request (route, status, time, key id, job id) instead of Fastify's two (the
  // controller, not the top-level option Fastify 5.12 deprecates: FSTDEP023)
  logController: new LogController({ disableRequestLogging: true }),
  bodyLimit: 1024 * 1024,
  http: {
    // Node answers a request without Host with an empty 400 before Fastify sees it; createServer answers it in JSON
    requireHostHeader: false,
    // Fastify has no option for it; Node's default (60 s) would let a client dribble headers for a minute
    headersTimeout: options.settings.headersTimeoutMs,
    // how often Node checks those clocks (default 30 s, so a short timeout would fire up to 30 s late)
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, options.settings.requestTimeoutMs / 4)),
  },
  // Node's own clocks: receiving the request (not waiting for our answer, which a sync search may take long for)
  requestTimeout: options.settings.requestTimeoutMs,
  keepAliveTimeout: options.settings.keepAliveTimeoutMs,
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
            : `bad request: ${clip(err.message, 200)}`,
        code: 'SERP_API_BAD_REQUEST',
      }),
  // a request Node's HTTP parser refuses (bad Content-Length, broken headers) never reaches a route
  clientErrorHandler: (err, socket) => {
    if (!socket.writable) return socket.destroy(err);
    const timedOut = (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const body = JSON.stringify(
      timedOut
        ? {
            detail: 'request timeout: the request (headers and body) did not arrive in time; check its Content-Length',
            code: 'SERP_API_REQUEST_TIMEOUT',
          }
        : {
            detail: 'malformed HTTP request: check the request line, headers and Content-Length',
            code: 'SERP_API_BAD_HTTP',
          },
    );
    socket.end(
      `HTTP/1.1 ${timedOut ? '408 Request Timeout' : '400 Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  },
  genReqId: () => `req_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
});

/** The service's HTTP server: a Fastify instance with the app plugin registered, ready to `listen`. */
export const createServer = async (
  deps: AppDeps,
  /** `onRoute`: told of every route as it is added (the contract test checks each is documented) */
  options: { settings: ServerSettings; logger?: boolean; onRoute?: (route: RouteOptions) => void },
): Promise<FastifyInstance> => {
  const server = Fastify(serverOptions(options));
  if (options.onRoute) server.addHook('onRoute', options.onRoute);
  server.addHook('onRequest', async (req, reply) => {
    if (req.raw.httpVersion === '1.1' && !req.headers.host) {
      return reply.code(400).header('Connection', 'close').send({
        detail: 'missing Host header: every HTTP/1.1 request must carry one',
        code: 'SERP_API_BAD_REQUEST',
      });
    }
  });
  await server.register(app, deps);
  return server;
};
