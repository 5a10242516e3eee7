import { UNKNOWN_EVENT_TYPE } from '../../../contracts/webhooks.js';
import { errorExample as example } from '../../api/routes/v1/errorExamples.js';
import { errors as monitorErrors } from '../../api/routes/v1/monitorErrors.js';

/**
 * The webhook routes' error bodies, each with an example of what it says and the request that gets it (the live
 * OpenAPI shows them; test/api/examples.test.ts sends each request: docs/api.md#examples).
 */
const hook = { url: 'https://example.com/hooks/serp', events: ['search.completed'] };

export const errors = {
  ...monitorErrors,
  notFound: example("no such webhook for this key (another key's endpoint answers the same)", {
    detail: 'webhook not found',
    code: 'SERP_WEBHOOK_NOT_FOUND',
    request: { params: { webhook_id: 'wh_000000000000000000000000' } },
  }),
  deliveryNotFound: example('no such webhook, or no such delivery of it', {
    detail: 'delivery not found',
    code: 'SERP_WEBHOOK_DELIVERY_NOT_FOUND',
    request: { params: { delivery_id: 'dlv_000000000000000000000000' } },
  }),
  invalidParams: example('a path parameter is invalid', {
    detail: 'params webhook_id: Too big: expected string to have <=200 characters',
    code: 'SERP_API_INVALID_REQUEST',
    request: { params: { webhook_id: `wh_${'0'.repeat(198)}` } },
  }),
  invalidWebhook: example(
    'the endpoint cannot be registered as asked: nothing was recorded',
    {
      detail: 'url must use https (plain http is refused unless the operator sets SERP_WEBHOOK_ALLOW_HTTP=1)',
      code: 'SERP_WEBHOOK_URL_REFUSED',
      request: { body: { ...hook, url: 'http://example.com/hooks/serp' } },
    },
    {
      detail:
        'host hooks.internal resolves to 10.0.0.7 is a private address, not a public one (SERP_WEBHOOK_ALLOW_PRIVATE=1 allows it)',
      code: 'SERP_WEBHOOK_URL_REFUSED',
      request: { body: { ...hook, url: 'https://hooks.internal/serp' } },
    },
    {
      detail: 'url must be at most 2000 characters',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { ...hook, url: `https://example.com/${'a'.repeat(2000)}` } },
    },
    {
      detail: `events.0: ${UNKNOWN_EVENT_TYPE}`,
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { ...hook, events: ['search.done'] } },
    },
    {
      detail: 'a key may have 10 webhook endpoints and this one has 10: delete one first',
      code: 'SERP_WEBHOOK_LIMIT',
      request: { body: hook, repeat: 10 },
    },
    {
      detail: 'monitor_ids: monitor mon_0123 not found',
      code: 'SERP_WEBHOOK_INVALID',
      request: { body: { ...hook, events: ['monitor.alert'], monitor_ids: ['mon_0123'] } },
    },
  ),
  invalidChange: example(
    'the change cannot apply: nothing was recorded',
    { detail: 'send at least one change', code: 'SERP_API_INVALID_REQUEST', request: { body: {} } },
    {
      detail: 'url must use https, not ftp',
      code: 'SERP_WEBHOOK_URL_REFUSED',
      request: { body: { url: 'ftp://example.com/hooks/serp' } },
    },
  ),
  invalidQuery: example(
    'a query parameter is invalid',
    {
      detail: 'querystring: status must be pending, delivered or failed',
      code: 'SERP_API_INVALID_REQUEST',
      request: { query: { status: 'lost' } },
    },
    {
      detail: 'querystring since: 2026-04-31 is not a date: April 2026 has 30 days',
      code: 'SERP_API_INVALID_REQUEST',
      request: { query: { since: '2026-04-31' } },
    },
  ),
  invalidReplay: example(
    'the replay cannot be asked as sent',
    {
      detail: 'since: 2026-02-30 is not a date: February 2026 has 28 days',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { since: '2026-02-30T00:00:00Z' } },
    },
    {
      detail: 'since: 25:00 is not a time of day: hours are 00–23',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { since: '2026-03-01T25:00:00Z' } },
    },
    {
      detail: 'since: must be an ISO date or instant, e.g. 2026-03-01 or 2026-03-01T12:00:00Z (got "yesterday")',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { since: 'yesterday' } },
    },
    {
      detail: 'since must not be in the future',
      code: 'SERP_WEBHOOK_INVALID',
      request: { body: { since: '2026-03-03T00:00:00Z' } },
    },
    {
      detail:
        'since must be within the last 7 days (at or after 2026-02-23T10:00:00.000Z): replay a longer outage in steps',
      code: 'SERP_WEBHOOK_INVALID',
      request: { body: { since: '2026-02-20T00:00:00Z' } },
    },
  ),
};
