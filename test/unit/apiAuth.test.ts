import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { apiKeyDecider } from '../../domain/apiKey/apiKey.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createMemoryRateLimiter } from '../../services/adapters/rateLimiter/memory.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createAdminGuard, createAuthenticator, createAuthFailureGate, keyCheck } from '../../services/api/auth.js';
import { installErrorHandler } from '../../services/api/errors.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { hashKey } from '../../services/application/keys.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * How a request proves who it is (docs/api.md, docs/security.md#credentials): an API key in
 * X-API-Key or as a Bearer token (and `api_key` in the query on the compat surface only), refused once revoked; the
 * admin token on the admin routes; and an address that keeps sending bad credentials is refused for the rest of the
 * minute, whatever it sends then.
 */
const pepper = 'a key pepper of sixteen or more';
const ADMIN = 'an admin token of the server';

t.test('api authentication', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-auth-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({ eventStore, readModels, projections: allProjections });
  await projector.start();
  const handle = createCommandHandler(eventStore);
  const keyCommand = async (command: Parameters<typeof apiKeyDecider.decide>[0] & { keyId: string }) => {
    const r = await handle(streams.apiKey(command.keyId), apiKeyDecider, command);
    if (r.position !== undefined) await projector.waitFor(r.position);
  };
  const issue = (keyId: string, raw: string) =>
    keyCommand({
      type: 'IssueApiKey',
      keyId,
      keyHash: hashKey(raw, pepper),
      prefix: raw.slice(0, 8),
      tier: 'free',
      monthlyQuota: 100,
      rateLimitPerMin: 10,
      now: '2026-12-07T10:00:00.000Z',
    });
  await issue('key_a', 'sk_live_aaaaaaaaaaaaaaaa');

  let now = Date.parse('2026-12-07T10:00:30.000Z');
  const limiter = createMemoryRateLimiter(() => now);
  let caughtUp = 0;
  const authenticate = createAuthenticator(readModelQueries(readModels), pepper, async () => {
    caughtUp += 1;
    await issue('key_late', 'sk_live_minted_elsewhere');
  });
  const authFailures = createAuthFailureGate(limiter, 3, () => now);
  const app = Fastify();
  installErrorHandler(app);
  await app.register(async (v1) => {
    v1.addHook('onRequest', keyCheck({ authenticate, authFailures, limiter }, false));
    v1.get('/v1/me', async (req) => ({ key: req.apiKey?.keyId }));
  });
  await app.register(async (compat) => {
    compat.addHook('onRequest', keyCheck({ authenticate, authFailures, limiter }, true));
    compat.get('/search.json', async (req) => ({ key: req.apiKey?.keyId }));
  });
  const adminGuard = createAdminGuard(ADMIN, authFailures);
  app.get('/admin/api/x', { onRequest: adminGuard }, async () => ({ ok: true }));
  await app.ready();
  t.teardown(async () => {
    await app.close();
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const get = (url: string, headers: Record<string, string> = {}, ip = '127.0.0.1') =>
    app.inject({ url, headers, remoteAddress: ip });

  await t.test('where the key may be', async (t) => {
    t.same((await get('/v1/me', { 'x-api-key': 'sk_live_aaaaaaaaaaaaaaaa' })).json(), { key: 'key_a' }, 'X-API-Key');
    t.same(
      (await get('/v1/me', { authorization: 'Bearer sk_live_aaaaaaaaaaaaaaaa' })).json(),
      { key: 'key_a' },
      'Bearer',
    );
    const query = await get('/v1/me?api_key=sk_live_aaaaaaaaaaaaaaaa', {}, '10.0.0.1');
    t.match(
      query.json(),
      { code: 'SERP_AUTH_MISSING_KEY', detail: /X-API-Key header or as Authorization: Bearer/ },
      '/v1 takes no key in the URL',
    );
    t.same(
      (await get('/search.json?api_key=sk_live_aaaaaaaaaaaaaaaa')).json(),
      { key: 'key_a' },
      'the compat surface does',
    );
    const none = await get('/search.json', {}, '10.0.0.2');
    t.equal(none.statusCode, 401, 'no key: 401');
    t.match(none.json().detail, /api_key query parameter/, 'and the compat surface says where to put it');
  });

  await t.test('a key minted on another process a moment ago', async (t) => {
    const res = await get('/v1/me', { 'x-api-key': 'sk_live_minted_elsewhere' });
    t.same(res.json(), { key: 'key_late' }, 'an unknown key is looked up again once the read models caught up');
    t.equal(caughtUp, 1, 'once');
  });

  await t.test('a revoked key', async (t) => {
    await keyCommand({ type: 'RevokeApiKey', keyId: 'key_a', now: '2026-12-07T10:00:00.000Z' });
    const res = await get('/v1/me', { 'x-api-key': 'sk_live_aaaaaaaaaaaaaaaa' }, '10.0.0.3');
    t.same([res.statusCode, res.json().code], [401, 'SERP_AUTH_REVOKED_KEY'], 'is refused as revoked');
  });

  await t.test('the admin token', async (t) => {
    t.equal((await get('/admin/api/x', { authorization: `Bearer ${ADMIN}` })).statusCode, 200, 'the right token');
    const wrong = await get('/admin/api/x', { authorization: 'Bearer guess' }, '10.0.0.4');
    t.same([wrong.statusCode, wrong.json().code], [401, 'SERP_ADMIN_UNAUTHORIZED'], 'a wrong one');
    t.equal((await get('/admin/api/x', { 'x-api-key': ADMIN }, '10.0.0.4')).statusCode, 401, 'only as a Bearer token');
  });

  await t.test('an address guessing credentials', async (t) => {
    const ip = '10.9.9.9';
    const codes = [];
    for (const key of ['sk_guess_1', 'sk_guess_2', 'sk_guess_3', 'sk_guess_4']) {
      codes.push((await get('/v1/me', { 'x-api-key': key }, ip)).statusCode);
    }
    t.same(codes, [401, 401, 401, 429], 'three bad keys a minute, then 429');
    const refused = await get('/admin/api/x', { authorization: `Bearer ${ADMIN}` }, ip);
    t.equal(refused.statusCode, 429, 'refused for the rest of the minute, right credentials or not');
    t.equal(refused.headers['retry-after'], '30', 'saying when to come back');
    t.equal(
      (await get('/admin/api/x', { authorization: `Bearer ${ADMIN}` })).statusCode,
      200,
      'other addresses are not',
    );
    now += 30_000;
    t.equal(
      (await get('/admin/api/x', { authorization: `Bearer ${ADMIN}` }, ip)).statusCode,
      200,
      'the next minute it may',
    );
  });
});
