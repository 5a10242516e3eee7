import type { EventOf, RecordedAlerts } from '../../contracts/events.js';
import type { MonitorAlert } from '../../contracts/monitorAlerts.js';
import type { Decider } from '../kernel/decider.js';
import { alertIdOf } from './ids.js';

/** A domain in one successful search: position (0: not ranked within the depth), URL, features. */
export interface DomainState {
  position: number;
  url: string | null;
  features: readonly string[];
  /** measured in pixels (a monitor with pixel positions): the best result showed on the first screen */
  aboveTheFold?: boolean;
}

export interface KeywordComparison {
  keyword: string;
  /** the keyword's previous successful search, per domain; absent: nothing to compare with */
  before?: Map<string, DomainState>;
  /** this run's search, per domain (successful searches only: a failed one is never compared) */
  after: Map<string, DomainState>;
  /** when this run's search was made */
  at: string;
}

/** a keyword whose search in the run failed, with why and when */
export interface RunFailure {
  keyword: string;
  failure: string;
  at: string;
}

type Alert = Omit<MonitorAlert, 'alertId'>;

const comparisonAlerts = (config: RecordedAlerts, domains: readonly string[], k: KeywordComparison): Alert[] => {
  const before = k.before;
  if (!before) return [];
  const out: Alert[] = [];
  const base = (domain: string, b: DomainState, a: DomainState) => ({
    keyword: k.keyword,
    domain,
    fromPosition: b.position || null,
    toPosition: a.position || null,
    fromUrl: b.url,
    toUrl: a.url,
    at: k.at,
  });
  for (const domain of domains) {
    const b = before.get(domain);
    const a = k.after.get(domain);
    if (!a || !b) continue;
    const moved = b.position > 0 && a.position > 0 ? Math.abs(a.position - b.position) : 0;
    if (config.min_move !== undefined && moved >= config.min_move) out.push({ ...base(domain, b, a), kind: 'moved' });
    for (const top of config.top ?? []) {
      const was = b.position > 0 && b.position <= top;
      const is = a.position > 0 && a.position <= top;
      if (!was && is) out.push({ ...base(domain, b, a), kind: 'entered_top', top });
      if (was && !is) out.push({ ...base(domain, b, a), kind: 'left_top', top });
    }
    if (config.url_changed && b.position > 0 && a.position > 0 && b.url !== a.url) {
      out.push({ ...base(domain, b, a), kind: 'url_changed' });
    }
    // only between two searches both measured in pixels: an unmeasured one says nothing of the fold
    if (config.fell_below_fold && b.aboveTheFold === true && a.aboveTheFold === false) {
      out.push({ ...base(domain, b, a), kind: 'fell_below_fold' });
    }
    for (const feature of config.features ?? []) {
      const had = b.features.includes(feature);
      const has = a.features.includes(feature);
      if (!had && has) out.push({ ...base(domain, b, a), kind: 'feature_gained', feature });
      if (had && !has) out.push({ ...base(domain, b, a), kind: 'feature_lost', feature });
    }
  }
  const own = domains[0];
  const ownBefore = own ? before.get(own) : undefined;
  const ownAfter = own ? k.after.get(own) : undefined;
  if (config.competitor_outranks && own && ownBefore && ownAfter) {
    const above = (c: DomainState, o: DomainState) => c.position > 0 && (o.position === 0 || c.position < o.position);
    for (const competitor of domains.slice(1)) {
      const cb = before.get(competitor);
      const ca = k.after.get(competitor);
      if (!cb || !ca || above(cb, ownBefore) || !above(ca, ownAfter)) continue;
      out.push({ ...base(own, ownBefore, ownAfter), kind: 'competitor_outranks', competitor });
    }
  }
  return out;
};

/**
 * The alerts of one completed run (docs/rank-tracking.md#alerts), pure: for each keyword searched successfully in the run, what
 * changed since its previous successful search, as the monitor's `alerts` ask; and one `run_failed` alert naming
 * the keywords whose search failed. A failed search is never compared, so it never raises a "dropped out" alert.
 */
export const alertsOfRun = (
  runId: string,
  config: RecordedAlerts | undefined,
  domains: readonly string[],
  keywords: readonly KeywordComparison[],
  failures: readonly RunFailure[],
): MonitorAlert[] => {
  if (!config) return [];
  const alerts: Alert[] = keywords.flatMap((k) => comparisonAlerts(config, domains, k));
  if (config.run_failed && failures.length > 0) {
    alerts.push({
      kind: 'run_failed',
      failures: failures.map(({ keyword, failure }) => ({ keyword, failure })),
      at: failures.map((f) => f.at).sort()[failures.length - 1] as string,
    });
  }
  return alerts.map((a) => ({
    alertId: alertIdOf(
      runId,
      a.kind,
      a.keyword ?? '',
      a.domain ?? '',
      String(a.top ?? ''),
      a.feature ?? '',
      a.competitor ?? '',
    ),
    ...a,
  }));
};

export type AlertEvent = EventOf<'MonitorAlertRaised'>;
type AlertState = { raised: boolean };
type AlertCommand = {
  type: 'RaiseAlerts';
  runId: string;
  monitorId: string;
  keyId: string;
  alerts: MonitorAlert[];
  now: string;
};

/** A run's alerts are raised once (`monitorAlerts-<runId>`): a second worker computing them decides nothing. */
export const alertDecider: Decider<AlertState, AlertCommand, AlertEvent> = {
  initialState: () => ({ raised: false }),
  decide: (c, state) =>
    state.raised
      ? []
      : c.alerts.map((a) => ({
          type: 'MonitorAlertRaised',
          data: { ...a, runId: c.runId, monitorId: c.monitorId, keyId: c.keyId, raisedAt: c.now },
        })),
  evolve: () => ({ raised: true }),
};
