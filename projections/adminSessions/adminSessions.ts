import type { Projection } from '../projection.js';

/** A live dashboard session, by the SHA-256 of its cookie's id; an ended session's document is deleted. */
export interface AdminSessionDoc {
  sessionHash: string;
  expiresAt: string;
  startedAt: string;
}

export const adminSessionsProjection: Projection<AdminSessionDoc> = {
  name: 'adminSessions',
  idOf: (e) => (e.type === 'AdminSessionStarted' || e.type === 'AdminSessionEnded' ? e.data.sessionHash : undefined),
  evolve(doc, e) {
    switch (e.type) {
      case 'AdminSessionStarted': {
        const { sessionHash, expiresAt, startedAt } = e.data;
        return { sessionHash, expiresAt, startedAt };
      }
      case 'AdminSessionEnded':
        return null;
      default:
        return doc ?? null;
    }
  },
};
