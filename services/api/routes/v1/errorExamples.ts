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
