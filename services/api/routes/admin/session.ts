import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** the dashboard's sign-in cookie: HttpOnly, SameSite=Strict, scoped to /admin, signed, 12 hours */
export const SESSION_COOKIE = 'serp_admin';
const SESSION_MS = 12 * 3_600_000;

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

/** signs the admin in: the cookie holds only its expiry, signed (the token itself never leaves the form post) */
export const startSession = (reply: FastifyReply, now = Date.now()) =>
  reply.setCookie(SESSION_COOKIE, String(now + SESSION_MS), { ...cookieOptions, maxAge: SESSION_MS / 1000 });

export const endSession = (reply: FastifyReply) =>
  reply.clearCookie(SESSION_COOKIE, cookieOptions).clearCookie('_csrf', cookieOptions);

/** a signed, unexpired session cookie */
export const hasSession = (req: FastifyRequest, now = Date.now()) => {
  const raw = req.cookies[SESSION_COOKIE];
  if (!raw) return false;
  const { valid, value } = req.unsignCookie(raw);
  return valid && value !== null && /^\d{1,15}$/.test(value) && Number(value) > now;
};
