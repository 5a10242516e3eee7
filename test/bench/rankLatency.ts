/**
 * Rank points after their job ends (docs/benchmarks.md#rank-points-after-their-job): how long from a monitor's crawl
 * ending to its rank points being readable (the history's read model holds its check), while monitors with alerts and
 * a long history complete runs beside it.
 *
 *   npx tsx test/bench/rankLatency.ts [--rounds 2] [--monitors 4] [--keywords 200] [--days 365] [--domains 3]
 *     [--runs 2] [--rate 25]
 *
 * One embedded store is prepared once: `--monitors` monitors of `--keywords` keywords and `--domains` domains, every
 * alert asked for, each with `--days` daily runs of history (their events appended as the run decider decides them,
 * then projected). Each side-round copies it to a fresh data directory and runs the write side's rank pipeline on it,
 * as the monitor worker composes it: the projector, the rank recorder and the alerter, on one thread as on the
 * pipeline thread. The bench plays the scheduler and the crawlers: `--runs` runs of every monitor started as the
 * scheduler starts a slot's, and their jobs submitted, started and their results stored, untimed; then the crawls end
 * at `--rate` a second across the monitors (each job's `CrawlCompleted` appended at its slot on the same thread, as
 * the crawl worker appends it), each monitor's run a share of a run after the one before, so that runs complete all
 * along while other monitors' jobs end. Measured per job: its slot (the crawl's result in hand) → its check readable
 * (p50, p99, max; a thread held up delays the append too, so it counts), the same from its `CrawlCompleted`
 * recorded, and the event loop's delay (p99, max) while it ran.
 * - log: the alerter as shipped, comparing each run's checks as the log hands them over;
 * - history: the alerter as it worked before (historyAlerter.ts beside this bench: the same reactor, which waits for the
 *   read models to hold each completed run, then reads every keyword's whole history for the search before).
 * Sides alternate per round. A failure is a job whose points are not readable 60 s after the last crawl ended; no
 * ratio when a side had one, or when the sides raised different numbers of alerts. It asserts nothing.
 */
import { cpSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { type DomainEvent, type DomainRank, type RawHtmlRef, streams } from '../../contracts/events.js';
import { CreateMonitorBody } from '../../contracts/monitors.js';
import type { ParsedSerp } from '../../contracts/result.js';
import { SearchRequest } from '../../contracts/search.js';
import { scheduledRunId } from '../../domain/monitor/ids.js';
import { type MonitorRunEvent, monitorRunDecider, plannedJobs, runRecord } from '../../domain/monitor/monitorRun.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';
import { composeApplication } from '../../services/compose/application.js';
import { openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import { createMonitorVersions } from '../../services/monitors/commands/monitorVersions.js';
import { createAlerter } from '../../services/monitors/workers/alerter.js';
import { createRankRecorder } from '../../services/monitors/workers/recorder.js';
import { removeDir, tempDataDir } from '../support/service.js';
import { alternate, type Figure, machineNote, numberArg, printRatio, quantile } from './compare.js';
import { createHistoryAlerter } from './historyAlerter.js';

const ROUNDS = numberArg('rounds', 2);
const MONITORS = numberArg('monitors', 4);
const KEYWORDS = numberArg('keywords', 200);
const DAYS = numberArg('days', 365);
const DOMAINS = numberArg('domains', 3);
const RUNS = numberArg('runs', 2);
const RATE = numberArg('rate', 25);
const DAY_MS = 86_400_000;

const config = (dataDir: string) => loadConfig({ SERP_CACHE_TTL_S: '0' }, { dataDir });
const domainsOf = (m: number) => Array.from({ length: DOMAINS }, (_, d) => `site${m}-${d}.example`);
const keywordsOf = (m: number) => Array.from({ length: KEYWORDS }, (_, i) => `kw ${m} ${i}`);

/** where domain d of monitor m ranks for keyword i on search s (0: not in the top 20), and its URL */
const positionOf = (s: number, m: number, i: number, d: number) => {
  const p = 1 + ((s * 7 + i * 3 + d * 5 + m) % 26);
  return p > 20 ? 0 : p;
};
const urlOf = (s: number, m: number, i: number, d: number) =>
  `https://www.site${m}-${d}.example/${i}/${(s + d) % 3 === 0 ? 'a' : 'b'}`;

/** a recorded check's ranks for search s (history), as the recorder would derive them from `resultOf(s, …)` */
const ranksOf = (s: number, m: number, i: number): DomainRank[] =>
  domainsOf(m).map((domain, d) => {
    const position = positionOf(s, m, i, d);
    return position ? { domain, position, url: urlOf(s, m, i, d), features: [] } : { domain, features: [] };
  });

/** the parsed result of search s of monitor m's keyword i: twenty organic results, the tracked domains among them */
const resultOf = (s: number, m: number, i: number): ParsedSerp => {
  const at = new Map<number, string>();
  domainsOf(m).forEach((_, d) => {
    const p = positionOf(s, m, i, d);
    if (p && !at.has(p)) at.set(p, urlOf(s, m, i, d));
  });
  return {
    organic_results: Array.from({ length: 20 }, (_, k) => ({
      position: k + 1,
      title: `result ${k + 1}`,
      link: at.get(k + 1) ?? `https://filler${k + 1}.example/${i}`,
    })),
    serp_features: {},
    information: {},
  };
};

/** the monitors and their history, once: each run's events as the run decider decides them, one append a run */
const prepare = async () => {
  const dir = tempDataDir('bench-rank-latency-base');
  const started = performance.now();
  const core = await openCore(config(dir));
  const app = composeApplication({ ...core, resolveHost: async () => [] }, config(dir));
  const { keyId } = await app.keys.create({ tier: 'enterprise', label: 'bench' });
  await core.projector.waitFor(await core.eventStore.headPosition());
  const key = core.queries.keys.byId(keyId)!;
  const versions = createMonitorVersions(core.eventStore);
  const monitorIds: string[] = [];
  const firstDay = Date.UTC(2026, 0, 1) - DAYS * DAY_MS;
  let checks = 0;
  for (let m = 0; m < MONITORS; m++) {
    const monitor = await app.monitors.create(
      key,
      CreateMonitorBody.parse({
        name: `bench ${m}`,
        keywords: keywordsOf(m),
        domains: domainsOf(m),
        schedule: 'daily',
        alerts: { min_move: 3, top: [3, 10], competitor_outranks: true, url_changed: true, run_failed: true },
      }),
    );
    monitorIds.push(monitor.monitorId);
    const at = (await versions.current(monitor.monitorId))!;
    for (let s = 0; s < DAYS; s++) {
      const slot = new Date(firstDay + s * DAY_MS).toISOString();
      const runId = scheduledRunId(monitor.monitorId, slot);
      const run = runRecord(monitor, at, {
        runId,
        trigger: 'schedule',
        slot,
        noCache: true,
        startAt: slot,
        intervalMs: 1_000,
        startedAt: slot,
      });
      const events: MonitorRunEvent[] = [];
      const decide = (c: Parameters<typeof monitorRunDecider.decide>[0]) => {
        const state = events.reduce(monitorRunDecider.evolve, monitorRunDecider.initialState());
        events.push(...monitorRunDecider.decide(c, state));
      };
      decide({ type: 'StartRun', run });
      plannedJobs(run, at.keywords).forEach((job, i) => {
        const failed = (s * 13 + i) % 97 === 0;
        const checkedAt = new Date(Date.parse(slot) + i * 1_000).toISOString();
        decide({
          type: 'RecordCheck',
          runId,
          keyword: job.keyword,
          jobId: job.jobId,
          checkedAt,
          ok: !failed,
          ...(failed ? { failure: 'captcha' } : {}),
          ranks: failed ? [] : ranksOf(s, m, i),
          now: checkedAt,
        });
      });
      await core.eventStore.appendToStream(streams.monitorRun(runId), events as DomainEvent[], {
        expectedVersion: 'no_stream',
      });
      checks += at.keywords.length;
    }
  }
  const head = await core.eventStore.headPosition();
  await core.projector.waitFor(head);
  // the followers start where the history ends: it is the past, handled long ago
  core.readModels.commit([], 'monitor-recorder', head);
  core.readModels.commit([], 'monitor-alerter', head);
  await core.close();
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `# prepared: ${MONITORS} monitors, ${checks} checks of history (${checks * DOMAINS} points) in ${seconds.toFixed(1)} s`,
  );
  return { dir, keyId, monitorIds };
};

interface RoundResult {
  /** ms from each crawl's slot (its result in hand) to its check readable */
  latencies: number[];
  /** ms from each CrawlCompleted recorded to its check readable */
  fromRecorded: number[];
  missing: number;
  alerts: number;
  loopP99: number;
  loopMax: number;
}

const side =
  (base: Awaited<ReturnType<typeof prepare>>, fromHistory: boolean) =>
  async (round: number): Promise<RoundResult> => {
    const dir = tempDataDir('bench-rank-latency');
    cpSync(base.dir, dir, { recursive: true });
    const core = await openCore(config(dir));
    const app = composeApplication({ ...core, resolveHost: async () => [] }, config(dir));
    const key = core.queries.keys.byId(base.keyId)!;
    const projected = (p: number) => core.projector.waitFor(p);
    const versions = createMonitorVersions(core.eventStore);
    const now = () => new Date().toISOString();

    // every run started as the scheduler starts a slot's (the run decider, on the run's stream), and each of its
    // jobs submitted, started and its result stored, untimed; the monitors' runs staggered by a share of a run each,
    // so that runs complete all along while other monitors' jobs end
    const liveRuns: string[] = [];
    const jobs: Array<{ order: number; jobId: string; resultRef: RawHtmlRef; rawHtmlRef: RawHtmlRef }> = [];
    for (const [m, monitorId] of base.monitorIds.entries()) {
      const monitor = core.queries.monitors.byId(monitorId)!;
      const at = (await versions.current(monitorId))!;
      for (let r = 0; r < RUNS; r++) {
        const s = DAYS + round * RUNS + r;
        const slot = new Date(Date.UTC(2026, 0, 1) + (s - DAYS) * DAY_MS).toISOString();
        const runId = scheduledRunId(monitorId, `${slot}#${round}`);
        const run = runRecord(monitor, at, {
          runId,
          trigger: 'schedule',
          slot,
          noCache: true,
          startAt: now(),
          intervalMs: 1_000,
          startedAt: now(),
        });
        const started = await core.handle(streams.monitorRun(runId), monitorRunDecider, { type: 'StartRun', run });
        await projected(started.position!);
        liveRuns.push(runId);
        for (const [i, job] of plannedJobs(run, at.keywords).entries()) {
          await app.searches.submit(
            key,
            SearchRequest.parse({ keyword: job.keyword, depth: 20 }),
            {},
            {
              jobId: job.jobId,
              monitor: { monitorId, runId },
            },
          );
          await core.handle(streams.searchJob(job.jobId), searchJobDecider, {
            type: 'StartCrawl',
            jobId: job.jobId,
            attempt: 1,
            worker: 'bench',
            now: now(),
          });
          jobs.push({
            order: r * KEYWORDS + i + Math.floor((m * KEYWORDS) / MONITORS),
            jobId: job.jobId,
            resultRef: await putResult(core.blobStore, resultBlobKey(job.jobId), resultOf(s, m, i)),
            rawHtmlRef: await core.blobStore.put(`raw/${job.jobId}.html`, '<html></html>'),
          });
        }
      }
    }
    jobs.sort((a, b) => a.order - b.order);
    const from = await core.eventStore.headPosition();
    await projected(from);

    const parts = { eventStore: core.eventStore, readModels: core.readModels, queries: core.queries, projected };
    const recorder = createRankRecorder({ ...parts, handle: core.handle });
    const alerter = fromHistory
      ? createHistoryAlerter({ ...parts, handle: core.handle, versions })
      : createAlerter({ ...parts, handle: core.handle });
    // when each crawl's result was in hand (its slot), when its CrawlCompleted was recorded, when its check was
    // readable (the read models hold it: noted as soon as the projector has it), on the clock the log records with
    const done = new Map<string, number>();
    const ended = new Map<string, number>();
    const readable = new Map<string, number>();
    const follower = core.eventStore.subscribeToAll(from, (batch) => {
      for (const e of batch) {
        const { jobId } = e.data as { jobId: string };
        if (e.type === 'CrawlCompleted') ended.set(jobId, Date.parse(e.metadata.recordedAt));
        else if (e.type === 'MonitorKeywordChecked') {
          void projected(e.globalPosition).then(() => readable.set(jobId, Date.now()));
        }
      }
    });
    await recorder.start();
    await alerter.start();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();

    // the crawls end at RATE a second: at its slot each job's CrawlCompleted is appended, on this thread, as the
    // crawl worker appends it beside the recorder and the alerter (a thread held up holds the append up too)
    const inFlight: Promise<unknown>[] = [];
    const t0 = Date.now();
    for (const [n, job] of jobs.entries()) {
      const slot = t0 + (n * 1000) / RATE;
      if (slot > Date.now()) await new Promise((res) => setTimeout(res, slot - Date.now()));
      done.set(job.jobId, slot);
      inFlight.push(
        core.handle(streams.searchJob(job.jobId), searchJobDecider, {
          type: 'CompleteCrawl',
          jobId: job.jobId,
          status: 'done',
          pages: [],
          resultRef: job.resultRef,
          rawHtmlRef: job.rawHtmlRef,
          parserVersion: 'bench',
          blocks: 0,
          now: now(),
        }),
      );
    }
    await Promise.all(inFlight);
    const deadline = Date.now() + 60_000;
    while (readable.size < jobs.length && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    const head = await core.eventStore.headPosition();
    while (alerter.position() < head && Date.now() < deadline + 60_000) await new Promise((res) => setTimeout(res, 50));
    loop.disable();
    await follower.stop();
    await alerter.stop();
    await recorder.stop();
    const since = (start: Map<string, number>) =>
      jobs.flatMap(({ jobId }) => {
        const a = start.get(jobId);
        const b = readable.get(jobId);
        return a === undefined || b === undefined ? [] : [b - a];
      });
    const live = new Set(liveRuns);
    const alerts = (await core.eventStore.readAll({ fromPosition: from, maxCount: 10_000_000 })).filter(
      (e) => e.type === 'MonitorAlertRaised' && live.has((e.data as { runId: string }).runId),
    ).length;
    await core.close();
    removeDir(dir);
    const latencies = since(done);
    return {
      latencies,
      fromRecorded: since(ended),
      missing: jobs.length - latencies.length,
      alerts,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
    };
  };

console.log(
  `# rank points after their job: ${MONITORS} monitors × ${KEYWORDS} keywords × ${DOMAINS} domains, ${DAYS} days of history, ${RUNS} runs of each monitor at ${RATE} jobs/s; ${ROUNDS} rounds, sides alternated; ${machineNote()}`,
);
const base = await prepare();
const ms = (x: number) => `${Math.round(x)} ms`;
const describe = (r: RoundResult) =>
  `crawl done → readable p50 ${ms(quantile(r.latencies, 0.5))}, p99 ${ms(quantile(r.latencies, 0.99))}, max ${ms(Math.max(0, ...r.latencies))} (from CrawlCompleted recorded: p99 ${ms(quantile(r.fromRecorded, 0.99))}); ${r.latencies.length} jobs, ${r.missing} missing; ${r.alerts} alerts; event loop delay p99 ${ms(r.loopP99)}, max ${ms(r.loopMax)}`;
const results = await alternate(ROUNDS, { log: side(base, false), history: side(base, true) }, (round, r) => {
  console.log(`round ${round + 1} log:     ${describe(r.log)}`);
  console.log(`round ${round + 1} history: ${describe(r.history)}`);
});
removeDir(base.dir);
const alertsOf = (rs: RoundResult[]) => rs.map((r) => r.alerts).join(', ');
const p99Of = (rs: RoundResult[], otherAlerts: number[]): Figure => ({
  value: quantile(
    rs.flatMap((r) => r.latencies),
    0.99,
  ),
  // a round whose alerts differ from the other side's did not do the same work
  failures: rs.reduce((n, r, i) => n + r.missing + (r.alerts === otherAlerts[i] ? 0 : 1), 0),
});
const log = p99Of(
  results.log,
  results.history.map((r) => r.alerts),
);
const history = p99Of(
  results.history,
  results.log.map((r) => r.alerts),
);
console.log(`alerts raised per round: log ${alertsOf(results.log)}; history ${alertsOf(results.history)}`);
console.log(
  `crawl done → readable p99 over all rounds: log ${ms(log.value)}, history ${ms(history.value)} (goal ≤ 1,000 ms: ${log.value <= 1000 ? 'met' : 'not met'})`,
);
printRatio('crawl done → readable p99, history / log', history, log, ['history', 'log']);
