import { z } from 'zod';
import { ALERT_KINDS } from './monitorAlerts.js';

/**
 * What a delivery's `data` holds for each webhook event type (docs/webhooks.md#event-types): small, never the result
 * itself. The body every attempt sends is `{type, timestamp, data}`. Each type's schema is named by its entry in the
 * event-type registry (services/webhooks/workers/eventTypes.ts), which builds `data` to it.
 */

const monitorOrigin = {
  monitor_id: z.string().optional().describe('the monitor whose run made the search, when one did'),
  run_id: z.string().optional(),
};

export const SearchCompletedData = z.object({
  job_id: z.string(),
  status: z.enum(['done', 'partial']),
  cached: z.boolean().describe('answered from the cache'),
  keyword: z.string(),
  location: z.string().optional(),
  device: z.string(),
  organic_results_count: z.number().int().nonnegative(),
  top_results: z
    .array(z.object({ position: z.number().int(), title: z.string(), link: z.string().nullable() }))
    .describe('the first three organic results'),
  failure: z
    .literal('location_mismatch')
    .optional()
    .describe(
      'Google placed the search elsewhere even on another route: its results are not served (no top_results), as a failure',
    ),
  detail: z.string().optional().describe('with `failure`: where Google placed it and where it was asked'),
  ...monitorOrigin,
  json_endpoint: z.string().describe('where the whole result is read (with the key)'),
  completed_at: z.string(),
});

export const SearchFailedData = z.object({
  job_id: z.string(),
  status: z.literal('failed'),
  keyword: z.string(),
  failure: z.string().describe('the kind: captcha, js_challenge, timeout, …'),
  detail: z.string().describe('what to do, in one line'),
  ...monitorOrigin,
  json_endpoint: z.string(),
  failed_at: z.string(),
});

export const MonitorRunCompletedData = z.object({
  monitor_id: z.string(),
  run_id: z.string(),
  trigger: z.enum(['schedule', 'manual', 'backfill']),
  checked: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
  skip_reason: z.string().optional(),
  completed_at: z.string(),
  history_endpoint: z.string(),
});

export const MonitorAlertData = z.object({
  alert_id: z.string(),
  monitor_id: z.string(),
  run_id: z.string(),
  kind: z.enum(ALERT_KINDS),
  keyword: z.string().optional(),
  domain: z.string().optional(),
  top: z.number().int().optional(),
  feature: z.string().optional(),
  competitor: z.string().optional(),
  from_position: z.number().int().nullable().optional(),
  to_position: z.number().int().nullable().optional(),
  from_url: z.string().nullable().optional(),
  to_url: z.string().nullable().optional(),
  failures: z.array(z.object({ keyword: z.string(), failure: z.string() })).optional(),
  at: z.string().describe('when the search that shows it was made'),
  alerts_endpoint: z.string(),
});

export const QuotaData = z.object({
  key_id: z.string(),
  month: z.string().describe('YYYY-MM'),
  used: z.number().int(),
  monthly_quota: z.number().int(),
  remaining: z.number().int(),
  renews_at: z.string(),
});
