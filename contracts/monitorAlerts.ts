import { z } from 'zod';

/**
 * A monitor's alerts as events (docs/rank-tracking.md#alerts): stream `monitorAlerts-<runId>`, the alerts one
 * completed run raised, computed from its checks. Dates are ISO strings.
 */
const iso = z.string();

export const ALERT_KINDS = [
  'moved',
  'entered_top',
  'left_top',
  'competitor_outranks',
  'url_changed',
  'feature_gained',
  'feature_lost',
  'run_failed',
  'fell_below_fold',
] as const;
export const AlertKind = z.enum(ALERT_KINDS);
export type AlertKind = z.infer<typeof AlertKind>;

/** One alert of a completed monitor run, computed from its checks (docs/rank-tracking.md#alerts). */
export const MonitorAlert = z.object({
  alertId: z.string(),
  kind: AlertKind,
  keyword: z.string().optional(),
  domain: z.string().optional(),
  /** entered_top / left_top: which top N */
  top: z.number().int().optional(),
  feature: z.string().optional(),
  /** competitor_outranks: the competitor now above the own domain */
  competitor: z.string().optional(),
  fromPosition: z.number().int().nullable().optional(),
  toPosition: z.number().int().nullable().optional(),
  fromUrl: z.string().nullable().optional(),
  toUrl: z.string().nullable().optional(),
  /** run_failed: the keywords whose search failed, with why */
  failures: z.array(z.object({ keyword: z.string(), failure: z.string() })).optional(),
  /** when the search that shows it was made */
  at: iso,
});
export type MonitorAlert = z.infer<typeof MonitorAlert>;

export const MonitorAlertRaised = z.object({
  type: z.literal('MonitorAlertRaised'),
  data: MonitorAlert.extend({ runId: z.string(), monitorId: z.string(), keyId: z.string(), raisedAt: iso }),
});
