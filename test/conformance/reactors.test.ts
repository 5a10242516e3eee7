import t from 'tap';
import { streams } from '../../contracts/events.js';
import type { JobMessage } from '../../contracts/jobMessage.js';
import { CreateMonitorBody } from '../../contracts/monitors.js';
import { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';
import { composeApplication } from '../../services/compose/application.js';
import { loadConfig } from '../../services/config/config.js';
import { createFairDispatcher, createQuotaReleaser } from '../../services/dispatcher/dispatcher.js';
import { createQueuePositions } from '../../services/fairShare/queuePosition.js';
import { createMetrics } from '../../services/metrics/metrics.js';
import { createMonitorVersions } from '../../services/monitors/commands/monitorVersions.js';
import { createAlerter } from '../../services/monitors/workers/alerter.js';
import { createRankRecorder } from '../../services/monitors/workers/recorder.js';
import { REACTORS, type ReactorName } from '../../services/reactor/reactor.js';
import { createWebhookRouter } from '../../services/webhooks/workers/router.js';
import { type Core, type ReactorCase, reactorConformance } from './reactorSuite.js';

/** a reactor's case; its name is its key in CASES below */
type Case = Omit<ReactorCase, 'name'>;

/** what the reactors recorded: `field` of every event of `type` in the log, one entry per event, sorted */
const recorded = async (core: Core, type: string, field: string) =>
  (await core.eventStore.readAll({ fromPosition: 0, maxCount: 1_000_000 }))
    .filter((e) => e.type === type)
    .map((e) => String((e.data as Record<string, unknown>)[field]))
    .sort();

/** a key and the search service, and ways to move a job through its life as a crawler would */
const jobsOf = async (core: Core) => {
  const app = composeApplication(
    { ...core, resolveHost: async () => [{ address: '127.0.0.1', family: 4 }] },
    loadConfig({ SERP_CACHE_TTL_S: '0', SERP_WEBHOOK_ALLOW_HTTP: '1', SERP_WEBHOOK_ALLOW_PRIVATE: '1' }),
  );
  const { keys, searches } = app;
  const created = await keys.create({ tier: 'enterprise' });
  await core.projector.waitFor(await core.eventStore.headPosition());
  const key = core.queries.keys.byId(created.keyId)!;
  let n = 0;
  const now = () => new Date().toISOString();
  const submit = async (priority: 'live' | 'bulk' = 'live') =>
    (await searches.submit(key, SearchRequest.parse({ keyword: `r${n++}`, depth: 10 }), {}, undefined, priority)).jobId;
  const start = (jobId: string) =>
    core.handle(streams.searchJob(jobId), searchJobDecider, {
      type: 'StartCrawl',
      jobId,
      attempt: 1,
      worker: 'test',
      now: now(),
    });
  const fail = (jobId: string, final: boolean) =>
    core.handle(streams.searchJob(jobId), searchJobDecider, {
      type: 'FailCrawl',
      jobId,
      attempt: 1,
      reason: 'test',
      failure: { code: 'SERP_CRAWL_BLOCKED', kind: 'captcha' },
      final,
      now: now(),
    });
  return {
    app,
    key,
    submit,
    start,
    fail,
    /** three jobs failed for good, one failed and retried, one still running */
    async failures() {
      for (let i = 0; i < 3; i++) {
        const id = await submit();
        await start(id);
        await fail(id, true);
      }
      const retried = await submit();
      await start(retried);
      await fail(retried, false);
      await start(await submit());
    },
  };
};

const quotaReleaser: Case = {
  async prepare(core) {
    const jobs = await jobsOf(core);
    return {
      // per half: three jobs failed for good (released), one failed and retried, one still running (neither)
      seed: () => jobs.failures(),
      poison: async (foreign) => {
        await foreign.appendToStream('searchJob-poison', [{ type: 'CrawlFailed', data: { jobId: 7, final: 'yes' } }]);
      },
      create: (deps) => createQuotaReleaser({ ...deps, queries: core.queries, handle: core.handle }),
      decisions: () => recorded(core, 'QuotaReleased', 'jobId'),
      expected: [3, 6],
    };
  },
};

const fairDispatcher: Case = {
  async prepare(core) {
    const jobs = await jobsOf(core);
    // one queue whatever the instances: the queue's dedupe is what two dispatchers rely on, as on JetStream
    const queue = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5, dedupeWindowMs: 600_000 });
    const delivered: JobMessage[] = [];
    const consumer = queue.consume(
      async (d) => {
        delivered.push(d.message);
        await d.ack();
      },
      { concurrency: 100 },
    );
    const started = new Set<string>();
    const half = async () => {
      for (let i = 0; i < 6; i++) await jobs.submit(i % 2 ? 'live' : 'bulk');
    };
    return {
      seed: () => half(),
      poison: async (foreign) => {
        await foreign.appendToStream('searchJob-poison', [
          { type: 'SearchSubmitted', data: { jobId: 'poison', charged: 'yes' } },
        ]);
      },
      create: (deps) =>
        createFairDispatcher({
          ...deps,
          queries: core.queries,
          queue,
          settings: { fairShare: true, queueAhead: 1 },
        }),
      // the crawlers: each job delivered is started, which lets the next one go
      async drive() {
        for (const m of delivered) {
          if (started.has(m.jobId)) continue;
          started.add(m.jobId);
          await jobs.start(m.jobId);
        }
      },
      async decisions() {
        return delivered
          .filter((m) => m.dispatch === 0)
          .map((m) => m.jobId)
          .sort();
      },
      expected: [6, 12],
      close: async () => {
        await consumer.stop();
        await queue.close();
      },
    };
  },
};

/** a monitor of `keywords` whose manual runs' jobs the test submits and fails, as the scheduler and a crawler would */
const monitorRuns = async (core: Core, keywords: number) => {
  const jobs = await jobsOf(core);
  const versions = createMonitorVersions(core.eventStore);
  const projected = (p: number) => core.projector.waitFor(p);
  const { monitors, searches } = jobs.app;
  const monitor = await monitors.create(
    jobs.key,
    CreateMonitorBody.parse({
      name: 'conformance',
      keywords: Array.from({ length: keywords }, (_, i) => `kw ${i}`),
      domains: ['example.com'],
      schedule: 'weekly',
      depth: 10,
      alerts: { run_failed: true },
    }),
  );
  /** a manual run; each of its jobs submitted, started and failed for good (or only `only` of them) */
  const run = async (only?: number) => {
    const started = await monitors.run(jobs.key, monitor.monitorId, true);
    for (const j of started.jobs.slice(0, only)) {
      await searches.submit(
        jobs.key,
        SearchRequest.parse({ keyword: j.keyword, depth: 10 }),
        {},
        { jobId: j.job_id, monitor: { monitorId: monitor.monitorId, runId: started.run_id } },
      );
      await jobs.start(j.job_id);
      await jobs.fail(j.job_id, true);
    }
    return started;
  };
  const eventsOf = async (type: string) =>
    (await core.eventStore.readAll({ fromPosition: 0, maxCount: 1_000_000 })).filter((e) => e.type === type);
  return { jobs, monitors, monitor, run, eventsOf, versions, projected };
};

const rankRecorder: Case = {
  async prepare(core) {
    const m = await monitorRuns(core, 6);
    let current: Awaited<ReturnType<typeof m.run>> | undefined;
    return {
      async seed(part) {
        // one run of six keywords: three of its jobs end in each half
        current ??= await m.run(0);
        const { searches } = m.jobs.app;
        for (const j of current.jobs.slice(part * 3, part * 3 + 3)) {
          await searches.submit(
            m.jobs.key,
            SearchRequest.parse({ keyword: j.keyword, depth: 10 }),
            {},
            { jobId: j.job_id, monitor: { monitorId: m.monitor.monitorId, runId: current.run_id } },
          );
          await m.jobs.start(j.job_id);
          await m.jobs.fail(j.job_id, true);
        }
      },
      poison: async (foreign) => {
        await foreign.appendToStream('searchJob-poison', [{ type: 'CrawlCompleted', data: { jobId: ['x'] } }]);
      },
      create: (deps) => createRankRecorder({ ...deps, queries: core.queries, handle: core.handle }),
      decisions: () => recorded(core, 'MonitorKeywordChecked', 'jobId'),
      expected: [3, 6],
    };
  },
};

const alerter: Case = {
  async prepare(core) {
    const m = await monitorRuns(core, 2);
    // the checks the alerter compares are the recorder's: one runs throughout, beside the alerters under test
    const recorder = createRankRecorder({
      eventStore: core.eventStore,
      readModels: core.readModels,
      queries: core.queries,
      handle: core.handle,
      projected: m.projected,
    });
    await recorder.start();
    const completed = async (n: number) => {
      for (let i = 0; i < 400 && (await m.eventsOf('MonitorRunCompleted')).length < n; i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    return {
      // one manual run a half, each of whose searches fails: the run's `run_failed` alert
      async seed(part) {
        await m.run();
        await completed(part + 1);
        await core.projector.waitFor(await core.eventStore.headPosition());
      },
      poison: async (foreign) => {
        await foreign.appendToStream('monitorRun-poison', [{ type: 'MonitorRunCompleted', data: { runId: 1 } }]);
      },
      create: (deps) => createAlerter({ ...deps, queries: core.queries, handle: core.handle }),
      decisions: () => recorded(core, 'MonitorAlertRaised', 'alertId'),
      expected: [1, 2],
      close: () => recorder.stop(),
    };
  },
};

const webhookRouter: Case = {
  async prepare(core) {
    const jobs = await jobsOf(core);
    await jobs.app.webhooks.create(jobs.key, { url: 'http://127.0.0.1:9/hook', events: ['search.failed'] });
    const half = async () => {
      for (let i = 0; i < 3; i++) {
        const id = await jobs.submit();
        await jobs.start(id);
        await jobs.fail(id, true);
      }
    };
    return {
      seed: () => half(),
      poison: async (foreign) => {
        await foreign.appendToStream('searchJob-poison', [{ type: 'CrawlFailed', data: { final: 1 } }]);
      },
      create: (deps) => createWebhookRouter({ ...deps, queries: core.queries, handle: core.handle, baseUrl: '' }),
      decisions: () => recorded(core, 'WebhookDeliveryScheduled', 'messageId'),
      expected: [3, 6],
    };
  },
};

const queuePositions: Case = {
  async prepare(core) {
    const jobs = await jobsOf(core);
    const submitted: string[] = [];
    let newest: ReturnType<typeof createQueuePositions> | undefined;
    // per half: three jobs waiting, one crawling (each in its view), and one that ended (gone from it)
    const half = async () => {
      for (let i = 0; i < 3; i++) submitted.push(await jobs.submit(i % 2 ? 'live' : 'bulk'));
      const crawling = await jobs.submit();
      submitted.push(crawling);
      await jobs.start(crawling);
      const ended = await jobs.submit();
      submitted.push(ended);
      await jobs.start(ended);
      await jobs.fail(ended, true);
    };
    return {
      seed: () => half(),
      poison: async (foreign) => {
        await foreign.appendToStream('searchJob-poison', [
          { type: 'SearchSubmitted', data: { jobId: 'poison', charged: 'yes' } },
        ]);
      },
      create: (deps) => {
        newest = createQueuePositions({
          ...deps,
          queries: core.queries,
          laneMinShare: 0.1,
          laneSlots: 2,
        });
        return newest;
      },
      // the jobs the newest view knows, each with its lane: where it stands is its own (docs/fleet.md)
      async decisions() {
        const view = newest;
        if (!view) return [];
        return submitted
          .flatMap((jobId) => {
            const p = view.of(jobId);
            return p ? [`${jobId} ${p.lane}`] : [];
          })
          .sort();
      },
      expected: [4, 8],
    };
  },
};

const metrics: Case = {
  async prepare(core) {
    const jobs = await jobsOf(core);
    let newest: ReturnType<typeof createMetrics> | undefined;
    return {
      // per half: three searches failed for good (counted), one failed and retried (an attempt, not a crawl), one
      // still running
      seed: () => jobs.failures(),
      poison: async (foreign) => {
        await foreign.appendToStream('searchJob-poison', [{ type: 'CrawlFailed', data: { final: 'no' } }]);
      },
      create: (deps) => {
        newest = createMetrics({ processMetrics: false });
        return newest.logFollower(deps);
      },
      // the newest registry's count of searches failed for good, one entry per search counted
      async decisions() {
        const counter = newest?.registry.getSingleMetric('serp_crawls_total');
        const values = counter ? (await counter.get()).values : [];
        const failed = values.filter((v) => v.labels.outcome === 'failed').reduce((n, v) => n + v.value, 0);
        return Array.from({ length: failed }, (_, i) => `failed search ${String(i).padStart(4, '0')}`);
      },
      expected: [3, 6],
    };
  },
};

/**
 * Every reactor's case, by name: a record over REACTORS' names (services/reactor/reactor.ts), so a new reactor does
 * not compile until its case is here, and every case runs the whole suite.
 */
const CASES: Record<ReactorName, Case> = {
  'fair-dispatcher': fairDispatcher,
  dispatcher: quotaReleaser,
  'monitor-recorder': rankRecorder,
  'monitor-alerter': alerter,
  'webhook-router': webhookRouter,
  'queue-positions': queuePositions,
  metrics,
};

// the reactors' cases side by side: each has a core (data directory, log, read models) of its own, and most of a
// case's time is the suite's waits for a duplicate to show (reactorSuite.ts), not work
t.jobs = Object.keys(REACTORS).length;
for (const name of Object.keys(REACTORS) as ReactorName[]) {
  t.test(`the ${name} reactor`, (t) => reactorConformance(t, { name, ...CASES[name] }));
}
