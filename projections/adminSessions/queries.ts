import type { DocReader } from '../projection.js';
import { type AdminSessionDoc, adminSessionsProjection } from './adminSessions.js';

export const adminSessionsQueries = (docs: DocReader) => ({
  /** the session, while it has not been ended (its expiry is the caller's to compare) */
  byHash: (sessionHash: string) => docs.get<AdminSessionDoc>(adminSessionsProjection.name, sessionHash),
});
