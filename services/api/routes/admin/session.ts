import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ReadModelQueries } from '../../../../projections/index.js';
import { sessionHashOf } from '../../../application/adminSessions.js';

/** the dashboard's sign-in cookie: HttpOnly, SameSite=Strict, scoped to /admin, signed, 12 hours */
export const SESSION_COOKIE = 'serp_admin';
export const SESSION_MS = 12 * 3_600_000;

/**
 * Cookie signing secret for the admin scope, derived from the admin token: a new SERP_ADMIN_TOKEN signs every
 * dashboard session (and CSRF secret) out.
 */
export const adminCookieSecret = (adminToken: string) =>
  createHash('sha256').update(`serp-admin-cookie\u0000${adminToken}`).digest('base64url');

export const tokenMatches = (adminToken: string, given: string) => {
  const a = Buffer.from(adminToken);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
};

export const cookieOptions = {
  path: '/admin',
  httpOnly: true,
  sameSite: 'strict' as const,
  // Secure whenever the request came over https (behind a proxy: with trustProxy)
  secure: 'auto' as const,
  signed: true,
};

/** the cookie of a session just started: its random id, signed (the token itself never leaves the form post) */
export const setSessionCookie = (reply: FastifyReply, sessionId: string) =>
  reply.setCookie(SESSION_COOKIE, sessionId, { ...cookieOptions, maxAge: SESSION_MS / 1000 });

export const clearSessionCookies = (reply: FastifyReply) =>
  reply.clearCookie(SESSION_COOKIE, cookieOptions).clearCookie('_csrf', cookieOptions);

/** the session id a request's cookie carries, when its signature holds */
export const sessionIdOf = (req: FastifyRequest): string | undefined => {
  const raw = req.cookies[SESSION_COOKIE];
  if (!raw) return undefined;
  const { valid, value } = req.unsignCookie(raw);
  return valid && value !== null && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
};

/**
 * Whether a request is signed in: its cookie names a session the log has started and not ended, and that has not
 * expired. Sessions live in the log (docs/security.md), so a sign-out on one api process ends the session on all of
 * them; a session started a moment ago on another process is looked up again once this one has caught up.
 */
export const createSessionCheck =
  (queries: ReadModelQueries, catchUp?: () => Promise<void>, now = Date.now) =>
  async (req: FastifyRequest): Promise<boolean> => {
    const id = sessionIdOf(req);
    if (!id) return false;
    const hash = sessionHashOf(id);
    let doc = queries.adminSessions.byHash(hash);
    if (!doc && catchUp) {
      await catchUp();
      doc = queries.adminSessions.byHash(hash);
    }
    return doc !== undefined && Date.parse(doc.expiresAt) > now();
  };
export type SessionCheck = ReturnType<typeof createSessionCheck>;
