import t from 'tap';
import { streams } from '../../contracts/events.js';
import type { JobMessage } from '../../contracts/jobMessage.js';
import { SearchRequest } from '../../contracts/search.js';
import { searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';
import { createSearchService } from '../../services/application/searches.js';
import { createFairDispatcher, createQuotaReleaser } from '../../services/dispatcher/dispatcher.js';
import { type Core, reactorConformance } from './reactorSuite.js';

/** a key and the search service, and ways to move a job through its life as a crawler would */
const jobsOf = async (core: Core) => {
  const created = await core.keys.create({ tier: 'enterprise' });
  await core.projector.waitFor(await core.eventStore.headPosition());
  const key = core.queries.keys.byId(created.keyId)!;
  const searches = createSearchService({ ...core, cacheTtlS: 0 });
  let n = 0;
  const now = () => new Date().toISOString();
  return {
    key,
    submit: async (priority: 'live' | 'bulk' = 'live') =>
      (await searches.submit(key, SearchRequest.parse({ keyword: `r${n++}`, depth: 10 }), {}, undefined, priority))
        .jobId,
    start: (jobId: string) =>
      core.handle(streams.searchJob(jobId), searchJobDecider, {
        type: 'StartCrawl',
        jobId,
        attempt: 1,
        worker: 'test',
        now: now(),
      }),
    fail: (jobId: string, final: boolean) =>
      core.handle(streams.searchJob(jobId), searchJobDecider, {
        type: 'FailCrawl',
        jobId,
        attempt: 1,
        reason: 'test',
        failure: { code: 'SERP_CRAWL_BLOCKED', kind: 'captcha' },
        final,
        now: now(),
      }),
  };
};

t.test('the quota releaser', (t) =>
  reactorConformance(t, {
    name: 'quota-releaser',
    async prepare(core) {
      const jobs = await jobsOf(core);
      // per half: three jobs failed for good (released), one failed and retried, one still running (neither)
      const half = async () => {
        for (let i = 0; i < 3; i++) {
          const id = await jobs.submit();
          await jobs.start(id);
          await jobs.fail(id, true);
        }
        const retried = await jobs.submit();
        await jobs.start(retried);
        await jobs.fail(retried, false);
        await jobs.start(await jobs.submit());
      };
      return {
        seed: () => half(),
        poison: async (foreign) => {
          await foreign.appendToStream('searchJob-poison', [{ type: 'CrawlFailed', data: { jobId: 7, final: 'yes' } }]);
        },
        create: (deps) => createQuotaReleaser({ ...deps, handle: core.handle }),
        async decisions() {
          const all = await core.eventStore.readAll({ fromPosition: 0, maxCount: 100_000 });
          return all
            .filter((e) => e.type === 'QuotaReleased')
            .map((e) => (e.data as { jobId: string }).jobId)
            .sort();
        },
        expected: [3, 6],
      };
    },
  }),
);

t.test('the fair dispatcher', (t) =>
  reactorConformance(t, {
    name: 'fair-dispatcher',
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
  }),
);
