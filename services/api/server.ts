import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { type AppDeps, app } from './app.js';

/** Never log a raw key: the compat surface carries it in the query string. */
const redactUrl = (url: string) => url.replace(/([?&]api_key=)[^&]*/gi, '$1[redacted]');

/** The Fastify instance's own settings: logging, limits, and errors that never reach a route. */
export const serverOptions = (options: { logLevel: string; logger?: boolean }): FastifyServerOptions => ({
  logger:
    options.logger === false
      ? false
      : {
          level: options.logLevel,
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

/** The service's HTTP server: a Fastify instance with the app plugin registered, ready to `listen`. */
export const createServer = async (
  deps: AppDeps,
  options: { logLevel: string; logger?: boolean },
): Promise<FastifyInstance> => {
  const server = Fastify(serverOptions(options));
  await server.register(app, deps);
  return server;
};
