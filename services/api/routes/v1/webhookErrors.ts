import { ErrorBody } from '../../../../contracts/errors.js';
import { UNKNOWN_EVENT_TYPE } from '../../../../contracts/webhooks.js';
import { errors as monitorErrors } from './monitorErrors.js';

/** The webhook routes' error bodies, each with an example of what it says (the live OpenAPI shows them). */
const example = (description: string, ...bodies: Array<{ detail: string; code: string }>) =>
  ErrorBody.describe(description).meta({ examples: bodies });

export const errors = {
  ...monitorErrors,
  notFound: example("no such webhook for this key (another key's endpoint answers the same)", {
    detail: 'webhook not found',
    code: 'SERP_WEBHOOK_NOT_FOUND',
  }),
  deliveryNotFound: example('no such webhook, or no such delivery of it', {
    detail: 'delivery not found',
    code: 'SERP_WEBHOOK_DELIVERY_NOT_FOUND',
  }),
  invalidWebhook: example(
    'the endpoint cannot be registered as asked: nothing was recorded',
    {
      detail: 'url must use https (plain http is refused unless the operator sets SERP_WEBHOOK_ALLOW_HTTP=1)',
      code: 'SERP_WEBHOOK_URL_REFUSED',
    },
    {
      detail:
        'host hooks.internal resolves to 10.0.0.7 is a private address, not a public one (SERP_WEBHOOK_ALLOW_PRIVATE=1 allows it)',
      code: 'SERP_WEBHOOK_URL_REFUSED',
    },
    { detail: 'url: url must be at most 2000 characters', code: 'SERP_API_INVALID_REQUEST' },
    { detail: `events.0: ${UNKNOWN_EVENT_TYPE}`, code: 'SERP_API_INVALID_REQUEST' },
    {
      detail: 'a key may have 10 webhook endpoints and this one has 10: delete one first',
      code: 'SERP_WEBHOOK_LIMIT',
    },
    { detail: 'monitor_ids: monitor mon_0123 not found', code: 'SERP_WEBHOOK_INVALID' },
  ),
  invalidChange: example(
    'the change cannot apply: nothing was recorded',
    { detail: 'send at least one change', code: 'SERP_API_INVALID_REQUEST' },
    { detail: 'url must use https, not ftp', code: 'SERP_WEBHOOK_URL_REFUSED' },
  ),
  invalidQuery: example('a query parameter is invalid', {
    detail: 'querystring status: status must be pending, delivered or failed',
    code: 'SERP_API_INVALID_REQUEST',
  }),
  invalidReplay: example(
    'the replay cannot be asked as sent',
    {
      detail: 'since: must be an ISO date or instant, e.g. 2026-03-01 or 2026-03-01T12:00:00Z',
      code: 'SERP_API_INVALID_REQUEST',
    },
    { detail: 'since must not be in the future', code: 'SERP_WEBHOOK_INVALID' },
  ),
};
