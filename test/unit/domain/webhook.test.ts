import t from 'tap';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import { type WebhookCommand, type WebhookEvent, webhookDecider } from '../../../domain/webhook/webhook.js';

const spec = deciderSpec(webhookDecider);
const at = '2026-03-01T12:00:00.000Z';
const later = '2026-03-01T13:00:00.000Z';

const create: WebhookCommand = {
  type: 'CreateWebhook',
  webhookId: 'wh_1',
  keyId: 'k1',
  url: 'https://example.com/hook',
  events: ['search.completed'],
  secretSeed: 'seed-1',
  now: at,
};
const created: WebhookEvent = {
  type: 'WebhookCreated',
  data: {
    webhookId: 'wh_1',
    keyId: 'k1',
    url: 'https://example.com/hook',
    events: ['search.completed'],
    secretSeed: 'seed-1',
    createdAt: at,
  },
};
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { webhookId: 'wh_1', deletedAt: later } };
const gone = { type: 'DisableGone' as const, webhookId: 'wh_1', now: later };

t.test('Webhook › created', async (t) => {
  t.test('once: the secret is never recorded, only its seed', async (t) => {
    t.same(spec.given([]).when(create), [created]);
    t.throws(() => spec.given([created]).when(create), { code: 'SERP_WEBHOOK_INVALID', message: /wh_1 exists/ });
  });
  t.test('its monitors, when it names some', async (t) => {
    const [e] = spec.given([]).when({ ...create, events: ['monitor.alert'], monitorIds: ['mon_1'] });
    t.same(e?.data, { ...created.data, events: ['monitor.alert'], monitorIds: ['mon_1'] });
  });
});

t.test('Webhook › changed', async (t) => {
  const change = (over: Partial<Extract<WebhookCommand, { type: 'ChangeWebhook' }>>): WebhookCommand => ({
    type: 'ChangeWebhook',
    webhookId: 'wh_1',
    keyId: 'k1',
    now: later,
    ...over,
  });
  t.test('records only what is asked', async (t) => {
    t.same(spec.given([created]).when(change({ url: 'https://example.com/other' })), [
      { type: 'WebhookChanged', data: { webhookId: 'wh_1', url: 'https://example.com/other', changedAt: later } },
    ]);
    t.same(spec.given([created]).when(change({ monitorIds: null })), [
      { type: 'WebhookChanged', data: { webhookId: 'wh_1', monitorIds: null, changedAt: later } },
    ]);
  });
  t.test('disabled by its key says so; enabled again says nothing more', async (t) => {
    t.same(spec.given([created]).when(change({ disabled: true })), [
      {
        type: 'WebhookChanged',
        data: { webhookId: 'wh_1', disabled: true, disabledReason: 'by_key', changedAt: later },
      },
    ]);
    t.same(spec.given([created]).when(change({ disabled: false })), [
      { type: 'WebhookChanged', data: { webhookId: 'wh_1', disabled: false, changedAt: later } },
    ]);
  });
  t.test("another key's endpoint is not found, as one deleted or never created", async (t) => {
    t.throws(() => spec.given([created]).when(change({ keyId: 'k2', url: 'https://x.example' })), {
      code: 'SERP_WEBHOOK_NOT_FOUND',
    });
    t.throws(() => spec.given([created, deleted]).when(change({ url: 'https://x.example' })), {
      code: 'SERP_WEBHOOK_NOT_FOUND',
    });
    t.throws(() => spec.given([]).when(change({ url: 'https://x.example' })), { code: 'SERP_WEBHOOK_NOT_FOUND' });
  });
});

t.test('Webhook › a receiver answered 410', async (t) => {
  const disabled: WebhookEvent = {
    type: 'WebhookChanged',
    data: { webhookId: 'wh_1', disabled: true, disabledReason: 'endpoint_gone', changedAt: later },
  };
  t.test('the service disables it, once', async (t) => {
    t.same(spec.given([created]).when(gone), [disabled]);
    t.same(spec.given([created, disabled]).when(gone), [], 'already disabled: nothing more');
    t.equal((spec.given([created, disabled]).state() as { disabled: boolean }).disabled, true);
  });
  t.test('an endpoint deleted meanwhile, or unknown, decides nothing (no key to check)', async (t) => {
    t.same(spec.given([created, deleted]).when(gone), []);
    t.same(spec.given([]).when(gone), []);
  });
});

t.test('Webhook › secret rotated', async (t) => {
  const rotate: WebhookCommand = {
    type: 'RotateSecret',
    webhookId: 'wh_1',
    keyId: 'k1',
    secretSeed: 'seed-2',
    graceMs: 24 * 3_600_000,
    now: at,
  };
  const rotated = spec.given([created]).when(rotate);
  t.same(rotated, [
    {
      type: 'WebhookSecretRotated',
      data: {
        webhookId: 'wh_1',
        secretSeed: 'seed-2',
        previousSeed: 'seed-1',
        previousValidUntil: '2026-03-02T12:00:00.000Z',
        rotatedAt: at,
      },
    },
  ]);
  const again = spec.given([created, ...rotated]).when({ ...rotate, secretSeed: 'seed-3' });
  t.equal(
    again[0]?.type === 'WebhookSecretRotated' && again[0].data.previousSeed,
    'seed-2',
    'the seed before is the last',
  );
});

t.test('Webhook › deleted once; a replay is asked of a live endpoint', async (t) => {
  const remove: WebhookCommand = { type: 'DeleteWebhook', webhookId: 'wh_1', keyId: 'k1', now: later };
  t.same(spec.given([created]).when(remove), [deleted]);
  t.throws(() => spec.given([created, deleted]).when(remove), { code: 'SERP_WEBHOOK_NOT_FOUND' });
  const replay: WebhookCommand = {
    type: 'RequestReplay',
    webhookId: 'wh_1',
    keyId: 'k1',
    replayId: 'rpl_1',
    since: at,
    now: later,
  };
  t.same(spec.given([created]).when(replay), [
    { type: 'WebhookReplayRequested', data: { webhookId: 'wh_1', replayId: 'rpl_1', since: at, requestedAt: later } },
  ]);
  t.throws(() => spec.given([created, deleted]).when(replay), { code: 'SERP_WEBHOOK_NOT_FOUND' });
  t.throws(() => spec.given([created]).when({ ...replay, keyId: 'k2' }), { code: 'SERP_WEBHOOK_NOT_FOUND' });
});
