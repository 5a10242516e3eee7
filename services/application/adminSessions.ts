import { createHash, randomBytes } from 'node:crypto';
import { streams } from '../../contracts/events.js';
import { adminSessionDecider } from '../../domain/adminSession/adminSession.js';
import type { CommandContext, CommandHandler } from '../ports/commandHandler.js';

/** The SHA-256 of a session id, as the log and the read model know it (the id lives only in the cookie). */
export const sessionHashOf = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

/**
 * Dashboard sessions kept in the log (docs/security.md): signing in records a session, signing out ends it, so a
 * cookie copied before the sign-out is refused afterwards on every api process, as a revoked key is.
 */
export const createAdminSessionCommands = (deps: { handle: CommandHandler; now?: () => Date }) => {
  const now = () => deps.now?.() ?? new Date();
  return {
    /** a new session of `ttlMs`: its id (for the cookie only) and where its event is in the log */
    async start(ttlMs: number, ctx: CommandContext = {}) {
      const sessionId = randomBytes(32).toString('base64url');
      const sessionHash = sessionHashOf(sessionId);
      const at = now();
      const res = await deps.handle(
        streams.adminSession(sessionHash),
        adminSessionDecider,
        {
          type: 'StartAdminSession',
          sessionHash,
          expiresAt: new Date(at.getTime() + ttlMs).toISOString(),
          now: at.toISOString(),
        },
        { ...ctx, newStream: true },
      );
      return { sessionId, position: res.position };
    },
    async end(sessionId: string, ctx: CommandContext = {}) {
      const sessionHash = sessionHashOf(sessionId);
      const res = await deps.handle(
        streams.adminSession(sessionHash),
        adminSessionDecider,
        { type: 'EndAdminSession', sessionHash, now: now().toISOString() },
        ctx,
      );
      return { position: res.position };
    },
  };
};
export type AdminSessionCommands = ReturnType<typeof createAdminSessionCommands>;
