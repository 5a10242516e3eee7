import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { apiKeyDecider } from '../../domain/apiKey/apiKey.js';
import { usageDecider } from '../../domain/usage/usage.js';
import { apiKeysProjection } from '../../projections/apiKeys/apiKeys.js';
import { apiKeysQueries } from '../../projections/apiKeys/queries.js';
import { usageCountersQueries } from '../../projections/usageCounters/queries.js';
import { usageCountersProjection } from '../../projections/usageCounters/usageCounters.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * What a request's key is checked against (docs/api.md#limits): the key found by its HMAC, its tier and limits as last
 * changed, revoked for good once revoked; and the month's usage that `/v1/usage` and the compat `/account`
 * (`this_month_usage`, `last_hour_searches`, `this_hour_searches`) report.
 */
t.test('key views', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-key-views-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({
    eventStore,
    readModels,
    projections: [apiKeysProjection, usageCountersProjection],
  });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const handle = createCommandHandler(eventStore);
  const keys = apiKeysQueries(readModels);
  const usage = usageCountersQueries(readModels);
  const settled = async (r: { position?: number }) => {
    if (r.position !== undefined) await projector.waitFor(r.position);
  };

  await t.test('a key, by its hash, as its limits change and after it is revoked', async (t) => {
    const limits = { tier: 'free', monthlyQuota: 250, rateLimitPerMin: 10 };
    const at = '2026-12-07T10:00:00.000Z';
    await settled(
      await handle(streams.apiKey('key_a'), apiKeyDecider, {
        type: 'IssueApiKey',
        keyId: 'key_a',
        keyHash: 'hmac_a',
        prefix: 'sk_aaaa',
        now: at,
        ...limits,
      }),
    );
    t.match(
      keys.byHash('hmac_a'),
      { keyId: 'key_a', status: 'active', tier: 'free', monthlyQuota: 250 },
      'found by hash',
    );
    t.equal(keys.byHash('hmac_b'), undefined, 'another hash finds nothing');
    await settled(
      await handle(streams.apiKey('key_a'), apiKeyDecider, {
        type: 'ChangeApiKeyLimits',
        keyId: 'key_a',
        now: at,
        tier: 'pro',
        monthlyQuota: 5000,
      }),
    );
    t.match(
      keys.byId('key_a'),
      { tier: 'pro', monthlyQuota: 5000, rateLimitPerMin: 10 },
      'changed limits, the rest kept',
    );
    await settled(
      await handle(streams.apiKey('key_a'), apiKeyDecider, { type: 'RevokeApiKey', keyId: 'key_a', now: at }),
    );
    t.match(keys.byHash('hmac_a'), { status: 'revoked', revokedAt: at }, 'revoked: still found, and refused by status');
    t.same(
      keys.all().map((k) => k.keyId),
      ['key_a'],
      'listed for the dashboard',
    );
  });

  await t.test('a month’s usage, and the last hour’s searches', async (t) => {
    const month = '202612';
    const reserve = (jobId: string, now: string) =>
      handle(streams.usage('key_a', month), usageDecider, {
        type: 'ReserveQuota',
        keyId: 'key_a',
        month,
        jobId,
        monthlyQuota: 100,
        now,
      });
    await reserve('j1', '2026-12-07T08:30:00.000Z');
    await reserve('j2', '2026-12-07T09:15:00.000Z');
    await reserve('j3', '2026-12-07T10:05:00.000Z');
    await settled(
      await handle(streams.usage('key_a', month), usageDecider, {
        type: 'ReleaseQuota',
        keyId: 'key_a',
        month,
        jobId: 'j3',
        reason: 'failed',
        now: '2026-12-07T10:06:00.000Z',
      }),
    );
    t.equal(usage.used('key_a', month), 2, 'three reserved, one released: two count against the quota');
    t.equal(usage.used('key_b', month), 0, 'a key that searched nothing has used nothing');
    t.same(
      usage.recent('key_a', [month], new Date('2026-12-07T10:10:00.000Z')),
      { lastHour: 2, thisHour: 1 },
      'submitted in the last 60 minutes: 09:15 and 10:05 (a released search was still submitted); in the 10 o’clock hour: one',
    );
  });
});
