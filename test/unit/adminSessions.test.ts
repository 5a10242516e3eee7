import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { adminSessionDecider } from '../../domain/adminSession/adminSession.js';
import { deciderSpec } from '../../domain/kernel/givenWhenThen.js';
import { adminSessionsProjection } from '../../projections/adminSessions/adminSessions.js';
import { adminSessionsQueries } from '../../projections/adminSessions/queries.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createAdminSessionCommands, sessionHashOf } from '../../services/application/adminSessions.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * Dashboard sessions kept in the log (docs/security.md): signing in records a session that every api process finds by
 * its cookie's hash; signing out ends it, so a cookie copied before is refused afterwards.
 */
const hash = 'a'.repeat(64);
const now = '2026-12-07T10:00:00.000Z';
const started = {
  type: 'AdminSessionStarted',
  data: { sessionHash: hash, expiresAt: '2026-12-07T22:00:00.000Z', startedAt: now },
} as const;

t.test('admin sessions › started once, ended at most once', async (t) => {
  const spec = deciderSpec(adminSessionDecider);
  const start = { type: 'StartAdminSession', sessionHash: hash, expiresAt: started.data.expiresAt, now } as const;
  const end = { type: 'EndAdminSession', sessionHash: hash, now } as const;
  t.same(spec.given([]).when(start), [started], 'a sign-in starts a session');
  t.same(spec.given([started]).when(start), [], 'the same session started again: nothing');
  const ended = { type: 'AdminSessionEnded', data: { sessionHash: hash, endedAt: now } } as const;
  t.same(spec.given([started]).when(end), [ended], 'a sign-out ends it');
  t.same(spec.given([started, ended]).when(end), [], 'a second sign-out changes nothing');
  t.same(spec.given([]).when(end), [], 'nor does ending a session never started');
});

t.test('admin sessions › a sign-out is seen by every reader of the log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-admin-sessions-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({ eventStore, readModels, projections: [adminSessionsProjection] });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = new Date('2026-12-07T10:00:00.000Z');
  const sessions = createAdminSessionCommands({ handle: createCommandHandler(eventStore), now: () => clock });
  const queries = adminSessionsQueries(readModels);

  const { sessionId, position } = await sessions.start(12 * 3_600_000);
  await projector.waitFor(position as number);
  t.match(sessionId, /^[A-Za-z0-9_-]{43}$/, 'the cookie gets 32 random bytes');
  const found = queries.byHash(sessionHashOf(sessionId));
  t.same(
    found,
    {
      sessionHash: sessionHashOf(sessionId),
      expiresAt: '2026-12-07T22:00:00.000Z',
      startedAt: '2026-12-07T10:00:00.000Z',
    },
    'the session is found by its hash, with its expiry; the id itself is in no event',
  );
  t.notOk(JSON.stringify(await eventStore.readAll()).includes(sessionId), 'the log never holds the cookie’s id');

  const other = await sessions.start(3_600_000);
  const ended = await sessions.end(sessionId);
  await projector.waitFor(ended.position as number);
  t.equal(queries.byHash(sessionHashOf(sessionId)), undefined, 'signed out: the cookie finds no session');
  t.ok(queries.byHash(sessionHashOf(other.sessionId)), 'another session is left alone');
  t.same((await sessions.end(sessionId)).position, undefined, 'signing out again appends nothing');
});
