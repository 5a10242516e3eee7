import { ErrorBody } from '../../../../contracts/errors.js';

/**
 * What to change in an operation's success request (its body and parameter examples) to get an error example's
 * answer: the `x-request` of that example in the live OpenAPI, which test/api/examples.test.ts sends
 * (docs/api.md#examples). Ids and instants are written as the other examples write them.
 */
export interface ExampleRequest {
  /** path parameters that differ (e.g. an id nobody has, for a 404) */
  params?: Record<string, string>;
  /** query parameters added */
  query?: Record<string, string>;
  /** the JSON body sent instead */
  body?: unknown;
  /** bytes sent instead of a JSON body (a body that is not JSON) */
  rawBody?: string;
  /** headers changed; null leaves one out (no key at all) */
  headers?: Record<string, string | null>;
  /** the tier of the key that sends it (a tier's own limits), else pro */
  tier?: string;
  /** sent this many times in a row: the last answer is this one (a limit reached, a run already in progress) */
  repeat?: number;
}

/** an error body the live OpenAPI shows, and the request that gets it */
export interface ErrorExample {
  detail: string;
  code: string;
  request?: ExampleRequest;
}

/**
 * An error response's schema with its examples as named OpenAPI Example objects (@fastify/swagger moves `x-examples`
 * to the media type), each carrying the request that answers it as `x-request`.
 */
export const errorExample = (description: string, ...cases: ErrorExample[]) =>
  ErrorBody.describe(description).meta({
    'x-examples': Object.fromEntries(
      cases.map(({ detail, code, request }, i) => [
        `${code.toLowerCase()}${cases.length > 1 ? `_${i + 1}` : ''}`,
        { summary: detail, value: { detail, code }, ...(request ? { 'x-request': request } : {}) },
      ]),
    ),
  });

/** the job id the screenshot examples show: the examples' test makes a search (it stays queued) and puts its id here */
export const EXAMPLE_JOB_ID = '0195a3c4b5d6a1b2c3d4e5f6';

/** `GET /v1/search/{job_id}/screenshot`'s error bodies, each with the request that gets it (docs/api.md#examples) */
export const screenshotErrors = {
  401: errorExample('no key, or a wrong or revoked one', {
    detail: 'missing API key: send it in the X-API-Key header or as Authorization: Bearer <key>',
    code: 'SERP_AUTH_MISSING_KEY',
    request: { headers: { 'x-api-key': null } },
  }),
  404: errorExample("no such search for this key (another key's search answers the same)", {
    detail: 'job not found',
    code: 'SERP_JOB_NOT_FOUND',
    request: { params: { job_id: '000000000000000000000000' } },
  }),
  409: errorExample('the search has not finished, or it failed (no page to render)', {
    detail: 'the search has not finished: poll it until it has, then ask again',
    code: 'SERP_JOB_NOT_FINISHED',
    request: {},
  }),
  422: errorExample(
    'a query parameter out of its limits (named in detail), or a page that cannot be rendered',
    {
      detail: 'querystring: width must be at most 1920 CSS pixels',
      code: 'SERP_API_INVALID_REQUEST',
      request: { query: { width: '4000' } },
    },
    {
      detail: 'querystring: format must be png or webp',
      code: 'SERP_API_INVALID_REQUEST',
      request: { query: { format: 'gif' } },
    },
  ),
};
