import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  isInitializeRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import { createV1Client, type FetchLike } from '../../../client/v1Client.js';
import { createMcpServer } from '../../../mcp/server.js';
import type { RateLimiter } from '../../../ports/rateLimiter.js';
import { type Authenticator, type AuthFailureGate, keyCheck, rawKeyOf } from '../../auth.js';

/**
 * The MCP tools over Streamable HTTP at `/mcp` (docs/mcp.md): hosted agents need no local process. Same API key as
 * `/v1` (X-API-Key or Bearer) on every request; one session per `initialize`, bound to the key that opened it (another
 * key gets 404, as an unknown session does). The tools call `/v1` in-process through `inject`, so validation, quota and
 * rate are exactly the HTTP surface's.
 */
export interface McpRouteOptions {
  authenticate: Authenticator;
  authFailures: AuthFailureGate;
  limiter: RateLimiter;
  version: string;
  /** `/v1` answered in-process: the request as `fetch` would send it, from the caller's address */
  inject(
    request: { method: string; url: string; headers: Record<string, string>; body?: string },
    remoteAddress: string,
  ): ReturnType<FetchLike>;
  /** idle sessions are closed after this (default 30 min) */
  sessionIdleMs?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  keyId: string;
  lastSeen: number;
}

const MAX_SESSIONS_PER_KEY = 16;
const MAX_SESSIONS = 10_000;

/** JSON-RPC's error shape (what MCP clients read) carrying our `detail` and `code` too (what every 4xx here has). */
const rpcError = (reply: FastifyReply, status: number, rpcCode: number, code: string, detail: string) =>
  reply
    .code(status)
    .type('application/json')
    .send({ jsonrpc: '2.0', error: { code: rpcCode, message: detail }, id: null, detail, code });

const RpcErrorBody = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: z.object({ code: z.number().int(), message: z.string() }),
    id: z.null(),
    detail: z.string().optional(),
    code: z.string().optional(),
  })
  .describe('a JSON-RPC error; ours also carry detail and code');
/** an MCP error: JSON-RPC's shape from the transport; ours (unparsable JSON, …) may be a plain ErrorBody */
const rpcErrors = (description: string) => ({
  description,
  content: { 'application/json': { schema: z.union([RpcErrorBody, ErrorBody]) } },
});
const JsonRpcMessages = z
  .union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))])
  .describe('one JSON-RPC message or a batch (MCP 2025-03-26 and later)');
const sessionHeader = z.object({
  'mcp-session-id': z.string().optional().describe('the session from the initialize answer; absent on initialize'),
  'mcp-protocol-version': z.string().optional(),
});

const acceptsAll = (req: FastifyRequest, types: string[]) => {
  const accept = req.headers.accept ?? '';
  return types.every((t) => accept.includes(t) || accept.includes('*/*'));
};

export const mcpRoutes: FastifyPluginAsync<McpRouteOptions> = async (app, opts) => {
  const sessions = new Map<string, Session>();
  const idleMs = opts.sessionIdleMs ?? 30 * 60_000;
  app.addHook('onRequest', keyCheck(opts, false));

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const s of sessions.values()) if (now - s.lastSeen > idleMs) void s.transport.close();
  }, 60_000);
  sweep.unref();
  // open SSE streams would hold the server's close: end every session before it
  app.addHook('preClose', async () => {
    clearInterval(sweep);
    await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
  });

  /** the least recently used session of `keyId` (or of all) goes when a new one would pass the ceiling */
  const makeRoom = (keyId: string) => {
    const own = [...sessions.values()].filter((s) => s.keyId === keyId);
    const pool = own.length >= MAX_SESSIONS_PER_KEY ? own : sessions.size >= MAX_SESSIONS ? [...sessions.values()] : [];
    const oldest = pool.sort((a, b) => a.lastSeen - b.lastSeen)[0];
    if (oldest) void oldest.transport.close();
  };

  const hand = async (req: FastifyRequest, reply: FastifyReply, transport: StreamableHTTPServerTransport) => {
    // the transport writes the raw response: carry over what our hooks set (security headers, rate headers)
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | readonly string[]);
    }
    reply.hijack();
    try {
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      req.log.error({ err }, 'mcp transport failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(400, { 'content-type': 'application/json' });
      reply.raw.end();
    }
  };

  /** the caller's session, or an answer that says why not (404 for another key's session too: ids do not leak) */
  const sessionOf = (req: FastifyRequest, reply: FastifyReply): Session | undefined => {
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      rpcError(
        reply,
        400,
        -32000,
        'SERP_MCP_PROTOCOL_VERSION',
        `unsupported MCP-Protocol-Version ${version.slice(0, 40)}: this server speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
      );
      return undefined;
    }
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string' || !id) {
      rpcError(
        reply,
        400,
        -32000,
        'SERP_MCP_NO_SESSION',
        'Mcp-Session-Id header is required: send an initialize request first and use the session id it returns',
      );
      return undefined;
    }
    const session = sessions.get(id);
    if (!session || session.keyId !== req.apiKey!.keyId) {
      rpcError(
        reply,
        404,
        -32001,
        'SERP_MCP_SESSION_NOT_FOUND',
        'Session not found: it ended or expired; initialize a new one',
      );
      return undefined;
    }
    session.lastSeen = Date.now();
    return session;
  };

  const open = async (req: FastifyRequest) => {
    const key = req.apiKey!;
    const rawKey = rawKeyOf(req, false)!;
    const remoteAddress = req.ip;
    makeRoom(key.keyId);
    const client = createV1Client({
      baseUrl: 'http://in-process',
      apiKey: rawKey,
      fetch: (url, init) => opts.inject({ ...init, url: url.replace('http://in-process', '') }, remoteAddress),
    });
    const server = createMcpServer({ client, version: opts.version });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, keyId: key.keyId, lastSeen: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      void server.close();
    };
    await server.connect(transport);
    return transport;
  };

  const r = app.withTypeProvider<ZodTypeProvider>();
  const common = { tags: ['mcp'], headers: sessionHeader };
  const refused = {
    401: ErrorBody.describe('missing, invalid or revoked API key'),
    404: rpcErrors('unknown or ended session, or a session opened with another key'),
    429: ErrorBody.describe('over the read ceiling, or too many bad keys from this address'),
  };

  r.post('/mcp', {
    config: { limit: 'read' },
    schema: {
      ...common,
      operationId: 'mcpPost',
      summary: 'MCP Streamable HTTP: send JSON-RPC messages (initialize opens a session)',
      description:
        'Requests are answered as a text/event-stream (progress notifications, then the result) or application/json; notifications and responses get 202. Accept must list application/json and text/event-stream.',
      body: JsonRpcMessages,
      response: {
        200: {
          description: 'the answer to the request(s)',
          content: {
            'text/event-stream': { schema: z.string().describe('SSE events, each a JSON-RPC message') },
            'application/json': { schema: JsonRpcMessages },
          },
        },
        202: z.null().describe('notifications or responses accepted (no body)'),
        400: rpcErrors('not JSON-RPC, no session, an unsupported protocol version or a second initialize'),
        406: rpcErrors('Accept does not list application/json and text/event-stream'),
        409: rpcErrors('a conflict on the session'),
        413: ErrorBody.describe('body over 1 MiB'),
        415: ErrorBody.describe('not application/json'),
        ...refused,
      },
    },
    handler: async (req, reply) => {
      if (!acceptsAll(req, ['application/json', 'text/event-stream'])) {
        return rpcError(
          reply,
          406,
          -32000,
          'SERP_MCP_NOT_ACCEPTABLE',
          'Not Acceptable: Accept must list both application/json and text/event-stream',
        );
      }
      const messages = Array.isArray(req.body) ? req.body : [req.body];
      if (!messages.length || !messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)) {
        return rpcError(
          reply,
          400,
          -32700,
          'SERP_MCP_INVALID_MESSAGE',
          'Parse error: the body is not a JSON-RPC 2.0 message or batch',
        );
      }
      if (!req.headers['mcp-session-id'] && messages.some((m) => isInitializeRequest(m))) {
        if (messages.length > 1) {
          return rpcError(
            reply,
            400,
            -32600,
            'SERP_MCP_INVALID_MESSAGE',
            'Invalid Request: initialize must be sent alone',
          );
        }
        return hand(req, reply, await open(req));
      }
      const session = sessionOf(req, reply);
      if (session) return hand(req, reply, session.transport);
    },
  });

  r.get('/mcp', {
    config: { limit: 'read' },
    schema: {
      ...common,
      operationId: 'mcpStream',
      summary: "MCP Streamable HTTP: the session's stream of server messages",
      response: {
        200: { description: 'server-sent events', content: { 'text/event-stream': { schema: z.string() } } },
        400: rpcErrors('no session id, or an unsupported protocol version'),
        406: rpcErrors('Accept does not list text/event-stream'),
        409: rpcErrors('the session already has a stream open'),
        ...refused,
      },
    },
    handler: async (req, reply) => {
      if (!acceptsAll(req, ['text/event-stream'])) {
        return rpcError(
          reply,
          406,
          -32000,
          'SERP_MCP_NOT_ACCEPTABLE',
          'Not Acceptable: Accept must list text/event-stream',
        );
      }
      const session = sessionOf(req, reply);
      if (session) return hand(req, reply, session.transport);
    },
  });

  r.delete('/mcp', {
    config: { limit: 'read' },
    schema: {
      ...common,
      operationId: 'mcpEndSession',
      summary: 'MCP Streamable HTTP: end the session',
      response: {
        200: z.null().describe('the session ended (no body)'),
        400: rpcErrors('no session id, or an unsupported protocol version'),
        ...refused,
      },
    },
    handler: async (req, reply) => {
      const session = sessionOf(req, reply);
      if (session) return hand(req, reply, session.transport);
    },
  });
};
