import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { apiKeyDecider } from '../../domain/apiKey/apiKey.js';
import { type MonitorCommand, type MonitorDefinition, monitorDecider } from '../../domain/monitor/monitor.js';
import { apiKeysProjection } from '../../projections/apiKeys/apiKeys.js';
import { monitorScheduleProjection, monitorsProjection } from '../../projections/monitors/monitors.js';
import { monitorQueries } from '../../projections/monitors/queries.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createProjector } from '../../services/projector/projector.js';

/**
 * What the read side knows of a key's monitors (docs/rank-tracking.md): each monitor as last changed, a key's list and
 * count (its tier's limit counts them), and what the scheduler reads: the monitors not paused and when each runs next.
 */
t.test('monitor views', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-monitor-views-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({
    eventStore,
    readModels,
    projections: [apiKeysProjection, monitorsProjection, monitorScheduleProjection],
  });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const handle = createCommandHandler(eventStore);
  const monitor = async (monitorId: string, command: MonitorCommand) => {
    const r = await handle(streams.monitor(monitorId), monitorDecider, command);
    if (r.position !== undefined) await projector.waitFor(r.position);
  };
  const at = '2026-12-07T09:15:00.000Z';
  const issued = await handle(streams.apiKey('k1'), apiKeyDecider, {
    type: 'IssueApiKey',
    keyId: 'k1',
    keyHash: 'h1',
    prefix: 'sk_aaaaa',
    tier: 'free',
    monthlyQuota: 100,
    rateLimitPerMin: 10,
    now: at,
  });
  await projector.waitFor(issued.position as number);
  const definition = (monitorId: string, schedule: MonitorDefinition['schedule']): MonitorDefinition => ({
    monitorId,
    keyId: 'k1',
    name: `Coffee ${monitorId}`,
    keywords: ['coffee', 'tea'],
    domains: ['mine.example'],
    search: { device: 'desktop' },
    depth: 10,
    schedule,
    backfill: false,
  });
  await monitor('mon_1', { type: 'CreateMonitor', ...definition('mon_1', 'daily'), now: at });
  await monitor('mon_2', { type: 'CreateMonitor', ...definition('mon_2', 'hourly'), now: at });

  const q = monitorQueries(readModels);
  t.match(
    q.byId('mon_1'),
    { name: 'Coffee mon_1', keywords: ['coffee', 'tea'], paused: false, createdAt: at },
    'a monitor',
  );
  t.same(
    q.ofKey('k1').map((m) => m.monitorId),
    ['mon_1', 'mon_2'],
    'the key’s monitors',
  );
  t.equal(q.countOfKey('k1'), 2, 'counted against its tier’s limit');
  t.match(
    q.scheduleOf('mon_1'),
    { schedule: 'daily', nextSlot: '2026-12-07T00:00:00.000Z' },
    'a new monitor is searched at once: its next slot is the one in progress',
  );
  t.same(q.dueCount(new Date('2026-12-07T09:30:00.000Z')), { monitors: 2, due: 2 }, 'both due now');

  await monitor('mon_2', {
    type: 'ChangeMonitor',
    monitorId: 'mon_2',
    keyId: 'k1',
    maxKeywords: 10,
    paused: true,
    addKeywords: ['milk'],
    now: at,
  });
  t.match(q.byId('mon_2'), { paused: true, keywords: ['coffee', 'tea', 'milk'] }, 'a change shows');
  t.same(
    q.scheduled().map((s) => s.monitorId),
    ['mon_1'],
    'a paused monitor is not scheduled',
  );
  t.same(q.dueCount(new Date('2026-12-07T09:30:00.000Z')), { monitors: 1, due: 1 }, 'nor due');
  await monitor('mon_1', { type: 'DeleteMonitor', monitorId: 'mon_1', keyId: 'k1', now: at });
  t.equal(q.byId('mon_1'), undefined, 'a deleted monitor is gone');
  t.equal(q.countOfKey('k1'), 1, 'and no longer counts');
});
