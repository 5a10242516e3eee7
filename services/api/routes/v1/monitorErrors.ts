import { errorExample as example } from './errorExamples.js';

/**
 * The rank-tracking routes' error bodies, each with an example of what it says and the request that gets it (the live
 * OpenAPI shows them; test/api/examples.test.ts sends each request: docs/api.md#examples).
 */
const twentyFiveKeywords = Array.from({ length: 25 }, (_, i) => `coffee ${i + 1}`);
const monitorBody = { name: 'Coffee', keywords: ['coffee'], domains: ['example.com'], schedule: 'daily' };

export const errors = {
  badJson: example('the body is not JSON', {
    detail: "the body is not valid JSON: Body is not valid JSON but content-type is set to 'application/json'",
    code: 'SERP_API_INVALID_JSON',
    request: { rawBody: '{"name": "Coffee", }' },
  }),
  unauthorized: example('no key, or a wrong or revoked one', {
    detail: 'missing API key: send it in the X-API-Key header or as Authorization: Bearer <key>',
    code: 'SERP_AUTH_MISSING_KEY',
    request: { headers: { 'x-api-key': null } },
  }),
  tooLarge: example('body over 1 MiB', {
    detail: 'request body too large (limit 1 MiB)',
    code: 'SERP_API_BODY_TOO_LARGE',
  }),
  mediaType: example('not JSON', {
    detail: 'unsupported content type "text/plain": send JSON with Content-Type: application/json',
    code: 'SERP_API_UNSUPPORTED_MEDIA_TYPE',
    request: { headers: { 'content-type': 'text/plain' }, rawBody: 'coffee' },
  }),
  notFound: example("no such monitor for this key (another key's monitor answers the same)", {
    detail: 'monitor not found',
    code: 'SERP_MONITOR_NOT_FOUND',
    request: { params: { monitor_id: 'mon_000000000000000000000000' } },
  }),
  runInProgress: example('a manual run of this monitor is in progress: one at a time', {
    detail:
      'run run_0195a3c4b5d6a1b2c3d4e5f6 of this monitor is in progress: one manual run at a time (its checks appear in GET /v1/monitors/mon_0195a3c4b5d6a1b2c3d4e5f6/history as its searches end)',
    code: 'SERP_MONITOR_RUN_IN_PROGRESS',
    request: { repeat: 2 },
  }),
  invalidParams: example('a path or query parameter is invalid', {
    detail: 'params monitor_id: Too big: expected string to have <=200 characters',
    code: 'SERP_API_INVALID_REQUEST',
    request: { params: { monitor_id: `mon_${'0'.repeat(197)}` } },
  }),
  invalidMonitor: example(
    'the monitor cannot be created as asked: nothing was recorded',
    {
      detail: 'keywords must not be empty',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { ...monitorBody, keywords: [] } },
    },
    {
      detail: 'keywords.3: duplicate keyword "coffee"',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { ...monitorBody, keywords: ['coffee', 'tea', 'cake', 'coffee'] } },
    },
    {
      detail:
        'domains.0: each domain must be a host ("example.com"), "*.example.com" (every subdomain) or host/path ("example.com/blog/"), with no scheme',
      code: 'SERP_API_INVALID_REQUEST',
      request: { body: { ...monitorBody, domains: ['https://example.com'] } },
    },
    {
      detail: 'cron "*/15 * * * *" fires more often than hourly (…): monitors run at most once an hour',
      code: 'SERP_MONITOR_INVALID',
      request: { body: { ...monitorBody, schedule: { cron: '*/15 * * * *', timezone: 'UTC' } } },
    },
    {
      detail: 'unknown timezone "Mars/Olympus": give an IANA name such as "Europe/Berlin" or "UTC"',
      code: 'SERP_MONITOR_INVALID',
      request: { body: { ...monitorBody, schedule: { cron: '0 6 * * *', timezone: 'Mars/Olympus' } } },
    },
    {
      detail: 'uule: give either location or uule, not both',
      code: 'SERP_API_INVALID_REQUEST',
      request: {
        body: { ...monitorBody, location: 'Austin, Texas, United States', uule: 'w+CAIQICIGQXVzdGlu' },
      },
    },
    {
      detail: 'the free tier allows 10 keywords per monitor; this one has 25',
      code: 'SERP_MONITOR_LIMIT',
      request: { tier: 'free', body: { ...monitorBody, keywords: twentyFiveKeywords } },
    },
    {
      detail: 'the free tier allows 2 monitors per key and this key has 2: delete one first',
      code: 'SERP_MONITOR_LIMIT',
      request: { tier: 'free', body: monitorBody, repeat: 2 },
    },
  ),
  invalidChange: example(
    'the change cannot apply: nothing was recorded',
    {
      detail: 'keyword "coffee shop" is already tracked',
      code: 'SERP_MONITOR_INVALID',
      request: { body: { add_keywords: ['coffee shop'] } },
    },
    {
      detail: 'a monitor needs at least one keyword: delete the monitor instead',
      code: 'SERP_MONITOR_INVALID',
      request: { body: { remove_keywords: ['coffee shop', 'espresso machine'] } },
    },
    { detail: 'send at least one change', code: 'SERP_API_INVALID_REQUEST', request: { body: {} } },
  ),
  invalidRange: example(
    'a query parameter is invalid',
    {
      detail: 'querystring: from must not be after to',
      code: 'SERP_API_INVALID_REQUEST',
      request: { query: { from: '2026-03-02', to: '2026-03-01' } },
    },
    {
      detail: 'querystring to: 2026-02-30 is not a date: February 2026 has 28 days',
      code: 'SERP_API_INVALID_REQUEST',
      request: { query: { to: '2026-02-30' } },
    },
  ),
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
