import t, { type Test } from 'tap';
import { type DomainRank, streams } from '../../../contracts/events.js';
import { CreateMonitorBody } from '../../../contracts/monitors.js';
import { monitorRunDecider, plannedJobs, runRecord } from '../../../domain/monitor/monitorRun.js';
import { composeApplication } from '../../../services/compose/application.js';
import { openCore } from '../../../services/compose/embedded/core.js';
import { loadConfig } from '../../../services/config/config.js';
import { createMonitorVersions } from '../../../services/monitors/commands/monitorVersions.js';
import { createAlerter } from '../../../services/monitors/workers/alerter.js';
import { createHistoryAlerter } from '../../bench/historyAlerter.js';
import { removeDir, tempDataDir } from '../../support/service.js';

/**
 * The alerter raises a run's alerts from the checks the log hands it (docs/rank-tracking.md#alerts), without waiting
 * for the read models or reading each keyword's history: what it raises is what reading the history raised, whether
 * it followed the run from its start or met it half way (a restart), and whatever order the searches came in.
 */
const KEYWORDS = ['coffee', 'tea', 'milk', 'sugar'];
const DOMAINS = ['mine.example', 'rival.example', 'other.example'];
const RUNS = 6;
const day = (r: number, i: number) => new Date(Date.UTC(2026, 0, 10 + r * 9, 0, i)).toISOString();

/** run r's search of keyword i: positions that move, a URL that changes, a feature now and then, a failure */
const ranksOf = (r: number, i: number): DomainRank[] | 'failed' => {
  if ((r === 3 && i === 1) || (r === 4 && i === 2)) return 'failed';
  return DOMAINS.map((domain, d) => {
    const position = 1 + ((r * 7 + i * 3 + d * 5) % 14);
    if (position > 11) return { domain, features: [] };
    return {
      domain,
      position,
      url: `https://${domain}/${i}/${(r + d) % 3 === 0 ? 'a' : 'b'}`,
      features: (r + i + d) % 4 === 0 ? ['featured_snippet'] : [],
    };
  });
};

/** a core with one monitor whose RUNS runs are in the log, their checks recorded through the run decider */
const withRuns = async (t: Test, order: 'in order' | 'late search') => {
  const dir = tempDataDir('alerter');
  const config = loadConfig({ SERP_CACHE_TTL_S: '0' }, { dataDir: dir });
  const core = await openCore(config);
  t.teardown(async () => {
    await core.close();
    removeDir(dir);
  });
  const app = composeApplication({ ...core, resolveHost: async () => [] }, config);
  const created = await app.keys.create({ tier: 'enterprise' });
  await core.projector.waitFor(await core.eventStore.headPosition());
  const key = core.queries.keys.byId(created.keyId)!;
  const monitor = await app.monitors.create(
    key,
    CreateMonitorBody.parse({
      name: 'alerts',
      keywords: KEYWORDS,
      domains: DOMAINS,
      schedule: 'weekly',
      depth: 20,
      alerts: {
        min_move: 2,
        top: [3, 10],
        competitor_outranks: true,
        url_changed: true,
        features: ['featured_snippet'],
        run_failed: true,
      },
    }),
  );
  const versions = createMonitorVersions(core.eventStore);
  const at = (await versions.current(monitor.monitorId))!;
  /** the position in the log after each run's first two checks (where a restarted alerter may take it up) */
  const halfWay: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const runId = `run_${String(r).padStart(24, '0')}`;
    const run = runRecord(monitor, at, {
      runId,
      trigger: 'manual',
      noCache: true,
      startAt: day(r, 0),
      intervalMs: 60_000,
      startedAt: day(r, 0),
    });
    const stream = streams.monitorRun(runId);
    await core.handle(stream, monitorRunDecider, { type: 'StartRun', run });
    const jobs = plannedJobs(run, KEYWORDS);
    // 'late search': in run 2 the first keyword's search is recorded last, after the other keywords' of the run
    const indexes = order === 'late search' && r === 2 ? [1, 2, 3, 0] : [0, 1, 2, 3];
    for (const [n, i] of indexes.entries()) {
      const ranks = ranksOf(r, i);
      const res = await core.handle(stream, monitorRunDecider, {
        type: 'RecordCheck',
        runId,
        keyword: KEYWORDS[i]!,
        jobId: jobs[i]!.jobId,
        checkedAt: day(r, i + 1),
        ok: ranks !== 'failed',
        ...(ranks === 'failed' ? { failure: 'captcha' } : {}),
        ranks: ranks === 'failed' ? [] : ranks,
        now: day(r, 5),
      });
      if (n === 1) halfWay.push(res.position!);
    }
  }
  await core.projector.waitFor(await core.eventStore.headPosition());
  /** every alert raised so far, by id, with what it says (not its monitor and key: those of this core) */
  const raised = async () =>
    (await core.eventStore.readAll({ fromPosition: 0, maxCount: 100_000 }))
      .filter((e) => e.type === 'MonitorAlertRaised')
      .map((e) =>
        JSON.stringify({ ...(e.data as object), raisedAt: undefined, monitorId: undefined, keyId: undefined }),
      )
      .sort();
  /** how many searches the alerter looked up in the history (each one it compared with a search it had not seen) */
  let lookups = 0;
  /** runs an alerter from `from` until it has handled the whole log */
  const alert = async (options: { fromHistory?: boolean; from?: number }) => {
    core.readModels.commit([], 'monitor-alerter', options.from ?? 0);
    const ranks = core.queries.ranks;
    const queries = {
      ...core.queries,
      ranks: {
        ...ranks,
        lastSuccesses: (...args: Parameters<typeof ranks.lastSuccesses>) => {
          lookups += args[1].length;
          return ranks.lastSuccesses(...args);
        },
      },
    };
    const deps = {
      eventStore: core.eventStore,
      readModels: core.readModels,
      queries,
      handle: core.handle,
      projected: (p: number) => core.projector.waitFor(p),
    };
    const alerter = options.fromHistory ? createHistoryAlerter({ ...deps, versions }) : createAlerter(deps);
    await alerter.start();
    const head = await core.eventStore.headPosition();
    for (let i = 0; i < 400 && alerter.position() < head; i++) await new Promise((r) => setTimeout(r, 25));
    await alerter.stop();
    return raised();
  };
  return { alert, halfWay, lookups: () => lookups };
};

const ofRuns = (alerts: string[], runs: number[]) =>
  alerts.filter((a) => runs.some((r) => a.includes(`"runId":"run_${String(r).padStart(24, '0')}"`)));

t.test('alerter › from the checks it raises what reading the history raised', async (t) => {
  const fromHistory = await (await withRuns(t, 'in order')).alert({ fromHistory: true });
  t.ok(fromHistory.length >= 10, `the history raises ${fromHistory.length} alerts of these runs`);
  const kinds = new Set(fromHistory.map((a) => (JSON.parse(a) as { kind: string }).kind));
  for (const kind of ['moved', 'entered_top', 'left_top', 'url_changed', 'feature_gained', 'run_failed']) {
    t.ok(kinds.has(kind), `among them ${kind}`);
  }

  await t.test('followed from the start of the log', async (t) => {
    const runs = await withRuns(t, 'in order');
    t.same(await runs.alert({}), fromHistory);
    t.equal(runs.lookups(), KEYWORDS.length, 'only the first run looked in the history (for searches before it)');
  });

  await t.test(
    'met half way through a run (a restart): that run read back, earlier searches from the history',
    async (t) => {
      const runs = await withRuns(t, 'in order');
      const late = await runs.alert({ from: runs.halfWay[3] });
      t.same(late, ofRuns(fromHistory, [3, 4, 5]), 'the alerts of runs 3 to 5, as the history says');
      t.ok(late.length > 0, 'some');
    },
  );

  await t.test("a run's searches recorded in another order than they were made", async (t) => {
    const history = await (await withRuns(t, 'late search')).alert({ fromHistory: true });
    t.same(await (await withRuns(t, 'late search')).alert({}), history);
  });
});
