import t from 'tap';
import type { RecordedAlerts } from '../../../contracts/events.js';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import {
  type AlertEvent,
  alertDecider,
  alertsOfRun,
  type DomainState,
  type KeywordComparison,
} from '../../../domain/monitor/alerts.js';

const spec = deciderSpec(alertDecider);
const at = '2026-03-02T00:02:55.000Z';
const now = '2026-03-02T00:03:01.000Z';
const domains = ['mine.example', 'rival.example'];

const state = (position: number, url: string | null = null, features: string[] = []): DomainState => ({
  position,
  url,
  features,
});
const comparison = (
  before: Record<string, DomainState> | undefined,
  after: Record<string, DomainState>,
  keyword = 'coffee',
): KeywordComparison => ({
  keyword,
  at,
  after: new Map(Object.entries(after)),
  ...(before ? { before: new Map(Object.entries(before)) } : {}),
});
const kinds = (
  config: RecordedAlerts,
  k: KeywordComparison[],
  failures: Array<{ keyword: string; failure: string; at: string }> = [],
) =>
  alertsOfRun('run_1', config, domains, k, failures).map((a) => [
    a.kind,
    a.domain ?? null,
    a.top ?? a.feature ?? a.competitor ?? null,
  ]);

t.test('Alerts › of a run, as the monitor asks', async (t) => {
  t.test('a move of at least min_move, and entering or leaving each top', async (t) => {
    const k = comparison({ 'mine.example': state(2, 'u') }, { 'mine.example': state(7, 'u') });
    t.same(kinds({ min_move: 5, top: [3, 10] }, [k]), [
      ['moved', 'mine.example', null],
      ['left_top', 'mine.example', 3],
    ]);
    t.same(kinds({ min_move: 6 }, [k]), [], 'a smaller move is not one');
  });
  t.test('a domain out of the depth entering a top is no move', async (t) => {
    const k = comparison({ 'mine.example': state(0) }, { 'mine.example': state(4, 'u') });
    t.same(kinds({ min_move: 1, top: [10] }, [k]), [['entered_top', 'mine.example', 10]]);
  });
  t.test('another URL ranking, a feature gained or lost', async (t) => {
    const k = comparison(
      { 'mine.example': state(3, 'a', ['featured_snippet']) },
      { 'mine.example': state(3, 'b', ['ai_overview_citation']) },
    );
    t.same(kinds({ url_changed: true, features: ['ai_overview_citation', 'featured_snippet'] }, [k]), [
      ['url_changed', 'mine.example', null],
      ['feature_gained', 'mine.example', 'ai_overview_citation'],
      ['feature_lost', 'mine.example', 'featured_snippet'],
    ]);
  });
  t.test('a competitor moving above the own (first) domain', async (t) => {
    const k = comparison(
      { 'mine.example': state(2), 'rival.example': state(5) },
      { 'mine.example': state(4), 'rival.example': state(1) },
    );
    t.same(kinds({ competitor_outranks: true }, [k]), [['competitor_outranks', 'mine.example', 'rival.example']]);
    const already = comparison(
      { 'mine.example': state(4), 'rival.example': state(1) },
      { 'mine.example': state(5), 'rival.example': state(1) },
    );
    t.same(kinds({ competitor_outranks: true }, [already]), [], 'already above: nothing new');
  });
  t.test('nothing to compare with (a first search) raises nothing', async (t) => {
    t.same(
      kinds({ min_move: 1, top: [3], url_changed: true }, [comparison(undefined, { 'mine.example': state(1) })]),
      [],
    );
  });
  t.test('failed searches are one run_failed alert naming them, at the latest; never a "dropped out"', async (t) => {
    const failures = [
      { keyword: 'tea', failure: 'captcha', at: '2026-03-02T00:01:00.000Z' },
      { keyword: 'milk', failure: 'timeout', at: '2026-03-02T00:02:00.000Z' },
    ];
    const alerts = alertsOfRun('run_1', { run_failed: true, top: [3] }, domains, [], failures);
    t.same(
      alerts.map((a) => [a.kind, a.failures, a.at]),
      [['run_failed', failures.map(({ keyword, failure }) => ({ keyword, failure })), '2026-03-02T00:02:00.000Z']],
    );
    t.same(alertsOfRun('run_1', { top: [3] }, domains, [], failures), [], 'not asked for: none');
  });
  t.test('no settings, no alerts; the same alert computed twice has the same id', async (t) => {
    const k = comparison({ 'mine.example': state(2) }, { 'mine.example': state(9) });
    t.same(alertsOfRun('run_1', undefined, domains, [k], []), []);
    const a = alertsOfRun('run_1', { min_move: 1 }, domains, [k], []);
    t.same(alertsOfRun('run_1', { min_move: 1 }, domains, [k], []), a);
    t.not(alertsOfRun('run_2', { min_move: 1 }, domains, [k], [])[0]?.alertId, a[0]?.alertId, "another run's differs");
  });
});

t.test('Alerts › raised once per run', async (t) => {
  const alerts = alertsOfRun(
    'run_1',
    { min_move: 1 },
    domains,
    [comparison({ 'mine.example': state(2) }, { 'mine.example': state(5) })],
    [],
  );
  const raise = { type: 'RaiseAlerts' as const, runId: 'run_1', monitorId: 'mon_1', keyId: 'k1', alerts, now };
  const raised: AlertEvent[] = spec.given([]).when(raise);
  t.same(raised, [
    {
      type: 'MonitorAlertRaised',
      data: { ...alerts[0]!, runId: 'run_1', monitorId: 'mon_1', keyId: 'k1', raisedAt: now },
    },
  ]);
  t.same(spec.given(raised).when(raise), [], 'a second worker computing them decides nothing');
  t.same(spec.given([]).when({ ...raise, alerts: [] }), [], 'no alerts: no event');
});
