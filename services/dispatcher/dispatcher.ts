import type { JobMessage } from '../../contracts/jobMessage.js';
import { LANES, type Lane } from '../../contracts/lanes.js';
import { depthOf, pagesFor } from '../../contracts/search.js';
import { endedElsewhere } from '../../domain/location/placement.js';
import { adviseRoutes, placeIdOf, placeKeyOf, type RouteAdvice } from '../../domain/location/routeChoice.js';
import { laneOf } from '../../domain/searchJob/searchJob.js';
import { type ReadModelQueries, readModelQueries } from '../../projections/index.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { QueuedJob } from '../../projections/queue/queries.js';
import type { FollowerDeps } from '../application/followerDeps.js';
import { readJobState } from '../application/jobState.js';
import { releaseQuota } from '../application/quota.js';
import type { Config } from '../config/config.js';
import { createFairQueue } from '../fairShare/fairQueue.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';
import { type JobQueue, type QueueClass, queueClassOf } from '../ports/jobQueue.js';
import type { ReadModelStore } from '../ports/readModelStore.js';
import { PROJECTOR_CHECKPOINT } from '../projector/projector.js';
import { createReactor, type Reactor, type ReactorDeps, reactorDeps } from '../reactor/reactor.js';

/** A job the scheduler holds until the crawlers can start it soon: the queue read model's fields it decides on. */
type Waiting = Pick<QueuedJob, 'jobId' | 'keyId' | 'lane' | 'pages' | 'weight' | 'position'> & {
  /** kept from the live event; a job loaded at start reads it back from the read models when it goes */
  message?: JobMessage;
};

/** A job out with the crawlers: on the queue (not started yet) or crawling. */
interface Out {
  lane: Lane;
  keyId: string;
  cls: QueueClass;
  started: boolean;
}

/**
 * The dispatcher's configuration: lanes and fair share (SERP_FAIR_SHARE; off, every job goes to the queue at once,
 * first come first served), the jobs per lane (and per lane's express class) on the queue ahead of the crawlers
 * (SERP_QUEUE_AHEAD), and whether located searches follow their place's route records (SERP_ROUTE_LEARNING; absent:
 * they do).
 */
export type FairDispatcherSettings = Pick<Config, 'fairShare' | 'queueAhead'> & Partial<Pick<Config, 'routeLearning'>>;

/** the message a loaded job goes to the queue with, from its read model */
const messageOfDoc = (doc: JobStatusDoc, w: Waiting): JobMessage => ({
  jobId: doc.jobId,
  dispatch: doc.attempts,
  keyId: doc.keyId,
  cacheKey: doc.cacheKey,
  submittedAt: doc.submittedAt,
  request: doc.request,
  lane: w.lane,
  ...(w.weight !== 1 ? { weight: w.weight } : {}),
});

/**
 * The fair scheduler (docs/fleet.md#lanes-and-fair-share): it decides before the queue which job goes next, so the
 * queue (in-process or JetStream) holds only what the crawlers can start soon and a job submitted later can still go
 * first. Per lane, at most `queueAhead` jobs wait on the queue; the rest wait here, and each time a crawler starts one
 * the next goes, in fair order between keys (the fair queue: round robin by pages, weighted by tier). A key with no
 * job of the lane out goes to the lane's express class, whose crawler slots one key's backlog cannot fill.
 *
 * Its state is a read model (the `queue` view: jobs not yet ended) loaded at start, then the log followed from the
 * position that view stood at, so a restart or a crash loses nothing; what it had already put on the queue is put
 * again under the same message id (jobId + dispatch number), which the queue drops as a duplicate. Two of them (two
 * dispatcher processes) pick the same jobs in the same order from the same log, and the queue's dedupe keeps one.
 * Jobs crawling when it starts are enqueued again when the queue forgot them (the in-process queue, after a crash);
 * JetStream keeps them with the crawler that has them, or redelivers them when that crawler is gone.
 */
export const createFairDispatcher = (
  deps: {
    queries: ReadModelQueries;
    readModels: ReadModelStore;
    queue: JobQueue;
    settings: FairDispatcherSettings;
  } & ReactorDeps,
): Reactor => {
  const { queries, queue, settings } = deps;
  const waiting = createFairQueue<Waiting, Lane>({ classes: LANES, minShare: 0 });
  const byJob = new Map<string, Waiting>();
  const out = new Map<string, Out>();
  /** jobs out per lane and key */
  const outOfKey = new Map<string, number>();
  /** jobs on the queue not started yet, per class (what this dispatcher put there) */
  const pending = new Map<QueueClass, number>();
  /** crawling when the dispatcher started: enqueued again once it runs */
  let resume: JobStatusDoc[] = [];
  let pumping: Promise<void> | undefined;
  let again = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const keyOf = (lane: Lane, keyId: string) => `${lane}\u0000${keyId}`;
  const bump = (m: Map<string, number>, k: string, by: number) => {
    const n = (m.get(k) ?? 0) + by;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };

  const hold = (w: Waiting) => {
    if (byJob.has(w.jobId) || out.has(w.jobId)) return;
    byJob.set(w.jobId, w);
    // first come, first served: one flow in one class, so the queue is a plain FIFO
    waiting.push(
      w,
      settings.fairShare ? { cls: w.lane, flow: w.keyId, weight: w.weight, cost: w.pages } : { cls: 'live', flow: '' },
    );
  };

  const release = (jobId: string) => {
    const w = byJob.get(jobId);
    if (w) {
      byJob.delete(jobId);
      waiting.remove(w);
    }
  };

  const markOut = (jobId: string, o: Out) => {
    out.set(jobId, o);
    bump(outOfKey, keyOf(o.lane, o.keyId), 1);
    if (!o.started) bump(pending as Map<string, number>, o.cls, 1);
  };

  const started = (jobId: string, lane: Lane, keyId: string) => {
    const o = out.get(jobId);
    if (!o) {
      release(jobId);
      markOut(jobId, { lane, keyId, cls: lane, started: true });
    } else if (!o.started) {
      o.started = true;
      bump(pending as Map<string, number>, o.cls, -1);
    }
  };

  const ended = (jobId: string) => {
    release(jobId);
    const o = out.get(jobId);
    if (!o) return;
    out.delete(jobId);
    bump(outOfKey, keyOf(o.lane, o.keyId), -1);
    if (!o.started) bump(pending as Map<string, number>, o.cls, -1);
  };

  const messageOf = async (w: Waiting): Promise<JobMessage | undefined> => {
    if (w.message) return w.message;
    let doc = queries.jobs.byId(w.jobId);
    if (!doc) {
      await deps.projected(w.position);
      doc = queries.jobs.byId(w.jobId);
    }
    return doc ? messageOfDoc(doc, w) : undefined;
  };

  /** puts one job on the queue; false when the queue refused it (it waits again, tried later) */
  const send = async (w: Waiting, first: boolean): Promise<boolean> => {
    byJob.delete(w.jobId);
    const base = await messageOf(w);
    if (!base) return true;
    const advice = adviceFor(base);
    const message: JobMessage = {
      ...(settings.fairShare
        ? { ...base, lane: w.lane, ...(first ? { first: true } : {}) }
        : { ...base, lane: 'live' }),
      ...(advice ? { routes: advice } : {}),
    };
    const o: Out = { lane: w.lane, keyId: w.keyId, cls: queueClassOf(message), started: false };
    markOut(w.jobId, o);
    try {
      await queue.enqueue(message);
      return true;
    } catch (err) {
      ended(w.jobId);
      hold(w);
      deps.log?.('dispatch failed, retrying', { jobId: w.jobId, reason: (err as Error).message });
      return false;
    }
  };

  /** located searches sent per place, to explore the routes its record sets aside in turn */
  const locatedSent = new Map<string, number>();
  /**
   * what the place's record advises for a located search's routes (docs/locations.md#how-routes-are-chosen), read
   * when the job goes to the queue, so it is as fresh as the read models then
   */
  const adviceFor = (message: JobMessage): RouteAdvice | undefined => {
    const location = message.targeting?.location;
    if (!location || settings.routeLearning === false) return undefined;
    const key = placeKeyOf(location);
    const id = placeIdOf(key);
    const n = locatedSent.get(id) ?? 0;
    locatedSent.set(id, n + 1);
    const advice = adviseRoutes(queries.routePlacements.records(key), n);
    return advice.avoid || advice.prefer ? advice : undefined;
  };

  const room = (cls: QueueClass) => (pending.get(cls) ?? 0) < settings.queueAhead;

  const fill = async (): Promise<boolean> => {
    if (!settings.fairShare) {
      for (let w = waiting.pop(); w; w = waiting.pop()) if (!(await send(w, false))) return false;
      return true;
    }
    for (const lane of LANES) {
      const first = `${lane}.first` as QueueClass;
      const idle = (keyId: string) => !outOfKey.has(keyOf(lane, keyId));
      while (room(first)) {
        const w = waiting.pop(lane, idle);
        if (!w) break;
        if (!(await send(w, true))) return false;
      }
      while (room(lane)) {
        const w = waiting.pop(lane);
        if (!w) break;
        if (!(await send(w, false))) return false;
      }
    }
    return true;
  };

  /** fills the queue's room; one pass at a time, another queued behind it when state changed meanwhile */
  const pump = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      try {
        do {
          again = false;
          if (!(await fill()) && !stopped) {
            clearTimeout(retryTimer);
            retryTimer = setTimeout(() => void pump(), 1000);
            retryTimer.unref();
            break;
          }
        } while (again && !stopped);
      } finally {
        pumping = undefined;
      }
    })();
    return pumping;
  };

  const reactor = createReactor(
    {
      name: 'fair-dispatcher',
      handles: ['SearchSubmitted', 'CrawlStarted', 'CrawlCompleted', 'CrawlFailed', 'SearchPurged'],
      load() {
        const at = deps.readModels.checkpoint(PROJECTOR_CHECKPOINT);
        const jobs = queries.queue.open();
        resume = [];
        for (const j of jobs) {
          if (j.state === 'waiting') {
            hold(j);
            continue;
          }
          markOut(j.jobId, { lane: j.lane, keyId: j.keyId, cls: j.lane, started: true });
          const doc = queries.jobs.byId(j.jobId);
          if (doc) resume.push(doc);
        }
        return at;
      },
      handle(events) {
        for (const e of events) {
          switch (e.type) {
            case 'SearchSubmitted': {
              const d = e.data;
              if (!d.charged) break;
              const lane = laneOf(d);
              const weight = d.weight ?? 1;
              hold({
                jobId: d.jobId,
                keyId: d.keyId,
                lane,
                pages: pagesFor(depthOf(d.request)),
                weight,
                position: e.globalPosition,
                message: {
                  jobId: d.jobId,
                  dispatch: 0,
                  keyId: d.keyId,
                  cacheKey: d.cacheKey,
                  submittedAt: d.submittedAt,
                  request: d.request,
                  lane,
                  ...(weight !== 1 ? { weight } : {}),
                  ...(d.targeting ? { targeting: d.targeting } : {}),
                },
              });
              break;
            }
            case 'CrawlStarted': {
              const w = byJob.get(e.data.jobId);
              const o = out.get(e.data.jobId);
              if (w || o) started(e.data.jobId, (w ?? o)!.lane, (w ?? o)!.keyId);
              break;
            }
            case 'CrawlFailed':
              if (e.data.final) ended(e.data.jobId);
              break;
            case 'CrawlCompleted':
            case 'SearchPurged':
              ended(e.data.jobId);
              break;
          }
        }
        void pump();
      },
      async stop() {
        stopped = true;
        clearTimeout(retryTimer);
        await pumping;
      },
    },
    deps,
  );
  return {
    ...reactor,
    async start() {
      stopped = false;
      await reactor.start();
      // the in-process queue forgot the crawls running at a crash; JetStream still has them, out with a crawler
      const running = resume.splice(0);
      if (!queue.keepsMessages) await resumeCrawling(queue, running);
      await pump();
    },
  };
};

/** What the fair dispatcher does after it has started: the crawls its start found running go on the queue again. */
export const resumeCrawling = async (queue: JobQueue, jobs: JobStatusDoc[]) => {
  for (const job of jobs) {
    if (!job.charged) continue;
    await queue.enqueue({
      jobId: job.jobId,
      dispatch: job.attempts,
      keyId: job.keyId,
      cacheKey: job.cacheKey,
      submittedAt: job.submittedAt,
      request: job.request,
      lane: job.lane ?? laneOf(job),
    });
  }
};

/**
 * The quota releaser: a final `CrawlFailed`, or a crawl that ended placed elsewhere (docs/locations.md), gives back the
 * quota its job reserved (`releaseQuota`); a release seen twice releases once (the usage stream's decider decides nothing then), so a restart from an older checkpoint, or two
 * dispatchers, release each job once. A reactor with a checkpoint of its own, named `dispatcher` (the name the
 * dispatcher's checkpoint had, so an upgraded service goes on from where it stopped).
 */
export const createQuotaReleaser = (deps: FollowerDeps): Reactor =>
  createReactor(
    {
      name: 'dispatcher',
      handles: ['CrawlFailed', 'CrawlCompleted'],
      async handle(events) {
        for (const e of events) {
          const failed = e.type === 'CrawlFailed';
          if (failed ? !e.data.final : !endedElsewhere(e)) continue;
          const s = await readJobState(deps.eventStore, e.data.jobId);
          if (!s.charged || !s.keyId || !s.month) continue;
          await releaseQuota(
            deps.handle,
            {
              keyId: s.keyId,
              month: s.month,
              jobId: e.data.jobId,
              reason: failed ? 'crawl failed' : 'placed elsewhere',
              now: e.type === 'CrawlFailed' ? e.data.failedAt : e.data.completedAt,
            },
            { causationId: e.eventId },
          );
        }
      },
    },
    reactorDeps(deps),
  );

/**
 * The dispatcher background worker: the fair scheduler, which puts jobs on the queue, and the quota releaser, which
 * gives back what a failed job reserved, two reactors started in that order and stopped in reverse. The scheduler
 * starts where the read models stand; the releaser from its own checkpoint, so no final failure is missed across a
 * restart. Neither remembers anything the log does not say.
 */
export const createDispatcher = (deps: {
  eventStore: EventStore;
  readModels: ReadModelStore;
  queries?: ReadModelQueries;
  queue: JobQueue;
  handle: CommandHandler;
  /** resolves once the read models include `position` (default: at once; the caller's projector is ahead) */
  projected?: (position: number) => Promise<unknown>;
  settings: FairDispatcherSettings;
  log?: ReactorDeps['log'];
}): { start(): Promise<void>; stop(): Promise<void> } => {
  const follower: FollowerDeps = {
    eventStore: deps.eventStore,
    readModels: deps.readModels,
    queries: deps.queries ?? readModelQueries(deps.readModels),
    handle: deps.handle,
    projected: deps.projected ?? (async () => undefined),
    ...(deps.log ? { log: deps.log } : {}),
  };
  const reactors = [
    createFairDispatcher({ ...follower, queue: deps.queue, settings: deps.settings }),
    createQuotaReleaser(follower),
  ];
  return {
    async start() {
      for (const r of reactors) await r.start();
    },
    async stop() {
      for (const r of [...reactors].reverse()) await r.stop();
    },
  };
};
