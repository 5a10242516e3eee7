import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { DomainError, errorCodes } from '../../domain/kernel/errors.js';
import { WrongExpectedVersionError } from '../ports/eventStore.js';
import { StoreUnavailableError } from '../ports/unavailable.js';

/** An error the api answers with on purpose: a status, a stable code and a `detail` a human can act on. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

const domainStatus: Record<string, number> = {
  [errorCodes.quotaExceeded]: 429,
  [errorCodes.keyNotFound]: 404,
  [errorCodes.keyRevoked]: 409,
  [errorCodes.keyExists]: 409,
  [errorCodes.jobNotFound]: 404,
  [errorCodes.jobNotTerminal]: 409,
  [errorCodes.monitorNotFound]: 404,
  [errorCodes.monitorInvalid]: 422,
  [errorCodes.monitorLimit]: 422,
  [errorCodes.runNotFound]: 404,
  [errorCodes.webhookNotFound]: 404,
  [errorCodes.webhookInvalid]: 422,
  [errorCodes.webhookLimit]: 422,
  [errorCodes.deliveryNotFound]: 404,
  [errorCodes.runInProgress]: 409,
  [errorCodes.replayLimit]: 429,
};

interface Issue {
  path: string;
  message: string;
}

const issuesOf = (err: FastifyError): Issue[] =>
  (err.validation ?? []).map((v) => {
    const raw = v as unknown as {
      instancePath?: string;
      path?: Array<string | number>;
      message?: string;
      params?: { issue?: { path?: Array<string | number> } };
    };
    const segs = raw.params?.issue?.path ?? raw.path;
    const path = segs ? segs.join('.') : (raw.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
    return { path, message: raw.message ?? 'invalid value' };
  });

const describe = (context: string | undefined, issues: Issue[]) => {
  const first = issues[0];
  if (!first) return 'invalid request';
  const msg = first.message.replace(/^Invalid input: /, '');
  // a message that already starts with its field's name ("priority must be …") is not prefixed with it again
  const named = first.path !== '' && msg.startsWith(`${first.path.split('.').at(-1)} `);
  const where = [context === 'body' ? '' : context, named ? '' : first.path].filter(Boolean).join(' ');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return `${where ? `${where}: ` : ''}${msg}${more}`;
};

const send = (
  reply: FastifyReply,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) => reply.code(status).headers(headers).type('application/json').send(body);

/** Seconds until the first of next month (UTC), when a monthly quota starts again. */
export const secondsToNextMonth = (now = new Date()) =>
  Math.max(1, Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000));

/** Never echo more than this much of what a client sent (a 4 kB path, a huge header). */
export const clip = (text: string, max = 100) => (text.length > max ? `${text.slice(0, max)}…` : text);

const patterns = new WeakMap<FastifyInstance, Array<{ method: string; re: RegExp }>>();

/** `/v1/search/:job_id` → a RegExp for the concrete paths it serves */
const patternOf = (url: string) =>
  new RegExp(
    `^${url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}/?$`,
  );

/**
 * Remembers every route as it is added, so that a known path asked with the wrong method is a 405 with `Allow`
 * rather than a 404 (docs/api.md#errors). Must run before the routes are registered.
 */
export const installMethodNotAllowed = (app: FastifyInstance) => {
  const list: Array<{ method: string; re: RegExp }> = [];
  patterns.set(app, list);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) list.push({ method: method.toUpperCase(), re: patternOf(route.url) });
  });
};

const allowedFor = (app: FastifyInstance, path: string): string[] => {
  const found = new Set<string>();
  for (const { method, re } of patterns.get(app) ?? []) if (re.test(path)) found.add(method);
  if (found.has('GET')) found.add('HEAD');
  return [...found].sort();
};

/**
 * One error handler (docs/style.md#shapes-we-copy): every error becomes `{detail, code}`; only true server faults are
 * 5xx.
 */
/**
 * A store that could not answer (a distributed deployment re-electing a NATS leader, a KurrentDB node away) or a
 * stream so contended that the command handler gave up: nothing was decided, so the caller may safely retry.
 */
export const unavailableOf = (err: unknown): ApiError | undefined =>
  err instanceof StoreUnavailableError || err instanceof WrongExpectedVersionError
    ? new ApiError(
        503,
        'SERP_API_UNAVAILABLE',
        'the service cannot reach its event store or queue right now (nothing was recorded): retry in a few seconds',
        { 'Retry-After': '2' },
      )
    : undefined;

/** Every route that answers with a schema also documents the 503 of a store that could not answer. */
export const documentUnavailable = (app: FastifyInstance, bodyFor: (url: string) => unknown) => {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    const body = bodyFor(route.url);
    if (response && body && !response[503] && !response['5xx']) response[503] = body;
  });
};

/** Routes whose answers a scope-wide hook can refuse with 429 (a per-address ceiling) say so in the OpenAPI. */
export const documentThrottled = (app: FastifyInstance, bodyFor: (url: string) => unknown) => {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    const body = bodyFor(route.url);
    if (response && body && !response[429] && !response['4xx']) response[429] = body;
  });
};

/**
 * What any route may answer before its handler runs, documented on each: a body that is not JSON (400), too large
 * (413) or of another type (415) wherever a body is accepted, and a request its schema refuses (422) wherever one
 * is checked. The error handler below sends them all as `body` ({detail, code}).
 */
export const documentRequestErrors = (app: FastifyInstance, body: unknown) => {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!response) return;
    const methods = [route.method].flat();
    const add = (status: number) => {
      if (!response[status]) response[status] = body;
    };
    if (methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) for (const s of [400, 413, 415]) add(s);
    const schema = route.schema as { body?: unknown; querystring?: unknown; params?: unknown; headers?: unknown };
    if ((schema.body || schema.querystring || schema.params || schema.headers) && !route.validatorCompiler) add(422);
  });
};

export const installErrorHandler = (app: FastifyInstance) => {
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allow = allowedFor(app, path);
    if (allow.length > 0 && !allow.includes(req.method)) {
      return send(
        reply,
        405,
        { detail: `${req.method} is not allowed here: use ${allow.join(', ')}`, code: 'SERP_API_METHOD_NOT_ALLOWED' },
        { allow: allow.join(', ') },
      );
    }
    return send(reply, 404, { detail: `no route for ${req.method} ${clip(path)}`, code: 'SERP_API_NOT_FOUND' });
  });
  app.setErrorHandler((thrown: FastifyError, req, reply) => {
    const err = (unavailableOf(thrown) as FastifyError | undefined) ?? thrown;
    if (err instanceof ApiError)
      return send(reply, err.statusCode, { detail: err.detail, code: err.code }, err.headers);
    if (err instanceof DomainError) {
      const later = (err as DomainError).retryAfterSeconds;
      // a monthly quota comes back on the first of next month (UTC): say when, as every 429 here does
      const retry =
        err.code === errorCodes.quotaExceeded
          ? { 'Retry-After': String(secondsToNextMonth()) }
          : later !== undefined
            ? { 'Retry-After': String(later) }
            : undefined;
      return send(reply, domainStatus[err.code] ?? 422, { detail: err.message, code: err.code }, retry);
    }
    if (err.validation) {
      const errors = issuesOf(err);
      return send(reply, 422, {
        detail: describe(err.validationContext, errors),
        code: 'SERP_API_INVALID_REQUEST',
        errors,
      });
    }
    switch (err.code) {
      case 'FST_CSRF_MISSING_SECRET':
      case 'FST_CSRF_INVALID_TOKEN':
        return send(reply, 403, {
          detail:
            "the dashboard's form token (CSRF) is missing or stale: reload /admin and try again (scripts: send the admin token as a Bearer header instead of the cookie)",
          code: 'SERP_ADMIN_CSRF',
        });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(reply, 415, {
          detail: `unsupported content type "${req.headers['content-type'] ?? ''}": send JSON with Content-Type: application/json`,
          code: 'SERP_API_UNSUPPORTED_MEDIA_TYPE',
        });
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(reply, 413, { detail: 'request body too large (limit 1 MiB)', code: 'SERP_API_BODY_TOO_LARGE' });
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(reply, 400, {
          detail: 'the JSON body is empty: send an object such as {"keyword":"coffee"}',
          code: 'SERP_API_INVALID_JSON',
        });
      case 'SERP_API_FORBIDDEN_KEY':
        return send(reply, 400, { detail: err.message, code: err.code });
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return send(reply, 400, {
          detail: `the body is not valid JSON: ${err.message}`,
          code: 'SERP_API_INVALID_JSON',
        });
    }
    if (err.statusCode === 400 && err instanceof SyntaxError) {
      return send(reply, 400, { detail: `the body is not valid JSON: ${err.message}`, code: 'SERP_API_INVALID_JSON' });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return send(reply, err.statusCode, {
        detail: clip(err.message, 200),
        code: err.code ? `SERP_API_${err.code}` : 'SERP_API_BAD_REQUEST',
      });
    }
    req.log.error({ err }, 'unhandled error');
    return send(reply, 500, { detail: 'internal error: retry with backoff', code: 'SERP_API_INTERNAL' });
  });
};
