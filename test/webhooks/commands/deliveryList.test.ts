import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ApiKeyDoc } from '../../../projections/apiKeys/apiKeys.js';
import { readModelQueries } from '../../../projections/index.js';
import type { DeliveryDoc, WebhookDoc } from '../../../projections/webhooks/webhooks.js';
import { createSqliteReadModelStore } from '../../../services/adapters/readModel/sqlite.js';
import { createWebhookService } from '../../../services/webhooks/commands/webhooks.js';

/**
 * An endpoint's delivery list is filtered and paged by the read model store (docs/webhooks.md): `?limit=1` reads one
 * document, whatever the endpoint holds, on the thread that answers HTTP; the answer is what filtering the whole list
 * in memory gave.
 */
t.test('deliveries › paged in the store, with the answers of the whole list filtered', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-deliveries-'));
  const store = createSqliteReadModelStore(join(dir, 'read.db'));
  t.teardown(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const hook: WebhookDoc = {
    webhookId: 'wh_1',
    keyId: 'key_1',
    url: 'https://hooks.example.com/x',
    events: ['search.completed'],
    disabled: false,
    secretSeed: 'seed',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    createdPosition: 1,
  };
  const statuses = ['delivered', 'pending', 'failed'] as const;
  const all: DeliveryDoc[] = Array.from({ length: 9_900 }, (_, i) => ({
    deliveryId: `dlv_${String(i).padStart(12, '0')}`,
    webhookId: 'wh_1',
    messageId: `msg_${i}`,
    eventType: 'search.completed',
    status: statuses[i % 7 === 0 ? 2 : i % 3 === 0 ? 1 : 0],
    scheduledAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    attempts: [[1, new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), 200, 12, '']],
  }));
  store.commit(
    [
      { view: 'webhooks', id: hook.webhookId, doc: hook, lookup: hook.keyId },
      ...all.map((d) => ({ view: 'webhookDeliveries', id: d.deliveryId, doc: d, lookup: d.webhookId })),
    ],
    'test',
    1,
  );
  // counts the documents the store hands out
  let read = 0;
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const out = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (Array.isArray(out)) read += out.length;
        else if (out !== undefined) read += 1;
        return out;
      };
    },
  });
  const service = createWebhookService({
    queries: readModelQueries(counted),
    handle: (() => {
      throw new Error('no writes here');
    }) as never,
    projected: async () => undefined,
    pepper: 'p'.repeat(32),
    safety: { allowHttp: false, allowPrivate: false },
    resolve: async () => [],
  });
  const key = { keyId: 'key_1' } as ApiKeyDoc;

  read = 0;
  const one = service.deliveries(key, 'wh_1', { limit: 1 });
  t.equal(one.length, 1);
  t.equal(one[0]?.delivery_id, all[all.length - 1]?.deliveryId, 'the newest');
  t.ok(read <= 2, `?limit=1 read ${read} documents (the endpoint and one delivery), not ${all.length}`);

  const memory = (status: string | undefined, since: string | undefined, limit: number) =>
    all
      .filter((d) => (!status || d.status === status) && (!since || Date.parse(d.scheduledAt) >= Date.parse(since)))
      .slice(-limit)
      .map((d) => d.deliveryId);
  for (const [status, since, limit] of [
    [undefined, undefined, 100],
    ['failed', undefined, 50],
    ['pending', '2026-01-05T00:00:00Z', 1000],
    ['delivered', '2026-01-07T12:00:00.000Z', 20],
    [undefined, '2030-01-01T00:00:00Z', 10],
  ] as const) {
    read = 0;
    const page = service.deliveries(key, 'wh_1', { status, since, limit }).map((d) => d.delivery_id);
    t.same(page, memory(status, since, limit), `status ${status ?? 'any'}, since ${since ?? '-'}, limit ${limit}`);
    t.ok(read <= limit + 1, `read ${read} documents for a page of ${page.length}`);
  }
});
