import { ErrorBody } from '../../../../contracts/errors.js';

/** The rank-tracking routes' error bodies, each with an example of what it says (the live OpenAPI shows them). */
const example = (description: string, ...bodies: Array<{ detail: string; code: string }>) =>
  ErrorBody.describe(description).meta({ examples: bodies });

export const errors = {
  badJson: example('the body is not JSON', {
    detail: 'the body is not valid JSON: Unexpected token } in JSON at position 12',
    code: 'SERP_API_INVALID_JSON',
  }),
  unauthorized: example('no key, or a wrong or revoked one', {
    detail: 'missing API key: send it as X-API-Key or Authorization: Bearer',
    code: 'SERP_API_UNAUTHORIZED',
  }),
  tooLarge: example('body over 1 MiB', {
    detail: 'request body too large (limit 1 MiB)',
    code: 'SERP_API_BODY_TOO_LARGE',
  }),
  mediaType: example('not JSON', {
    detail: 'unsupported content type "text/plain": send JSON with Content-Type: application/json',
    code: 'SERP_API_UNSUPPORTED_MEDIA_TYPE',
  }),
  notFound: example("no such monitor for this key (another key's monitor answers the same)", {
    detail: 'monitor not found',
    code: 'SERP_MONITOR_NOT_FOUND',
  }),
  runInProgress: example('a manual run of this monitor is in progress: one at a time', {
    detail:
      'run run_0195a3c4b5d6a1b2c3d4e5f6 of this monitor is in progress: one manual run at a time (its checks appear in GET /v1/monitors/mon_0195a3c4b5d6a1b2c3d4e5f6/history as its searches end)',
    code: 'SERP_MONITOR_RUN_IN_PROGRESS',
  }),
  invalidParams: example('a path or query parameter is invalid', {
    detail: 'params monitor_id: Too big: expected string to have <=200 characters',
    code: 'SERP_API_INVALID_REQUEST',
  }),
  invalidMonitor: example(
    'the monitor cannot be created as asked: nothing was recorded',
    { detail: 'keywords: keywords must not be empty', code: 'SERP_API_INVALID_REQUEST' },
    { detail: 'keywords.3: duplicate keyword "coffee"', code: 'SERP_API_INVALID_REQUEST' },
    {
      detail:
        'domains.0: each domain must be a host ("example.com"), "*.example.com" (every subdomain) or host/path ("example.com/blog/"), with no scheme',
      code: 'SERP_API_INVALID_REQUEST',
    },
    {
      detail: 'cron "*/15 * * * *" fires more often than hourly (…): monitors run at most once an hour',
      code: 'SERP_MONITOR_INVALID',
    },
    {
      detail: 'unknown timezone "Mars/Olympus": give an IANA name such as "Europe/Berlin" or "UTC"',
      code: 'SERP_MONITOR_INVALID',
    },
    { detail: 'uule: give either location or uule, not both', code: 'SERP_API_INVALID_REQUEST' },
    { detail: 'the free tier allows 10 keywords per monitor; this one has 25', code: 'SERP_MONITOR_LIMIT' },
    {
      detail: 'the free tier allows 2 monitors per key and this key has 2: delete one first',
      code: 'SERP_MONITOR_LIMIT',
    },
  ),
  invalidChange: example(
    'the change cannot apply: nothing was recorded',
    { detail: 'keyword "coffee" is already tracked', code: 'SERP_MONITOR_INVALID' },
    { detail: 'a monitor needs at least one keyword: delete the monitor instead', code: 'SERP_MONITOR_INVALID' },
    { detail: 'send at least one change', code: 'SERP_API_INVALID_REQUEST' },
  ),
  invalidRange: example('a query parameter is invalid', {
    detail: 'querystring from: from must not be after to',
    code: 'SERP_API_INVALID_REQUEST',
  }),
  rate: example("over the key's ceiling for reads and writes this minute", {
    detail: 'rate limit exceeded',
    code: 'SERP_RATE_LIMITED',
  }),
  unavailable: example('the event store or queue cannot be reached right now: nothing was recorded, retry', {
    detail:
      'the service cannot reach its event store or queue right now (nothing was recorded): retry in a few seconds',
    code: 'SERP_API_UNAVAILABLE',
  }),
};
