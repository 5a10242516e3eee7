import { readFileSync } from 'node:fs';
import t from 'tap';
import { WEBHOOK_EVENT_TYPES } from '../../../contracts/webhookEvents.js';
import { CreateWebhookBody, UNKNOWN_EVENT_TYPE } from '../../../contracts/webhooks.js';
import { errors } from '../../../services/webhooks/http/webhookErrors.js';
import { renderEventTypes } from '../../../services/webhooks/workers/docs.js';
import { SOURCE_TYPES, WEBHOOK_EVENTS } from '../../../services/webhooks/workers/eventTypes.js';

/**
 * A webhook event type is one entry of the registry (services/webhooks/workers/eventTypes.ts); what lists the types is read
 * from it: the table in docs/webhooks.md, the registration error and its example, what the router follows.
 */
t.test('webhook event types › docs/webhooks.md holds the table the registry generates', async (t) => {
  const page = readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');
  t.ok(page.includes(renderEventTypes()), 'run `npm run docs:webhooks` and commit docs/webhooks.md');
  for (const type of WEBHOOK_EVENT_TYPES) t.ok(page.includes(`| \`${type}\` |`), `${type} has its row`);
});

t.test('webhook event types › the registry has one entry per type, each made from events of the log', async (t) => {
  t.same(Object.keys(WEBHOOK_EVENTS).sort(), [...WEBHOOK_EVENT_TYPES].sort(), 'one entry per type, no other');
  for (const type of WEBHOOK_EVENT_TYPES) {
    const spec = WEBHOOK_EVENTS[type];
    t.ok(spec.sources.length > 0, `${type} is made from at least one event type`);
    t.ok(
      spec.sources.every((s) => SOURCE_TYPES.has(s)),
      `${type}: the router follows its sources (${spec.sources.join(', ')})`,
    );
    t.ok(spec.sentWhen.length > 10, `${type} says when it is sent`);
  }
});

t.test('webhook event types › an unknown type is refused naming every type, as the example shows', async (t) => {
  const refused = CreateWebhookBody.safeParse({ url: 'https://example.com/h', events: ['search.done'] });
  t.notOk(refused.success, 'refused');
  t.match(refused.error?.issues[0]?.message, UNKNOWN_EVENT_TYPE);
  for (const type of WEBHOOK_EVENT_TYPES) t.match(UNKNOWN_EVENT_TYPE, type, `the message names ${type}`);
  const examples = Object.values(
    (errors.invalidWebhook.meta()?.['x-examples'] ?? {}) as Record<string, { value: { detail: string } }>,
  ).map((e) => e.value);
  t.ok(
    examples.some((e) => e.detail === `events.0: ${UNKNOWN_EVENT_TYPE}`),
    'the OpenAPI example is the message itself',
  );
  t.ok(
    CreateWebhookBody.safeParse({ url: 'https://example.com/h', events: [...WEBHOOK_EVENT_TYPES] }).success,
    'every type may be taken at once',
  );
});
