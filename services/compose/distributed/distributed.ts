import { createServer as createHttpServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { readModelQueries } from '../../../projections/index.js';
import { createJetStreamJobQueue, jetStreamQueueStats } from '../../adapters/jobQueue/jetstream.js';
import { createNatsKvRateLimiter } from '../../adapters/rateLimiter/natsKv.js';
import { createSqliteReadModelStore } from '../../adapters/readModel/sqlite.js';
import { createServer } from '../../api/server.js';
import { createCommandHandler } from '../../application/commandHandler.js';
import type { Config } from '../../config/config.js';
import type { DistributedConfig } from '../../config/distributed.js';
import { runningFleet } from '../../fairShare/capacity.js';
import { createQueuePositions } from '../../fairShare/queuePosition.js';
import { createLocationResolver } from '../../geo/locations.js';
import { createMetrics } from '../../metrics/metrics.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ReadModelStore } from '../../ports/readModelStore.js';
import { exposedDataDir, privateDir, privateFile } from '../../privateFiles.js';
import { createCatchUp } from '../../projector/catchUp.js';
import { createOwnWrites } from '../../projector/ownWrites.js';
import { createReadModelProjector, PROJECTOR_CHECKPOINT, type Projector } from '../../projector/projector.js';
import { lowerHelperThreads, runInBackground } from '../../threads/nice.js';
import { startSupervisedProjector } from '../../threads/projectorThread.js';
import { armThreadFaults, logThreadFaultsTo } from '../../threads/threadFaults.js';
import { composeApi } from '../application.js';
import { createWriteSideRegistry, startBackgroundWorkers } from '../backgroundWorkers.js';
import { crawlerFromConfig } from '../crawler.js';
import { crawlWorkerFromConfig, jobQueueOptions } from '../crawlWorker.js';
import { dataPaths, takeServeLock } from '../embedded/core.js';
import { jsonLines } from '../logLines.js';
import { composeRenderer } from '../renderer.js';
import { packageVersion } from '../version.js';
import { atStart, connectNats, openBlobStore, openEventStore } from './stores.js';

export interface Distributed {
  /** the HTTP address: the api on an api process, else the health endpoint */
  url: string;
  app?: FastifyInstance;
  warnings: string[];
  close(): Promise<void>;
}

/**
 * `serp-api serve --role …` (docs/distributed.md#roles): the roles asked for, on the shared engines.
 *
 * - Every process talks to the event store (JetStream or KurrentDB) and NATS (queue, KV rate limits, raw HTML).
 * - api, dispatcher and projector keep their own SQLite read models in SERP_DATA_DIR, fed by catch-up; a process
 *   catches up with the log before it listens, so a fresh node never serves an old view. A job this node has not
 *   projected yet is folded from its stream (read-your-writes across nodes).
 * - The dispatcher is idempotent by design, so running two is safe: both enqueue the same job with the same message
 *   id (job id + dispatch number) and JetStream's dedupe keeps one; quota releases are decided against the usage
 *   stream, where a second release of the same job is nothing.
 * - Processes without the api role answer `GET /health` on the port (for probes).
 */
export const startDistributed = async (
  config: Config,
  dist: DistributedConfig,
  options: { logger?: boolean } = {},
): Promise<Distributed> => {
  const roles = new Set(dist.roles);
  // A process without the api role holds no event loop that answers users: crawling, dispatching and projecting are
  // background work, so the whole process goes below the api processes beside it (docs/distributed.md#roles), as the
  // parse threads already are within a process. Done before it starts threads (they keep the nice value of the thread
  // that starts them); Linux only, and a sandbox that refuses leaves it as it was (threads/nice.ts).
  if (!roles.has('api')) {
    lowerHelperThreads();
    runInBackground();
  }
  // before anything here creates it: an existing directory others can read is worth a word at start
  const exposed = exposedDataDir(config.dataDir);
  const needsReadModels = roles.has('api') || roles.has('dispatcher') || roles.has('projector');
  // An api process keeps its event loop for HTTP: its read models are projected on a thread of its own (a process
  // without the api role has no such loop to protect, and projects inline: docs/distributed.md#roles)
  const projectorThread = roles.has('api');
  // the tests' fault injection, for the threads this process starts (SERP_CHAOS_FAULTS; none unless set)
  armThreadFaults(config.chaosFaults);
  // a thread's fault is logged with the service's JSON lines (docs/architecture.md#when-a-thread-fails)
  if (options.logger !== false) logThreadFaultsTo((line) => void process.stdout.write(line));
  const cleanups: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`serp-api: while stopping: ${String(err)}`);
      }
    }
  };
  try {
    const name = `serp-api ${dist.roles.join(',')} ${process.pid}`;
    const nc = await connectNats(dist, name);
    cleanups.push(async () => {
      if (!nc.isClosed()) await nc.drain();
    });
    const eventStore: EventStore = await openEventStore(dist, nc, name);
    cleanups.push(() => eventStore.close());
    const handle = createCommandHandler(eventStore);

    // raw HTML and results; the read models' projector reads results from it too
    const blobStore =
      roles.has('crawler') || roles.has('api') || needsReadModels ? await openBlobStore(dist, nc) : undefined;

    let readModels: ReadModelStore | undefined;
    let projector: Projector | undefined;
    const projected = (position: number) => (projector as Projector).waitFor(position);
    if (needsReadModels) {
      privateDir(config.dataDir);
      const release = takeServeLock(config.dataDir);
      cleanups.push(release);
      privateFile(dataPaths(config.dataDir).readModels);
      const store = createSqliteReadModelStore(dataPaths(config.dataDir).readModels);
      readModels = store;
      cleanups.push(() => store.close());
      const p = projectorThread
        ? // the api's event loop answers HTTP: the projector runs on a thread of its own beside it, its read models in
          // the same file (docs/distributed.md#roles)
          startSupervisedProjector({
            setup: { config, dist },
            projectedAt: () => store.checkpoint(PROJECTOR_CHECKPOINT),
            // a failure it cannot come back from (docs/operations.md#exit-codes): stop, saying which, so a supervisor
            // starts the process again
            exit: (code, line) => {
              process.stderr.write(`serp-api: ${line}; stopping (exit code ${code})\n`);
              process.exit(code);
            },
          })
        : createReadModelProjector({ eventStore, readModels: store, blobStore });
      projector = p;
      cleanups.push(() => p.stop());
      // catch up before serving anything (the thread retries its own setup: threads/projectorThread.ts)
      await (projectorThread ? p.start() : atStart('catch-up', () => p.start()));
    }

    const queue =
      roles.has('crawler') || roles.has('dispatcher')
        ? await atStart('job queue', (setupTimeoutMs) =>
            createJetStreamJobQueue({
              setupTimeoutMs,
              nc,
              replicas: dist.natsReplicas,
              ...jobQueueOptions(config),
            }),
          )
        : undefined;
    if (queue) cleanups.push(() => queue.close());

    const warnings: string[] = exposed ? [exposed] : [];
    let locations: ReturnType<typeof createLocationResolver> | undefined;
    if (roles.has('crawler') || roles.has('api')) {
      locations = createLocationResolver(config.dataDir);
      locations.searchLocations('warm', 1);
      const l = locations;
      cleanups.push(() => l.close());
    }

    // the write side's background workers (backgroundWorkers.ts: the dispatcher, retention, …) run in every
    // dispatcher process; each is idempotent when two dispatchers run it
    const writeSideMetrics = createWriteSideRegistry();
    if (roles.has('dispatcher') && queue && readModels && projector && blobStore) {
      const p = projector;
      // the monitor worker paces a key's searches under its rate, counted where every api process counts it
      const limiter = await atStart('rate limiter', (setupTimeoutMs) =>
        createNatsKvRateLimiter({ nc, replicas: dist.natsReplicas, setupTimeoutMs }),
      );
      cleanups.push(() => limiter.close());
      const background = await startBackgroundWorkers({
        config,
        eventStore,
        readModels,
        queries: readModelQueries(readModels),
        blobStore,
        queue,
        handle,
        rateLimiter: limiter,
        projected: (position) => p.waitFor(position),
        log: jsonLines(config.logLevel, options.logger) ?? (() => undefined),
        metrics: writeSideMetrics,
        pepper: config.keyPepper as string,
        sole: false,
      });
      cleanups.push(() => background.stop());
    }

    if (roles.has('crawler') && queue && blobStore && locations) {
      const { crawler, warning } = await crawlerFromConfig(config, locations);
      if (warning) warnings.push(warning);
      cleanups.push(() => crawler.close());
      const worker = crawlWorkerFromConfig(config, {
        queue,
        handle,
        crawler,
        blobStore,
        role: 'crawler',
        log: jsonLines(config.logLevel, options.logger),
      });
      worker.start();
      cleanups.push(() => worker.stop().then(() => undefined));
    }

    if (roles.has('api') && readModels && projector && blobStore && locations) {
      const secrets = {
        keyPepper: config.keyPepper as string,
        adminToken: config.adminToken as string,
        linkSecret: config.linkSecret as string,
      };
      const queries = readModelQueries(readModels);
      // its projector runs on another thread, a moment after each append: a usage read waits for its own key's
      // appends (bounded), as embedded mode's HTTP thread does (projector/ownWrites.ts)
      const ownWrites = projectorThread ? createOwnWrites(projected) : undefined;
      const rateLimiter = await atStart('rate limiter', (setupTimeoutMs) =>
        createNatsKvRateLimiter({ nc, replicas: dist.natsReplicas, setupTimeoutMs }),
      );
      cleanups.push(() => rateLimiter.close());
      const store = readModels;
      const q = queue;
      const queuePositions = createQueuePositions({
        eventStore,
        readModels: store,
        queries,
        laneMinShare: config.laneMinShare,
        // this api's view: slots per crawler (the lane's peak crawling counts a cluster's crawlers together)
        laneSlots: config.crawlerConcurrency,
        fleet: runningFleet(config.proxyUrls),
      });
      await queuePositions.start();
      cleanups.push(() => queuePositions.stop());
      const metrics = createMetrics({
        // an api without the queue reads its depth from JetStream, for its metrics and the dashboard
        queueStats: q ? () => q.stats() : jetStreamQueueStats(nc),
        monitors: () => queries.monitors.dueCount(new Date()),
        lanes: () => queuePositions.counts(),
        routePlaces: () => queries.routePlacements.standings(),
        // with the dispatcher role in this process too, its background workers' metrics
        ...(roles.has('dispatcher') ? { writeSide: () => writeSideMetrics.metrics() } : {}),
        projection: async () => ({
          head: await eventStore.headPosition(),
          projected: store.checkpoint(PROJECTOR_CHECKPOINT),
        }),
      });
      await metrics.follow(eventStore);
      cleanups.push(() => metrics.stop());
      const renderer = composeRenderer(config);
      if (renderer) cleanups.push(() => renderer.close());
      const app = await createServer(
        composeApi(
          {
            eventStore,
            queries,
            handle: ownWrites ? ownWrites.tracking(handle) : handle,
            secrets,
            projected,
            blobStore,
            rateLimiter,
            locations,
            catchUp: createCatchUp(() => eventStore.headPosition(), projected),
            ...(ownWrites ? { ownWritesProjected: ownWrites.settled } : {}),
            version: packageVersion(),
            metrics,
            queuePositions,
            ...(renderer ? { renderer } : {}),
          },
          config,
        ),
        { settings: config, logger: options.logger },
      );
      const url = await app.listen({ port: config.port, host: config.host });
      cleanups.push(() => app.close());
      return { url, app, warnings, close: closeAll };
    }

    // no api here: a health endpoint for probes (and the port tells the operator the process is up)
    const started = new Date().toISOString();
    const health: Server = createHttpServer((req, res) => {
      if (req.url !== '/health') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"only /health here"}');
        return;
      }
      void (async () => {
        try {
          const head = await eventStore.headPosition();
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              status: 'ok',
              instance_id: config.instanceId,
              roles: dist.roles,
              started,
              head,
              nats: !nc.isClosed(),
            }),
          );
        } catch (err) {
          res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: String(err) }));
        }
      })();
    });
    await new Promise<void>((resolve, reject) => {
      health.once('error', reject);
      health.listen(config.port, config.host, () => resolve());
    });
    cleanups.push(() => new Promise<void>((resolve) => health.close(() => resolve())));
    const addr = health.address() as { port: number };
    return { url: `http://${config.host}:${addr.port}`, warnings, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
};
