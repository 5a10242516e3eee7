import type { MonitorAlert } from '../../contracts/monitorAlerts.js';
import type { Projection } from '../projection.js';

/** One alert of a monitor (docs/rank-tracking.md#alerts); ids sort by monitor and time, so a range is one read. */
export type AlertDoc = MonitorAlert & { runId: string; monitorId: string; raisedAt: string };

export const alertDocId = (monitorId: string, at: string, alertId: string) => `${monitorId}|${at}|${alertId}`;

export const monitorAlertsProjection: Projection<AlertDoc> = {
  name: 'monitorAlerts',
  idOf: (e) => (e.type === 'MonitorAlertRaised' ? alertDocId(e.data.monitorId, e.data.at, e.data.alertId) : undefined),
  evolve(doc, e) {
    if (e.type !== 'MonitorAlertRaised') return doc ?? null;
    const { keyId: _k, ...alert } = e.data;
    return alert;
  },
};
