import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { z } from 'zod';
import { DomainEvent } from '../../contracts/events.js';
import { SearchRequest } from '../../contracts/search.js';
import type { Decider } from '../../domain/kernel/decider.js';
import { errorCodes } from '../../domain/kernel/errors.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createCommandHandler } from '../../services/application/commandHandler.js';
import { createKeyCommands, KeyInputError } from '../../services/application/keys.js';

/**
 * The log is immutable, so nothing that fails validation may reach it: every event type's invalid forms (a member
 * missing, of the wrong kind, out of range), replayed through the command handler that every command goes through,
 * leave the log as it was; so do the key commands' unknown tiers, prototype names included.
 */

const at = '2026-11-21T10:00:00.000Z';
const ref = { key: 'raw/x.html.gz', sha256: 'a'.repeat(64), bytes: 10 };
const valid: DomainEvent[] = [
  {
    type: 'ApiKeyIssued',
    data: {
      keyId: 'key_1',
      keyHash: 'h',
      prefix: 'sk_12345',
      tier: 'free',
      monthlyQuota: 250,
      rateLimitPerMin: 10,
      issuedAt: at,
    },
  },
  { type: 'ApiKeyRevoked', data: { keyId: 'key_1', revokedAt: at } },
  { type: 'ApiKeyLimitsChanged', data: { keyId: 'key_1', tier: 'pro', changedAt: at } },
  { type: 'QuotaReserved', data: { keyId: 'key_1', month: '202611', jobId: 'j1', reservedAt: at } },
  { type: 'QuotaReleased', data: { keyId: 'key_1', month: '202611', jobId: 'j1', reason: 'failed', releasedAt: at } },
  {
    type: 'SearchSubmitted',
    data: {
      jobId: 'j1',
      keyId: 'key_1',
      request: SearchRequest.parse({ keyword: 'coffee' }),
      cacheKey: 'c',
      charged: true,
      month: '202611',
      submittedAt: at,
    },
  },
  { type: 'SearchAnsweredFromCache', data: { jobId: 'j1', sourceJobId: 'j0', answeredAt: at } },
  { type: 'CrawlStarted', data: { jobId: 'j1', attempt: 1, worker: 'w', startedAt: at } },
  {
    type: 'CrawlCompleted',
    data: {
      jobId: 'j1',
      status: 'done',
      pages: [{ start: 0, url: 'u', status: 200, fetchedAt: at, organicCount: 10, fetcher: 'http' }],
      resultRef: ref,
      rawHtmlRef: ref,
      parserVersion: '1',
      cacheKey: 'c',
      blocks: 0,
      completedAt: at,
    },
  },
  {
    type: 'CrawlFailed',
    data: { jobId: 'j1', attempt: 1, reason: 'r', failure: { code: 'SERP_CRAWL_BLOCKED' }, final: true, failedAt: at },
  },
  { type: 'SearchReparsed', data: { jobId: 'j1', parserVersion: '2', resultRef: ref, reparsedAt: at } },
  { type: 'SearchPurged', data: { jobId: 'j1', cacheKey: 'c', blobs: ['b'], purgedAt: at } },
  {
    type: 'MonitorCreated',
    data: {
      monitorId: 'm1',
      keyId: 'key_1',
      name: 'n',
      keywords: ['coffee'],
      domains: ['example.com'],
      search: { device: 'desktop' },
      depth: 100,
      schedule: 'daily',
      backfill: false,
      createdAt: at,
    },
  },
  { type: 'MonitorChanged', data: { monitorId: 'm1', paused: true, changedAt: at } },
  { type: 'MonitorDeleted', data: { monitorId: 'm1', deletedAt: at } },
  {
    type: 'MonitorRunStarted',
    data: {
      runId: 'r1',
      monitorId: 'm1',
      keyId: 'key_1',
      trigger: 'manual',
      keywords: ['coffee'],
      domains: ['example.com'],
      search: { device: 'desktop' },
      depth: 100,
      noCache: true,
      startAt: at,
      intervalMs: 0,
      startedAt: at,
    },
  },
  {
    type: 'MonitorKeywordChecked',
    data: {
      runId: 'r1',
      monitorId: 'm1',
      keyword: 'coffee',
      jobId: 'j1',
      checkedAt: at,
      ok: true,
      ranks: [{ domain: 'example.com', position: 3, url: 'https://example.com/', features: [] }],
      recordedAt: at,
    },
  },
  {
    type: 'MonitorKeywordsSkipped',
    data: { runId: 'r1', monitorId: 'm1', keywords: ['coffee'], reason: 'quota_exhausted', skippedAt: at },
  },
  {
    type: 'MonitorRunCompleted',
    data: {
      runId: 'r1',
      monitorId: 'm1',
      keyId: 'key_1',
      trigger: 'manual',
      checked: 1,
      failed: 0,
      skipped: 0,
      completedAt: at,
    },
  },
  { type: 'AdminSessionStarted', data: { sessionHash: 'a'.repeat(64), expiresAt: at, startedAt: at } },
  { type: 'AdminSessionEnded', data: { sessionHash: 'a'.repeat(64), endedAt: at } },
  {
    type: 'MonitorAlertRaised',
    data: {
      alertId: 'a1',
      kind: 'moved',
      keyword: 'coffee',
      domain: 'example.com',
      fromPosition: 9,
      toPosition: 3,
      at,
      runId: 'r1',
      monitorId: 'm1',
      keyId: 'key_1',
      raisedAt: at,
    },
  },
  {
    type: 'WebhookCreated',
    data: {
      webhookId: 'wh1',
      keyId: 'key_1',
      url: 'https://example.com/hook',
      events: ['search.completed'],
      secretSeed: 's1',
      createdAt: at,
    },
  },
  { type: 'WebhookChanged', data: { webhookId: 'wh1', disabled: true, changedAt: at } },
  {
    type: 'WebhookSecretRotated',
    data: { webhookId: 'wh1', secretSeed: 's2', previousSeed: 's1', previousValidUntil: at, rotatedAt: at },
  },
  { type: 'WebhookDeleted', data: { webhookId: 'wh1', deletedAt: at } },
  { type: 'WebhookReplayRequested', data: { webhookId: 'wh1', replayId: 'rp1', since: at, requestedAt: at } },
  {
    type: 'WebhookReplayScheduled',
    data: {
      replayId: 'rpl_0195a3c4b5d6e1f2a3b4c5d6',
      webhookId: 'wh1',
      keyId: 'key_1',
      since: at,
      requestedAt: at,
      scheduledAt: at,
      fromPosition: 10,
      toPosition: 20,
      baseUrl: '',
      selected: 1,
      capped: false,
      skipped: 0,
      messages: [[12, 'msg_1', 'search.completed']],
    },
  },
  {
    type: 'WebhookDeliveryScheduled',
    data: {
      deliveryId: 'd1',
      webhookId: 'wh1',
      keyId: 'key_1',
      messageId: 'msg_1',
      eventType: 'search.completed',
      body: '{}',
      occurredAt: at,
      scheduledAt: at,
    },
  },
  {
    type: 'WebhookAttemptClaimed',
    data: { deliveryId: 'd1', attempt: 1, worker: 'w1', claimedAt: at, leaseUntil: at },
  },
  {
    type: 'WebhookDeliveryAttempted',
    data: {
      deliveryId: 'd1',
      webhookId: 'wh1',
      eventType: 'search.completed',
      attempt: 1,
      statusCode: 503,
      latencyMs: 5,
      attemptedAt: at,
      nextAttemptAt: at,
    },
  },
  {
    type: 'WebhookDelivered',
    data: {
      deliveryId: 'd1',
      webhookId: 'wh1',
      eventType: 'search.completed',
      attempt: 2,
      statusCode: 200,
      latencyMs: 5,
      deliveredAt: at,
    },
  },
  {
    type: 'WebhookDeliveryGivenUp',
    data: {
      deliveryId: 'd1',
      webhookId: 'wh1',
      eventType: 'search.completed',
      attempt: 3,
      reason: 'endpoint_gone',
      givenUpAt: at,
    },
  },
  {
    type: 'WebhookDeliveryRetryRequested',
    data: { deliveryId: 'd1', webhookId: 'wh1', eventType: 'search.completed', requestedAt: at },
  },
  {
    type: 'KeyLimitTaken',
    data: { keyId: 'k1', kind: 'manualRun', id: 'run_1', scope: 'mon_1', baseline: 0, takenAt: at },
  },
  { type: 'KeyLimitFreed', data: { keyId: 'k1', kind: 'webhook', id: 'wh1', reason: 'deleted', freedAt: at } },
];

/** A value of another kind than the schema wants (and, for numbers, out of the usual ranges). */
const wrongValues = (schema: z.ZodType): unknown[] => {
  const def = (schema as unknown as { _zod: { def: { type: string; innerType?: z.ZodType } } })._zod.def;
  if (def.type === 'optional' && def.innerType) return wrongValues(def.innerType);
  switch (def.type) {
    case 'string':
      return [42, null, ['s']];
    case 'number':
      return ['1', -1, 1.5, Number.NaN, null];
    case 'boolean':
      return ['yes', 1];
    case 'array':
      return ['x', {}];
    default:
      return ['no such value', 42, null];
  }
};

/** Every invalid form of `e` the contract refuses: no data, each member missing, each member of a wrong kind. */
const invalidForms = (e: DomainEvent): Array<{ form: string; event: unknown }> => {
  const shape = (
    DomainEvent.options.find((o) => o.shape.type.value === e.type) as unknown as {
      shape: { data: { shape: Record<string, z.ZodType> } };
    }
  ).shape.data.shape;
  const data = e.data as Record<string, unknown>;
  const forms = [
    { form: 'no data', event: { type: e.type } },
    { form: 'data not an object', event: { type: e.type, data: 'x' } },
    ...Object.keys(shape).map((k) => {
      const { [k]: _gone, ...rest } = data;
      return { form: `no ${k}`, event: { type: e.type, data: rest } };
    }),
    ...Object.entries(shape).flatMap(([k, s]) =>
      wrongValues(s).map((v) => ({
        form: `${k}: ${JSON.stringify(v)}`,
        event: { type: e.type, data: { ...data, [k]: v } },
      })),
    ),
  ];
  return forms.filter((f) => !DomainEvent.safeParse(f.event).success);
};

/** What the handler's refusal looks like. */
const refused = { name: 'DomainError', code: errorCodes.eventInvalid };

/** Decides exactly the event it is given: the handler's own check is all that stands between it and the log. */
const replay: Decider<null, { event: unknown }> = {
  initialState: () => null,
  decide: (command) => [command.event as DomainEvent],
  evolve: (state) => state,
};

const openStore = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-invalid-'));
  const store = createSqliteEventStore({ path: join(dir, 'events.db') });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
};

t.test('every event type’s invalid forms are refused by the command handler, and the log is unchanged', async (t) => {
  const store = openStore(t);
  const handle = createCommandHandler(store);
  t.equal(valid.length, DomainEvent.options.length, 'a valid sample of every event type');
  for (const e of valid) t.ok(DomainEvent.safeParse(e).success, `${e.type}: the sample is valid`);
  await handle('test-seed', replay, { event: valid[0] });
  const head = await store.headPosition();
  let tried = 0;
  for (const e of valid) {
    const forms = invalidForms(e);
    t.ok(forms.length >= Object.keys(e.data).length, `${e.type}: ${forms.length} invalid forms`);
    for (const { form, event } of forms) {
      tried++;
      await t.rejects(handle(`test-${e.type}`, replay, { event }), refused, `${e.type} (${form}) is refused`);
    }
  }
  t.equal(await store.headPosition(), head, `the log is unchanged after ${tried} invalid commands`);
  t.equal((await store.readAll()).length, 1, 'only the seed event is in it');
  const batch = await Promise.allSettled([
    handle('test-batch', replay, { event: valid[1] }),
    handle('test-batch', replay, { event: { type: 'ApiKeyRevoked', data: { keyId: 7 } } }),
    handle('test-batch', replay, { event: valid[2] }),
  ]);
  t.same(
    batch.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
    'in a batch on one stream only the invalid command is refused',
  );
  t.equal((await store.readStream('test-batch')).events.length, 2, 'and only the valid ones are appended');
});

t.test('key commands: an unknown tier, a prototype name included, appends nothing', async (t) => {
  const store = openStore(t);
  const keys = createKeyCommands({
    handle: createCommandHandler(store),
    pepper: 'p'.repeat(32),
    tiers: { free: { monthlyQuota: 250, rateLimitPerMin: 10 } },
  });
  const { keyId } = await keys.create({ tier: 'free' });
  const head = await store.headPosition();
  for (const tier of ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
    await t.rejects(keys.create({ tier }), KeyInputError, `create in tier ${tier} is refused`);
    await t.rejects(keys.changeLimits(keyId, { tier }), KeyInputError, `a change to tier ${tier} is refused`);
  }
  await t.rejects(
    keys.create({ tier: 'free', monthlyQuota: -1 }),
    refused,
    'a negative quota given past the HTTP edge (the CLI on a data directory) is refused too',
  );
  await t.rejects(keys.changeLimits(keyId, { rateLimitPerMin: 0 }), refused, 'and a zero rate');
  t.equal(await store.headPosition(), head, 'the log is unchanged');
});
